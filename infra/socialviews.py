"""The friends' view on SQLite and PostgreSQL (docs/decisions.md D-social), as the career's
(:mod:`infra.careerviews`): the library's tracking recorder of the store and
:class:`~services.social.view.SocialView`, with its own tracking table on PostgreSQL
(``social_tracking``; on SQLite the library's ``tracking`` table under its own name).

* ``social_links`` — what a player sees of another, keyed (player, other), indexed for
  keyset pages on ``(player_id, position, other_id)``;
* ``social_invitations`` — open table invitations, indexed on the invitee and the inviter.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, Final
from uuid import UUID

from eventsourcing.persistence import IntegrityError, Tracking
from eventsourcing.postgres import PostgresDatastore, PostgresTrackingRecorder
from eventsourcing.sqlite import SQLiteDatastore, SQLiteTrackingRecorder
from eventsourcing.utils import strtobool
from psycopg.sql import SQL, Composed

from infra.localhub import LocalHub
from infra.settings import Settings
from infra.sqlviews import Joined, as_uuid
from infra.viewkeeping import (
    check_postgres_position,
    check_sqlite_position,
    kept_by,
    open_on,
    qualified,
)
from services.game import GameService
from services.projections import Factory, Projection
from services.readmodels.runner import Watcher
from services.social.presence import PresenceBoard
from services.social.reads import SocialModels
from services.social.rebuild import SocialRebuild, follower
from services.social.view import (
    TRACKED,
    Change,
    InvitationRow,
    LinkRow,
    MemorySocialView,
    Row,
    SocialView,
)

PG_TRACKING: Final = "social_tracking"
LINKS: Final = "social_links"
INVITATIONS: Final = "social_invitations"
LINK_COLUMNS: Final = ("player_id", "other_id", "kind", "since", "position")
INVITATION_COLUMNS: Final = (
    "invitation_id",
    "inviter",
    "invitee",
    "match_id",
    "seat",
    "expires_at",
    "position",
)


def _ddl(q: Callable[[str], str], uuid: str) -> list[str]:
    return [
        f"CREATE TABLE IF NOT EXISTS {q(LINKS)} (player_id {uuid} NOT NULL, other_id {uuid} "
        "NOT NULL, kind TEXT NOT NULL, since TEXT NOT NULL, position BIGINT NOT NULL, "
        "PRIMARY KEY (player_id, other_id))",
        f"CREATE INDEX IF NOT EXISTS social_links_page ON {q(LINKS)} "
        "(player_id, position, other_id)",
        f"CREATE TABLE IF NOT EXISTS {q(INVITATIONS)} (invitation_id {uuid} NOT NULL, "
        f"inviter {uuid} NOT NULL, invitee {uuid} NOT NULL, match_id {uuid} NOT NULL, "
        "seat INTEGER NOT NULL, expires_at TEXT NOT NULL, position BIGINT NOT NULL, "
        "PRIMARY KEY (invitation_id))",
        f"CREATE INDEX IF NOT EXISTS social_invitations_invitee ON {q(INVITATIONS)} (invitee)",
        f"CREATE INDEX IF NOT EXISTS social_invitations_inviter ON {q(INVITATIONS)} (inviter)",
    ]


def _link(r: Any) -> LinkRow:
    return LinkRow(
        as_uuid(r["player_id"]), as_uuid(r["other_id"]), r["kind"], r["since"], r["position"]
    )


def _invitation(r: Any) -> InvitationRow:
    return InvitationRow(
        as_uuid(r["invitation_id"]),
        as_uuid(r["inviter"]),
        as_uuid(r["invitee"]),
        as_uuid(r["match_id"]),
        r["seat"],
        r["expires_at"],
        r["position"],
    )


class _Sql(Joined, SocialView):
    ids_as_text: bool
    insert_tracking_statement: Any
    datastore: Any

    def setup_sql(self, q: Callable[[str], str], p: str, tracking: str) -> None:
        self.q, self.p, self.tracking_table = q, p, tracking

    def value(self, v: Any) -> Any:
        return str(v) if self.ids_as_text and isinstance(v, UUID) else v

    def _rows(self, statement: str, params: tuple[Any, ...] = ()) -> list[Any]:
        with self.reading() as c:
            c.execute(statement, tuple(self.value(v) for v in params))
            return list(c.fetchall())

    def _upsert(
        self, c: Any, table: str, columns: tuple[str, ...], key: int, rows: list[Any]
    ) -> None:
        marks = ", ".join([self.p] * len(columns))
        keys = ", ".join(columns[:key])
        sets = ", ".join(f"{n} = excluded.{n}" for n in columns[key:])
        c.executemany(
            f"INSERT INTO {self.q(table)} ({', '.join(columns)}) VALUES ({marks}) "
            f"ON CONFLICT ({keys}) DO UPDATE SET {sets}",
            [tuple(self.value(v) for v in row) for row in rows],
        )

    def write(self, c: Any, change: Change, tracking: Tracking) -> None:
        gone = [k for k, r in change.links.items() if r is None]
        if gone:
            c.executemany(
                f"DELETE FROM {self.q(LINKS)} WHERE player_id = {self.p} AND other_id = {self.p}",
                [(self.value(a), self.value(b)) for a, b in gone],
            )
        kept = [r for r in change.links.values() if r is not None]
        if kept:
            links = [(r.player_id, r.other_id, r.kind, r.since, r.position) for r in kept]
            self._upsert(c, LINKS, LINK_COLUMNS, 2, links)
        ended = [k for k, r in change.invitations.items() if r is None]
        if ended:
            c.executemany(
                f"DELETE FROM {self.q(INVITATIONS)} WHERE invitation_id = {self.p}",
                [(self.value(k),) for k in ended],
            )
        sent = [r for r in change.invitations.values() if r is not None]
        if sent:
            rows = [
                (
                    r.invitation_id,
                    r.inviter,
                    r.invitee,
                    r.match_id,
                    r.seat,
                    r.expires_at,
                    r.position,
                )
                for r in sent
            ]
            self._upsert(c, INVITATIONS, INVITATION_COLUMNS, 1, rows)
        c.execute(
            self.insert_tracking_statement,
            {"application_name": TRACKED, "notification_id": tracking.notification_id},
        )
        if self.datastore.single_row_tracking and c.fetchone() is None:
            raise IntegrityError(f"tracking {tracking} is not beyond the view's position")

    def _delete_all(self, c: Any) -> None:
        c.execute(f"DELETE FROM {self.q(LINKS)}")
        c.execute(f"DELETE FROM {self.q(INVITATIONS)}")
        c.execute(
            f"DELETE FROM {self.tracking_table} WHERE application_name = {self.p}", (TRACKED,)
        )

    def reset(self) -> None:
        with self.datastore.transaction(commit=True) as c:
            self._delete_all(c)

    def replace_all(self, change: Change, tracking: Tracking) -> None:
        with self.datastore.transaction(commit=True) as c:
            self._delete_all(c)
            if tracking.notification_id:
                self.write(c, change, tracking)

    def stored_link(self, player: UUID, other: UUID) -> LinkRow | None:
        found = self._rows(
            f"SELECT {', '.join(LINK_COLUMNS)} FROM {self.q(LINKS)} "
            f"WHERE player_id = {self.p} AND other_id = {self.p}",
            (player, other),
        )
        return _link(found[0]) if found else None

    def stored_links(
        self,
        player: UUID,
        kinds: tuple[str, ...] | None,
        after: tuple[int, str] | None,
        limit: int,
        other: UUID | None,
    ) -> list[LinkRow]:
        where = f"player_id = {self.p}"
        params: list[Any] = [player]
        if kinds is not None:
            where += f" AND kind IN ({', '.join([self.p] * len(kinds))})"
            params += kinds
        if after is not None:
            where += f" AND (position > {self.p} OR (position = {self.p} AND other_id > {self.p}))"
            params += [after[0], after[0], self.value(UUID(after[1]))]
        tail = " ORDER BY position, other_id"
        if limit:
            tail += f" LIMIT {int(limit)}"
        found = self._rows(
            f"SELECT {', '.join(LINK_COLUMNS)} FROM {self.q(LINKS)} WHERE {where}{tail}",
            tuple(params),
        )
        return [_link(r) for r in found]

    def invitations_for(self, player: UUID, *, inviter: bool) -> list[InvitationRow]:
        column = "inviter" if inviter else "invitee"
        found = self._rows(
            f"SELECT {', '.join(INVITATION_COLUMNS)} FROM {self.q(INVITATIONS)} "
            f"WHERE {column} = {self.p} ORDER BY position, invitation_id",
            (player,),
        )
        return [_invitation(r) for r in found]

    def rows(self) -> Iterator[Row]:
        for r in self._rows(f"SELECT {', '.join(LINK_COLUMNS)} FROM {self.q(LINKS)}"):
            yield _link(r)
        for r in self._rows(f"SELECT {', '.join(INVITATION_COLUMNS)} FROM {self.q(INVITATIONS)}"):
            yield _invitation(r)


class SQLiteSocialView(SQLiteTrackingRecorder, _Sql):
    ids_as_text = True

    def __init__(self, datastore: SQLiteDatastore) -> None:
        super().__init__(datastore)
        self.setup_batches()
        self.setup_sql(lambda t: t, "?", "tracking")

    def construct_create_table_statements(self) -> list[str]:
        return [*super().construct_create_table_statements(), *_ddl(lambda n: n, "TEXT")]

    def check_position(self, c: Any, start: int) -> None:
        check_sqlite_position(c, self.select_max_tracking_id_statement, TRACKED, start)


class PostgresSocialView(PostgresTrackingRecorder, _Sql):
    ids_as_text = False

    def __init__(self, datastore: PostgresDatastore) -> None:
        super().__init__(datastore, tracking_table_name=PG_TRACKING)
        self.setup_batches()
        q = qualified(datastore.schema)
        self.setup_sql(q, "%s", q(PG_TRACKING))
        self.sql_create_statements.extend(Composed([SQL(s)]) for s in _ddl(q, "uuid"))

    def check_position(self, c: Any, start: int) -> None:
        check_postgres_position(c, self.tracking_table, TRACKED, start)


def open_social_view(service: GameService, *, create: bool) -> SocialView:
    view: SocialView = open_on(
        service,
        sqlite=SQLiteSocialView,
        postgres=PostgresSocialView,
        memory=MemorySocialView,
        create=create,
    )
    return view


def build_social(settings: Settings, service: GameService, hub: LocalHub) -> SocialModels:
    """The friends' view of ``settings``' process, kept as the career is, and the
    presence board (``PRESENCE_*``)."""
    view = open_social_view(service, create=settings.create_tables)
    freshness = kept_by(
        settings, service, hub, lambda: Watcher(view, TRACKED), lambda: follower(service, view)
    )
    board = PresenceBoard(
        away_after_s=settings.presence_away_after_s,
        offline_after_s=settings.presence_offline_after_s,
    )
    return SocialModels(service, view, freshness, board)


def social_factories() -> dict[str, Factory]:
    """The friends' view as ``shengji rebuild`` rebuilds it."""

    def social(service: GameService) -> Projection:
        view = open_social_view(service, create=strtobool(service.env.get("CREATE_TABLE") or "y"))
        rebuilt: Projection = SocialRebuild(service, view)
        return rebuilt

    return {SocialRebuild.name: social}

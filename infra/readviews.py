"""The lists' materialised views on SQLite and PostgreSQL, and the read models of the
settings (docs/decisions.md D-readmodels).

Each view subclasses the eventsourcing library's tracking recorder of its store
(``SQLiteTrackingRecorder``, ``PostgresTrackingRecorder``) and :class:`~services.readmodels.
view.ListsView`, on the game service's own datastore (its connection pool; beside the
events, in the same file or schema). Its tables are made by the library's
``create_table()`` with the recorder's own tracking table (``tracking`` on SQLite,
``readmodel_tracking`` on PostgreSQL): by the serving process when ``CREATE_TABLES`` is on,
else by ``shengji migrate`` (:mod:`infra.migrate`).

* ``readmodel_matches`` — one row per match: its positions (``MatchCreated``,
  ``MatchImported``), listed or private, played or imported, the versions it shows, and
  its two list items as JSON; indexed for keyset pages on each list's key;
* ``readmodel_seats`` — one row per seat an account claimed (R1), with the positions of
  the claim and of leaving;
* ``readmodel_tournaments`` — one row per tournament: position, status, its list item.

A batch is written in one transaction with the library's own tracking statement, after
checking (``SELECT … FOR UPDATE`` on PostgreSQL) that the position is the one the batch
started from: two followers on one database never both write the same events.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, Final
from uuid import UUID

from eventsourcing.persistence import Tracking
from eventsourcing.postgres import (
    PostgresDatastore,
    PostgresTrackingRecorder,
)
from eventsourcing.sqlite import SQLiteDatastore, SQLiteTrackingRecorder
from eventsourcing.utils import strtobool

from infra.localhub import LocalHub
from infra.ratingviews import ratings_rebuild
from infra.settings import Settings
from infra.sqlviews import (
    PostgresPosition,
    SQLitePosition,
    SqlView,
    as_uuid,
    postgres_ddl,
)
from infra.viewkeeping import kept_by, open_on, qualified
from services.game import GameService
from services.projections import Factory, Projection
from services.readmodels.lists import ReadModels
from services.readmodels.rebuild import ListsRebuild
from services.readmodels.rows import Change, MatchRow, SeatRow, TournamentRow
from services.readmodels.runner import Follower, Watcher
from services.readmodels.view import ListsView, MemoryListsView

MATCHES: Final = "readmodel_matches"
SEATS: Final = "readmodel_seats"
TOURNAMENTS: Final = "readmodel_tournaments"
PG_TRACKING: Final = "readmodel_tracking"
SQLITE_TRACKING: Final = "tracking"
"""The library's SQLite tracking table (its name is fixed there)."""
TABLES: Final = (MATCHES, SEATS, TOURNAMENTS)
"""The views' own tables (the tracking table aside)."""

_MATCH_COLUMNS = (
    "match_id, position, imported_position, listed, played, match_version, round_id, "
    "round_version, item, mine"
)
_SEAT_COLUMNS = "account_id, match_id, seat, claimed, left_at"
_TOURNAMENT_COLUMNS = "tournament_id, position, status, version, item"


def _ddl(q: Callable[[str], str], *, uuid: str, blob: str, bigint: str, boolean: str) -> list[str]:
    """The tables and indexes, ``q(name)`` qualifying a table's name."""
    return [
        f"CREATE TABLE IF NOT EXISTS {q(MATCHES)} (match_id {uuid} PRIMARY KEY, "
        f"position {bigint} NOT NULL UNIQUE, imported_position {bigint} UNIQUE, "
        f"listed {boolean} NOT NULL, played {boolean} NOT NULL, match_version {bigint} NOT "
        f"NULL, round_id {uuid}, round_version {bigint} NOT NULL, item {blob} NOT NULL, "
        f"mine {blob} NOT NULL)",
        f"CREATE INDEX IF NOT EXISTS {MATCHES}_listed ON {q(MATCHES)} (listed, position)",
        f"CREATE INDEX IF NOT EXISTS {MATCHES}_played ON {q(MATCHES)} (listed, played, position)",
        f"CREATE INDEX IF NOT EXISTS {MATCHES}_imported ON {q(MATCHES)} "
        "(listed, imported_position)",
        f"CREATE TABLE IF NOT EXISTS {q(SEATS)} (account_id {uuid} NOT NULL, "
        f"match_id {uuid} NOT NULL, seat {bigint} NOT NULL, claimed {bigint} NOT NULL, "
        f"left_at {bigint}, PRIMARY KEY (account_id, match_id))",
        f"CREATE TABLE IF NOT EXISTS {q(TOURNAMENTS)} (tournament_id {uuid} PRIMARY KEY, "
        f"position {bigint} NOT NULL UNIQUE, status text NOT NULL, version {bigint} NOT NULL, "
        f"item {blob} NOT NULL)",
        f"CREATE INDEX IF NOT EXISTS {TOURNAMENTS}_status ON {q(TOURNAMENTS)} (status, position)",
    ]


class _Statements:
    """The views' statements with a store's placeholder ``p`` and qualified names."""

    def __init__(self, q: Callable[[str], str], p: str, tracking: str) -> None:
        def marks(n: int) -> str:
            return ", ".join([p] * n)

        def upsert(table: str, columns: str, key: str) -> str:
            names = [c.strip() for c in columns.split(",")]
            keys = {k.strip() for k in key.split(",")}
            sets = ", ".join(f"{c} = excluded.{c}" for c in names if c not in keys)
            return (
                f"INSERT INTO {q(table)} ({columns}) VALUES ({marks(len(names))}) "
                f"ON CONFLICT ({key}) DO UPDATE SET {sets}"
            )

        self.upsert_match = upsert(MATCHES, _MATCH_COLUMNS, "match_id")
        self.upsert_seat = upsert(SEATS, _SEAT_COLUMNS, "account_id, match_id")
        self.upsert_tournament = upsert(TOURNAMENTS, _TOURNAMENT_COLUMNS, "tournament_id")
        self.match = f"SELECT {_MATCH_COLUMNS} FROM {q(MATCHES)} WHERE match_id = {p}"
        self.seat = (
            f"SELECT {_SEAT_COLUMNS} FROM {q(SEATS)} WHERE account_id = {p} AND match_id = {p}"
        )
        self.tournament = (
            f"SELECT {_TOURNAMENT_COLUMNS} FROM {q(TOURNAMENTS)} WHERE tournament_id = {p}"
        )
        self.listed = (
            f"SELECT position AS k, item FROM {q(MATCHES)} WHERE listed = {p} "
            f"AND position > {p} ORDER BY position LIMIT {p}"
        )
        self.listed_played = (
            f"SELECT position AS k, item FROM {q(MATCHES)} WHERE listed = {p} AND played = {p} "
            f"AND position > {p} ORDER BY position LIMIT {p}"
        )
        self.listed_imported = (
            f"SELECT imported_position AS k, item FROM {q(MATCHES)} WHERE listed = {p} "
            f"AND imported_position > {p} ORDER BY imported_position LIMIT {p}"
        )
        self.last_created = (
            f"SELECT max(position) AS k FROM {q(MATCHES)} WHERE position > {p} AND position < {p}"
        )
        self.last_imported = (
            f"SELECT max(imported_position) AS k FROM {q(MATCHES)} "
            f"WHERE imported_position > {p} AND imported_position < {p}"
        )
        self.tournaments = (
            f"SELECT position AS k, item FROM {q(TOURNAMENTS)} WHERE position > {p} "
            f"ORDER BY position LIMIT {p}"
        )
        self.tournaments_in = (
            f"SELECT position AS k, item FROM {q(TOURNAMENTS)} WHERE status = {p} "
            f"AND position > {p} ORDER BY position LIMIT {p}"
        )
        self.last_tournament = (
            f"SELECT max(position) AS k FROM {q(TOURNAMENTS)} WHERE position > {p} "
            f"AND position < {p}"
        )
        self.seats_of = (
            f"SELECT s.account_id, s.match_id, s.seat, s.claimed, s.left_at, m.mine "
            f"FROM {q(SEATS)} s JOIN {q(MATCHES)} m ON m.match_id = s.match_id "
            f"WHERE s.account_id = {p}"
        )
        self.emptied = [f"DELETE FROM {q(t)}" for t in TABLES]
        self.untrack = f"DELETE FROM {tracking} WHERE application_name = {p}"
        self.all = [
            f"SELECT {_MATCH_COLUMNS} FROM {q(MATCHES)}",
            f"SELECT {_SEAT_COLUMNS} FROM {q(SEATS)}",
            f"SELECT {_TOURNAMENT_COLUMNS} FROM {q(TOURNAMENTS)}",
        ]


def _match(r: Any) -> MatchRow:
    return MatchRow(
        match_id=as_uuid(r["match_id"]),
        position=r["position"],
        imported_position=r["imported_position"],
        listed=bool(r["listed"]),
        match_version=r["match_version"],
        round_id=None if r["round_id"] is None else as_uuid(r["round_id"]),
        round_version=r["round_version"],
        item=bytes(r["item"]),
        mine=bytes(r["mine"]),
    )


def _seat(r: Any) -> SeatRow:
    return SeatRow(
        account_id=as_uuid(r["account_id"]),
        match_id=as_uuid(r["match_id"]),
        seat=r["seat"],
        claimed=r["claimed"],
        left=r["left_at"],
    )


def _tournament(r: Any) -> TournamentRow:
    return TournamentRow(
        tournament_id=as_uuid(r["tournament_id"]),
        position=r["position"],
        status=r["status"],
        version=r["version"],
        item=bytes(r["item"]),
    )


class _SqlLists(SqlView, ListsView):
    """What the SQLite and PostgreSQL lists' views share: the statements' use."""

    sql: _Statements

    def replace_all(self, change: Change, tracking: Tracking) -> None:
        self.forget_rows()
        with self.transaction(commit=True) as c:
            self.delete_all(c)
            if tracking.notification_id:
                self.write(c, change, tracking)

    def write(self, c: Any, change: Change, tracking: Tracking) -> None:
        """``change`` and ``tracking`` in the transaction of ``c``."""
        if change.matches:
            c.executemany(
                self.sql.upsert_match, [self.match_params(m) for m in change.matches.values()]
            )
        if change.seats:
            c.executemany(
                self.sql.upsert_seat,
                [
                    (self.key(s.account_id), self.key(s.match_id), s.seat, s.claimed, s.left)
                    for s in change.seats.values()
                ],
            )
        if change.tournaments:
            c.executemany(
                self.sql.upsert_tournament,
                [
                    (self.key(t.tournament_id), t.position, t.status, t.version, t.item)
                    for t in change.tournaments.values()
                ],
            )
        self.write_tracking(c, tracking)

    def match_params(self, m: MatchRow) -> tuple[Any, ...]:
        return (
            self.key(m.match_id),
            m.position,
            m.imported_position,
            self.flag(m.listed),
            self.flag(m.played),
            m.match_version,
            None if m.round_id is None else self.key(m.round_id),
            m.round_version,
            m.item,
            m.mine,
        )

    def reset(self) -> None:
        self.forget_rows()
        with self.transaction(commit=True) as c:
            self.delete_all(c)

    def stored_match(self, match_id: UUID) -> MatchRow | None:
        r = self.fetch_one(self.sql.match, (self.key(match_id),))
        return None if r is None else _match(r)

    def stored_seat(self, account_id: UUID, match_id: UUID) -> SeatRow | None:
        r = self.fetch_one(self.sql.seat, (self.key(account_id), self.key(match_id)))
        return None if r is None else _seat(r)

    def stored_tournament(self, tournament_id: UUID) -> TournamentRow | None:
        r = self.fetch_one(self.sql.tournament, (self.key(tournament_id),))
        return None if r is None else _tournament(r)

    def listed_matches(
        self, after: int, limit: int, *, imported: bool, played: bool
    ) -> list[tuple[int, bytes]]:
        yes = self.flag(True)
        if imported:
            found = self.fetch_all(self.sql.listed_imported, (yes, after, limit))
        elif played:
            found = self.fetch_all(self.sql.listed_played, (yes, yes, after, limit))
        else:
            found = self.fetch_all(self.sql.listed, (yes, after, limit))
        return [(r["k"], bytes(r["item"])) for r in found]

    def last_match_key(self, after: int, before: int | None, *, imported: bool) -> int | None:
        statement = self.sql.last_imported if imported else self.sql.last_created
        r = self.fetch_one(statement, (after, _END if before is None else before))
        return None if r is None else r["k"]

    def listed_tournaments(
        self, after: int, limit: int, status: str | None
    ) -> list[tuple[int, bytes]]:
        if status is None:
            found = self.fetch_all(self.sql.tournaments, (after, limit))
        else:
            found = self.fetch_all(self.sql.tournaments_in, (status, after, limit))
        return [(r["k"], bytes(r["item"])) for r in found]

    def last_tournament_key(self, after: int, before: int | None) -> int | None:
        r = self.fetch_one(self.sql.last_tournament, (after, _END if before is None else before))
        return None if r is None else r["k"]

    def seats_of(self, account_id: UUID) -> list[tuple[SeatRow, bytes]]:
        found = self.fetch_all(self.sql.seats_of, (self.key(account_id),))
        return [(_seat(r), bytes(r["mine"])) for r in found]

    def rows(self) -> Iterator[MatchRow | SeatRow | TournamentRow]:
        matches, seats, tournaments = (self.fetch_all(s) for s in self.sql.all)
        yield from (_match(r) for r in matches)
        yield from (_seat(r) for r in seats)
        yield from (_tournament(r) for r in tournaments)


_END: Final = 2**62
"""A position beyond any (an open upper bound)."""


class SQLiteListsView(SQLiteTrackingRecorder, SQLitePosition, _SqlLists):
    """The view in the embedded store's file (the library's ``tracking`` table)."""

    ids_as_text = True

    def __init__(self, datastore: SQLiteDatastore) -> None:
        super().__init__(datastore)
        self.setup_batches()
        self.sql = _Statements(lambda t: t, "?", SQLITE_TRACKING)

    def construct_create_table_statements(self) -> list[str]:
        return [
            *super().construct_create_table_statements(),
            *_ddl(lambda t: t, uuid="TEXT", blob="BLOB", bigint="INTEGER", boolean="INTEGER"),
        ]


class PostgresListsView(PostgresTrackingRecorder, PostgresPosition, _SqlLists):
    """The view in the game's schema (its own tracking table, ``readmodel_tracking``)."""

    ids_as_text = False

    def __init__(self, datastore: PostgresDatastore) -> None:
        super().__init__(datastore, tracking_table_name=PG_TRACKING)
        self.setup_batches()
        q = qualified(datastore.schema)
        self.sql = _Statements(q, "%s", q(PG_TRACKING))
        self.sql_create_statements.extend(
            postgres_ddl(_ddl(q, uuid="uuid", blob="bytea", bigint="bigint", boolean="boolean"))
        )
        self.tracking_table = q(PG_TRACKING)


def open_view(service: GameService, *, create: bool) -> ListsView:
    """The lists' view on ``service``'s store (its datastore), its tables made if
    ``create``."""
    view: ListsView = open_on(
        service,
        sqlite=SQLiteListsView,
        postgres=PostgresListsView,
        memory=MemoryListsView,
        create=create,
    )
    return view


def build_read_models(settings: Settings, service: GameService, hub: LocalHub) -> ReadModels:
    """The read models of ``settings``' process: the view on ``service``'s store and who
    keeps it (docs/decisions.md D-readmodels). A PostgreSQL ``api`` process waits for the
    follower of the ``worker`` processes; every other process follows the log itself,
    woken by its own saves and, on PostgreSQL, by the hub's news of other processes'."""
    view = open_view(service, create=settings.create_tables)
    return ReadModels(
        service,
        view,
        kept_by(settings, service, hub, lambda: Watcher(view), lambda: Follower(service, view)),
    )


def read_model_factories() -> dict[str, Factory]:
    """The read models kept in tables, as ``shengji rebuild`` rebuilds them."""

    def lists(service: GameService) -> Projection:
        # its tables made as the store's are (CREATE_TABLES), else by ``shengji migrate``
        view = open_view(service, create=strtobool(service.env.get("CREATE_TABLE") or "y"))
        rebuilt: Projection = ListsRebuild(service, view)
        return rebuilt

    return {ListsRebuild.name: lists, "ratings": ratings_rebuild}

"""The player's career on SQLite and PostgreSQL (docs/decisions.md D-career), as the
lists' and the ratings' views: each subclasses the library's tracking recorder of its
store and :class:`~services.career.view.CareerView`, on the game service's own datastore,
with its own tracking table on PostgreSQL (``career_tracking``; on SQLite the library's
one ``tracking`` table under the career's application name).

* ``career_matches`` — a finished match the career keeps: its facts as JSON, its
  tournament round, where it was released (null: held, R36); indexed on the release
  position (the rating notices read it) and on the tournament round (a release);
* ``career_entries`` — a match in a player's history, indexed for keyset pages on
  ``(player_id, position, match_id)`` and on the public tables alone;
* ``career_totals`` — a player's counts per family, as JSON;
* ``career_partners`` — matches with a partner and those won, indexed for the top ones
  and on the partner (an erasure);
* ``career_released`` — the tournament rounds the log completed.

Each table is declared once (:class:`Table`): its columns and keys give the statements
that insert, update and delete its rows.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Final
from uuid import UUID

import msgspec
from eventsourcing.persistence import IntegrityError, Tracking
from eventsourcing.postgres import (
    PostgresDatastore,
    PostgresTrackingRecorder,
)
from eventsourcing.sqlite import SQLiteDatastore, SQLiteTrackingRecorder
from eventsourcing.utils import strtobool
from psycopg.sql import SQL, Composed

from infra.localhub import LocalHub
from infra.settings import Settings
from infra.sqlviews import Joined
from infra.viewkeeping import (
    check_postgres_position,
    check_sqlite_position,
    kept_by,
    open_on,
    qualified,
)
from services.career.reads import CareerModels
from services.career.rebuild import CareerRebuild, follower
from services.career.rows import (
    Change,
    EntryRow,
    Facts,
    MatchRow,
    PartnerRow,
    ReleasedRow,
    Row,
    Totals,
    TotalsRow,
)
from services.career.view import TRACKED, CareerView, Cursor, MemoryCareerView
from services.game import GameService
from services.projections import Factory, Projection
from services.readmodels.runner import Watcher

PG_TRACKING: Final = "career_tracking"
_FACTS = msgspec.json.Decoder(Facts)
_TOTALS = msgspec.json.Decoder(Totals)


def _uuid(value: Any) -> UUID:
    return value if isinstance(value, UUID) else UUID(str(value))


def _optional_uuid(value: Any) -> UUID | None:
    return None if value is None else _uuid(value)


@dataclass(frozen=True, slots=True)
class Table:
    """One table: its name, columns (name, SQL type with ``{uuid}``, ``{bool}``,
    ``{text}`` for the store's types), primary key, indexes, and its rows both ways."""

    name: str
    columns: tuple[tuple[str, str], ...]
    key: tuple[str, ...]
    indexes: tuple[tuple[str, tuple[str, ...]], ...]
    """Each index: its name's suffix and its columns."""
    values: Callable[[Any], tuple[Any, ...]]
    """A row's column values (ids as :class:`UUID`, flags as :class:`bool`)."""
    row: Callable[[Any], Row]
    """A row from the store (a mapping by column name)."""

    @property
    def names(self) -> str:
        return ", ".join(c for c, _ in self.columns)

    def ddl(self, q: Callable[[str], str], types: dict[str, str]) -> list[str]:
        columns = ", ".join(f"{c} {t.format(**types)}" for c, t in self.columns)
        out = [
            f"CREATE TABLE IF NOT EXISTS {q(self.name)} ({columns}, "
            f"PRIMARY KEY ({', '.join(self.key)}))"
        ]
        for suffix, indexed in self.indexes:
            out.append(
                f"CREATE INDEX IF NOT EXISTS {self.name}_{suffix} ON "
                f"{q(self.name)} ({', '.join(indexed)})"
            )
        return out


MATCHES = Table(
    "career_matches",
    (
        ("match_id", "{uuid} NOT NULL"),
        ("tournament_id", "{uuid}"),
        ("tournament_round", "integer NOT NULL"),
        ("released", "bigint"),
        ("facts", "{text} NOT NULL"),
    ),
    ("match_id",),
    (("released", ("released",)), ("round", ("tournament_id", "tournament_round"))),
    lambda r: (
        r.match_id,
        r.tournament_id,
        r.tournament_round,
        r.released,
        msgspec.json.encode(r.facts).decode(),
    ),
    lambda r: MatchRow(
        match_id=_uuid(r["match_id"]),
        tournament_id=_optional_uuid(r["tournament_id"]),
        tournament_round=r["tournament_round"],
        released=r["released"],
        facts=_FACTS.decode(r["facts"]),
    ),
)
ENTRIES = Table(
    "career_entries",
    (
        ("player_id", "{uuid} NOT NULL"),
        ("match_id", "{uuid} NOT NULL"),
        ("seat", "integer NOT NULL"),
        ("position", "bigint NOT NULL"),
        ("listed", "{bool} NOT NULL"),
    ),
    ("player_id", "match_id"),
    (
        ("history", ("player_id", "position", "match_id")),
        ("public", ("player_id", "listed", "position", "match_id")),
    ),
    lambda r: (r.player_id, r.match_id, r.seat, r.position, r.listed),
    lambda r: EntryRow(
        player_id=_uuid(r["player_id"]),
        match_id=_uuid(r["match_id"]),
        seat=r["seat"],
        position=r["position"],
        listed=bool(r["listed"]),
    ),
)
TOTALS = Table(
    "career_totals",
    (("player_id", "{uuid} NOT NULL"), ("family", "text NOT NULL"), ("totals", "{text} NOT NULL")),
    ("player_id", "family"),
    (),
    lambda r: (r.player_id, r.family, msgspec.json.encode(r.totals).decode()),
    lambda r: TotalsRow(
        player_id=_uuid(r["player_id"]), family=r["family"], totals=_TOTALS.decode(r["totals"])
    ),
)
PARTNERS = Table(
    "career_partners",
    (
        ("player_id", "{uuid} NOT NULL"),
        ("family", "text NOT NULL"),
        ("partner", "text NOT NULL"),
        ("matches", "bigint NOT NULL"),
        ("won", "bigint NOT NULL"),
    ),
    ("player_id", "family", "partner"),
    (("top", ("player_id", "family", "matches", "won")), ("partner", ("partner",))),
    lambda r: (r.player_id, r.family, r.partner, r.matches, r.won),
    lambda r: PartnerRow(
        player_id=_uuid(r["player_id"]),
        family=r["family"],
        partner=r["partner"],
        matches=r["matches"],
        won=r["won"],
    ),
)
RELEASED = Table(
    "career_released",
    (
        ("tournament_id", "{uuid} NOT NULL"),
        ("round", "integer NOT NULL"),
        ("position", "bigint NOT NULL"),
    ),
    ("tournament_id", "round"),
    (),
    lambda r: (r.tournament_id, r.round, r.position),
    lambda r: ReleasedRow(
        tournament_id=_uuid(r["tournament_id"]), round=r["round"], position=r["position"]
    ),
)
TABLES: Final = (MATCHES, ENTRIES, TOTALS, PARTNERS, RELEASED)


class _Sql(Joined, CareerView):
    """The statements and reads of both stores (``q`` qualifies a table, ``p`` is the
    driver's parameter mark)."""

    ids_as_text: bool
    insert_tracking_statement: Any
    datastore: Any

    def setup_sql(self, q: Callable[[str], str], p: str, tracking: str) -> None:
        self.q, self.p, self.tracking_table = q, p, tracking

    def transaction(self, *, commit: bool) -> Any:
        return self.datastore.transaction(commit=commit)

    def value(self, v: Any) -> Any:
        if self.ids_as_text and isinstance(v, UUID):
            return str(v)
        if self.ids_as_text and isinstance(v, bool):
            return int(v)
        return v

    def _select(self, table: Table, where: str = "", tail: str = "") -> str:
        return f"SELECT {table.names} FROM {self.q(table.name)}{where}{tail}"

    def _where(self, *columns: str) -> str:
        return " WHERE " + " AND ".join(f"{c} = {self.p}" for c in columns)

    def _all(self, table: Table, statement: str, params: tuple[Any, ...] = ()) -> list[Any]:
        with self.reading() as c:
            c.execute(statement, tuple(self.value(v) for v in params))
            return [table.row(r) for r in c.fetchall()]

    def _one(self, table: Table, params: tuple[Any, ...]) -> Any:
        found = self._all(table, self._select(table, self._where(*table.key)), params)
        return found[0] if found else None

    # -- writing -------------------------------------------------------------------------------

    def write(self, c: Any, change: Change, tracking: Tracking) -> None:
        for table, rows in (
            (MATCHES, change.matches),
            (ENTRIES, change.entries),
            (TOTALS, change.totals),
            (PARTNERS, change.partners),
            (RELEASED, change.released),
        ):
            keys = tuple(k if isinstance(k, tuple) else (k,) for k, r in rows.items() if r is None)
            if keys:
                c.executemany(
                    f"DELETE FROM {self.q(table.name)}{self._where(*table.key)}",
                    [tuple(self.value(v) for v in k) for k in keys],
                )
            kept = [r for r in rows.values() if r is not None]
            if kept:
                others = [n for n, _ in table.columns if n not in table.key]
                marks = ", ".join([self.p] * len(table.columns))
                c.executemany(
                    f"INSERT INTO {self.q(table.name)} ({table.names}) VALUES ({marks}) "
                    f"ON CONFLICT ({', '.join(table.key)}) DO UPDATE SET "
                    + ", ".join(f"{n} = excluded.{n}" for n in others),
                    [tuple(self.value(v) for v in table.values(r)) for r in kept],
                )
        c.execute(
            self.insert_tracking_statement,
            {"application_name": TRACKED, "notification_id": tracking.notification_id},
        )
        if self.datastore.single_row_tracking and c.fetchone() is None:
            raise IntegrityError(f"tracking {tracking} is not beyond the view's position")

    def _delete_all(self, c: Any) -> None:
        for table in TABLES:
            c.execute(f"DELETE FROM {self.q(table.name)}")
        c.execute(
            f"DELETE FROM {self.tracking_table} WHERE application_name = {self.p}", (TRACKED,)
        )

    def reset(self) -> None:
        with self.transaction(commit=True) as c:
            self._delete_all(c)

    def replace_all(self, change: Change, tracking: Tracking) -> None:
        with self.transaction(commit=True) as c:
            self._delete_all(c)
            if tracking.notification_id:
                self.write(c, change, tracking)

    # -- the projection's reads ------------------------------------------------------------------

    def stored_match(self, match_id: UUID) -> MatchRow | None:
        found: MatchRow | None = self._one(MATCHES, (match_id,))
        return found

    def stored_totals(self, player: UUID, family: str) -> TotalsRow | None:
        found: TotalsRow | None = self._one(TOTALS, (player, family))
        return found

    def stored_partner(self, player: UUID, family: str, partner: str) -> PartnerRow | None:
        found: PartnerRow | None = self._one(PARTNERS, (player, family, partner))
        return found

    def stored_released(self, tournament_id: UUID, number: int) -> bool:
        return self._one(RELEASED, (tournament_id, number)) is not None

    def stored_entries_of(self, player: UUID) -> list[EntryRow]:
        return self._all(ENTRIES, self._select(ENTRIES, self._where("player_id")), (player,))

    def stored_totals_of(self, player: UUID) -> list[TotalsRow]:
        return self._all(TOTALS, self._select(TOTALS, self._where("player_id")), (player,))

    def stored_partners(
        self, *, player: UUID | None = None, partner: str | None = None
    ) -> list[PartnerRow]:
        if player is not None:
            return self._all(PARTNERS, self._select(PARTNERS, self._where("player_id")), (player,))
        return self._all(PARTNERS, self._select(PARTNERS, self._where("partner")), (partner,))

    def stored_held(self, tournament_id: UUID | None, number: int) -> list[MatchRow]:
        if tournament_id is None:
            return self._all(MATCHES, self._select(MATCHES, " WHERE released IS NULL"))
        where = self._where("tournament_id", "tournament_round") + " AND released IS NULL"
        return self._all(MATCHES, self._select(MATCHES, where), (tournament_id, number))

    # -- reading -------------------------------------------------------------------------------

    def history(
        self, player: UUID, before: Cursor | None, limit: int, *, listed_only: bool
    ) -> list[EntryRow]:
        where = self._where("player_id", *(("listed",) if listed_only else ()))
        params: tuple[Any, ...] = (player, *((True,) if listed_only else ()))
        if before is not None:
            where += f" AND (position, match_id) < ({self.p}, {self.p})"
            params = (*params, before[0], UUID(before[1]))
        tail = f" ORDER BY position DESC, match_id DESC LIMIT {self.p}"
        return self._all(ENTRIES, self._select(ENTRIES, where, tail), (*params, limit))

    def matches(self, ids: list[UUID]) -> dict[UUID, MatchRow]:
        if not ids:
            return {}
        marks = ", ".join([self.p] * len(ids))
        found = self._all(
            MATCHES, self._select(MATCHES, f" WHERE match_id IN ({marks})"), tuple(ids)
        )
        return {r.match_id: r for r in found}

    def released_at(self, position: int) -> list[MatchRow]:
        where, tail = self._where("released"), " ORDER BY match_id"
        found: list[MatchRow] = self._all(MATCHES, self._select(MATCHES, where, tail), (position,))
        return sorted(found, key=lambda r: str(r.match_id))

    def top_partners(self, player: UUID, family: str, limit: int) -> list[PartnerRow]:
        where = self._where("player_id", "family")
        tail = f" ORDER BY matches DESC, won DESC, partner LIMIT {self.p}"
        return self._all(PARTNERS, self._select(PARTNERS, where, tail), (player, family, limit))

    def rows(self) -> Iterator[Row]:
        for table in TABLES:
            yield from self._all(table, self._select(table))


class SQLiteCareerView(SQLiteTrackingRecorder, _Sql):
    """The career in the embedded store's file."""

    ids_as_text = True

    def __init__(self, datastore: SQLiteDatastore) -> None:
        super().__init__(datastore)
        self.setup_batches()
        self.setup_sql(lambda t: t, "?", "tracking")

    def construct_create_table_statements(self) -> list[str]:
        types = {"uuid": "TEXT", "bool": "INTEGER", "text": "TEXT"}
        return [
            *super().construct_create_table_statements(),
            *(s for t in TABLES for s in t.ddl(lambda n: n, types)),
        ]

    def check_position(self, c: Any, start: int) -> None:
        check_sqlite_position(c, self.select_max_tracking_id_statement, TRACKED, start)


class PostgresCareerView(PostgresTrackingRecorder, _Sql):
    """The career in the game's schema (its own tracking table, ``career_tracking``)."""

    ids_as_text = False

    def __init__(self, datastore: PostgresDatastore) -> None:
        super().__init__(datastore, tracking_table_name=PG_TRACKING)
        self.setup_batches()
        q = qualified(datastore.schema)
        self.setup_sql(q, "%s", q(PG_TRACKING))
        types = {"uuid": "uuid", "bool": "boolean", "text": "text"}
        self.sql_create_statements.extend(
            Composed([SQL(s)]) for t in TABLES for s in t.ddl(q, types)
        )

    def check_position(self, c: Any, start: int) -> None:
        check_postgres_position(c, self.tracking_table, TRACKED, start)


def open_career_view(service: GameService, *, create: bool) -> CareerView:
    """The career's view on ``service``'s store, its tables made if ``create``."""
    view: CareerView = open_on(
        service,
        sqlite=SQLiteCareerView,
        postgres=PostgresCareerView,
        memory=MemoryCareerView,
        create=create,
    )
    return view


def build_career(settings: Settings, service: GameService, hub: LocalHub) -> CareerModels:
    """The career of ``settings``' process, kept as the lists and the ratings are."""
    view = open_career_view(service, create=settings.create_tables)
    freshness = kept_by(
        settings, service, hub, lambda: Watcher(view, TRACKED), lambda: follower(service, view)
    )
    return CareerModels(service, view, freshness)


def career_factories() -> dict[str, Factory]:
    """The career as ``shengji rebuild`` rebuilds it (its tables made as the store's are)."""

    def career(service: GameService) -> Projection:
        view = open_career_view(service, create=strtobool(service.env.get("CREATE_TABLE") or "y"))
        rebuilt: Projection = CareerRebuild(service, view)
        return rebuilt

    return {CareerRebuild.name: career}

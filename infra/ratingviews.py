"""The ratings' materialised views on SQLite and PostgreSQL (docs/decisions.md
D-ratings), as the lists' (:mod:`infra.readviews`): each subclasses the library's
tracking recorder of its store and :class:`~services.ratings.view.RatingsView`, on the
game service's own datastore. Its own tracking table (``ratings_tracking``) keeps the
ratings' position apart from the lists'.

* ``ratings`` — a player's rating per board (family, season; ``""`` all-time), indexed
  ``(family, season, provisional, key, player_id)``: a board's keyset pages are read on
  that index;
* ``rating_counts`` — how many rows of a board are in each rank bucket
  (:func:`~services.ratings.view.buckets`: level 0 coarse, level 1 fine), kept with the
  rows in their transaction: a rank sums at most a few hundred of them and counts the rows
  of one fine bucket on the index, however many players the board has;
* ``rating_history`` — one row per rated match of a player in a family;
* ``rating_seasons`` — the seasons with rated matches;
* ``rating_model`` — the model the rows were computed with (one row).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from functools import partial
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
from services.projections import Projection
from services.ratings.boards import RatingModels
from services.ratings.rebuild import RatingsRebuild
from services.ratings.rows import Change, HistoryRow, RatingRow, SeasonRow
from services.ratings.runner import RatingsFollower
from services.ratings.view import (
    COARSE,
    TRACKED,
    Board,
    Cursor,
    MemoryRatingsView,
    RatingsView,
    buckets,
)
from services.readmodels.runner import Watcher

RATINGS: Final = "ratings"
HISTORY: Final = "rating_history"
SEASONS: Final = "rating_seasons"
MODEL_TABLE: Final = "rating_model"
COUNTS: Final = "rating_counts"
TRACKING: Final = "ratings_tracking"
TABLES: Final = (RATINGS, HISTORY, SEASONS, COUNTS, MODEL_TABLE)

_RATING = "family, season, player_id, mu, sigma, matches, last_at, provisional, key"
_HISTORY = (
    "player_id, family, match_id, position, at, mu_before, sigma_before, mu_after, "
    "sigma_after, weight, foursome"
)
_SEASON = "family, season, first_at"


def _ddl(q: Callable[[str], str], *, uuid: str, boolean: str, real: str) -> list[str]:
    return [
        f"CREATE TABLE IF NOT EXISTS {q(RATINGS)} (family text NOT NULL, season text NOT NULL, "
        f"player_id {uuid} NOT NULL, mu {real} NOT NULL, sigma {real} NOT NULL, "
        f"matches bigint NOT NULL, last_at bigint NOT NULL, provisional {boolean} NOT NULL, "
        f"key {real} NOT NULL, PRIMARY KEY (family, season, player_id))",
        f"CREATE INDEX IF NOT EXISTS {RATINGS}_board ON {q(RATINGS)} "
        "(family, season, provisional, key, player_id)",
        f"CREATE INDEX IF NOT EXISTS {RATINGS}_player ON {q(RATINGS)} (player_id)",
        f"CREATE TABLE IF NOT EXISTS {q(HISTORY)} (player_id {uuid} NOT NULL, "
        f"family text NOT NULL, match_id {uuid} NOT NULL, position bigint NOT NULL, "
        f"at bigint NOT NULL, mu_before {real} NOT NULL, sigma_before {real} NOT NULL, "
        f"mu_after {real} NOT NULL, sigma_after {real} NOT NULL, weight {real} NOT NULL, "
        "foursome text NOT NULL, PRIMARY KEY (player_id, family, match_id))",
        f"CREATE INDEX IF NOT EXISTS {HISTORY}_at ON {q(HISTORY)} (player_id, family, at)",
        f"CREATE INDEX IF NOT EXISTS {HISTORY}_foursome ON {q(HISTORY)} "
        "(player_id, family, foursome, at)",
        f"CREATE TABLE IF NOT EXISTS {q(SEASONS)} (family text NOT NULL, season text NOT NULL, "
        "first_at bigint NOT NULL, PRIMARY KEY (family, season))",
        f"CREATE TABLE IF NOT EXISTS {q(COUNTS)} (family text NOT NULL, season text NOT NULL, "
        f"provisional {boolean} NOT NULL, level integer NOT NULL, bucket bigint NOT NULL, "
        "n bigint NOT NULL, PRIMARY KEY (family, season, provisional, level, bucket))",
        f"CREATE TABLE IF NOT EXISTS {q(MODEL_TABLE)} (one integer PRIMARY KEY, "
        "model text NOT NULL)",
    ]


class _Statements:
    def __init__(self, q: Callable[[str], str], p: str, tracking: str) -> None:
        def marks(n: int) -> str:
            return ", ".join([p] * n)

        board = f"family = {p} AND season = {p} AND provisional = {p}"
        self.upsert_rating = (
            f"INSERT INTO {q(RATINGS)} ({_RATING}) VALUES ({marks(9)}) "
            "ON CONFLICT (family, season, player_id) DO UPDATE SET mu = excluded.mu, "
            "sigma = excluded.sigma, matches = excluded.matches, last_at = excluded.last_at, "
            "provisional = excluded.provisional, key = excluded.key"
        )
        self.insert_history = f"INSERT INTO {q(HISTORY)} ({_HISTORY}) VALUES ({marks(11)})"
        self.insert_season = (
            f"INSERT INTO {q(SEASONS)} ({_SEASON}) VALUES ({marks(3)}) "
            "ON CONFLICT (family, season) DO NOTHING"
        )
        self.erase = [
            f"DELETE FROM {q(RATINGS)} WHERE player_id = {p}",
            f"DELETE FROM {q(HISTORY)} WHERE player_id = {p}",
        ]
        self.rating = (
            f"SELECT {_RATING} FROM {q(RATINGS)} WHERE family = {p} AND season = {p} "
            f"AND player_id = {p}"
        )
        self.repeats = (
            f"SELECT count(*) AS n FROM {q(HISTORY)} WHERE player_id = {p} AND family = {p} "
            f"AND foursome = {p} AND at > {p}"
        )
        self.season = f"SELECT {_SEASON} FROM {q(SEASONS)} WHERE family = {p} AND season = {p}"
        self.board_top = (
            f"SELECT {_RATING} FROM {q(RATINGS)} WHERE {board} ORDER BY key, player_id LIMIT {p}"
        )
        self.board_after = (
            f"SELECT {_RATING} FROM {q(RATINGS)} WHERE {board} AND (key, player_id) > ({p}, {p}) "
            f"ORDER BY key, player_id LIMIT {p}"
        )
        self.above = (
            f"SELECT {_RATING} FROM {q(RATINGS)} WHERE {board} AND (key, player_id) < ({p}, {p}) "
            f"ORDER BY key DESC, player_id DESC LIMIT {p}"
        )
        self.count = (
            f"INSERT INTO {q(COUNTS)} AS c (family, season, provisional, level, bucket, n) "
            f"VALUES ({marks(6)}) ON CONFLICT (family, season, provisional, level, bucket) "
            "DO UPDATE SET n = c.n + excluded.n"
        )
        self.prune_counts = f"DELETE FROM {q(COUNTS)} WHERE n = 0"
        # the rows above a place: the coarse buckets above, the fine buckets above within
        # its coarse bucket, the rows above it within its fine bucket (on the board index)
        self.rank = (
            f"SELECT (SELECT coalesce(sum(n), 0) FROM {q(COUNTS)} WHERE {board} AND level = 0 "
            f"AND bucket < {p}) + (SELECT coalesce(sum(n), 0) FROM {q(COUNTS)} WHERE {board} "
            f"AND level = 1 AND bucket >= {p} AND bucket < {p}) + (SELECT count(*) FROM "
            f"{q(RATINGS)} WHERE {board} AND key >= {p} AND (key, player_id) < ({p}, {p})) AS n"
        )
        self.seasons = (
            f"SELECT {_SEASON} FROM {q(SEASONS)} WHERE family = {p} ORDER BY first_at, season"
        )
        self.history_at = (
            f"SELECT {_HISTORY} FROM {q(HISTORY)} WHERE player_id = {p} AND family = {p} "
            f"AND at <= {p} ORDER BY at DESC, position DESC LIMIT 1"
        )
        self.history_count = (
            f"SELECT count(*) AS n FROM {q(HISTORY)} WHERE player_id = {p} AND family = {p} "
            f"AND at <= {p}"
        )
        self.ratings_of = f"SELECT {_RATING} FROM {q(RATINGS)} WHERE player_id = {p}"
        self.model = f"SELECT model FROM {q(MODEL_TABLE)} WHERE one = 1"
        self.set_model = f"INSERT INTO {q(MODEL_TABLE)} (one, model) VALUES (1, {p})"
        self.emptied = [f"DELETE FROM {q(t)}" for t in TABLES]
        self.untrack = f"DELETE FROM {tracking} WHERE application_name = {p}"
        self.all = [
            f"SELECT {_RATING} FROM {q(RATINGS)}",
            f"SELECT {_HISTORY} FROM {q(HISTORY)}",
            f"SELECT {_SEASON} FROM {q(SEASONS)}",
        ]


def _rating(r: Any) -> RatingRow:
    return RatingRow(
        family=r["family"],
        season=r["season"],
        player_id=as_uuid(r["player_id"]),
        mu=r["mu"],
        sigma=r["sigma"],
        matches=r["matches"],
        last_at=r["last_at"],
        provisional=bool(r["provisional"]),
        key=r["key"],
    )


def _history(r: Any) -> HistoryRow:
    return HistoryRow(
        player_id=as_uuid(r["player_id"]),
        family=r["family"],
        match_id=as_uuid(r["match_id"]),
        position=r["position"],
        at=r["at"],
        mu_before=r["mu_before"],
        sigma_before=r["sigma_before"],
        mu_after=r["mu_after"],
        sigma_after=r["sigma_after"],
        weight=r["weight"],
        foursome=r["foursome"],
    )


def _season(r: Any) -> SeasonRow:
    return SeasonRow(family=r["family"], season=r["season"], first_at=r["first_at"])


class _SqlRatings(SqlView, RatingsView):
    """What the SQLite and PostgreSQL ratings' views share: the statements' use."""

    sql: _Statements

    def write(self, c: Any, change: Change, tracking: Tracking, *, empty: bool = False) -> None:
        """``change`` and ``tracking`` in the transaction ``c``; ``empty``: the view has
        no rows (no old bucket to leave)."""
        counts: Counter[tuple[str, str, bool, int, int]] = Counter()
        for r in change.ratings.values():
            old = None if empty else self.old_row(c, r.family, r.season, r.player_id)
            if old is not None:
                self.move(counts, old, -1)
            self.move(counts, r, +1)
        if change.ratings:
            c.executemany(
                self.sql.upsert_rating,
                [
                    (r.family, r.season, self.key(r.player_id), r.mu, r.sigma, r.matches,
                     r.last_at, self.flag(r.provisional), r.key)
                    for r in change.ratings.values()
                ],
            )  # fmt: skip
        if change.history:
            c.executemany(
                self.sql.insert_history,
                [
                    (self.key(h.player_id), h.family, self.key(h.match_id), h.position, h.at,
                     h.mu_before, h.sigma_before, h.mu_after, h.sigma_after, h.weight,
                     h.foursome)
                    for h in change.history
                ],
            )  # fmt: skip
        if change.seasons:
            c.executemany(
                self.sql.insert_season,
                [(s.family, s.season, s.first_at) for s in change.seasons.values()],
            )
        for player in change.erased:
            c.execute(self.sql.ratings_of, (self.key(player),))
            for gone in c.fetchall():
                self.move(counts, _rating(gone), -1)
            for statement in self.sql.erase:
                c.execute(statement, (self.key(player),))
        if counts:
            c.executemany(
                self.sql.count,
                [(f, s, self.flag(p), level, b, n) for (f, s, p, level, b), n in counts.items()],
            )
            c.execute(self.sql.prune_counts)
        self.write_tracking(c, tracking)

    def old_row(self, c: Any, family: str, season: str, player: UUID) -> RatingRow | None:
        c.execute(self.sql.rating, (family, season, self.key(player)))
        r = c.fetchone()
        return None if r is None else _rating(r)

    @staticmethod
    def move(counts: Counter[tuple[str, str, bool, int, int]], row: RatingRow, by: int) -> None:
        coarse, fine = buckets(row.key)
        counts[row.family, row.season, row.provisional, 0, coarse] += by
        counts[row.family, row.season, row.provisional, 1, fine] += by

    def remodel(self, c: Any, model: str) -> None:
        """No rows, no position, and the rows to come are of ``model``."""
        self.delete_all(c)
        c.execute(self.sql.set_model, (model,))

    def reset(self, model: str) -> None:
        with self.transaction(commit=True) as c:
            self.remodel(c, model)

    def replace_all(self, change: Change, tracking: Tracking, model: str) -> None:
        with self.transaction(commit=True) as c:
            self.remodel(c, model)
            if tracking.notification_id:
                self.write(c, change, tracking, empty=True)

    def model(self) -> str | None:
        r = self.fetch_one(self.sql.model, ())
        return None if r is None else str(r["model"])

    def stored_rating(self, family: str, season: str, player: UUID) -> RatingRow | None:
        r = self.fetch_one(self.sql.rating, (family, season, self.key(player)))
        return None if r is None else _rating(r)

    def stored_repeats(self, player: UUID, family: str, foursome: str, since: int) -> int:
        r = self.fetch_one(self.sql.repeats, (self.key(player), family, foursome, since))
        return int(r["n"])

    def stored_season(self, family: str, season: str) -> SeasonRow | None:
        r = self.fetch_one(self.sql.season, (family, season))
        return None if r is None else _season(r)

    def _board(self, board: Board) -> tuple[Any, ...]:
        return board[0], board[1], self.flag(board[2])

    def _cursor(self, at: Cursor) -> tuple[Any, ...]:
        return at[0], self.key(UUID(at[1]))

    def board(self, board: Board, after: Cursor | None, limit: int) -> list[RatingRow]:
        if after is None:
            found = self.fetch_all(self.sql.board_top, (*self._board(board), limit))
        else:
            found = self.fetch_all(
                self.sql.board_after, (*self._board(board), *self._cursor(after), limit)
            )
        return [_rating(r) for r in found]

    def above(self, board: Board, at: Cursor, limit: int) -> list[RatingRow]:
        found = self.fetch_all(self.sql.above, (*self._board(board), *self._cursor(at), limit))
        return [_rating(r) for r in reversed(found)]

    def rank(self, board: Board, at: Cursor) -> int:
        coarse, fine = buckets(at[0])
        b = self._board(board)
        r = self.fetch_one(
            self.sql.rank,
            (*b, coarse, *b, COARSE * coarse, fine, *b, float(fine), *self._cursor(at)),
        )
        return int(r["n"])

    def seasons(self, family: str) -> list[SeasonRow]:
        return [_season(r) for r in self.fetch_all(self.sql.seasons, (family,))]

    def history_at(self, player: UUID, family: str, at: int) -> HistoryRow | None:
        r = self.fetch_one(self.sql.history_at, (self.key(player), family, at))
        return None if r is None else _history(r)

    def history_count(self, player: UUID, family: str, at: int) -> int:
        r = self.fetch_one(self.sql.history_count, (self.key(player), family, at))
        return int(r["n"])

    def ratings_of(self, player: UUID) -> list[RatingRow]:
        return [_rating(r) for r in self.fetch_all(self.sql.ratings_of, (self.key(player),))]

    def rows(self) -> Iterator[RatingRow | HistoryRow | SeasonRow]:
        ratings, history, seasons = (self.fetch_all(s) for s in self.sql.all)
        yield from (_rating(r) for r in ratings)
        yield from (_history(r) for r in history)
        yield from (_season(r) for r in seasons)


class SQLiteRatingsView(SQLiteTrackingRecorder, SQLitePosition, _SqlRatings):
    """The ratings in the embedded store's file (the library's ``tracking`` table: the
    ratings' position is kept under its own application name there)."""

    ids_as_text = True

    def __init__(self, datastore: SQLiteDatastore) -> None:
        super().__init__(datastore)
        self.setup_batches()
        self.sql = _Statements(lambda t: t, "?", "tracking")

    def construct_create_table_statements(self) -> list[str]:
        return [
            *super().construct_create_table_statements(),
            *_ddl(lambda t: t, uuid="TEXT", boolean="INTEGER", real="REAL"),
        ]


class PostgresRatingsView(PostgresTrackingRecorder, PostgresPosition, _SqlRatings):
    """The ratings in the game's schema (their own tracking table, ``ratings_tracking``)."""

    ids_as_text = False

    def __init__(self, datastore: PostgresDatastore) -> None:
        super().__init__(datastore, tracking_table_name=TRACKING)
        self.setup_batches()
        q = qualified(datastore.schema)
        self.sql = _Statements(q, "%s", q(TRACKING))
        self.sql_create_statements.extend(
            postgres_ddl(_ddl(q, uuid="uuid", boolean="boolean", real="double precision"))
        )
        self.tracking_table = q(TRACKING)


def open_ratings_view(service: GameService, *, create: bool) -> RatingsView:
    """The ratings' view on ``service``'s store, its tables made if ``create``."""
    view: RatingsView = open_on(
        service,
        sqlite=SQLiteRatingsView,
        postgres=PostgresRatingsView,
        memory=MemoryRatingsView,
        create=create,
    )
    return view


def build_ratings(settings: Settings, service: GameService, hub: LocalHub) -> RatingModels:
    """The ratings of ``settings``' process, kept as the lists are
    (:func:`infra.readviews.build_read_models`)."""
    view = open_ratings_view(service, create=settings.create_tables)
    schedule = settings.rating_seasons
    follower = partial(RatingsFollower, service, view, schedule=schedule)
    watcher = partial(Watcher, view, TRACKED)
    return RatingModels(service, view, kept_by(settings, service, hub, watcher, follower), schedule)


def ratings_rebuild(service: GameService) -> Projection:
    """``shengji rebuild``'s ratings (the schedule from the environment's settings)."""
    view = open_ratings_view(service, create=strtobool(service.env.get("CREATE_TABLE") or "y"))
    schedule = service.env.get("RATING_SEASONS") or "monthly"
    rebuilt: Projection = RatingsRebuild(service, view, schedule)
    return rebuilt

"""The ratings' materialised view, a :class:`~services.readmodels.tracked.TrackedView`:
rows and tracking record written in one transaction, an event's or a batch's
(docs/decisions.md D-ratings, as D-readmodels' lists).

:class:`RatingsView` is the view as the projection and the boards use it, whatever the
store. The view also stores the
model it was computed with (:meth:`~RatingsView.model`): a follower that finds another
resets the view and rates the whole log again.

A board is read in keyset pages on one index order — (family, season, provisional, key,
player) — so a page costs the same however many players are rated. A player's rank is not
a count of every row above them (that grows with the board): the SQL views keep a small
table of counts per score bucket (:func:`buckets`: a coarse bucket of :data:`COARSE`
points and a fine one of a point), kept with the rows in the same transaction, and a rank
is the sum of the coarse buckets above (at most the rating range / 64 rows), the fine
buckets above within the player's coarse one (at most 64 rows) and a count on the index
within the player's one-point bucket.

:class:`MemoryRatingsView` keeps the rows in memory (POPO stores, tests, rebuilds'
scratch copy); :mod:`infra.ratingviews` has the SQLite and PostgreSQL views.
"""

from __future__ import annotations

import bisect
import math
import threading
from abc import ABC, abstractmethod
from collections.abc import Iterator
from typing import Any
from uuid import UUID

from eventsourcing.persistence import Tracking
from eventsourcing.popo import POPOTrackingRecorder

from services.ratings.rows import Change, HistoryRow, RatingKey, RatingRow, SeasonRow, plain
from services.readmodels.tracked import UPSTREAM, PositionMovedError, TrackedView

TRACKED = f"{UPSTREAM}-ratings"
"""The application name of the ratings' tracking records: the log followed is the game's
(:data:`~services.readmodels.view.UPSTREAM`), the position the ratings' own (on SQLite
the library's one tracking table holds the lists' position too)."""

Board = tuple[str, str, bool]
"""(family, season, provisional): one ordered list of ratings."""
Cursor = tuple[float, str]
"""A place on a board: (key, player id as text)."""


class RatingsView(TrackedView[Change], ABC):
    """The ratings' rows and the position in the log they show (module docstring)."""

    tracked = TRACKED

    def new_change(self) -> Change:
        return Change()

    def rating(self, family: str, season: str, player: UUID) -> RatingRow | None:
        """The player's row on the board as the projection left it (the batch's first)."""
        if self.pending is not None:
            if player in self.pending.erased:
                return None
            found = self.pending.ratings.get((family, season, player))
            if found is not None:
                return found
        return self.stored_rating(family, season, player)

    def repeats(self, player: UUID, family: str, foursome: str, since: int) -> int:
        """How many rated matches of ``foursome`` in ``family`` the player has after
        ``since`` (microseconds)."""
        n = self.stored_repeats(player, family, foursome, since)
        if self.pending is not None:
            n += sum(
                1
                for h in self.pending.history
                if h.player_id == player
                and h.family == family
                and h.foursome == foursome
                and h.at > since
            )
        return n

    def season_row(self, family: str, season: str) -> SeasonRow | None:
        if self.pending is not None and (family, season) in self.pending.seasons:
            return self.pending.seasons[family, season]
        return self.stored_season(family, season)

    @abstractmethod
    def reset(self, model: str) -> None:
        """Forget every row and the position, and say the rows are of ``model``."""

    @abstractmethod
    def replace_all(self, change: Change, tracking: Tracking, model: str) -> None:
        """Every row, the position and the model replaced, in one transaction."""

    @abstractmethod
    def model(self) -> str | None:
        """The model the rows were computed with (None: never said)."""

    @abstractmethod
    def stored_rating(self, family: str, season: str, player: UUID) -> RatingRow | None: ...

    @abstractmethod
    def stored_repeats(self, player: UUID, family: str, foursome: str, since: int) -> int: ...

    @abstractmethod
    def stored_season(self, family: str, season: str) -> SeasonRow | None: ...

    # -- reading -------------------------------------------------------------------------------

    @abstractmethod
    def board(self, board: Board, after: Cursor | None, limit: int) -> list[RatingRow]:
        """The first ``limit`` rows of ``board`` after ``after`` (None: from the top)."""

    @abstractmethod
    def above(self, board: Board, at: Cursor, limit: int) -> list[RatingRow]:
        """The ``limit`` rows just before ``at`` on ``board``, top first."""

    @abstractmethod
    def rank(self, board: Board, at: Cursor) -> int:
        """How many rows come before ``at`` on ``board``."""

    @abstractmethod
    def seasons(self, family: str) -> list[SeasonRow]:
        """The family's seasons with rated matches, oldest first."""

    @abstractmethod
    def history_at(self, player: UUID, family: str, at: int) -> HistoryRow | None:
        """The player's last rated match in ``family`` finished at or before ``at``."""

    @abstractmethod
    def history_count(self, player: UUID, family: str, at: int) -> int:
        """How many rated matches in ``family`` the player finished at or before ``at``."""

    @abstractmethod
    def ratings_of(self, player: UUID) -> list[RatingRow]:
        """The player's rows on every board."""

    @abstractmethod
    def rows(self) -> Iterator[RatingRow | HistoryRow | SeasonRow]:
        """Every row (``shengji rebuild --check``)."""

    def contents(self) -> dict[str, Any]:
        """Every row as JSON-ready values, keyed by table and id, with the position and
        the model."""
        out: dict[str, Any] = {"position": self.position(), "model": self.model()}
        for row in self.rows():
            if isinstance(row, RatingRow):
                out[f"rating {row.family} {row.season} {row.player_id}"] = plain(row)
            elif isinstance(row, HistoryRow):
                out[f"history {row.player_id} {row.family} {row.match_id}"] = plain(row)
            else:
                out[f"season {row.family} {row.season}"] = plain(row)
        return out


LAYOUT = 2
"""The view's tables (2: with the rank buckets' counts); a view of another layout is rated
again from the log, as one of another model is."""

COARSE = 64
"""Points of a board's key per coarse rank bucket (a fine bucket is one point)."""


def buckets(key: float) -> tuple[int, int]:
    """The coarse and the fine rank bucket of a board's ``key`` (module docstring); the
    fine bucket is within the coarse one: ``COARSE * coarse <= fine``."""
    fine = math.floor(key)
    return fine // COARSE, fine


def cursor_of(row: RatingRow) -> Cursor:
    return row.key, str(row.player_id)


class MemoryRatingsView(POPOTrackingRecorder, RatingsView):
    """The view in memory (POPO): rows in dicts, each board a sorted list of cursors."""

    def __init__(self, model: str | None = None) -> None:
        super().__init__()
        self.setup_batches()
        self.rows_lock = threading.RLock()
        self.clear()
        self.model_name = model

    def clear(self) -> None:
        self.ratings: dict[RatingKey, RatingRow] = {}
        self.boards: dict[Board, list[Cursor]] = {}
        self.by_cursor: dict[tuple[Board, Cursor], RatingRow] = {}
        self.history: dict[tuple[UUID, str], list[HistoryRow]] = {}
        self.season_rows: dict[tuple[str, str], SeasonRow] = {}

    def _remove(self, row: RatingRow) -> None:
        board, cursor = (row.family, row.season, row.provisional), cursor_of(row)
        keys = self.boards[board]
        del keys[bisect.bisect_left(keys, cursor)]
        del self.by_cursor[board, cursor]
        del self.ratings[row.family, row.season, row.player_id]

    def store(self, change: Change, start: int, tracking: Tracking) -> None:
        with self.rows_lock:
            if self.position() != start:
                raise PositionMovedError(f"the view is at {self.position()}, not {start}")
            self.insert_tracking(Tracking(TRACKED, tracking.notification_id))
            for r in change.ratings.values():
                old = self.ratings.get((r.family, r.season, r.player_id))
                if old is not None:
                    self._remove(old)
                board = (r.family, r.season, r.provisional)
                bisect.insort(self.boards.setdefault(board, []), cursor_of(r))
                self.by_cursor[board, cursor_of(r)] = r
                self.ratings[r.family, r.season, r.player_id] = r
            for h in change.history:
                self.history.setdefault((h.player_id, h.family), []).append(h)
            for key, s in change.seasons.items():
                self.season_rows.setdefault(key, s)
            for player in change.erased:
                for row in [r for k, r in self.ratings.items() if k[2] == player]:
                    self._remove(row)
                for gone in [k for k in self.history if k[0] == player]:
                    del self.history[gone]

    def reset(self, model: str) -> None:
        with self.rows_lock:
            POPOTrackingRecorder.__init__(self)
            self.clear()
            self.model_name = model

    def replace_all(self, change: Change, tracking: Tracking, model: str) -> None:
        with self.rows_lock:
            self.reset(model)
            if tracking.notification_id:
                self.store(change, 0, tracking)

    def model(self) -> str | None:
        return self.model_name

    def stored_rating(self, family: str, season: str, player: UUID) -> RatingRow | None:
        return self.ratings.get((family, season, player))

    def stored_repeats(self, player: UUID, family: str, foursome: str, since: int) -> int:
        with self.rows_lock:
            found = self.history.get((player, family), [])
            return sum(1 for h in found if h.foursome == foursome and h.at > since)

    def stored_season(self, family: str, season: str) -> SeasonRow | None:
        return self.season_rows.get((family, season))

    def board(self, board: Board, after: Cursor | None, limit: int) -> list[RatingRow]:
        with self.rows_lock:
            keys = self.boards.get(board, [])
            start = 0 if after is None else bisect.bisect_right(keys, after)
            return [self.by_cursor[board, c] for c in keys[start : start + limit]]

    def above(self, board: Board, at: Cursor, limit: int) -> list[RatingRow]:
        with self.rows_lock:
            keys = self.boards.get(board, [])
            end = bisect.bisect_left(keys, at)
            return [self.by_cursor[board, c] for c in keys[max(0, end - limit) : end]]

    def rank(self, board: Board, at: Cursor) -> int:
        with self.rows_lock:
            return bisect.bisect_left(self.boards.get(board, []), at)

    def seasons(self, family: str) -> list[SeasonRow]:
        with self.rows_lock:
            found = [s for (f, _), s in self.season_rows.items() if f == family]
        return sorted(found, key=lambda s: s.first_at)

    def history_at(self, player: UUID, family: str, at: int) -> HistoryRow | None:
        with self.rows_lock:
            found = [h for h in self.history.get((player, family), []) if h.at <= at]
        return max(found, key=lambda h: h.position) if found else None

    def history_count(self, player: UUID, family: str, at: int) -> int:
        with self.rows_lock:
            return sum(1 for h in self.history.get((player, family), []) if h.at <= at)

    def ratings_of(self, player: UUID) -> list[RatingRow]:
        with self.rows_lock:
            return [r for k, r in self.ratings.items() if k[2] == player]

    def rows(self) -> Iterator[RatingRow | HistoryRow | SeasonRow]:
        with self.rows_lock:
            found: list[RatingRow | HistoryRow | SeasonRow] = [
                *self.ratings.values(),
                *(h for rows in self.history.values() for h in rows),
                *self.season_rows.values(),
            ]
        yield from found

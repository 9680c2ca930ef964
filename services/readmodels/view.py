"""The lists' materialised view, a :class:`~services.readmodels.tracked.TrackedView`: rows
and tracking record written in one transaction, an event's or a batch's
(docs/decisions.md D-readmodels).

:class:`ListsView` is the view as the projection and the lists use it, whatever the
store. The lists page on positions (:meth:`~ListsView.match_page`,
:meth:`~ListsView.tournament_page`), a page costing the same however many rows there are.

:class:`MemoryListsView` keeps the rows in memory (POPO stores, tests, ``shengji rebuild
--check``'s scratch copy); :mod:`infra.readviews` has the SQLite and PostgreSQL views.
"""

from __future__ import annotations

import bisect
import threading
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Any
from uuid import UUID

from eventsourcing.persistence import Tracking
from eventsourcing.popo import POPOTrackingRecorder

from services.readmodels.rows import Change, MatchRow, Page, SeatRow, TournamentRow, plain
from services.readmodels.tracked import PositionMovedError, TrackedView
from services.summaries import Origin

REMEMBERED = 4096
"""Match rows a view remembers having written (:attr:`ListsView.remembered`)."""


class ListsView(TrackedView[Change], ABC):
    """The rows of the lists and the position in the log they show (module docstring)."""

    remembered: OrderedDict[UUID, MatchRow]
    """The match rows this view last wrote (at most :data:`REMEMBERED`): a round's
    event reads its match's row, and most matches change in every batch."""

    def setup_batches(self) -> None:
        super().setup_batches()
        self.remembered = OrderedDict()

    def new_change(self) -> Change:
        return Change()

    def kept(self, change: Change) -> None:
        for row in change.matches.values():
            self.remembered[row.match_id] = row
            self.remembered.move_to_end(row.match_id)
        while len(self.remembered) > REMEMBERED:
            self.remembered.popitem(last=False)

    def forget_rows(self) -> None:
        self.remembered.clear()

    def match_row(self, match_id: UUID) -> MatchRow | None:
        """The match's row as the projection left it (the batch's, else the one this
        view last wrote, else the stored one)."""
        return self.as_left(lambda c: c.matches, match_id, self._last_written)

    def _last_written(self, match_id: UUID) -> MatchRow | None:
        found = self.remembered.get(match_id)
        return self.stored_match(match_id) if found is None else found

    def seat_row(self, account_id: UUID, match_id: UUID) -> SeatRow | None:
        key = (account_id, match_id)
        return self.as_left(lambda c: c.seats, key, lambda k: self.stored_seat(*k))

    def tournament_row(self, tournament_id: UUID) -> TournamentRow | None:
        return self.as_left(lambda c: c.tournaments, tournament_id, self.stored_tournament)

    @abstractmethod
    def reset(self) -> None:
        """Forget every row and the position, in one transaction."""

    @abstractmethod
    def replace_all(self, change: Change, tracking: Tracking) -> None:
        """Every row and the position replaced by ``change`` at ``tracking`` (a position
        0: none), in one transaction (``shengji rebuild``)."""

    @abstractmethod
    def stored_match(self, match_id: UUID) -> MatchRow | None: ...

    @abstractmethod
    def stored_seat(self, account_id: UUID, match_id: UUID) -> SeatRow | None: ...

    @abstractmethod
    def stored_tournament(self, tournament_id: UUID) -> TournamentRow | None: ...

    # -- reading -------------------------------------------------------------------------------

    def match_page(self, after: int, limit: int, origin: Origin | None) -> Page:
        """The public matches after ``after`` (positions of ``MatchCreated``; of
        ``MatchImported`` for ``origin="imported"``), at most ``limit``."""
        imported = origin == "imported"
        return _page(
            self.listed_matches(after, limit + 1, imported=imported, played=origin == "played"),
            lambda before: self.last_match_key(after, before, imported=imported),
            after,
            limit,
        )

    def tournament_page(self, after: int, limit: int, status: str | None) -> Page:
        """The tournaments (in ``status``) after ``after``, at most ``limit``."""
        return _page(
            self.listed_tournaments(after, limit + 1, status),
            lambda before: self.last_tournament_key(after, before),
            after,
            limit,
        )

    @abstractmethod
    def listed_matches(
        self, after: int, limit: int, *, imported: bool, played: bool
    ) -> list[tuple[int, bytes]]:
        """The first ``limit`` public matches with a key > ``after``, by key (the
        position of ``MatchImported`` when ``imported``, else of ``MatchCreated``;
        ``played``: only those played here): (key, list item)."""

    @abstractmethod
    def last_match_key(self, after: int, before: int | None, *, imported: bool) -> int | None:
        """The greatest key of any match (listed or not) in (``after``, ``before``)."""

    @abstractmethod
    def listed_tournaments(
        self, after: int, limit: int, status: str | None
    ) -> list[tuple[int, bytes]]: ...

    @abstractmethod
    def last_tournament_key(self, after: int, before: int | None) -> int | None: ...

    @abstractmethod
    def seats_of(self, account_id: UUID) -> list[tuple[SeatRow, bytes]]:
        """The account's seats with their match's ``mine`` item, in no order."""

    @abstractmethod
    def rows(self) -> Iterator[MatchRow | SeatRow | TournamentRow]:
        """Every row (``shengji rebuild --check``)."""

    def contents(self) -> dict[str, Any]:
        """Every row as JSON-ready values, keyed by table and id, and the position."""
        out: dict[str, Any] = {"position": self.position()}
        for row in self.rows():
            if isinstance(row, MatchRow):
                out[f"match {row.match_id}"] = plain(row)
            elif isinstance(row, SeatRow):
                out[f"seat {row.account_id} {row.match_id}"] = plain(row)
            else:
                out[f"tournament {row.tournament_id}"] = plain(row)
        return out


def _page(
    found: list[tuple[int, bytes]],
    last_key: Callable[[int | None], int | None],
    after: int,
    limit: int,
) -> Page:
    """A page as the log scan gave it: ``next`` is the last position read — the last key
    of any row (shown or not) before the first item left for the next page, or up to the
    end when none is left."""
    if len(found) > limit:
        before = found[limit][0]
        return Page([item for _, item in found[:limit]], last_key(before) or after, True)
    return Page([item for _, item in found], last_key(None) or after, False)


class MemoryListsView(POPOTrackingRecorder, ListsView):
    """The view in memory (POPO): rows in dicts, keys in sorted lists."""

    def __init__(self) -> None:
        super().__init__()
        self.setup_batches()
        self.rows_lock = threading.RLock()
        self.clear()

    def clear(self) -> None:
        """No rows."""
        self.forget_rows()
        self.matches: dict[UUID, MatchRow] = {}
        self.match_keys: list[int] = []
        self.imported_keys: list[int] = []
        self.by_key: dict[int, UUID] = {}
        self.by_imported_key: dict[int, UUID] = {}
        self.seats: dict[tuple[UUID, UUID], SeatRow] = {}
        self.seats_by_account: dict[UUID, set[UUID]] = {}
        self.tournaments: dict[UUID, TournamentRow] = {}
        self.tournament_keys: list[int] = []
        self.by_tournament_key: dict[int, UUID] = {}

    def store(self, change: Change, start: int, tracking: Tracking) -> None:
        with self.rows_lock:
            if self.position() != start:
                raise PositionMovedError(f"the view is at {self.position()}, not {start}")
            self.insert_tracking(tracking)  # IntegrityError unless beyond the position
            for m in change.matches.values():
                if m.match_id not in self.matches:
                    bisect.insort(self.match_keys, m.position)
                    self.by_key[m.position] = m.match_id
                old = self.matches.get(m.match_id)
                if m.imported_position is not None and (old is None or old.played):
                    bisect.insort(self.imported_keys, m.imported_position)
                    self.by_imported_key[m.imported_position] = m.match_id
                self.matches[m.match_id] = m
            for s in change.seats.values():
                self.seats[s.account_id, s.match_id] = s
                self.seats_by_account.setdefault(s.account_id, set()).add(s.match_id)
            for t in change.tournaments.values():
                if t.tournament_id not in self.tournaments:
                    bisect.insort(self.tournament_keys, t.position)
                    self.by_tournament_key[t.position] = t.tournament_id
                self.tournaments[t.tournament_id] = t

    def reset(self) -> None:
        with self.rows_lock:
            POPOTrackingRecorder.__init__(self)  # the library's tracking, as new
            self.clear()

    def replace_all(self, change: Change, tracking: Tracking) -> None:
        with self.rows_lock:
            self.reset()
            if tracking.notification_id:
                self.store(change, 0, tracking)

    def stored_match(self, match_id: UUID) -> MatchRow | None:
        return self.matches.get(match_id)

    def stored_seat(self, account_id: UUID, match_id: UUID) -> SeatRow | None:
        return self.seats.get((account_id, match_id))

    def stored_tournament(self, tournament_id: UUID) -> TournamentRow | None:
        return self.tournaments.get(tournament_id)

    def listed_matches(
        self, after: int, limit: int, *, imported: bool, played: bool
    ) -> list[tuple[int, bytes]]:
        keys, ids = (
            (self.imported_keys, self.by_imported_key)
            if imported
            else (self.match_keys, self.by_key)
        )
        out: list[tuple[int, bytes]] = []
        with self.rows_lock:
            for i in range(bisect.bisect_right(keys, after), len(keys)):
                key = keys[i]
                row = self.matches[ids[key]]
                if row.listed and (row.played or not played):
                    out.append((key, row.item))
                    if len(out) == limit:
                        break
        return out

    def last_match_key(self, after: int, before: int | None, *, imported: bool) -> int | None:
        return _last(self.imported_keys if imported else self.match_keys, after, before)

    def listed_tournaments(
        self, after: int, limit: int, status: str | None
    ) -> list[tuple[int, bytes]]:
        out: list[tuple[int, bytes]] = []
        with self.rows_lock:
            keys = self.tournament_keys
            for i in range(bisect.bisect_right(keys, after), len(keys)):
                key = keys[i]
                row = self.tournaments[self.by_tournament_key[key]]
                if status is None or row.status == status:
                    out.append((key, row.item))
                    if len(out) == limit:
                        break
        return out

    def last_tournament_key(self, after: int, before: int | None) -> int | None:
        return _last(self.tournament_keys, after, before)

    def seats_of(self, account_id: UUID) -> list[tuple[SeatRow, bytes]]:
        with self.rows_lock:
            return [
                (self.seats[account_id, m], self.matches[m].mine)
                for m in self.seats_by_account.get(account_id, ())
            ]

    def rows(self) -> Iterator[MatchRow | SeatRow | TournamentRow]:
        with self.rows_lock:
            found: list[MatchRow | SeatRow | TournamentRow] = [
                *self.matches.values(),
                *self.seats.values(),
                *self.tournaments.values(),
            ]
        yield from found


def _last(keys: list[int], after: int, before: int | None) -> int | None:
    """The greatest of the sorted ``keys`` in (``after``, ``before``)."""
    end = len(keys) if before is None else bisect.bisect_left(keys, before)
    return keys[end - 1] if end and keys[end - 1] > after else None

"""The player's career as a materialised view: an eventsourcing ``TrackingRecorder`` whose
rows and tracking record are written in one transaction (docs/decisions.md D-career, as
the lists' and the ratings' views).

:class:`CareerView` is the view as the projection and the reads use it, whatever the
store. Inside :meth:`~CareerView.batch` the rows the events change are kept in memory (a
:class:`~services.career.rows.Change`, the last row of each key, None for a row deleted)
and written at its end with the last tracking record, only if the view is still at the
batch's start (:class:`~services.readmodels.view.PositionMovedError` else); the
projection reads through the batch (:meth:`~CareerView.match`, :meth:`~CareerView.totals`,
…), so it sees its own writes. :class:`MemoryCareerView` keeps the rows in memory (POPO
stores, tests, rebuilds' scratch copy); :mod:`infra.careerviews` has the SQLite and
PostgreSQL views.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar
from uuid import UUID

from eventsourcing.persistence import Tracking
from eventsourcing.popo import POPOTrackingRecorder

from services.career.rows import (
    Change,
    EntryRow,
    MatchRow,
    PartnerRow,
    ReleasedRow,
    Row,
    TotalsRow,
    key_of,
    plain,
)
from services.readmodels.tracked import UPSTREAM, PositionMovedError, TrackedView

TRACKED = f"{UPSTREAM}-career"
"""The application name of the career's tracking records (the log followed is the
game's; the position the career's own)."""
Cursor = tuple[int, str]
"""A place in a player's history: (position, match id as text); pages go back from it."""
K = TypeVar("K")
R = TypeVar("R")


def merged(
    stored: Iterable[R],
    pending: dict[K, R | None] | None,
    key: Callable[[R], K],
    keep: Callable[[R], bool],
) -> list[R]:
    """``stored`` rows with a batch's ``pending`` rows of the same keys in their place
    (None: deleted), and the batch's new rows that ``keep`` accepts."""
    out: dict[K, R] = {key(r): r for r in stored}
    for k, row in (pending or {}).items():
        if row is None:
            out.pop(k, None)
        elif keep(row):
            out[k] = row
        else:
            out.pop(k, None)
    return list(out.values())


class CareerView(TrackedView[Change], ABC):
    """The career's rows and the position in the log they show (module docstring)."""

    tracked = TRACKED

    def new_change(self) -> Change:
        return Change()

    # -- what the projection reads: the stored rows as the batch left them ------------------------

    def match(self, match_id: UUID) -> MatchRow | None:
        return self.as_left(lambda c: c.matches, match_id, self.stored_match)

    def totals(self, player: UUID, family: str) -> TotalsRow | None:
        return self.as_left(lambda c: c.totals, (player, family), lambda k: self.stored_totals(*k))

    def partner(self, player: UUID, family: str, partner: str) -> PartnerRow | None:
        key = (player, family, partner)
        return self.as_left(lambda c: c.partners, key, lambda k: self.stored_partner(*k))

    def is_released(self, tournament_id: UUID, number: int) -> bool:
        if self.pending is not None and (tournament_id, number) in self.pending.released:
            return True
        return self.stored_released(tournament_id, number)

    def entries_of(self, player: UUID) -> list[EntryRow]:
        pending = None if self.pending is None else self.pending.entries
        return merged(
            self.stored_entries_of(player),
            pending,
            lambda r: (r.player_id, r.match_id),
            lambda r: r.player_id == player,
        )

    def totals_of(self, player: UUID) -> list[TotalsRow]:
        pending = None if self.pending is None else self.pending.totals
        return merged(
            self.stored_totals_of(player),
            pending,
            lambda r: (r.player_id, r.family),
            lambda r: r.player_id == player,
        )

    def partners_of(self, player: UUID) -> list[PartnerRow]:
        pending = None if self.pending is None else self.pending.partners
        return merged(
            self.stored_partners(player=player),
            pending,
            lambda r: (r.player_id, r.family, r.partner),
            lambda r: r.player_id == player,
        )

    def partners_with(self, partner: str) -> list[PartnerRow]:
        pending = None if self.pending is None else self.pending.partners
        return merged(
            self.stored_partners(partner=partner),
            pending,
            lambda r: (r.player_id, r.family, r.partner),
            lambda r: r.partner == partner,
        )

    def held(self, tournament_id: UUID | None = None, number: int = 0) -> list[MatchRow]:
        """The matches held until their tournament round completes (R36): of one round,
        or every one (``tournament_id`` None)."""
        pending = None if self.pending is None else self.pending.matches

        def keep(r: MatchRow) -> bool:
            mine = tournament_id is None or (r.tournament_id, r.tournament_round) == (
                tournament_id,
                number,
            )
            return r.released is None and mine

        return merged(self.stored_held(tournament_id, number), pending, lambda r: r.match_id, keep)

    @abstractmethod
    def store(self, change: Change, start: int, tracking: Tracking) -> None:
        """Write ``change`` and ``tracking`` in one transaction if the position is
        ``start``; else :class:`PositionMovedError` and nothing written."""

    @abstractmethod
    def reset(self) -> None:
        """Forget every row and the position."""

    @abstractmethod
    def replace_all(self, change: Change, tracking: Tracking) -> None:
        """Every row and the position replaced, in one transaction (``shengji rebuild``)."""

    @abstractmethod
    def stored_match(self, match_id: UUID) -> MatchRow | None: ...

    @abstractmethod
    def stored_totals(self, player: UUID, family: str) -> TotalsRow | None: ...

    @abstractmethod
    def stored_partner(self, player: UUID, family: str, partner: str) -> PartnerRow | None: ...

    @abstractmethod
    def stored_released(self, tournament_id: UUID, number: int) -> bool: ...

    @abstractmethod
    def stored_entries_of(self, player: UUID) -> list[EntryRow]: ...

    @abstractmethod
    def stored_totals_of(self, player: UUID) -> list[TotalsRow]: ...

    @abstractmethod
    def stored_partners(
        self, *, player: UUID | None = None, partner: str | None = None
    ) -> list[PartnerRow]:
        """A player's partner rows, or every row naming ``partner``."""

    @abstractmethod
    def stored_held(self, tournament_id: UUID | None, number: int) -> list[MatchRow]: ...

    # -- reading -------------------------------------------------------------------------------

    @abstractmethod
    def history(
        self, player: UUID, before: Cursor | None, limit: int, *, listed_only: bool
    ) -> list[EntryRow]:
        """The player's history, newest first, from just before ``before`` (None: the
        newest), at most ``limit``; ``listed_only``: public tables only."""

    @abstractmethod
    def matches(self, ids: list[UUID]) -> dict[UUID, MatchRow]:
        """The matches of ``ids`` the career keeps."""

    @abstractmethod
    def released_at(self, position: int) -> list[MatchRow]:
        """The matches that entered the histories at log position ``position``."""

    @abstractmethod
    def top_partners(self, player: UUID, family: str, limit: int) -> list[PartnerRow]:
        """The player's partners in ``family`` with the most matches together (then the
        most won; then by key)."""

    @abstractmethod
    def rows(self) -> Iterator[Row]:
        """Every row (``shengji rebuild --check``)."""

    def contents(self) -> dict[str, Any]:
        """Every row as JSON-ready values, keyed by table and key, with the position."""
        out: dict[str, Any] = {"position": self.position()}
        for row in self.rows():
            out[key_of(row)] = plain(row)
        return out


def _history_key(row: EntryRow) -> Cursor:
    return row.position, str(row.match_id)


class MemoryCareerView(POPOTrackingRecorder, CareerView):
    """The view in memory (POPO)."""

    def __init__(self) -> None:
        super().__init__()
        self.setup_batches()
        self.rows_lock = threading.RLock()
        self.clear()

    def clear(self) -> None:
        self.match_rows: dict[UUID, MatchRow] = {}
        self.entry_rows: dict[tuple[UUID, UUID], EntryRow] = {}
        self.totals_rows: dict[tuple[UUID, str], TotalsRow] = {}
        self.partner_rows: dict[tuple[UUID, str, str], PartnerRow] = {}
        self.released_rows: dict[tuple[UUID, int], ReleasedRow] = {}

    def store(self, change: Change, start: int, tracking: Tracking) -> None:
        with self.rows_lock:
            if self.position() != start:
                raise PositionMovedError(f"the view is at {self.position()}, not {start}")
            self.insert_tracking(Tracking(TRACKED, tracking.notification_id))
            for table, rows in (
                (self.match_rows, change.matches),
                (self.entry_rows, change.entries),
                (self.totals_rows, change.totals),
                (self.partner_rows, change.partners),
                (self.released_rows, change.released),
            ):
                target: dict[Any, Any] = table
                for key, row in rows.items():
                    if row is None:
                        target.pop(key, None)
                    else:
                        target[key] = row

    def reset(self) -> None:
        with self.rows_lock:
            POPOTrackingRecorder.__init__(self)
            self.clear()

    def replace_all(self, change: Change, tracking: Tracking) -> None:
        with self.rows_lock:
            self.reset()
            if tracking.notification_id:
                self.store(change, 0, tracking)

    def stored_match(self, match_id: UUID) -> MatchRow | None:
        return self.match_rows.get(match_id)

    def stored_totals(self, player: UUID, family: str) -> TotalsRow | None:
        return self.totals_rows.get((player, family))

    def stored_partner(self, player: UUID, family: str, partner: str) -> PartnerRow | None:
        return self.partner_rows.get((player, family, partner))

    def stored_released(self, tournament_id: UUID, number: int) -> bool:
        return (tournament_id, number) in self.released_rows

    def stored_entries_of(self, player: UUID) -> list[EntryRow]:
        with self.rows_lock:
            return [r for (p, _), r in self.entry_rows.items() if p == player]

    def stored_totals_of(self, player: UUID) -> list[TotalsRow]:
        with self.rows_lock:
            return [r for (p, _), r in self.totals_rows.items() if p == player]

    def stored_partners(
        self, *, player: UUID | None = None, partner: str | None = None
    ) -> list[PartnerRow]:
        with self.rows_lock:
            return [
                r
                for r in self.partner_rows.values()
                if (player is None or r.player_id == player)
                and (partner is None or r.partner == partner)
            ]

    def stored_held(self, tournament_id: UUID | None, number: int) -> list[MatchRow]:
        with self.rows_lock:
            return [
                r
                for r in self.match_rows.values()
                if r.released is None
                and (
                    tournament_id is None
                    or (r.tournament_id, r.tournament_round) == (tournament_id, number)
                )
            ]

    def history(
        self, player: UUID, before: Cursor | None, limit: int, *, listed_only: bool
    ) -> list[EntryRow]:
        with self.rows_lock:
            found = [
                r
                for (p, _), r in self.entry_rows.items()
                if p == player
                and (r.listed or not listed_only)
                and (before is None or _history_key(r) < before)
            ]
        return sorted(found, key=_history_key, reverse=True)[:limit]

    def matches(self, ids: list[UUID]) -> dict[UUID, MatchRow]:
        with self.rows_lock:
            return {m: self.match_rows[m] for m in ids if m in self.match_rows}

    def released_at(self, position: int) -> list[MatchRow]:
        with self.rows_lock:
            found = [r for r in self.match_rows.values() if r.released == position]
        return sorted(found, key=lambda r: str(r.match_id))

    def top_partners(self, player: UUID, family: str, limit: int) -> list[PartnerRow]:
        with self.rows_lock:
            found = [r for (p, f, _), r in self.partner_rows.items() if p == player and f == family]
        return sorted(found, key=lambda r: (-r.matches, -r.won, r.partner))[:limit]

    def rows(self) -> Iterator[Row]:
        with self.rows_lock:
            found: list[Row] = [
                *self.match_rows.values(),
                *self.entry_rows.values(),
                *self.totals_rows.values(),
                *self.partner_rows.values(),
                *self.released_rows.values(),
            ]
        yield from found

"""Ranked quick play's matchmaking: pure functions of the queue and the time
(docs/players.md "Ranked quick play", docs/decisions.md D-ranked).

* **The rating window** (:class:`WindowSchedule`): a waiting player accepts opponents and
  partners whose shown rating is within ``±start`` points of theirs (``±provisional_start``
  while their rating is provisional: it says little yet), widened by ``step`` points every
  ``every_s`` seconds waited, up to ``±cap``. The defaults: ±50, +25 every 10 s, capped at
  ±400; provisional ±150.
* **Four who fit**: every two of the four are within each other's windows (the narrower
  of the two windows holds). The oldest ticket that can be in such a four is seated first,
  with the oldest three that fit it and each other (first come, first seated).
* **Teams that balance** (R2): of the three ways to make two partnerships of four players,
  the one whose two sums of ratings differ least; a tie goes to the first of
  (0 2 | 1 3), (0 1 | 2 3), (0 3 | 1 2), the players in queue order.

No clock is read here: ``now`` comes in, so the same queue at the same time always makes
the same match.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Final
from uuid import UUID

from domain.values import Value

MAX_CANDIDATES: Final = 24
"""The oldest players that fit a ticket considered as its three others (bounds the search:
at most C(24, 3) = 2,024 foursomes a ticket)."""


@dataclass(frozen=True, slots=True)
class WindowSchedule:
    """How a waiting player's rating window widens (shown points, seconds)."""

    start: int = 50
    provisional_start: int = 150
    step: int = 25
    every_s: int = 10
    cap: int = 400

    def width(self, waited: timedelta, provisional: bool) -> int:
        """The window's half-width after waiting ``waited``."""
        first = self.provisional_start if provisional else self.start
        steps = max(0, int(waited.total_seconds()) // self.every_s)
        return min(self.cap, first + self.step * steps)

    def next_widening(self, waited: timedelta, provisional: bool) -> timedelta | None:
        """How long after queueing the window widens next; None once it is capped."""
        if self.width(waited, provisional) >= self.cap:
            return None
        steps = max(0, int(waited.total_seconds()) // self.every_s) + 1
        return timedelta(seconds=steps * self.every_s)


SCHEDULE: Final = WindowSchedule()
"""The schedule in force."""


@dataclass(frozen=True, slots=True)
class Entrant(Value):
    """A waiting ranked ticket: its player's shown rating when queued, and whether it was
    provisional then."""

    ticket_id: UUID
    account_id: UUID
    rating: int
    provisional: bool
    queued_at: datetime

    def width(self, now: datetime, schedule: WindowSchedule = SCHEDULE) -> int:
        return schedule.width(now - self.queued_at, self.provisional)

    def window(self, now: datetime, schedule: WindowSchedule = SCHEDULE) -> tuple[int, int]:
        """The ratings this player accepts now (inclusive)."""
        w = self.width(now, schedule)
        return self.rating - w, self.rating + w


def fit(a: Entrant, b: Entrant, now: datetime, schedule: WindowSchedule = SCHEDULE) -> bool:
    """Each is within the other's window."""
    gap = abs(a.rating - b.rating)
    return gap <= a.width(now, schedule) and gap <= b.width(now, schedule)


def never_apart(a: UUID, b: UUID) -> bool:
    return False


def foursome(
    waiting: Sequence[Entrant],
    now: datetime,
    schedule: WindowSchedule = SCHEDULE,
    apart: Callable[[UUID, UUID], bool] = never_apart,
) -> tuple[Entrant, Entrant, Entrant, Entrant] | None:
    """The four to seat now (queue order), or None (module docstring). ``apart``: two
    players who may never sit together (one blocks the other, docs/decisions.md
    D-social): no four holds such a pair."""

    def fits(x: Entrant, y: Entrant) -> bool:
        return fit(x, y, now, schedule) and not apart(x.account_id, y.account_id)

    for i, first in enumerate(waiting):
        others = [e for e in waiting[i + 1 :] if fits(first, e)][:MAX_CANDIDATES]
        for b, c, d in itertools.combinations(others, 3):
            if fits(b, c) and fits(b, d) and fits(c, d):
                return first, b, c, d
    return None


PARTNERSHIPS: Final = (((0, 2), (1, 3)), ((0, 1), (2, 3)), ((0, 3), (1, 2)))
"""The three ways to split four players into two partnerships, in the order ties go."""


def balance(ratings: Sequence[int]) -> tuple[tuple[int, int], tuple[int, int]]:
    """The partnership (indexes into ``ratings``) whose sums differ least (R2)."""
    return min(
        PARTNERSHIPS,
        key=lambda p: abs(sum(ratings[i] for i in p[0]) - sum(ratings[i] for i in p[1])),
    )


def seating(four: Sequence[Entrant]) -> tuple[Entrant, Entrant, Entrant, Entrant]:
    """Seats 0–3 of the four: the balanced partnership with the oldest ticket at seats 0 and
    2, the other at 1 and 3 (R2: partners opposite), each partnership's older first."""
    (a, c), (b, d) = balance([e.rating for e in four])
    return four[a], four[b], four[c], four[d]


def next_change(
    waiting: Sequence[Entrant], now: datetime, schedule: WindowSchedule = SCHEDULE
) -> datetime | None:
    """When a window of ``waiting`` widens next after ``now`` (None: fewer than four wait,
    or every window is capped): when a match may become possible without a new ticket."""
    if len(waiting) < 4:
        return None
    times = []
    for e in waiting:
        after = schedule.next_widening(now - e.queued_at, e.provisional)
        if after is not None:
            times.append(e.queued_at + after)
    return min(times, default=None)

"""The sweeper: moves matches forward that wait for the clock, not for a person.

Every ``interval`` it claims passed deal deadlines (the end of the drawing R16/R17, the
overcall window R20) and turn timeouts (:mod:`services.timers`: the timeout bot,
``timeout_kind``, moves for a seat over its limit), and wakes the bot driver
(:mod:`services.bot_driver`) for a table where a bot is to act — a paced deal's next card,
a change another replica saved — so a paced deal with bots at the table and a stalled
seat progress without any request. It moves no bot itself (docs/decisions.md
D-bot-driver). Everything goes through the command path, so its moves are ordinary
events.

**Finding the matches.** The sweeper keeps the open matches with the time each is next
due: fed by the service's save listener and by an incremental scan of the store's
notification log for ``MatchCreated`` / ``MatchFinished`` (at start-up, then every
``rescan``), so it also knows the matches other replicas create and finish. After a match
is swept, it is due again at its next deadline (the drawing's, the window's, the seat to
act's turn limit, the next card of a paced deal when bots wait for it), or after
``recheck`` when it waits for a person with no clock running (a bound on how stale a
change saved by another replica can go unnoticed). A finished match is dropped. A save by
another thread of this process makes the match due at once — unless the save stored only
the round of a table of people the sweeper has swept before, in play or burying (no deal
deadline): then the saved round itself says when the seat to act runs out of time, and
the match is not loaded again for that command. A sweep looks only at the matches due.

**Several replicas.** On PostgreSQL each replica's sweeper may act on the same match: the
commands are optimistic, so the loser of a race gets ``version-conflict`` and moves on
(the match is due again at the next sweep). Nothing is locked and nothing is lost.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Final
from uuid import UUID

from eventsourcing.utils import get_topic

from domain.game.match import Match
from domain.game.match_events import MatchCreated, MatchFinished
from domain.game.round import DRAWS, Round, RoundPhase
from domain.game.timers import Timers, TurnClock, turn_clock
from domain.rules.errors import ShengjiError
from services.background import Loop
from services.bot_driver import DEFAULT_STEPS
from services.bots import bot_seats, bot_to_act
from services.bus import Bus
from services.errors import NotFoundError, VersionConflictError
from services.legal import claimed
from services.round_commands import ClaimDeadlines
from services.timers import ClaimTimeout

log = logging.getLogger(__name__)

RECHECK: Final = timedelta(seconds=60)
RESCAN_S: Final = 30.0
SCAN_PAGE: Final = 500
_NOW: Final = datetime.min.replace(tzinfo=UTC)
"""Due at once."""
_TICK: Final = timedelta(milliseconds=1)
"""Deadlines are claimed strictly after they pass."""
_TOPICS: Final = (get_topic(MatchCreated), get_topic(MatchFinished))
_PLAIN: Final = frozenset((RoundPhase.PLAYING, RoundPhase.BURYING))
"""Phases with no deal deadline: only a turn limit can make them due."""


@dataclass(frozen=True, slots=True)
class SweepReport:
    """What one sweep did."""

    due: int
    """Matches that were due and looked at."""
    moves: int
    """Saves made: deadline claims, turn timeouts and bot moves."""
    conflicts: int
    """Matches where another command won a race (retried at the next sweep)."""
    errors: int
    open: int
    """Open matches the sweeper follows."""


class Sweeper:
    """Claims deadlines and turn timeouts, and wakes the bot driver, for the matches that
    need it."""

    def __init__(
        self,
        bus: Bus,
        *,
        wake: Callable[[UUID], None] | None = None,
        max_steps: int = DEFAULT_STEPS,
        recheck: timedelta = RECHECK,
        rescan_s: float = RESCAN_S,
    ) -> None:
        """``bus``: where its claims go (the timeout bot's kind is the bus's setting);
        ``wake``: the bot driver's (:meth:`services.bot_driver.BotDriver.wake`), told of a
        table where a bot is to act; ``max_steps``: claims one match gets per sweep."""
        self.bus = bus
        self.service = bus.service
        self.wake = wake
        self.max_steps = max_steps
        self.recheck = recheck
        self.rescan_s = rescan_s
        self._lock = threading.Lock()
        self._due: dict[UUID, datetime] = {}
        self._changes: dict[UUID, int] = {}
        self._tables: dict[UUID, tuple[Timers, bool]] = {}
        """A seated match's timers and whether it seats bots (neither changes), as swept."""
        self._cursor = 0
        self._scanned_at: float | None = None
        self._sweeping: int | None = None
        self._stopping = threading.Event()

    # -- following matches --------------------------------------------------------------------

    def attach(self) -> None:
        """Listen to the service's saves (its ``saves.stored``)."""
        self._stopping.clear()
        self.service.saves.stored.add(self.saved)

    def detach(self) -> None:
        self.service.saves.stored.remove(self.saved)

    def saved(self, state: Sequence[Match | Round]) -> None:
        """A save stored these matches and rounds: each match is due at once, or — when
        the save stored only its round and the sweeper knows the table — when that round
        says (:meth:`_due_after`). The sweeper's own saves are left out."""
        if threading.get_ident() == self._sweeping:
            return
        by_match: dict[UUID, list[Match | Round]] = {}
        for aggregate in state:
            match_id = aggregate.id if isinstance(aggregate, Match) else aggregate.match_id
            by_match.setdefault(match_id, []).append(aggregate)
        now = self.service.clock()
        with self._lock:
            for match_id, saved in by_match.items():
                due = _NOW
                table = self._tables.get(match_id)
                only = saved[0] if len(saved) == 1 else None
                if table is not None and isinstance(only, Round):
                    due = self._due_after(table, only, now)
                self._due[match_id] = min(due, self._due.get(match_id, due))
                self._changes[match_id] = self._changes.get(match_id, 0) + 1

    def _due_after(self, table: tuple[Timers, bool], round_: Round, now: datetime) -> datetime:
        """When a table of people with a round in play or burying is next due: the seat to
        act's turn limit, else after ``recheck``. Anything else is due at once."""
        timers, bots = table
        if bots or round_.phase not in _PLAIN:
            return _NOW
        clock = turn_clock(timers, round_)
        due = now + self.recheck
        return due if clock is None else min(due, clock.deadline + _TICK)

    def changed(self, match_ids: Iterable[UUID]) -> None:
        """Another process's save touched these matches (the hub, once it has brought the
        cached copies up to it): due at once — unless the sweeper has swept the table and
        the trusted cache holds the match and its round, a table of people (as the cached
        match seats them now: a seat left to a bot makes it due at once) in play or
        burying: then that round says when the seat to act runs out of time, as for a save
        of this process (:meth:`saved`; docs/decisions.md D-deadlines). The sweeper's own
        saves are left out: after sweeping a match it knows when it is next due."""
        if threading.get_ident() == self._sweeping:
            return
        now = self.service.clock()
        with self._lock:
            for match_id in match_ids:
                due = _NOW
                cached = self._cached(match_id) if match_id in self._tables else None
                if cached is not None:
                    match, round_ = cached
                    table = self._tables[match_id] = (match.timers, bool(bot_seats(match)))
                    due = self._due_after(table, round_, now)
                self._due[match_id] = min(due, self._due.get(match_id, due))
                self._changes[match_id] = self._changes.get(match_id, 0) + 1

    def _cached(self, match_id: UUID) -> tuple[Match, Round] | None:
        """The match and its current round as the trusted cache keeps them (read, not
        changed); None unless it holds both."""
        match = self.service.cached(match_id)
        if not isinstance(match, Match):
            return None
        round_id = match.current_round_id()
        round_ = None if round_id is None else self.service.cached(round_id)
        return (match, round_) if isinstance(round_, Round) else None

    @property
    def following(self) -> frozenset[UUID]:
        with self._lock:
            return frozenset(self._due)

    def due_at(self, match_id: UUID) -> datetime | None:
        """When the match is next looked at (None: not followed)."""
        with self._lock:
            return self._due.get(match_id)

    def scan(self) -> int:
        """Read the notification log since the last scan: follow the matches created,
        drop the finished ones. Returns the notifications read."""
        recorder = self.service.recorder
        top = recorder.max_notification_id() or 0
        read = 0
        while self._cursor < top:
            page = recorder.select_notifications(
                self._cursor, SCAN_PAGE, stop=top, topics=_TOPICS, inclusive_of_start=False
            )
            with self._lock:
                for n in page:
                    match_id = UUID(str(n.originator_id))
                    if n.topic == _TOPICS[0]:
                        self._due.setdefault(match_id, _NOW)
                    else:
                        self._due.pop(match_id, None)
                        self._changes.pop(match_id, None)
            read += len(page)
            if len(page) < SCAN_PAGE:
                break
            self._cursor = page[-1].id
        self._cursor = max(self._cursor, top)
        self._scanned_at = time.monotonic()
        return read

    # -- sweeping -------------------------------------------------------------------------------

    def sweep(self) -> SweepReport:
        """One pass over the matches due now (blocking: run it in a worker thread)."""
        if self._scanned_at is None or time.monotonic() - self._scanned_at >= self.rescan_s:
            self.scan()
        now = self.service.clock()
        with self._lock:
            due = [(m, self._changes.get(m, 0)) for m, at in self._due.items() if at <= now]
        moves = conflicts = errors = 0
        self._sweeping = threading.get_ident()
        try:
            for match_id, changes in due:
                if self._stopping.is_set():
                    break
                outcome = self._advance(match_id)
                moves += outcome.moves
                conflicts += outcome.conflict
                errors += outcome.error
                with self._lock:
                    if match_id not in self._due:
                        continue  # dropped by a scan meanwhile (finished)
                    if self._changes.get(match_id, 0) != changes:
                        self._due[match_id] = _NOW  # another thread saved it meanwhile
                    elif outcome.next_due is None:
                        del self._due[match_id]
                        self._changes.pop(match_id, None)
                    else:
                        self._due[match_id] = outcome.next_due
        finally:
            self._sweeping = None
        with self._lock:
            following = len(self._due)
        report = SweepReport(len(due), moves, conflicts, errors, following)
        if moves or conflicts or errors:
            log.debug("sweep: %s", report)
        return report

    def _advance(self, match_id: UUID) -> _Outcome:
        service = self.service
        moves = 0
        try:
            while True:
                match = service.get_match(match_id)
                if match.finished:
                    return _Outcome(None, moves)
                round_ = service.current_round(match)
                now = service.clock()
                if round_ is None or round_.dealt is None:
                    return _Outcome(now + self.recheck, moves)  # seats still free
                with self._lock:
                    self._tables[match_id] = (match.timers, bool(bot_seats(match)))
                if moves >= self.max_steps or self._stopping.is_set():
                    return _Outcome(_NOW, moves)  # more next sweep
                if claimed(round_, now).pending_events:
                    self.bus.execute(ClaimDeadlines(match_id))  # R16, R17, R20
                    moves += 1
                    continue
                clock = turn_clock(match.timers, round_)
                if clock is not None and now > clock.deadline:
                    self.bus.execute(ClaimTimeout(match_id))
                    moves += 1
                    continue
                bots = bot_seats(match)
                if bots and self.wake is not None and bot_to_act(round_, bots):
                    self.wake(match_id)  # the driver moves it; due again as below
                return _Outcome(self._next_due(match, round_, clock, now), moves)
        except VersionConflictError:
            return _Outcome(_NOW, moves, conflict=1)
        except NotFoundError:
            return _Outcome(None, moves)
        except ShengjiError as e:  # a race: the state moved on under the claim
            log.info("sweeping match %s: %s (%s)", match_id, e.detail, e.code)
            return _Outcome(_NOW, moves, conflict=1)
        except Exception:
            log.exception("sweeping match %s failed", match_id)
            return _Outcome(service.clock() + self.recheck, moves, error=1)

    def _next_due(
        self, match: Match, round_: Round, clock: TurnClock | None, now: datetime
    ) -> datetime:
        """The next instant something may be done in ``round_`` without a person."""
        times = [now + self.recheck]
        if clock is not None:
            times.append(clock.deadline + _TICK)
        phase = round_.phase
        if phase is RoundPhase.DEALING:
            times.append(round_.drawing_deadline() + _TICK)
            interval = round_.pacing.interval_ms
            drawn = round_.drawn_at(now)
            if bot_seats(match) and interval and drawn < DRAWS:  # bots look at each card
                times.append(round_.started_at + timedelta(milliseconds=interval * drawn))
        opened = round_.window_opened_at
        if phase is RoundPhase.OVERCALLING and round_.pacing.window_ms and opened is not None:
            times.append(opened + timedelta(milliseconds=round_.pacing.window_ms) + _TICK)
        return min(times)

    # -- the background work ----------------------------------------------------------------------

    def loop(self, period_s: float) -> Loop:
        """The sweeper as background work (:mod:`services.background`): a sweep every
        ``period_s``, listening to saves while it runs."""
        return Loop("sweeper", self.sweep, period_s, begin=self.attach, halt=self.stop)

    def stop(self) -> None:
        """Stop listening, and ask a running sweep to stop after the match it is on."""
        self._stopping.set()
        self.detach()


@dataclass(frozen=True, slots=True)
class _Outcome:
    next_due: datetime | None
    """None: the match is over (stop following it)."""
    moves: int
    conflict: int = 0
    error: int = 0

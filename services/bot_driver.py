"""The bot driver: the one place bots move, off the request path (docs/decisions.md
D-bot-driver).

It listens to every save of the service (its ``saves.stored``, :mod:`services.saves`): when a save
leaves a bot to act — a person's move, a seat filled, a bot's own move, a deadline
claimed — the match is queued at once. A pool of ``workers`` threads (the bound on how
many bot decisions run at once) takes queued matches in turn and makes **one** step each
(:func:`play_one`: a deadline claimed or one bot's move, under a
per-decision CPU budget), then queues the match again if it may go on: so every table
moves a move at a time, and a person's command is answered as soon as its own
move is saved — the bots' replies reach every client as stream frames of their own.

**Bot time is shared fairly** (docs/decisions.md D-bounded). Each table has an *owner*:
its tournament (every table of a tournament, whoever plays there), else the match itself.

* **A table with a person comes first.** Its steps are taken before any bots-only
  table's; no bots-only step starts while one of them runs, and bots-only tables take at
  most ``workers - 1`` workers (one, when there is only one), so a person's bots never
  wait for a bots-only table's decision to end nor run beside more than the one already
  under way. (The deciders are Python threads: two searches at once share one core, so
  the worker kept back costs the bots-only tables almost nothing.)
* **Owners take turns.** Within each of the two, the queue is a queue of owners: each
  owner's next table makes one step, then the next owner's, so 32 tables of one
  tournament get one turn where another owner's table gets one too.
* **Bot time is a quota per owner** (``BOT_QUOTA_MS_PER_HOUR``): the CPU its steps took
  (decisions, loads and saves, measured on the deciding thread) is charged to its owner
  after each step; an owner whose hour is spent waits — its tables stay queued — until
  its time comes back (a token bucket: an hour's worth, refilled evenly).

The workers are threads of their own: a bot's decision never holds a slot of the store's
limiter (the request path's), only the store's own connection for its load and save.
Matches that wait for the clock (a paced deal, a deadline, a turn limit) are woken by the
sweeper (:mod:`services.sweeper`) through :meth:`BotDriver.wake`.

**Bots-only matches end by themselves.** A match whose four seats are bots and whose
rules never end it (``match_end`` ``wrap``, R32) is ended by the driver after
``bots_only_rounds`` rounds (``MatchFinished``, as an organiser's end): such a table
cannot play itself forever. An organiser who wants it to play on says so with a match end
(``rounds:N``, ``finish_at_A``); the match quota counts every match created.

Several replicas: each driver hears its own process's saves; two drivers on one match
lose a race at worst (``version-conflict``), and the loser looks again. In a worker process
(``PROCESS_ROLE=worker``, docs/scaling.md) the driver hears the API processes' saves through
the hub (:meth:`changed`), so bots answer a person at once wherever the person's command
was served.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Final, Literal
from uuid import UUID

from domain.game.match import Match
from domain.game.round import Round
from domain.rules.errors import ShengjiError
from domain.rules.ruleset import MatchEndKind
from services.bots import Stop, bot_seats, bot_to_act, cpu_budget, next_move
from services.bus import Bus
from services.errors import NotFoundError, VersionConflictError
from services.legal import claimed
from services.limits import HOUR_S, RateLimiter
from services.match_commands import FinishMatch
from services.round_commands import Act, ClaimDeadlines

log = logging.getLogger(__name__)

WORKERS: Final = 2
"""Bot decisions that may run at once (``BOT_WORKERS``)."""
DECISION_CPU_S: Final = 1.0
"""CPU seconds one decision may take (``BOT_DECISION_MS``): the strong bot's search
(about 0.1–0.2 s) stops there with its best so far."""
BOTS_ONLY_ROUNDS: Final = 20
"""Rounds a bots-only ``wrap`` match plays before the driver ends it
(``BOTS_ONLY_ROUNDS``; 0: no cap)."""
BOT_QUOTA_MS: Final = 600_000
"""CPU ms an owner's bots may take an hour (``BOT_QUOTA_MS_PER_HOUR``; 0: no quota): ten
minutes, some 4,000 strong decisions — a person's table of three strong bots takes about
a tenth of it, a tournament of 32 bots-only tables a round in a few minutes."""
_KNOWN: Final = 100_000
"""Tables whose bots (or none) are remembered; past it the memory starts again."""


@dataclass(frozen=True, slots=True)
class DriverStats:
    """What the driver did since it was built."""

    steps: int
    """Saves made: bot moves and deadline claims."""
    conflicts: int
    errors: int
    ended: int
    """Bots-only matches ended at the round cap."""
    queued: int
    running: int
    out_of_time: int = 0
    """Queued tables whose owner has spent its bot time (they wait for it to come back)."""


@dataclass(frozen=True, slots=True)
class Table:
    """What the driver knows of a seated table: its bots (seat → kind; seats never change
    hands once the table is full), whose it is (:func:`owner_of`) and whether a person
    holds a seat."""

    bots: dict[int, str]
    owner: str
    people: bool

    @classmethod
    def of(cls, match: Match) -> Table:
        bots = bot_seats(match)
        return cls(bots, owner_of(match), len(bots) < 4)


def owner_of(match: Match) -> str:
    """Whose bot time a table's steps are: its tournament's, else its own."""
    if match.tournament_id is not None:
        return f"tournament:{match.tournament_id}"
    return f"match:{match.id}"


class FairQueue:
    """The matches waiting for a step, in two lanes — tables with a person, bots-only
    tables — each a queue of owners taking turns (the module docstring). A match is in the
    queue once at most."""

    def __init__(self) -> None:
        self._lanes: dict[bool, OrderedDict[str, deque[UUID]]] = {
            True: OrderedDict(),
            False: OrderedDict(),
        }
        self._where: dict[UUID, tuple[bool, str]] = {}

    def __len__(self) -> int:
        return len(self._where)

    def __contains__(self, match_id: object) -> bool:
        return match_id in self._where

    def push(self, match_id: UUID, owner: str, people: bool) -> None:
        """Queue ``match_id`` at the end of its owner's tables (an owner new to the lane
        takes its turn after those waiting)."""
        if match_id in self._where:
            return
        self._where[match_id] = (people, owner)
        self._lanes[people].setdefault(owner, deque()).append(match_id)

    def pop(self, people: bool, ready: Callable[[str], bool]) -> UUID | None:
        """The next table of the lane: the first owner in turn that is ``ready`` gives its
        oldest queued table and goes to the end of the turns; None when none is."""
        lane = self._lanes[people]
        for owner, tables in lane.items():
            if ready(owner):
                match_id = tables.popleft()
                if tables:
                    lane.move_to_end(owner)
                else:
                    del lane[owner]
                del self._where[match_id]
                return match_id
        return None

    def owners(self) -> dict[str, int]:
        """Each waiting owner and how many of its tables are queued."""
        return {
            owner: len(tables) for lane in self._lanes.values() for owner, tables in lane.items()
        }


Stopped = Literal["waiting", "limit", "conflict", "refused"]
Step = Literal["moved", "claimed", "waiting", "over"]
DEFAULT_STEPS: Final = 1000
"""The one step limit: moves (deadline claims included) :func:`run_bots` plays at most,
and that the sweeper claims for one match in one sweep (a round is about 110 moves)."""


@dataclass(frozen=True, slots=True)
class BotRun:
    """What :func:`run_bots` did: moves made (deadline claims included) and why it
    stopped: ``waiting`` (for a person, or nobody can move), ``limit``, ``conflict``
    (another command changed the match first), ``refused`` (a bot's move was refused)."""

    steps: int
    version: int
    stopped: Stopped


def play_one(
    bus: Bus,
    match_id: UUID,
    *,
    match: Match | None = None,
    stop: Callable[[], Stop] | None = None,
) -> Step:
    """One step of the match's bots: claim a passed deadline (R16, R17, R20), or make
    the move of the bot to act (a new ``stop()`` budget for its decision), or say why
    not: ``waiting`` (for a person, the clock, or no bot here) or ``over``. ``match``:
    the match as the caller just loaded it."""
    service = bus.service
    match = service.get_match(match_id) if match is None else match
    if match.finished:
        return "over"
    round_ = service.current_round(match)
    bots = bot_seats(match)
    if round_ is None or round_.dealt is None or not bots:
        return "waiting"
    now = service.clock()
    if claimed(round_, now).pending_events:
        bus.execute(ClaimDeadlines(match_id))
        return "claimed"
    move = next_move(match, round_, now, bots, stop=None if stop is None else stop())
    if move is None:
        return "waiting"
    bus.execute(Act(match_id, move.action, seat=move.seat))
    return "moved"


def run_bots(bus: Bus, match_id: UUID, max_steps: int = DEFAULT_STEPS) -> BotRun:
    """Play every pending bot move of the match, at most ``max_steps`` (blocking)."""
    steps = 0
    stopped: Stopped = "limit"
    while steps < max_steps:
        try:
            step = play_one(bus, match_id)
        except VersionConflictError:
            stopped = "conflict"
            break
        except ShengjiError as e:  # pragma: no cover - bots only make legal moves
            log.warning("a bot's move was refused: %s", e.detail)
            stopped = "refused"
            break
        if step in ("waiting", "over"):
            stopped = "waiting"
            break
        steps += 1
    match = bus.service.get_match(match_id)
    round_ = bus.service.current_round(match)
    return BotRun(steps, match.sequence(0 if round_ is None else round_.version), stopped)


class BotDriver:
    """Moves bots as soon as they are to act (see the module docstring)."""

    def __init__(
        self,
        bus: Bus,
        *,
        workers: int = WORKERS,
        decision_cpu_s: float = DECISION_CPU_S,
        bots_only_rounds: int = BOTS_ONLY_ROUNDS,
        quota_ms: int = 0,
        clock: Callable[[], float] = time.monotonic,
        cpu: Callable[[], float] = time.thread_time,
    ) -> None:
        if workers < 1:
            raise ValueError(f"the bot driver needs at least one worker, not {workers}")
        self.bus = bus
        self.service = bus.service
        self.workers = workers
        self.decision_cpu_s = decision_cpu_s
        self.bots_only_rounds = bots_only_rounds
        self.bot_time = RateLimiter(quota_ms, period_s=HOUR_S, clock=clock)
        """Each owner's bot time in CPU ms (``BOT_QUOTA_MS_PER_HOUR``; 0: no quota),
        refilled by ``clock``; a step's cost is read off ``cpu`` (the deciding thread's)."""
        self.cpu = cpu
        self._cond = threading.Condition()
        self._queue = FairQueue()
        self._running: dict[UUID, bool] = {}
        """The matches being stepped, and whether a person sits at each."""
        self._again: set[UUID] = set()
        self._tables: dict[UUID, Table] = {}
        """The seated tables seen (a table of people has no bots)."""
        self._threads: list[threading.Thread] = []
        self._stopping = False
        self._paused = False
        self._steps = self._conflicts = self._errors = self._ended = 0

    # -- hearing saves ------------------------------------------------------------------------

    def attach(self) -> None:
        """Listen to the service's saves (its ``saves.stored``)."""
        self.service.saves.stored.add(self.saved)

    def detach(self) -> None:
        self.service.saves.stored.remove(self.saved)

    def saved(self, state: Sequence[Match | Round]) -> None:
        """A save stored these matches and rounds: queue each match where a bot may now
        be to act (a table of people, or a bot waiting for a person, is left alone)."""
        latest: dict[UUID, Round | None] = {}
        for aggregate in state:
            if isinstance(aggregate, Match):
                if aggregate.seated:
                    self._remember(aggregate.id, Table.of(aggregate))
                latest.setdefault(aggregate.id, None)
            else:
                latest[aggregate.match_id] = aggregate
        for match_id, round_ in latest.items():
            table = self._tables.get(match_id)
            if table is not None and not table.bots:
                continue  # a table of people
            if table is not None and round_ is not None and not bot_to_act(round_, table.bots):
                continue  # the round waits for a person
            self.wake(match_id)

    def changed(self, match_ids: Iterable[UUID]) -> None:
        """Another process saved these matches (a worker hears the API processes' saves
        through the hub, without their state): queue each that may seat a bot — a table
        known to seat none is left alone, an unknown one is looked at once."""
        for match_id in match_ids:
            table = self._tables.get(match_id)
            if table is None or table.bots:
                self.wake(match_id)

    def _remember(self, match_id: UUID, table: Table) -> None:
        if len(self._tables) >= _KNOWN:
            self._tables.clear()
        self._tables[match_id] = table

    def wake(self, match_id: UUID) -> None:
        """Queue the match (a bot may be to act); at once if it is being moved now."""
        with self._cond:
            if match_id in self._running:
                self._again.add(match_id)
            else:
                self._push(match_id)
                self._cond.notify_all()

    def _push(self, match_id: UUID) -> None:
        """Queue the match in its lane and under its owner (a table not seen yet: with the
        tables of people, as its own owner, until its first step has read it)."""
        table = self._tables.get(match_id)
        if table is None:
            self._queue.push(match_id, f"match:{match_id}", True)
        else:
            self._queue.push(match_id, table.owner, table.people)

    # -- the workers ----------------------------------------------------------------------------

    def start(self) -> None:
        """Start the workers (and listen to saves)."""
        self.attach()
        with self._cond:
            if self._threads:
                return
            self._stopping = False
            self._threads = [
                threading.Thread(target=self._work, name=f"bot-driver-{n}", daemon=True)
                for n in range(self.workers)
            ]
        for thread in self._threads:
            thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop listening; the workers finish the step they are on (a decision is bounded
        by its CPU budget) and end. Queued matches stay queued for a restart."""
        self.detach()
        with self._cond:
            self._stopping = True
            threads, self._threads = self._threads, []
            self._cond.notify_all()
        for thread in threads:
            thread.join(timeout)

    def pause(self) -> None:
        """Make no new step until :meth:`resume` (saves are still heard and queued)."""
        with self._cond:
            self._paused = True

    def resume(self) -> None:
        with self._cond:
            self._paused = False
            self._cond.notify_all()

    def idle(self, timeout: float = 60.0) -> bool:
        """Wait until no step runs and none will start — nothing queued, or paused, or the
        owners of what is queued out of bot time (false if ``timeout`` passed first): every
        bot has moved as far as it can without a person or the clock."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._running or (not self._paused and self._startable()):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
            return True

    @property
    def stats(self) -> DriverStats:
        with self._cond:
            waiting = self._queue.owners()
            out = sum(n for owner, n in waiting.items() if not self._has_time(owner))
            return DriverStats(
                self._steps,
                self._conflicts,
                self._errors,
                self._ended,
                len(self._queue),
                len(self._running),
                out,
            )

    def _work(self) -> None:
        while True:
            with self._cond:
                match_id = None
                while not self._stopping:
                    if not self._paused:
                        match_id = self._next()
                        if match_id is not None:
                            break
                    self._cond.wait(None if self._paused else self._time_back())
                if self._stopping or match_id is None:
                    return
                table = self._tables.get(match_id)
                self._running[match_id] = table is None or table.people
            started = self.cpu()
            more = self.step(match_id)
            spent_ms = (self.cpu() - started) * 1000
            with self._cond:
                self._charge(match_id, spent_ms)
                del self._running[match_id]
                if more or match_id in self._again:
                    self._push(match_id)
                self._again.discard(match_id)
                self._cond.notify_all()

    def _next(self) -> UUID | None:
        """The match to step now (under the lock; the module docstring): a table with a
        person first; a bots-only table only while no table with a person is stepped and
        fewer bots-only steps run than they may."""
        found = self._queue.pop(True, self._has_time)
        if found is not None:
            return found
        running = self._running.values()
        if any(running) or sum(not people for people in running) >= self._bots_only_workers:
            return None
        return self._queue.pop(False, self._has_time)

    def _startable(self) -> bool:
        """A queued table whose owner has bot time left (under the lock)."""
        return any(self._has_time(owner) for owner in self._queue.owners())

    @property
    def _bots_only_workers(self) -> int:
        return max(1, self.workers - 1)

    def _has_time(self, owner: str) -> bool:
        return self.bot_time.due(owner) is None

    def _time_back(self) -> float | None:
        """Seconds until the first owner of a queued table has bot time again (None: no
        owner waits for it)."""
        waits = [self.bot_time.due(owner) for owner in self._queue.owners()]
        known = [w for w in waits if w is not None]
        return min(known) if known else None

    def _charge(self, match_id: UUID, spent_ms: float) -> None:
        table = self._tables.get(match_id)
        owner = f"match:{match_id}" if table is None else table.owner
        self.bot_time.owe(owner, spent_ms)

    # -- one step ---------------------------------------------------------------------------------

    def step(self, match_id: UUID) -> bool:
        """One step of the match's bots (blocking); true when it may go on at once."""
        try:
            match = self.service.get_match(match_id)
            if match.seated:
                self._remember(match_id, Table.of(match))
            if self._end_if_capped(match):
                return False
            done = play_one(self.bus, match_id, match=match, stop=self._budget)
        except VersionConflictError:
            with self._cond:
                self._conflicts += 1
            return True  # another command moved the table first: look again
        except NotFoundError:
            return False
        except ShengjiError as e:  # a race: the state moved on under the move
            log.info("a bot's step on match %s was refused: %s (%s)", match_id, e.detail, e.code)
            with self._cond:
                self._conflicts += 1
            return False
        except Exception:
            log.exception("moving the bots of match %s failed", match_id)
            with self._cond:
                self._errors += 1
            return False
        if done in ("moved", "claimed"):
            with self._cond:
                self._steps += 1
            return True
        return False

    def _budget(self) -> Stop:
        return cpu_budget(self.decision_cpu_s)

    def _end_if_capped(self, match: Match) -> bool:
        """End a bots-only ``wrap`` match past ``bots_only_rounds`` rounds (R32)."""
        cap = self.bots_only_rounds
        if cap <= 0:
            return False
        if (
            match.finished
            or len(bot_seats(match)) < 4
            or match.rules.match_end.kind != MatchEndKind.WRAP
            or match.round_number <= cap
        ):
            return False
        self.bus.execute(FinishMatch(match.id, f"bots only: ended after {cap} rounds"))
        with self._cond:
            self._ended += 1
        return True

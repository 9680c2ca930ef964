"""A finished table moves the standings: the results policy (docs/decisions.md
D-results-policy; docs/tournaments.md, "Results").

A tournament table's match ends by its own commands (a round's last deal recorded, a
resignation, a timeout's move, R32), which save the match only. The policy follows the
store's notification log — the ``MatchFinished`` notifications, in commit order — and for
each match that is a tournament table sends :class:`RecordTableResult` through the bus as
the service: the table's result enters the tournament (``TableResultRecorded``; the round's
last completes it and reveals its secret, ``RoundCompleted``, R35) **with the policy's
position** (:class:`~services.positions.PolicyPosition`) in the same save. So:

* **exactly once across restarts**: a new process reads the position back and resumes after
  it; a notification at or before it is skipped;
* **exactly once across processes**: two policies on one store both try to move the
  position from the same version; the store refuses the second, whose command runs again,
  finds the position past the notification and skips it;
* **idempotent on the log**: a table that has its result already (a paper result, a
  forfeit, a command that recorded it in its own save, :mod:`services.tournaments.tables`)
  or that is no longer a table of its round (a cancelled round's) is passed over.

Other matches' finishes are passed over without a save; every :data:`PASS_EVERY` of them the
position moves by itself, so a restart re-reads at most that many.

**Where it runs.** :meth:`ResultsPolicy.catch_up` reads from its position to the end of the
log; a loop calls it where background work runs (:mod:`services.tournaments.background`,
process roles ``all`` and ``worker``), woken by a save that finished a table
(:func:`finished_table`, the service's ``saves.stored``; the hub's changes on a worker), and
by the clerk's tick. A caller that
needs the standings fresh right after a table finished — a test, a tool — calls
``catch_up()`` itself before reading: it is synchronous and safe beside the runner.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final
from uuid import UUID

import msgspec
from eventsourcing.application import AggregateNotFoundError
from eventsourcing.persistence import Notification
from eventsourcing.utils import get_topic

from domain.game.match import Match
from domain.game.match_events import MatchFinished
from domain.game.round import Round
from domain.rules.errors import ShengjiError
from domain.tournament.tournament import Tournament
from services.bus import Bus, Caller, Handler, Outcome, Service
from services.errors import ForbiddenError, NotFoundError, VersionConflictError
from services.game import GameService
from services.positions import PolicyPosition, position_id, position_in
from services.tournaments.tables import table_result
from services.unit_of_work import Reading, UnitOfWork

log = logging.getLogger(__name__)

POLICY: Final = "tournament-results"
"""The policy's name: its position's id is derived from it (one position per store)."""
PAGE: Final = 100
"""``MatchFinished`` notifications read per query."""
PASS_EVERY: Final = 100
"""Other matches' finishes passed over before the position moves by itself."""
ATTEMPTS: Final = 5
"""Runs of a record against another writer's save (another policy, an organiser's command)."""
RECORDED: Final = "recorded"
_FINISHED = get_topic(MatchFinished)
FOLLOWED: Final = frozenset({_FINISHED})
"""The topics the policy follows through the log."""


@dataclass(frozen=True, slots=True)
class RecordTableResult:
    """The match that finished at notification ``position`` of the log: when it is a table
    of its tournament's round without a result, the result enters the tournament; the
    policy's position moves to ``position`` in the same save. ``match_id`` None: other
    matches' finishes passed over (the position alone moves)."""

    position: int
    match_id: UUID | None = None


class ResultTaken(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """What the policy's command did."""

    position: int
    recorded: bool
    """A table's result entered the tournament (else: passed over, or another was first)."""


def record_table(uow: UnitOfWork, match: Match) -> bool:
    """``match``'s result recorded in its tournament, when it is a finished table of its
    round without one (the module docstring); whether it was."""
    if not match.finished or match.tournament_id is None:
        return False
    t = uow.find(match.tournament_id, Tournament)
    number = match.tournament_round
    if t is None or not 1 <= number <= len(t.rounds):
        return False
    state = t.round_state(number)
    entry = next((e for e in state.tables if e.match_id == match.id), None)
    if entry is None or state.revealed or (number, entry.table) in t.results:
        return False
    t.record_result(number, entry.table, table_result(entry, match), uow.now)
    return True


class RecordTableResultHandler(Handler[RecordTableResult, None, ResultTaken]):
    """The service's command only (403 for any credential)."""

    attempts = ATTEMPTS

    def authorise(self, command: RecordTableResult, caller: Caller) -> None:
        if not isinstance(caller, Service):
            raise ForbiddenError("the results policy's command is the service's own")

    def handle(self, uow: UnitOfWork, command: RecordTableResult, who: None) -> Outcome:
        position = position_in(uow, POLICY)
        if command.position <= position.position:  # another process was first
            return Outcome(200, position.id, position.version, facts={RECORDED: False})
        recorded = False
        if command.match_id is not None:
            match = uow.find(command.match_id, Match)
            recorded = match is not None and record_table(uow, match)
        position.move(command.position, uow.now)
        uow.add(position)
        return Outcome(200, position.id, position.version, facts={RECORDED: recorded})

    def answer(
        self, command: RecordTableResult, who: None, outcome: Outcome, state: Reading
    ) -> ResultTaken:
        return ResultTaken(position=command.position, recorded=bool(outcome.facts.get(RECORDED)))


def finished_table(saved: Sequence[Match | Round]) -> bool:
    """A save finished a tournament table's match: the policy has something to do."""
    return any(isinstance(a, Match) and a.finished and a.tournament_id for a in saved)


class ResultsPolicy:
    """Follows the log's ``MatchFinished`` notifications into the tournaments (the module
    docstring). One catch-up runs at a time in a process; processes are told apart by the
    store."""

    def __init__(self, bus: Bus) -> None:
        self.bus = bus
        self.service: GameService = bus.service
        self._cursor = 0
        self._lock = threading.Lock()

    def position(self) -> int:
        """The position saved in the store (0: none yet)."""
        try:
            found: object = self.service.repository.get(position_id(POLICY))
        except AggregateNotFoundError:
            return 0
        return found.position if isinstance(found, PolicyPosition) else 0

    def catch_up(self) -> int:
        """Act on every ``MatchFinished`` past the position: the results recorded."""
        with self._lock:
            cursor = max(self._cursor, self.position())
            top = self.service.recorder.max_notification_id() or 0
            recorded = passed = 0
            while cursor < top:
                page = self.service.recorder.select_notifications(
                    cursor, PAGE, stop=top, topics=[_FINISHED], inclusive_of_start=False
                )
                for n in page:
                    try:
                        if self._is_table(n):
                            recorded += self.process(n)
                            passed = 0
                        else:
                            passed += 1
                            if passed >= PASS_EVERY:
                                self.bus.execute(RecordTableResult(n.id))
                                passed = 0
                    except VersionConflictError:
                        self._cursor = cursor  # busy: the next catch-up goes on from here
                        return recorded
                    cursor = n.id
                if len(page) < PAGE:
                    cursor = top  # read to the end: the next scan starts there (D-pgcost)
                    break
            self._cursor = cursor
            return recorded

    def process(self, notification: Notification) -> bool:
        """Send the record of the table match that finished at ``notification`` (the
        command skips what is done): whether a result was recorded."""
        match_id = UUID(str(notification.originator_id))
        try:
            taken: ResultTaken = self.bus.execute(RecordTableResult(notification.id, match_id))
        except VersionConflictError:
            raise  # the store is busy (the command's attempts ran out): not passed over
        except ShengjiError:
            log.exception("the results policy passed over notification %s", notification.id)
            return False
        return taken.recorded

    def _is_table(self, notification: Notification) -> bool:
        try:
            match = self.service.get_match(UUID(str(notification.originator_id)))
        except NotFoundError:
            return False
        return match.tournament_id is not None

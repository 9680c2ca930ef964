"""The tournament clerk (docs/tournaments.md): keeps running tournaments moving without a request.

Every tick it (1) catches the results policy up (:mod:`services.tournaments.results_policy`:
finished tables move the standings; the policy is also woken by the saves themselves) and
(2) applies the round deadline of each tournament with a round in play whose tables are
overdue: it sends :class:`~services.tournaments.control_commands.ApplyDeadline` as the
service (rule ``finish`` ends the unfinished tables as the organiser's finish does, R32;
rule ``flag`` lists them for the organiser), one save each. The tables themselves are
played by bots and timed out by the sweeper (:mod:`services.sweeper`), as for any match with
timers.

It follows the tournaments by an incremental scan of the notification log for
``TournamentCreated`` and drops a tournament once it is finished. Several replicas may tick
the same tournament: the commands are optimistic and run again on the state that won; a
deadline handled already is not handled twice (``RoundDeadlinePassed`` flags its tables).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from uuid import UUID

from domain.rules.errors import ShengjiError
from services.bus import Bus
from services.errors import VersionConflictError
from services.tournaments.control_commands import HANDLED, ApplyDeadline
from services.tournaments.listing import open_tournaments
from services.tournaments.loading import get_tournament
from services.tournaments.results_policy import ResultsPolicy

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ClerkReport:
    tournaments: int
    """Tournaments looked at (a round in play)."""
    results: int
    """Results the policy recorded."""
    deadlines: int
    """Tables finished or flagged past a round's deadline."""


class Clerk:
    def __init__(self, bus: Bus, policy: ResultsPolicy | None = None) -> None:
        self.bus = bus
        self.policy = policy or ResultsPolicy(bus)
        self._cursor = 0
        self._open: set[UUID] = set()

    def tick(self) -> ClerkReport:
        service = self.bus.service
        recorded = self.policy.catch_up()
        found, self._cursor = open_tournaments(service, self._cursor)
        self._open.update(found)
        looked = handled = 0
        for tid in sorted(self._open):
            try:
                t = get_tournament(service, tid)
                if t.finished:
                    self._open.discard(tid)
                    continue
                if not t.in_play:
                    continue
                looked += 1
                if t.overdue_tables(service.clock()):
                    done = self.bus.handle(ApplyDeadline(tid))
                    assert done.outcome is not None
                    handled += int(done.outcome.facts.get(HANDLED) or 0)
            except VersionConflictError:
                continue
            except ShengjiError:
                log.exception("the clerk could not move tournament %s", tid)
        return ClerkReport(looked, recorded, handled)

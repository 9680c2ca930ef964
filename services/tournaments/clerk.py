"""The tournament clerk (docs/tournaments.md): keeps running tournaments moving without a request.

Every tick it (1) collects the finished tables' results of each tournament with a round
in play — so standings and their live stream change as tables finish — and (2) applies
the round deadline (:meth:`~services.tournaments.organise.Organiser.enforce_deadline`:
rule ``finish`` ends the unfinished tables as the organiser's finish does, R32; rule
``flag`` lists them for the organiser). The tables themselves are played by bots and
timed out by the sweeper (:mod:`services.sweeper`), as for any match with timers.

It follows the tournaments by an incremental scan of the notification log for
``TournamentCreated`` and drops a tournament once it is finished. Several replicas may
tick the same tournament: the commands are optimistic, a loser gets ``version-conflict``
and the next tick retries.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from uuid import UUID

from domain.rules.errors import ShengjiError
from services.errors import VersionConflictError
from services.game import GameService
from services.tournaments.listing import open_tournaments
from services.tournaments.organise import Organiser

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ClerkReport:
    tournaments: int
    """Tournaments looked at (a round in play)."""
    results: int
    """Results collected."""
    deadlines: int
    """Tables finished or flagged past a round's deadline."""


class Clerk:
    def __init__(self, service: GameService) -> None:
        self.organiser = Organiser(service)
        self._cursor = 0
        self._open: set[UUID] = set()
        self._stopping = False

    def tick(self) -> ClerkReport:
        found, self._cursor = open_tournaments(self.organiser.game, self._cursor)
        self._open.update(found)
        looked = collected = handled = 0
        for tid in sorted(self._open):
            try:
                t = self.organiser.get(tid)
                if t.finished:
                    self._open.discard(tid)
                    continue
                if not t.in_play:
                    continue
                looked += 1
                before = len(t.results)
                handled += len(self.organiser.enforce_deadline(tid))
                collected += len(self.organiser.get(tid).results) - before
            except VersionConflictError:
                continue
            except ShengjiError:
                log.exception("the clerk could not move tournament %s", tid)
        return ClerkReport(looked, collected, handled)

    async def run(
        self, interval_s: float, call: Callable[[Callable[[], ClerkReport]], Awaitable[ClerkReport]]
    ) -> None:
        self._stopping = False
        while not self._stopping:
            try:
                await call(self.tick)
            except Exception:
                log.exception("a clerk tick failed; the next one runs as usual")
            await asyncio.sleep(interval_s)

    def stop(self) -> None:
        self._stopping = True

"""The tournaments' background work (docs/tournaments.md; docs/decisions.md D-rooms): the
clerk's tick every period (:mod:`services.tournaments.clerk`: round deadlines), and the
results policy (:mod:`services.tournaments.results_policy`) caught up as soon as a save
ends a tournament table — a save of this process, or, in a worker process, a finished
match its pass over the log read (docs/decisions.md D-follow) — and at least once a
period."""

from __future__ import annotations

from collections.abc import Sequence, Set

from domain.game.match import Match
from domain.game.round import Round
from services.background import Doorbell, Loop
from services.tournaments.clerk import Clerk
from services.tournaments.results_policy import FOLLOWED, finished_table


class TournamentWork:
    """The clerk's and the results policy's loops, and what wakes the policy."""

    def __init__(self, clerk: Clerk) -> None:
        self.clerk = clerk
        self.doorbell = Doorbell()
        """Rung by a save that ended a tournament table: the policy catches up at once."""

    def loops(self, period_s: float) -> tuple[Loop, Loop]:
        """The clerk's tick and the policy's catch-up, every ``period_s`` at least."""
        return (
            Loop("tournament-clerk", self.clerk.tick, period_s),
            Loop(
                "tournament-results",
                self.clerk.policy.catch_up,
                period_s,
                self.doorbell,
                begin=self.listen,
                halt=self.deafen,
            ),
        )

    def listen(self) -> None:
        """Hear this process's saves (the service's ``saves.stored``)."""
        self.clerk.bus.service.saves.stored.add(self.saved)

    def deafen(self) -> None:
        self.clerk.bus.service.saves.stored.remove(self.saved)

    def saved(self, state: Sequence[Match | Round]) -> None:
        """A save of this process: wake the policy when it ended a tournament table."""
        if finished_table(state):
            self.doorbell.ring()

    def heard(self, topics: Set[str]) -> None:
        """The process's pass over the log read ``topics``: wake the policy if it
        follows one of them."""
        if not FOLLOWED.isdisjoint(topics):
            self.doorbell.ring()

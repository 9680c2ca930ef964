"""Quick play's sweeper (docs/players.md): every period, a match for each lobby where a
ticket's wait for bots has passed, and a try for each ranked queue where a rating window
has widened since it was last tried (:class:`services.accounts.ranked.RankedQueues`).

Only the lobbies where such a ticket waits are read (:class:`services.accounts.lobby.Lobbies`:
an idle sweep costs the same however many lobbies were ever opened; reading a ticket sweeps
its lobby too). Replicas may sweep at once: the lobby's version lets one match through
(:mod:`services.accounts.lobby`). The bots seated move by the bot driver, which hears the
seating's save.
"""

from __future__ import annotations

from services.accounts import lobby
from services.accounts.lobby_commands import MakeDueMatch
from services.accounts.ranked import RankedQueues
from services.background import Loop
from services.bus import Bus


class LobbySweeper:
    """Bots for the tickets whose wait has passed (the module docstring)."""

    def __init__(self, bus: Bus, queues: RankedQueues | None = None) -> None:
        self.bus = bus
        self.lobbies = lobby.Lobbies()
        self.queues = queues or RankedQueues()

    def sweep(self) -> None:
        """A match for every lobby and ranked queue where one is due (its own command
        each; blocking)."""
        for lid in lobby.due_lobbies(self.bus.service, self.lobbies):
            self.bus.execute(MakeDueMatch(lid))
        for qid in self.queues.due_queues(self.bus.service):
            self.bus.execute(MakeDueMatch(qid))

    def loop(self, period_s: float) -> Loop:
        """The lobby sweeper as background work (:mod:`services.background`)."""
        return Loop("lobby-sweeper", self.sweep, period_s)

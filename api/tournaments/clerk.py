"""The tournament clerk and the results policy as background tasks of the app
(:mod:`services.tournaments.clerk`, :mod:`services.tournaments.results_policy`): started
after start-up with the sweeper's period, stopped cleanly at shutdown; period 0 (the tests'
apps): neither runs — tests tick the clerk and catch the policy up themselves.

The policy catches up when a save finished a tournament table (the service's
``on_saved_state``; on a worker process also the hub's changes, :meth:`changed`), and at
least once a period.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Iterable, Sequence
from uuid import UUID

from api.runtime import Runtime
from domain.game.match import Match
from domain.game.round import Round
from services.tournaments.clerk import Clerk
from services.tournaments.results_policy import finished_table

log = logging.getLogger(__name__)


class ClerkTask:
    def __init__(self, runtime: Runtime, interval_ms: int) -> None:
        self.clerk = Clerk(runtime.bus)
        self.policy = self.clerk.policy
        self.runtime = runtime
        self.interval_ms = interval_ms
        self.tasks: list[asyncio.Task[None]] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wake = asyncio.Event()

    def changed(self, _match_ids: Iterable[UUID] = ()) -> None:
        """Something was saved that the policy may follow (any thread)."""
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._wake.set)

    def saved(self, state: Sequence[Match | Round]) -> None:
        """A save of this process (``on_saved_state``): wake the policy for a table's end."""
        if finished_table(state):
            self.changed()

    async def follow(self, interval_s: float) -> None:
        """The policy's loop: catch up, then wait for a save (or the period)."""
        while True:
            self._wake.clear()
            try:
                await self.runtime.call(self.policy.catch_up)
            except Exception:
                log.exception("the results policy failed; it catches up at the next wake")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), interval_s)

    @contextlib.asynccontextmanager
    async def lifespan(self, _app: object = None) -> AsyncIterator[None]:
        if self.interval_ms <= 0:
            yield
            return
        interval_s = self.interval_ms / 1000
        self._loop = asyncio.get_running_loop()
        self._wake = asyncio.Event()
        service = self.runtime.service
        service.on_saved_state.append(self.saved)
        self.tasks = [
            asyncio.create_task(
                self.clerk.run(interval_s, self.runtime.call), name="tournament-clerk"
            ),
            asyncio.create_task(self.follow(interval_s), name="tournament-results"),
        ]
        try:
            yield
        finally:
            service.on_saved_state.remove(self.saved)
            self.clerk.stop()
            for task in self.tasks:
                task.cancel()
            for task in self.tasks:
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            self.tasks = []
            self._loop = None

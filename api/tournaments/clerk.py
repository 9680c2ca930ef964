"""The tournament clerk as a background task of the app (:mod:`services.tournaments.clerk`):
started after start-up with the sweeper's period, stopped cleanly at shutdown; period 0
(the tests' apps): no clerk — tests tick it themselves."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from api.runtime import Runtime
from services.tournaments.clerk import Clerk


class ClerkTask:
    def __init__(self, runtime: Runtime, interval_ms: int) -> None:
        self.clerk = Clerk(runtime.service)
        self.runtime = runtime
        self.interval_ms = interval_ms
        self.task: asyncio.Task[None] | None = None

    @contextlib.asynccontextmanager
    async def lifespan(self, _app: object = None) -> AsyncIterator[None]:
        if self.interval_ms <= 0:
            yield
            return
        self.task = asyncio.create_task(
            self.clerk.run(self.interval_ms / 1000, self.runtime.call), name="tournament-clerk"
        )
        try:
            yield
        finally:
            self.clerk.stop()
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.task
            self.task = None

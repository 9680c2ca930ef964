"""The capacity bench's crowd: every match in play (:class:`~bench._capacity_match.Match`),
kept at N as matches end, and the switches the ladder turns — start a step, pause the
seats, drain the frames still owed (what is owed after ``grace`` is lost), close."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Coroutine
from typing import Any

from bench._capacity_match import COMMAND_TIMEOUT_S, BenchError, Match, Step


class Crowd:
    """Every match in play, and the switches the ladder turns."""

    def __init__(
        self,
        host: str,
        ports: tuple[int, ...],
        *,
        think: tuple[float, float],
        grace: float,
        rng: random.Random,
        create_body: bytes,
    ) -> None:
        self.host, self.ports, self.think, self.grace, self.rng = host, ports, think, grace, rng
        self.authority = f"{host}:{ports[0]}"
        self.create_body = create_body
        self.step = Step(0)
        self.paused = False
        self.closing = False
        self.matches: set[Match] = set()
        self.in_flight = 0
        self.started = 0
        self.finished = 0
        self.failures: list[str] = []
        self._tasks: set[asyncio.Task[None]] = set()
        self._serial = 0

    def port_of(self, n: int) -> int:
        """The API process the ``n``-th connection goes to: with several, a match's
        commands and its streams are spread over them (a command's frames cross the hub)."""
        return self.ports[n % len(self.ports)]

    def spawn(self) -> None:
        """Start one more match (its replacement is started when it ends)."""
        self._serial += 1
        match = Match(self, self._serial)
        self.matches.add(match)
        self.track(match.run())

    def track(self, work: Coroutine[Any, Any, None]) -> None:
        """Run ``work`` as a task the crowd cancels when it closes."""
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def ended(self, match: Match, error: str | None) -> None:
        self.matches.discard(match)
        if error is not None:
            self.failures.append(error)
            if len(self.failures) > 20:
                raise BenchError(f"matches keep failing: {self.failures[-3:]}")
        else:
            self.finished += 1
        if not self.closing:
            self.spawn()  # N stay in play

    def pause(self) -> None:
        """No more moves (a seat thinking gives up; commands in flight finish)."""
        self.paused = True

    def resume(self) -> None:
        self.paused = False
        for match in list(self.matches):
            for seat in match.seats:
                match.consider(seat)

    def pending(self) -> int:
        return sum(len(m.pending) for m in self.matches)

    async def drain(self, grace: float) -> None:
        """After :meth:`pause`: wait for the commands in flight, then up to ``grace``
        seconds for the frames still owed; what is still owed then is lost."""
        give_up = time.perf_counter() + COMMAND_TIMEOUT_S
        while self.in_flight and time.perf_counter() < give_up:
            await asyncio.sleep(0.05)
        give_up = time.perf_counter() + grace
        while self.pending() and time.perf_counter() < give_up:
            await asyncio.sleep(0.05)
        for match in list(self.matches):
            match.give_up()

    async def close(self) -> None:
        self.paused = self.closing = True
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        for match in list(self.matches):
            match.close()

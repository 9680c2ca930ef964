"""The runner of a process's background work (docs/decisions.md D-rooms, docs/scaling.md).

The composition root (``infra.bootstrap``) builds one :class:`Workers` from the settings'
``PROCESS_ROLE``: in an ``all`` or ``worker`` process it holds every loop of
:mod:`services.background` the settings turn on — the sweeper, the tournament clerk, the
lobby sweeper, the webhook outbox, the lists' follower — and the bot driver's crew; an
``api`` process runs none. Each loop runs on a thread of its own: its step, then a wait of
its period, cut short by its doorbell — for a paced loop, once its pace has passed since
the last step began (``Loop.pace_s``, docs/decisions.md D-pace). The steps call the store
directly, on their threads, as the bot driver's deciders always did (the request path's
limiter is for the event loop's calls into the store, docs/decisions.md F2).

:meth:`Workers.running` is the one way it runs: an async context (the API app's lifespan
in an ``all`` process; the worker's own small server in a ``worker`` process, which also
starts its hub there, ``infra.worker``) that starts everything on entry and, on exit,
asks every loop to halt, wakes it, waits for its step in progress to end and stops the
crews (their steps in progress end first) — a clean stop, nothing cancelled half-way.

A step that fails is tried again after its period, then after twice that after each
further failure in a row, at most :data:`BACKOFF_CAP_S` apart (:func:`backoff`), and each
failure is logged once — with its traceback when it differs from the last one — so a
failure that lasts (a table ``shengji migrate`` has not made yet, a database away) writes
a few dozen lines an hour, not two a second (docs/decisions.md D-migrate). Its first
success is logged too, and the period is the period again.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import AsyncIterator, Callable, Sequence

import anyio

from infra.localhub import LocalHub
from services.background import Crew, Loop, backoff

log = logging.getLogger(__name__)

STOP_TIMEOUT_S = 10.0
"""How long a stop waits for each loop's step in progress (a sweep stops after the match
it is on; a bot's decision is bounded by its CPU budget)."""


class Workers:
    """Runs ``loops`` and ``crews`` (the module docstring); ``hub``: a hub this runner
    starts and stops around them (a worker process's, whose saves it hears of; in an
    ``all`` process the live streams start theirs); ``pause``: how a failed loop waits
    out its :func:`backoff`, true when the runner is stopping (by default a wait on the
    stop; tests pass a clock of their own)."""

    def __init__(
        self,
        loops: Sequence[Loop] = (),
        crews: Sequence[Crew] = (),
        *,
        hub: LocalHub | None = None,
        pause: Callable[[float], bool] | None = None,
    ) -> None:
        self.loops = tuple(loops)
        self.crews = tuple(crews)
        self.hub = hub
        self._stopping = threading.Event()
        self._pause = self._stopping.wait if pause is None else pause
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()

    # -- start and stop -------------------------------------------------------------------------

    def start(self) -> None:
        """Start every loop's thread and every crew (again after :meth:`stop`)."""
        with self._lock:
            if self._threads:
                return
            self._stopping.clear()
            for loop in self.loops:
                loop.begin()
            self._threads = [
                threading.Thread(target=self._run, args=(loop,), name=loop.name, daemon=True)
                for loop in self.loops
            ]
            for thread in self._threads:
                thread.start()
            for crew in self.crews:
                crew.start()

    def stop(self, timeout: float = STOP_TIMEOUT_S) -> None:
        """Halt every loop, wait for its step in progress, stop the crews (blocking)."""
        with self._lock:
            threads, self._threads = self._threads, []
            self._stopping.set()
            for loop in self.loops:
                loop.halt()
                loop.doorbell.ring()
            for crew in self.crews:
                crew.stop(timeout)
            for thread in threads:
                thread.join(timeout)
                if thread.is_alive():
                    log.warning("background work %s did not stop in %s s", thread.name, timeout)

    @contextlib.asynccontextmanager
    async def running(self, _app: object = None) -> AsyncIterator[None]:
        """Run from entry to exit (the module docstring); an app's lifespan hook."""
        if self.hub is not None:
            await self.hub.start()
        try:
            await anyio.to_thread.run_sync(self.start)
            try:
                yield
            finally:
                await anyio.to_thread.run_sync(self.stop)
        finally:
            if self.hub is not None:
                await self.hub.stop()

    # -- one loop -------------------------------------------------------------------------------

    def _run(self, loop: Loop) -> None:
        failures = 0
        last = ""
        while not self._stopping.is_set():
            began = time.monotonic()
            try:
                loop.step()
            except Exception as e:
                failures += 1
                wait = backoff(loop.period_s, failures)
                error = f"{type(e).__name__}: {e}"
                log.error(
                    "background work %s failed (%d in a row); it runs again in %s s: %s",
                    loop.name,
                    failures,
                    wait,
                    error[:300],
                    exc_info=error != last,  # the traceback once per kind of failure
                )
                last = error
                if self._pause(wait):  # no ring hurries a failing step
                    return
                continue
            if failures:
                log.warning("background work %s runs again after %d failures", loop.name, failures)
                failures, last = 0, ""
            if self._stopping.is_set():
                return
            rung = loop.doorbell.wait(loop.period_s)
            if rung and loop.pace_s > 0 and not self._stopping.is_set():
                rest = loop.pace_s - (time.monotonic() - began)
                if rest > 0 and self._pause(rest):  # rung sooner: the rest of its pace first
                    return

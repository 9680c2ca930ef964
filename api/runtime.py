"""What the REST handlers share: the game service, one thread limiter, the bot budget and
the in-flight idempotency keys (the ``runtime`` dependency, built by ``api.app``).

The eventsourcing library is synchronous (ARCHITECTURE decision 2): a call into the
service runs in one of the app's worker threads through :meth:`Runtime.call`, as many
threads as the app's :class:`anyio.CapacityLimiter` has tokens (the store's connection
pool; the live streams' loads share that limiter).

**Short commands on the embedded store** (docs/decisions.md, D2a) run on the event loop
instead, through :meth:`Runtime.quick`: on SQLite a command is a few hundred
microseconds of Python that holds the GIL wherever it runs, so the hop to a thread only
adds the cost of handing the GIL and the request back and forth (about a third of a
command's CPU on the bench machine), and the one blocking part, the fsync, is no longer
in the command (:mod:`infra.walsync`). Long work (bot runs, imports, exports, sweeps)
and every call on PostgreSQL still go to a thread.

**Durability.** With a :class:`Durability` (the SQLite syncer), every call's saves are
*deferred* — they return before their fsync — and the call then *settles*: it waits,
without blocking the loop, until everything committed so far is durable. So an answer
never acknowledges, and a read never shows, a commit that a power cut could take back.
A :meth:`Runtime.quick` command's saves are also *batched*: they join one open transaction
that the next settle commits after a turn of the loop, so the commands that arrive
together share one COMMIT (one log write) as well as one fsync (D2b).
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
import weakref
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Protocol, TypeVar
from uuid import UUID

import anyio

from domain.game.match import Match
from domain.game.round import Round
from services.bots import DEFAULT_STEPS
from services.game import GameService

T = TypeVar("T")


class InFlight:
    """Idempotency keys whose first request is still running in this process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._keys: set[UUID] = set()

    def claim(self, key: UUID) -> bool:
        """Mark ``key`` running; False when it already is."""
        with self._lock:
            if key in self._keys:
                return False
            self._keys.add(key)
            return True

    def release(self, key: UUID) -> None:
        with self._lock:
            self._keys.discard(key)


class ViewTags:
    """The last ETag of each match's views and the seat of each seat token, kept in
    memory so a poll that is not modified is answered with no store read and no thread.

    Only for a single-process store (SQLite, POPO): every save in this process tells
    :meth:`changed` (the service's ``on_saved``), which drops the match's tag. A tag read
    before a save and stored after it is refused by the generation check. Views that
    change with the clock (a paced deal, an unclaimed deadline) are never cached.
    """

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self._lock = threading.Lock()
        self._tags: dict[UUID, str] = {}
        self._generation: dict[UUID, int] = {}
        self._seats: dict[tuple[UUID, str], int] = {}

    def changed(self, match_ids: frozenset[UUID]) -> None:
        with self._lock:
            for match_id in match_ids:
                self._tags.pop(match_id, None)
                self._generation[match_id] = self._generation.get(match_id, 0) + 1

    def generation(self, match_id: UUID) -> int:
        with self._lock:
            return self._generation.get(match_id, 0)

    def remember(self, match_id: UUID, generation: int, tag: str) -> None:
        if not self.enabled or "-" in tag:
            return
        with self._lock:
            if self._generation.get(match_id, 0) == generation:
                if len(self._tags) > 100_000:
                    self._tags.clear()
                self._tags[match_id] = tag

    def tag(self, match_id: UUID) -> str | None:
        return self._tags.get(match_id) if self.enabled else None

    def remember_seat(self, match_id: UUID, token: str, seat: int) -> None:
        if self.enabled:
            if len(self._seats) > 400_000:
                self._seats.clear()
            self._seats[(match_id, token)] = seat

    def seat(self, match_id: UUID, token: str | None) -> int | None:
        return None if token is None else self._seats.get((match_id, token))


class Durability(Protocol):
    """What the runtime needs of a store whose saves can return before their fsync
    (``infra.walsync.WalSyncer``)."""

    def deferred(self) -> AbstractContextManager[None]:
        """Saves inside return without waiting for their fsync."""
        ...

    def batched(self) -> AbstractContextManager[None]:
        """Saves inside (on the event loop) also share one COMMIT, made by ``settle``."""
        ...

    async def settle(self, ticket: int | None = None) -> None:
        """Wait until everything committed so far (or ``ticket``) is durable."""
        ...


@dataclass
class Runtime:
    service: GameService
    limiter: anyio.CapacityLimiter
    bot_steps: int = DEFAULT_STEPS
    """Bot moves played after each command (a four-bot table plays on by itself)."""
    in_flight: InFlight = field(default_factory=InFlight)
    tags: ViewTags = field(default_factory=lambda: ViewTags(enabled=False))
    durability: Durability | None = None
    """The embedded store's syncer: calls defer their fsync and settle before answering;
    short commands run inline (:meth:`quick`)."""
    executor: ThreadPoolExecutor = field(init=False, repr=False)
    """The worker threads of :meth:`call`, as many as the limiter has tokens."""

    def __post_init__(self) -> None:
        self.executor = ThreadPoolExecutor(
            int(self.limiter.total_tokens), thread_name_prefix="service"
        )
        # Idle workers go when the app does (tests build many apps in one process).
        weakref.finalize(self, self.executor.shutdown, wait=False)

    async def call(self, fn: Callable[..., T], *args: Any) -> T:
        """Run the blocking ``fn(*args)`` in one of the app's worker threads.

        A plain executor hop (a C queue and one loop wake-up), not anyio's
        ``to_thread.run_sync``, whose limiter, cancel scope and condition-based queue
        cost about a fifth of a command's CPU under load. The contextvars (the
        request's log context) go along; a cancelled request still waits for the call
        to finish, as anyio's non-abandoning ``run_sync`` does, so an in-flight
        idempotency key is released only after its command is done.
        """
        loop = asyncio.get_running_loop()
        ctx = contextvars.copy_context()
        durability = self.durability
        job = partial(ctx.run, fn, *args)
        if durability is not None:
            job = partial(ctx.run, _deferred, durability, fn, *args)
        done = loop.run_in_executor(self.executor, job)
        cancelled = False
        try:
            return await asyncio.shield(done)
        except asyncio.CancelledError:
            cancelled = True
            await asyncio.wait([done])  # the call finishes before the request gives up
            raise
        finally:
            if durability is not None and not cancelled:
                await durability.settle()  # a refusal too may tell of a newer commit

    async def quick(self, fn: Callable[..., T], *args: Any) -> T:
        """Run the short blocking ``fn(*args)`` on the event loop when the store is the
        embedded one (see the module docstring), else as :meth:`call` does."""
        durability = self.durability
        if durability is None:
            return await self.call(fn, *args)
        try:
            with durability.batched():
                return fn(*args)
        finally:
            await durability.settle()

    def provide(self) -> Runtime:
        """The ``runtime`` dependency."""
        return self


def _deferred(durability: Durability, fn: Callable[..., T], *args: Any) -> T:
    with durability.deferred():
        return fn(*args)


def snapshot(service: GameService, match_id: UUID) -> tuple[Match, Round | None]:
    """The match and its current round as one moment, to read (not to change): the match
    is read again after the round, so a save of both in between (a round scored, the
    next dealt) is not seen half-way."""
    match = service.get_match(match_id, copy=False)
    for _ in range(3):
        round_ = service.current_round(match, copy=False)
        again = service.get_match(match_id, copy=False)
        if again.version == match.version:
            return match, round_
        match = again
    return match, service.current_round(match, copy=False)

"""What an export may cost (docs/decisions.md D-bounded): the exports built at once, the
exports a client may have built an hour, and a settled day's partition built once.

An export — ``GET /v1/exports/{table}`` (a table's file, or one day's partition) and
``GET /v1/records`` (the bulk records) — reads the whole history it covers and holds a
worker thread, a store slot and the file's chunk while it is built. So:

* **At most** ``EXPORT_CONCURRENCY`` **are built at once** in a process. One more is
  refused at once, before anything is read: 503 ``exports-busy`` with ``Retry-After``
  (the server's capacity, not the client's fault). A streamed export holds its place
  until its body ends (sent, failed or abandoned by the client: its generator is
  started before the answer, so closing it always gives the place back).
* **Each client may have** ``EXPORT_QUOTA_PER_HOUR`` **built an hour**, charged like the
  other quotas to its address and its verified identity (:mod:`api.payer`): 429
  ``quota-exceeded`` with ``Retry-After``.
* **A settled day's partition is built once** (:mod:`services.analysis.partitions`): kept
  with its ``ETag`` (the file's sha256) and ``Last-Modified``, answered again — or 304 —
  while its table's mark stays, at no cost to the quota or the cap. Requests for a
  partition being built wait for that build instead of starting their own.
"""

from __future__ import annotations

import threading
from collections.abc import AsyncGenerator, Iterator
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Final

import anyio
from litestar import Request

from api.auth import credential
from api.payer import payer_of
from api.runtime import in_thread
from services.analysis.dump import Format
from services.analysis.partitions import Built, Changes, Key, PartitionCache, build
from services.analysis.rows import Reader
from services.errors import BusyError, UnauthorizedError
from services.game import GameService
from services.limits import Allowance
from services.operator import Operator
from services.ratings.boards import RatingModels

RETRY_AFTER_S: Final = 5
"""Seconds a refused export waits before asking again (an export takes seconds)."""


class Slots:
    """At most ``limit`` exports built at once (0: no cap); :meth:`take` never waits."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.taken = 0
        self.refused = 0
        self._lock = threading.Lock()

    def take(self) -> Slot | None:
        with self._lock:
            if self.limit and self.taken >= self.limit:
                self.refused += 1
                return None
            self.taken += 1
        return Slot(self)

    def give(self) -> None:
        with self._lock:
            self.taken -= 1


@dataclass(slots=True)
class Slot:
    """One export's place; :meth:`release` gives it back (once, however often called)."""

    slots: Slots
    released: bool = field(default=False)

    def release(self) -> None:
        if not self.released:
            self.released = True
            self.slots.give()


class Exports:
    """The exports' wiring and bounds (the module docstring): the service, the store's
    limiter, the operator, the cap, the quota, the built partitions."""

    def __init__(
        self,
        service: GameService,
        limiter: anyio.CapacityLimiter,
        operator: Operator,
        *,
        concurrency: int,
        quota: Allowance,
        cache_bytes: int,
        ratings: RatingModels | None = None,
    ) -> None:
        self.service = service
        self.ratings = ratings
        """The rating moves the ``ratings`` table shows (docs/decisions.md D-career)."""
        self.limiter = limiter
        self.operator = operator
        self.slots = Slots(concurrency)
        self.quota = quota
        self.cache = PartitionCache(cache_bytes)
        self.changes = Changes(service)
        self._building: dict[Key, anyio.Event] = {}

    def provide(self) -> Exports:
        """The ``exports`` dependency."""
        return self

    def reader(self, request: Request[Any, Any, Any]) -> Reader:
        """``operator`` for the operator token, ``public`` without a token; 401 for any
        other token (as on the events feed)."""
        found = credential(request)
        if found is None:
            return "public"
        if self.operator.is_operator(found.token):
            return "operator"
        raise UnauthorizedError(
            "the exports take the operator token only (OPERATOR_TOKEN); without a token "
            "they answer what the public may see (R33, R36)"
        )

    def admit(self, request: Request[Any, Any, Any]) -> Slot:
        """A place for one export built for ``request``'s client: its quota spent (429),
        then a place taken (503, the quota given back)."""
        payer = payer_of(request.scope)
        spent = self.quota.spend(payer, 1)
        slot = self.slots.take()
        if slot is None:
            self.quota.refund(payer, spent)
            raise BusyError(
                f"{self.slots.limit} exports are being built already (EXPORT_CONCURRENCY); "
                f"retry in {RETRY_AFTER_S} s",
                retry_after=RETRY_AFTER_S,
            )
        return slot

    async def stream(
        self, request: Request[Any, Any, Any], chunks: Iterator[bytes]
    ) -> AsyncGenerator[bytes]:
        """The body of an export built as it is sent, ``chunks`` read in a worker thread
        under the store's limiter, holding an admitted place until it ends."""
        return await self.held(request, self._read(chunks))

    async def held(
        self, request: Request[Any, Any, Any], body: AsyncGenerator[bytes]
    ) -> AsyncGenerator[bytes]:
        """``body`` holding an admitted place (:meth:`admit`) until it ends; its first
        chunk is made now, so a failure is a problem rather than a broken answer."""
        slot = self.admit(request)
        guarded = _holding(slot, body)
        try:
            first = await anext(guarded)
        except StopAsyncIteration:
            first = b""
        except BaseException:
            slot.release()
            raise
        return _after(first, guarded)

    async def partition(
        self,
        request: Request[Any, Any, Any],
        table: str,
        fmt: Format,
        reader: Reader,
        day: date,
    ) -> Built:
        """A settled day's partition: as kept, or built now (admitted, :meth:`admit`). One
        request at a time looks at a partition: the others wait, then find it kept."""
        key: Key = (table, fmt, reader, day)
        while (building := self._building.get(key)) is not None:
            await building.wait()  # one request at a time looks at a partition
        done = self._building[key] = anyio.Event()
        try:
            mark = await in_thread(self.limiter, self.changes.mark, table)
            found = self.cache.get(key, mark.position)
            if found is not None:
                return found
            slot = self.admit(request)
            try:
                built = await in_thread(
                    self.limiter, build, self.service, table, fmt, reader, day, mark, self.ratings
                )
            finally:
                slot.release()
            self.cache.put(key, built)
            return built
        finally:
            del self._building[key]
            done.set()

    async def _read(self, chunks: Iterator[bytes]) -> AsyncGenerator[bytes]:
        while (chunk := await in_thread(self.limiter, next, chunks, None)) is not None:
            yield chunk


async def _holding(slot: Slot, body: AsyncGenerator[bytes]) -> AsyncGenerator[bytes]:
    try:
        async for chunk in body:
            yield chunk
    finally:
        slot.release()
        await body.aclose()


async def _after(first: bytes, rest: AsyncGenerator[bytes]) -> AsyncGenerator[bytes]:
    try:
        if first:
            yield first
        async for chunk in rest:
            yield chunk
    finally:
        await rest.aclose()

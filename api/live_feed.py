"""One match followed by a process for its live streams (:mod:`api.sse`): the match's
:class:`services.live.LiveTable`, advanced by the new events on each hub signal, and each
watching viewer's frames — one per version, built and encoded once, kept in a short ring
and shared by every subscriber with that viewer (R33: seats apart, spectators together) —
plus a paced deal's progress frames (R16)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar
from uuid import UUID

import msgspec

from domain.game.round import DRAWS
from services.game import GameService
from services.live import LiveTable, load_live

log = logging.getLogger(__name__)

RING = 64
"""Versions of frames a feed keeps per viewer (a reconnect within them costs no read)."""
DEAL_TICK_S = 0.25
"""The most often a paced deal's progress is sent (cards come in batches of at most this)."""

T = TypeVar("T")
encode = msgspec.json.Encoder().encode


class Subscription(Protocol):
    """Signals that a match changed (coalesced; may be spurious)."""

    async def wait(self) -> bool:
        """True after a change since the last wait; False once the hub has stopped."""
        ...

    def take(self) -> list[Any] | None:
        """The events handed over since the last take (None: read the store)."""
        ...

    def close(self) -> None: ...


class Store(Protocol):
    """Runs a blocking call in a worker thread under the app's one limiter."""

    async def __call__(self, fn: Callable[..., T], /, *args: object) -> T: ...


def version_frame(version: int, data: bytes) -> bytes:
    return b"event: view\nid: %d\ndata: %s\n\n" % (version, data)


@dataclass(frozen=True, slots=True)
class _Deal:
    version: int
    drawn: int
    frame: bytes


class Feed:
    """One match followed by this process: its live table and each viewer's frames."""

    def __init__(
        self, service: GameService, store: Store, subscription: Subscription, match_id: UUID
    ) -> None:
        self.service = service
        self.store = store
        self.match_id = match_id
        self.users = 0
        self.closed = False
        self.table: LiveTable | None = None
        """Touched only under :attr:`lock`, in a worker thread."""
        self.lock = asyncio.Lock()
        self.version = 0
        self.viewers: Counter[int | None] = Counter()
        self.rings: dict[int | None, deque[tuple[int, bytes]]] = {}
        self.deals: dict[int | None, _Deal] = {}
        self.keys: Counter[int] = Counter()
        """Per seat, how often its token was re-issued while followed: a stream of that
        seat opened before ends (the old token stops working; the client reconnects)."""
        self.clients: set[asyncio.Event] = set()
        self._sub = subscription  # taken before the first load: nothing slips by
        self._tasks: list[asyncio.Task[None]] = []
        self._dealing: asyncio.Task[None] | None = None
        self.ready = asyncio.create_task(self._start(), name=f"feed {match_id}")

    async def _start(self) -> None:
        self.table = await self.store(load_live, self.service, self.match_id)
        self.version = self.table.version
        self._tasks.append(asyncio.create_task(self._run(), name=f"follow {self.match_id}"))
        self._deal_if_dealing()

    async def _run(self) -> None:
        retry = False
        while retry or await self._sub.wait():
            known = None if retry else self._sub.take()
            try:
                async with self.lock:
                    await self._catch_up(known)
            except Exception as e:  # the store is unreachable: try again shortly
                log.warning("live: following match %s failed: %s", self.match_id, e)
                retry = True
                await asyncio.sleep(0.5)
                continue
            retry = False
            self._deal_if_dealing()
        self.closed = True  # the hub stopped
        self.wake()

    async def _catch_up(self, known: list[Any] | None) -> None:
        """Apply what was saved since — the events the hub handed over, else read from the
        store — with one frame per version per viewer watching."""
        table = self.table
        assert table is not None
        viewers = list(self.viewers)

        def advance() -> list[tuple[int, dict[int | None, bytes]]]:
            out = []
            for step in table.advance(known):
                frames = {v: encode(table.frame(step, v)) for v in viewers}
                out.append((step.version, frames))
            if table.match.tournament_id is not None:
                table.refresh_embargo()  # R36: released with no new version
            return out

        for version, frames in await self.store(advance):
            for viewer, data in frames.items():
                self._ring(viewer).append((version, version_frame(version, data)))
            self.version = version
        self.keys.update(table.reissued)
        table.reissued.clear()
        self.wake()

    async def reload(self) -> None:
        """Read the match again and drop every kept frame: what the frames showed changed
        with no new version (a player erased); resumes replay from the store."""
        async with self.lock:
            try:
                table = await self.store(load_live, self.service, self.match_id)
            except Exception as e:  # the store is unreachable: the next wake-up reads it
                log.warning("live: reloading match %s failed: %s", self.match_id, e)
                return
            self.table = table
            self.version = table.version
            self.rings = {}
            self.deals = {}
        self.wake()

    def _ring(self, viewer: int | None) -> deque[tuple[int, bytes]]:
        ring = self.rings.get(viewer)
        if ring is None:
            ring = self.rings[viewer] = deque(maxlen=RING)
        return ring

    def wake(self) -> None:
        for client in self.clients:
            client.set()

    # -- viewers -------------------------------------------------------------------------------

    async def join(self, viewer: int | None) -> None:
        """Start building ``viewer``'s frames, the current version's first."""
        async with self.lock:
            self.viewers[viewer] += 1
            ring = self._ring(viewer)
            if ring and ring[-1][0] == self.version:
                return
            table = self.table
            assert table is not None
            data = encode(table.frame(table.last, viewer))
            ring.clear()
            ring.append((self.version, version_frame(self.version, data)))

    def leave(self, viewer: int | None) -> None:
        self.viewers[viewer] -= 1
        if self.viewers[viewer] <= 0:
            del self.viewers[viewer]
            self.rings.pop(viewer, None)
            self.deals.pop(viewer, None)

    def after(self, viewer: int | None, last: int) -> list[tuple[int, bytes]] | None:
        """The frames after version ``last`` in the ring, or None when it starts later."""
        ring = self.rings.get(viewer)
        if not ring or ring[0][0] > last + 1:
            return None
        return [(v, frame) for v, frame in ring if v > last]

    async def check(self, fn: Callable[[LiveTable], T]) -> T:
        """``fn(table)`` under the lock, in a worker thread (it may read the store)."""
        async with self.lock:
            table = self.table
            assert table is not None
            return await self.store(fn, table)

    # -- a paced deal (R16) ----------------------------------------------------------------------

    def _deal_if_dealing(self) -> None:
        if self._dealing is None or self._dealing.done():
            table = self.table
            if table is not None and table.dealing(self.service.clock()) is not None:
                self._dealing = asyncio.create_task(self._deal(), name=f"deal {self.match_id}")

    async def _deal(self) -> None:
        clock = self.service.clock
        while not self.closed:
            await asyncio.sleep(DEAL_TICK_S)
            async with self.lock:
                table = self.table
                assert table is not None
                at = clock()
                drawn = table.dealing(at)
                viewers = list(self.viewers)
                version = self.version

                n = DRAWS if drawn is None else drawn
                for viewer in viewers:
                    frame = table.deal_frame(viewer, at, n)
                    hand = getattr(frame.view, "hand", None)
                    seen = n if hand is None else len(hand)  # a seat's frame: when its hand grows
                    old = self.deals.get(viewer)
                    if old is None or old.version != version or old.drawn != seen:
                        data = b"event: deal\ndata: %s\n\n" % encode(frame)
                        self.deals[viewer] = _Deal(version, seen, data)
                self.wake()
                if drawn is None:
                    return

    async def close(self) -> None:
        self.closed = True
        self._sub.close()
        tasks = [t for t in (self.ready, self._dealing, *self._tasks) if t is not None]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(BaseException):
                await task
        self.wake()

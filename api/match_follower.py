"""One match followed by a process for its live streams (:mod:`api.sse`): the match's
:class:`services.live.LiveTable`, advanced by the new events on each hub signal, and each
watching viewer's frames — one per version, built and encoded once, kept in a short ring
and shared by every subscriber with that viewer (R33: seats apart, spectators together) —
plus a paced deal's progress frames (R16).

For the viewers some stream asked patch frames for (``?frames=patch``, docs/decisions.md
D-light-frames) a second ring holds each version as a :class:`~services.live.PatchFrame`
against the viewer's view at the version before — built once per version and viewer, like
the full frames — except every :data:`FULL_EVERY`-th version, which is the full frame (a
client that missed something is whole again at the latest after that many), and the
deal's progress as a chain of :class:`~services.live.DealPatchFrame`, each against the one
before."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar
from uuid import UUID

import msgspec

from domain.game.round import DRAWS
from services.game import GameService
from services.json_patch import Json
from services.live import (
    LiveTable,
    StoreNeededError,
    deal_patch_frame,
    load_live,
    patch_frame,
    view_json,
)
from services.talk.live import LiveTalk

log = logging.getLogger(__name__)

RING = 64
"""Versions of frames a follower keeps per viewer (a reconnect within them costs no read)."""
DEAL_TICK_S = 0.25
"""The most often a paced deal's progress is sent (cards come in batches of at most this)."""
FULL_EVERY = 32
"""In patch frames (``?frames=patch``), every version divisible by this is sent as a full
``view`` frame (a round has about 120 versions: three or four full frames a round)."""

T = TypeVar("T")
encode = msgspec.json.Encoder().encode

Ring = dict[int, bytes]
"""A viewer's frames by version, oldest first, at most :data:`RING` of them: ints and bytes
in a plain dict, which the garbage collector does not track (CPython tracks a dict only
once it holds a container; docs/decisions.md D-young) — a ring lives a few seconds, and a
``(version, frame)`` tuple per frame was walked by young collections."""


class ChangeSignal(Protocol):
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


def patch_block(version: int, data: bytes) -> bytes:
    return b"event: patch\nid: %d\ndata: %s\n\n" % (version, data)


Advanced = list[tuple[int, dict[int | None, bytes], dict[int | None, bytes]]]
"""Per new version: the version, each viewer's frame and each patching viewer's patch."""


def advance(
    table: LiveTable,
    known: list[Any] | None,
    viewers: list[int | None],
    bases: dict[int | None, Json | None],
    talk: LiveTalk | None = None,
    *,
    offline: bool = False,
) -> tuple[Advanced, bool]:
    """Apply what was saved since to ``table`` (``known``: the events the hub handed
    over, else read from the store) and encode each new version's frame for ``viewers``,
    and its patch against ``bases`` (each patching viewer's last view, moved on here);
    then the table's ``talk`` (R37) from the same events. Answers the versions made and
    whether all is applied.

    Blocking: in a worker thread, one call per wake-up for both — or, ``offline``, on the
    event loop with no worker-thread call at all, from ``known`` alone: the store is never
    read, and where ``known`` leaves a gap (or the table is a tournament's, whose embargo
    is read from the store, R36) it stops at the last version made, answering False, and a
    call in a worker thread goes on from there (docs/decisions.md D-path)."""
    out: Advanced = []
    if offline and table.match.tournament_id is not None:
        return out, False
    try:
        for step in table.advance(known, offline=offline):
            frames: dict[int | None, bytes] = {}
            patches: dict[int | None, bytes] = {}
            for v, frame in zip(viewers, table.frames(step, viewers), strict=True):
                block = frames[v] = version_frame(step.version, encode(frame))
                if v in bases:
                    base = bases[v]
                    if base is None or full_due(step.version):
                        patches[v], bases[v] = block, view_json(frame.view)
                    else:
                        patch, bases[v] = patch_frame(frame, base)
                        patches[v] = patch_block(step.version, encode(patch))
            out.append((step.version, frames, patches))
        if table.match.tournament_id is not None:
            table.refresh_embargo()  # R36: released with no new version
        if talk is not None:  # after the match: a message follows its version's frame
            talk.advance(known, offline=offline)
    except StoreNeededError:
        return out, False
    return out, True


def load_followed(service: GameService, match_id: UUID) -> tuple[LiveTable, LiveTalk]:
    """The match followed from now on and its table's talk, read in one worker-thread
    call (blocking)."""
    return load_live(service, match_id), LiveTalk(service, match_id)


def full_due(version: int) -> bool:
    """A patch stream sends this version whole (every :data:`FULL_EVERY`-th)."""
    return version % FULL_EVERY == 0


@dataclass(frozen=True, slots=True)
class _Deal:
    version: int
    drawn: int
    frame: bytes
    """The ``deal`` frame now (the whole view)."""
    view: Json | None = None
    """The view of :attr:`frame` as JSON values, where a chain of patches ends; None: no
    patch stream watches this viewer (no chain)."""
    patches: list[bytes] = field(default_factory=list)
    """The ``deal-patch`` frames of this version so far, each against the one before (the
    first against the version's view); only ever appended to within a version."""


class MatchFollower:
    """One match followed by this process: its live table and each viewer's frames."""

    def __init__(
        self, service: GameService, store: Store, subscription: ChangeSignal, match_id: UUID
    ) -> None:
        self.service = service
        self.store = store
        self.match_id = match_id
        self.users = 0
        self.closed = False
        self.table: LiveTable | None = None
        """Touched only under :attr:`lock`, in a worker thread."""
        self.talk: LiveTalk | None = None
        """The table's talk (R37), advanced after the table (set once :attr:`ready`)."""
        self.lock = asyncio.Lock()
        self.version = 0
        self.viewers: Counter[int | None] = Counter()
        self.rings: dict[int | None, Ring] = {}
        self.patchers: Counter[int | None] = Counter()
        """Per viewer, its streams that asked for patch frames."""
        self.patch_rings: dict[int | None, Ring] = {}
        """Per viewer with patch streams: what they are sent for each version (a patch, or
        a full frame when due or when there was no view to patch)."""
        self.bases: dict[int | None, Json] = {}
        """Per viewer with patch streams: its view at :attr:`version`, as JSON values."""
        self.deals: dict[int | None, _Deal] = {}
        self.keys: Counter[int] = Counter()
        """Per seat, how often its token was re-issued while followed: a stream of that
        seat opened before ends (the old token stops working; the client reconnects)."""
        self.clients: set[asyncio.Event] = set()
        self._sub = subscription  # taken before the first load: nothing slips by
        self._tasks: list[asyncio.Task[None]] = []
        self._dealing: asyncio.Task[None] | None = None
        self.ready = asyncio.create_task(self._start(), name=f"follower {match_id}")

    async def _start(self) -> None:
        table, self.talk = await self.store(load_followed, self.service, self.match_id)
        self.table = table
        self.version = table.version
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
        bases = {v: self.bases.get(v) for v in self.patchers}
        talk = self.talk
        done: Advanced = []
        complete = False
        if known is not None:  # the hub's events alone, on the loop (D-path)
            done, complete = advance(table, known, viewers, bases, talk, offline=True)
        if not complete:
            more, _ = await self.store(advance, table, known, viewers, bases, talk)
            done += more
        for version, frames, patches in done:
            for viewer, block in frames.items():
                self._keep(viewer, version, block, self.rings)
            for viewer, block in patches.items():
                if viewer in self.patchers:
                    self._keep(viewer, version, block, self.patch_rings)
            self.version = version
        for viewer, base in bases.items():
            if viewer in self.patchers:
                self.bases[viewer] = base
        self.keys.update(table.reissued)
        table.reissued.clear()
        self.wake()

    async def reload(self) -> None:
        """Read the match again and drop every kept frame: what the frames showed changed
        with no new version (a player erased); resumes replay from the store."""
        async with self.lock:
            try:
                table, talk = await self.store(load_followed, self.service, self.match_id)
            except Exception as e:  # the store is unreachable: the next wake-up reads it
                log.warning("live: reloading match %s failed: %s", self.match_id, e)
                return
            self.table = table
            self.talk = talk
            self.version = table.version
            self.rings = {}
            self.patch_rings = {}
            self.bases = {}
            self.deals = {}
        self.wake()

    def _ring(self, viewer: int | None, rings: dict[int | None, Ring] | None = None) -> Ring:
        rings = self.rings if rings is None else rings
        ring = rings.get(viewer)
        if ring is None:
            ring = rings[viewer] = {}
        return ring

    def _keep(
        self, viewer: int | None, version: int, frame: bytes, rings: dict[int | None, Ring]
    ) -> None:
        """``frame`` as ``version``'s in ``viewer``'s ring, the newest; the oldest past
        :data:`RING` dropped."""
        ring = self._ring(viewer, rings)
        ring[version] = frame
        if len(ring) > RING:
            del ring[next(iter(ring))]

    def wake(self) -> None:
        for client in self.clients:
            client.set()

    # -- viewers -------------------------------------------------------------------------------

    async def join(self, viewer: int | None, *, patches: bool = False) -> None:
        """Start building ``viewer``'s frames (and its patch frames too, for a stream that
        asked for them), the current version's first."""
        async with self.lock:
            self.viewers[viewer] += 1
            if patches:
                self.patchers[viewer] += 1
            ring = self._ring(viewer)
            version = self.version
            fresh = version in ring  # the newest kept: no version is kept past the follower's
            if fresh and (not patches or viewer in self.bases):
                return
            table = self.table
            assert table is not None
            frame = table.frame(table.last, viewer)
            if not fresh:
                ring.clear()
                ring[version] = version_frame(version, encode(frame))
            if patches and viewer not in self.bases:
                self.bases[viewer] = view_json(frame.view)
                patch_ring = self._ring(viewer, self.patch_rings)
                patch_ring.clear()
                patch_ring[version] = ring[version]  # the version's full frame: patches follow

    def leave(self, viewer: int | None, *, patches: bool = False) -> None:
        if patches:
            self.patchers[viewer] -= 1
            if self.patchers[viewer] <= 0:
                del self.patchers[viewer]
                self.patch_rings.pop(viewer, None)
                self.bases.pop(viewer, None)
        self.viewers[viewer] -= 1
        if self.viewers[viewer] <= 0:
            del self.viewers[viewer]
            self.rings.pop(viewer, None)
            self.deals.pop(viewer, None)

    def after(
        self, viewer: int | None, last: int, *, patches: bool = False
    ) -> list[tuple[int, bytes]] | None:
        """The frames after version ``last`` in the ring (the patch ring with ``patches``),
        or None when it starts later."""
        ring = (self.patch_rings if patches else self.rings).get(viewer)
        if not ring or next(iter(ring)) > last + 1:
            return None
        out = []
        for version in reversed(ring):  # a live stream wants the newest one or two, not all
            if version <= last:
                break
            out.append((version, ring[version]))
        out.reverse()
        return out

    async def check(self, fn: Callable[[LiveTable], T]) -> T:
        """``fn(table)`` under the lock, in a worker thread (it may read the store)."""
        async with self.lock:
            table = self.table
            assert table is not None
            return await self.store(fn, table)

    async def peek(self, fn: Callable[[LiveTable], T]) -> T:
        """``fn(table)`` under the lock, on the event loop: for a quick look that never
        reads the store (no worker-thread call; docs/decisions.md D-path)."""
        async with self.lock:
            table = self.table
            assert table is not None
            return fn(table)

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
                    if old is not None and old.version != version:
                        old = None  # an earlier version's deal
                    base = self.bases.get(viewer)  # a patch stream watches: chain the patches
                    unchained = base is not None and (old is None or old.view is None)
                    if old is not None and old.drawn == seen and not unchained:
                        continue
                    data = b"event: deal\ndata: %s\n\n" % encode(frame)
                    if base is None:
                        self.deals[viewer] = _Deal(version, seen, data)
                        continue
                    chain = None if old is None or old.view is None else old
                    patch, view = deal_patch_frame(frame, base if chain is None else chain.view)
                    block = b"event: deal-patch\ndata: %s\n\n" % encode(patch)
                    earlier = [] if chain is None else chain.patches
                    self.deals[viewer] = _Deal(version, seen, data, view, [*earlier, block])
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

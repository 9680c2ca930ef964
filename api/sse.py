"""Live views over Server-Sent Events: ``GET /v1/matches/{match_id}/stream``.

A seat (``Authorization: Bearer <seat token>``, or ``?token=`` since a browser's
EventSource cannot send headers; the header wins) or a spectator (no token, or the
organiser's) receives **one frame per match version**, in order, none merged, none
skipped (tokens as in :mod:`api.auth`: 401/403 otherwise)::

    event: view
    id: <match version>
    data: {"version": <v>, "event": <the event that made v>, "view": <the view after it>}

(:class:`services.live.LiveFrame`: the event redacted for the viewer as at that moment,
R33; the view as of that version, R34). The first frame is the current version's; with
``Last-Event-ID`` (the header EventSource sends when it reconnects; else
``?lastEventId=``) it is the version after it, and every missed version follows in order.
While a paced deal is under way (R16) ``event: deal`` frames without an ``id`` carry the
viewer's view as the cards come (:class:`services.live.DealFrame`): a seat's when a card
reaches it, a spectator's as the hand sizes grow, at most every :data:`DEAL_TICK_S`. A
``: ping`` comment goes out after ``heartbeat_s`` of silence; after ``lifetime_s`` (or at
shutdown) the stream ends with a ``retry:`` hint and the client reconnects with its
Last-Event-ID.

Fan-out (docs/decisions.md F3, L12): a process follows each watched match once (a
:class:`MatchFollower`): one hub subscription; on a wake-up it reads only the new events and
applies them to its own copy of the match (:class:`services.live.LiveTable`, no reload),
and each version's frame is built and encoded once per viewer watching (a seat, or the
spectators), kept in a short ring, and shared by every subscriber with that viewer. What a
stream has to send at one wake-up (the versions since its last, their talk, ``caught-up``,
the deal's progress) goes out as one body chunk: one ``send``, one socket write, the frames
as they are (docs/decisions.md D-fan). A resume from before the ring replays from the store
for that client alone. The hub comes from ``infra`` through :class:`LiveStreams` (typed by
:class:`MatchHub`), so this module does not import ``infra``.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Protocol, TypeVar
from uuid import UUID

import anyio

from api.match_follower import (
    ChangeSignal,
    MatchFollower,
    encode,
    full_due,
    patch_block,
    version_frame,
)
from api.revocation import REVOKED, Revocations
from api.runtime import in_thread
from api.spectating import reader_of
from services.access import Credential
from services.game import GameService
from services.json_patch import Json
from services.live import LiveTable, patch_frame, view_json
from services.talk.live import Listening, listening, talk_block, with_said

PING = b": ping\n\n"


def caught_up(version: int) -> bytes:
    """``event: caught-up``: every version up to ``version`` was sent (a resumed stream's
    backlog, or a new stream's first frame); what follows is live. No ``id``: it is no
    version, so ``Last-Event-ID`` stays the last frame's."""
    return b'event: caught-up\ndata: {"version":%d}\n\n' % version


RESUME_CHUNK = 200
"""Versions replayed per worker call when a resume starts before the ring."""

T = TypeVar("T")

HubSubscription = ChangeSignal


class MatchHub(Protocol):
    """What the stream needs of a hub (implemented by ``infra.hub``)."""

    def subscribe(self, match_id: UUID) -> HubSubscription: ...

    async def start(self) -> None: ...

    async def stop(self) -> None: ...


@dataclass(frozen=True, slots=True)
class StreamSettings:
    heartbeat_s: float = 15.0
    """A ``: ping`` comment after this many seconds without a frame."""
    lifetime_s: float = 600.0
    """The server ends a stream after this long; the client reconnects."""
    retry_ms: int = 1000
    """The ``retry:`` hint: how long EventSource waits before reconnecting."""
    linger_s: float = 10.0
    """A match nobody watches is still followed this long (reconnects are cheap)."""


class LiveStreams:
    """The streams of one app: the service, the hub, the followed matches."""

    def __init__(
        self,
        service: GameService,
        hub: MatchHub,
        settings: StreamSettings | None = None,
        *,
        limiter: anyio.CapacityLimiter | None = None,
    ) -> None:
        self.service = service
        self.hub = hub
        self.settings = settings or StreamSettings()
        self.limiter = limiter
        self.revocations = Revocations(service, hub, limiter=limiter)
        """Ends the streams (of every kind) whose player token is revoked."""
        self.streams = 0
        """Streams open right now."""
        self._followers: dict[UUID, MatchFollower] = {}
        self.alarms = Alarms(min(TICK_S, self.settings.heartbeat_s / 10))
        """The streams' heartbeat alarms, on one timer of the loop."""
        self._closing_feeds: set[asyncio.Task[None]] = set()
        self._closing = False
        self._loop: asyncio.AbstractEventLoop | None = None

    # -- lifecycle ----------------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def lifespan(self, _app: object = None) -> AsyncIterator[None]:
        """Start the hub; at shutdown end every stream (with a ``retry:`` hint), stop it.
        Pass as ``Litestar(lifespan=[live.lifespan])``."""
        self._closing = False
        self._loop = asyncio.get_running_loop()
        self.service.saves.forgotten.add(self.forgotten)
        await self.hub.start()
        try:
            yield
        finally:
            self.service.saves.forgotten.remove(self.forgotten)
            await self.close()
            await self.hub.stop()

    def forgotten(self, ids: frozenset[UUID]) -> None:
        """Cached copies of ``ids`` were dropped (a name erased): reload them on the event
        loop (called on the thread that dropped them)."""
        loop = self._loop
        if loop is not None:
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                loop.call_soon_threadsafe(self._reload, ids)

    def _reload(self, ids: frozenset[UUID]) -> None:
        """Followed matches among ``ids`` read again from the store, their kept frames
        dropped (an erased player's name must not be shown again, even on a resume)."""
        for match_id in ids:
            follower = self._followers.get(match_id)
            if follower is not None and not follower.closed:
                task = asyncio.get_running_loop().create_task(follower.reload())
                self._closing_feeds.add(task)
                task.add_done_callback(self._closing_feeds.discard)

    async def close(self, timeout: float = 2.0) -> None:
        """End every stream, then stop following matches."""
        self._closing = True
        for follower in list(self._followers.values()):
            follower.wake()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                while self.streams:
                    await asyncio.sleep(0.01)
        followers, self._followers = list(self._followers.values()), {}
        for follower in followers:
            await follower.close()
        self.alarms.stop()

    def provide(self) -> LiveStreams:
        """The ``live`` dependency: ``dependencies={"live": Provide(live.provide,
        sync_to_thread=False)}``."""
        return self

    async def store(self, fn: Callable[..., T], *args: object) -> T:
        """The blocking ``fn(*args)`` in a worker thread under the app's one limiter."""
        return await in_thread(self.limiter, fn, *args)

    # -- matches followed -----------------------------------------------------------------------

    async def acquire(self, match_id: UUID) -> MatchFollower:
        """The match's follower, loaded (NotFoundError when there is no such match)."""
        follower = self._followers.get(match_id)
        if follower is None or follower.closed:
            signal = self.hub.subscribe(match_id)
            follower = MatchFollower(self.service, self.store, signal, match_id)
            self._followers[match_id] = follower
        follower.users += 1
        try:
            await asyncio.shield(follower.ready)
        except BaseException:
            self.release(follower)
            raise
        return follower

    def release(self, follower: MatchFollower) -> None:
        follower.users -= 1
        if follower.users == 0:
            loop = asyncio.get_running_loop()
            loop.call_later(self.settings.linger_s, self._drop_if_unused, follower)
            ready = follower.ready
            if ready.done() and (ready.cancelled() or ready.exception() is not None):
                self._drop_if_unused(follower)  # e.g. no such match: do not keep the failure

    def _drop_if_unused(self, follower: MatchFollower) -> None:
        if follower.users == 0 and self._followers.get(follower.match_id) is follower:
            del self._followers[follower.match_id]
            task = asyncio.get_running_loop().create_task(follower.close())
            self._closing_feeds.add(task)
            task.add_done_callback(self._closing_feeds.discard)

    # -- one stream ---------------------------------------------------------------------------

    async def frames(
        self,
        match_id: UUID,
        viewer: int | None,
        last: int | None,
        *,
        patches: bool = False,
        said: int = 0,
    ) -> AsyncIterator[bytes]:
        """The stream's chunks: ``retry:``, frames, pings, and a final ``retry:``.

        With ``patches`` (``?frames=patch``): the first version frame is whole (``view``),
        the next ones are the patch ring's (``patch``, whole when due); during a paced deal,
        ``deal-patch`` frames chained from the version's view when this connection sent
        that version, else a whole ``deal`` frame first.

        Table talk (R37): each message the viewer reads, numbered after ``said``, as an
        ``event: talk`` frame right after the frame of the version it was said at (in the
        order said); once one was sent, every frame's id is ``V.T`` (the version, the last
        message's number), so ``Last-Event-ID`` resumes both."""
        settings = self.settings
        retry = b"retry: %d\n\n" % settings.retry_ms
        self.streams += 1
        wake = Wake(self.alarms)
        follower: MatchFollower | None = None
        joined = False
        try:
            yield retry
            if self._closing:
                return
            follower = await self.acquire(match_id)
            follower.clients.add(wake)
            await follower.join(viewer, patches=patches)
            joined = True
            key = None if viewer is None else follower.keys[viewer]
            hears = await follower.peek(lambda table: listening(table.match, viewer))
            loop = asyncio.get_running_loop()
            deadline = loop.time() + settings.lifetime_s
            if last is None:
                last = follower.version - 1
                said = 0 if follower.talk is None else follower.talk.said  # new talk only
            dealt: tuple[int, int] | None = None
            due = 0.0
            """When a ``: ping`` is due if nothing wakes the stream before."""
            early = False
            """The heartbeat's alarm rang before :data:`due` (it was set before the
            last wake-up): the wait goes on to the same ``due``."""
            behind = True
            based: int | None = None
            """The version whose view this connection sent last (patches apply to it)."""
            out: list[bytes] = []
            """What this wake-up sends, in order: one chunk, one write (D-fan); emptied,
            not made anew, after each (nothing of a wake-up is held while the stream
            waits: docs/decisions.md D-young)."""
            frames: list[tuple[int, bytes]] | None = None
            while True:
                if _talk_pending(follower, said):
                    said = _talk_due(follower, hears, said, last, out)  # said at what was sent
                while last < follower.version:
                    frames = None
                    if patches and based is not None:
                        frames = follower.after(viewer, last, patches=True)
                    if frames is None:
                        frames = follower.after(viewer, last)
                        if frames is not None and patches:
                            frames = frames[:1]  # whole; patches follow once the ring has them
                    if frames is None:  # before the ring: replay from the store
                        if out:
                            yield _chunk(out)
                            out.clear()
                        async for version, frame in self._replay(match_id, viewer, last, patches):
                            yield with_said(frame, version, said)
                            last = based = version
                            said = _talk_due(follower, hears, said, last, out)
                            for block in out:
                                yield block
                            out.clear()
                        continue
                    for version, frame in frames:
                        out.append(with_said(frame, version, said))
                        last = based = version
                        if _talk_pending(follower, said):
                            said = _talk_due(follower, hears, said, last, out)
                frames = None  # the ring's frames sent: not held while the stream waits
                if behind:  # the backlog is sent: tell the client it is live now
                    out.append(caught_up(last))
                    behind = False
                deal = follower.deals.get(viewer)
                if deal is not None and deal.version == last:
                    if patches and deal.view is not None:
                        if dealt is None or dealt[0] != last:  # nothing of this deal sent yet
                            if based != last:  # a resume at the deal's version: whole first
                                out.append(deal.frame)
                            dealt = (last, 0 if based == last else len(deal.patches))
                        out += deal.patches[dealt[1] :]
                        dealt = (last, len(deal.patches))
                    elif (last, deal.drawn) != dealt:
                        out.append(deal.frame)
                        dealt = (last, deal.drawn)
                now = loop.time()
                remaining = deadline - now
                if self._closing or follower.closed or remaining <= 0:
                    break
                if viewer is not None and follower.keys.get(viewer, 0) != key:
                    out.append(REVOKED)  # the seat's token was re-issued: reconnect anew
                    yield _chunk(out)
                    return
                if out:
                    yield _chunk(out)
                    out.clear()
                if not early:
                    due = now + min(settings.heartbeat_s, remaining)
                early = False
                wake.arm(loop, due)
                await wake.wait()
                if wake.take():  # the alarm rang, and nothing else woke the stream
                    if wake.armed_at < due:
                        early = True  # armed before the last wake-up: wait on to ``due``
                    elif loop.time() < deadline:
                        yield PING
            out.append(retry)
            yield _chunk(out)
        finally:
            wake.disarm()
            self.streams -= 1
            if follower is not None:
                follower.clients.discard(wake)
                if joined:
                    follower.leave(viewer, patches=patches)
                self.release(follower)

    async def _replay(
        self, match_id: UUID, viewer: int | None, last: int, patches: bool = False
    ) -> AsyncIterator[tuple[int, bytes]]:
        """The frames after version ``last`` read again from the store, for one client
        that resumes from before its follower's ring (R34: the tables as of ``last + 1``,
        advanced event by event), a chunk per worker call, until the ring takes over.
        With ``patches``: the first whole, then patch frames (made for this client alone)."""
        table = await self.store(LiveTable.at, self.service, match_id, last + 1)
        first = table.frame(table.last, viewer)
        base: Json = view_json(first.view) if patches else None
        yield last + 1, version_frame(last + 1, encode(first))
        while True:
            steps, base = await self.store(replay_chunk, table, viewer, patches, base)
            for version, block in steps:
                yield version, block
            if len(steps) < RESUME_CHUNK:
                return

    async def viewer(self, follower: MatchFollower, cred: Credential | None) -> int | None:
        """Whose eyes the stream uses (R33), by :func:`api.spectating.reader_of`: a seat
        for its seat token, a spectator without a token (or with the organiser's); any
        other token is refused (401, or 403 for another match's) rather than silently
        shown the public view; a tournament table in play only to its seats and the
        organiser (403 ``table-closed``, R36)."""
        service = self.service
        return await follower.check(lambda table: reader_of(service, table.match, cred))


TICK_S = 0.05
"""The streams' alarms ring at most this late: they share one timer, which rings those due
once a tick (:class:`Alarms`)."""


class Alarms:
    """The heartbeat alarms of many streams on one timer of the loop.

    A stream's alarm (:class:`Wake`) is an entry in the slot of the tick its time falls in,
    not a timer of its own: a timer of the loop is four objects the garbage collector tracks
    (the handle, the loop's timer, a context, a bound method), and a stream's lived the
    heartbeat's 15 s — long enough for young collections to walk it (docs/decisions.md
    D-young). The one timer is set for the earliest slot and rings every alarm in it, at
    the slot's end: an alarm rings at most :attr:`tick_s` late, never early."""

    def __init__(self, tick_s: float = TICK_S) -> None:
        self.tick_s = tick_s
        self._slots: dict[int, list[Wake]] = {}
        """Per slot (a tick's number), the wake-ups armed for a time in it (a disarmed one
        stays until its slot rings, and is passed over)."""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._next = 0
        """The slot the timer rings."""

    def set(self, wake: Wake, loop: asyncio.AbstractEventLoop, when: float) -> int:
        """Ring ``wake`` at loop time ``when`` (up to a tick later); answers the slot."""
        if loop is not self._loop:  # a new loop (the app run again): nothing of the last
            self.stop()
            self._loop = loop
        slot = math.ceil(when / self.tick_s)
        wakes = self._slots.get(slot)
        if wakes is None:
            self._slots[slot] = [wake]
        else:
            wakes.append(wake)
        if self._timer is None or slot < self._next:
            self._schedule(slot)
        return slot

    def stop(self) -> None:
        """Forget every alarm and the timer."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._slots = {}

    def _schedule(self, slot: int) -> None:
        loop = self._loop
        assert loop is not None
        if self._timer is not None:
            self._timer.cancel()
        self._next = slot
        self._timer = loop.call_at(slot * self.tick_s, self._ring)

    def _ring(self) -> None:
        self._timer = None
        for slot in sorted(s for s in self._slots if s <= self._next):
            for wake in self._slots.pop(slot):
                wake.ring(slot)
        if self._slots:
            self._schedule(min(self._slots))


class Wake(asyncio.Event):
    """A stream's wake-up: :meth:`set` by its follower (a new version, a deal's progress,
    talk, closing), or rung by the stream's heartbeat alarm at the time it was
    :meth:`arm`-ed. One alarm serves many wake-ups: it is set again only after it rang, so
    a frame costs no alarm of its own (docs/decisions.md D-path2); an alarm set before the
    last wake-up rings early, and the stream waits on. The alarms are ``alarms``' (a
    process's streams share one timer, :class:`Alarms`), else a set of its own."""

    def __init__(self, alarms: Alarms | None = None) -> None:
        super().__init__()
        self.woken = False
        self.rung = False
        self.armed_at = 0.0
        self._alarms = Alarms() if alarms is None else alarms
        self._slot: int | None = None
        """The alarms' slot this wake-up's alarm is in (None: not armed)."""

    def set(self) -> None:
        self.woken = True
        super().set()

    def arm(self, loop: asyncio.AbstractEventLoop, when: float) -> None:
        """Ring at ``when`` (loop time; up to a tick of the alarms later) unless the alarm
        is set already (earlier)."""
        if self._slot is None:
            self.armed_at = when
            self._slot = self._alarms.set(self, loop, when)

    def ring(self, slot: int) -> None:
        """The alarms' ``slot`` is due: ring, if the alarm is still set in it."""
        if self._slot == slot:
            self._slot = None
            self.rung = True
            super().set()

    def take(self) -> bool:
        """Clear the wake-up; True when only the alarm rang since the last one."""
        alone = self.rung and not self.woken
        self.woken = self.rung = False
        self.clear()
        return alone

    def disarm(self) -> None:
        self._slot = None  # the slot's entry is passed over when it rings


def _chunk(blocks: list[bytes]) -> bytes:
    """The frames of one wake-up as one body chunk: one ``send``, one socket write, the
    frames' bytes as they are (docs/decisions.md D-fan)."""
    return blocks[0] if len(blocks) == 1 else b"".join(blocks)


def _talk_pending(follower: MatchFollower, said: int) -> bool:
    """Messages were said at the table after number ``said`` (R37): some may be due."""
    talk = follower.talk
    return talk is not None and talk.said > said


def _talk_due(
    follower: MatchFollower, hears: Listening, said: int, upto: int, out: list[bytes]
) -> int:
    """The talk frames due after message ``said`` once version ``upto`` is sent, added to
    ``out``; answers the number of the last message passed (the follower's talk as it is
    now: a reload, after an erasure, replaces it)."""
    talk = follower.talk
    if talk is None:
        return said
    messages, said = talk.due(hears, said, upto)
    out += [talk_block(upto, m) for m in messages]
    return said


def replay_chunk(
    table: LiveTable, viewer: int | None, patches: bool, base: Json
) -> tuple[list[tuple[int, bytes]], Json]:
    """The next :data:`RESUME_CHUNK` versions' frames of a resume from the store, and the
    viewer's last view after them (the base of its next patch; blocking)."""
    out = []
    for step in table.advance(upto=table.version + RESUME_CHUNK):
        frame = table.frame(step, viewer)
        if not patches or full_due(step.version):
            base = view_json(frame.view) if patches else None
            out.append((step.version, version_frame(step.version, encode(frame))))
        else:
            patch, base = patch_frame(frame, base)
            out.append((step.version, patch_block(step.version, encode(patch))))
    return out, base

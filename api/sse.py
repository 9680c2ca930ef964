"""Live views over Server-Sent Events: ``GET /v1/matches/{match_id}/stream`` (issue 4).

A seat (``Authorization: Bearer <seat token>``, or ``?token=`` since a browser's
EventSource cannot send headers; the header wins) or a spectator (no token, or the
organiser's) receives frames (tokens as in :mod:`api.auth`: 401/403 otherwise)::

    event: view
    id: <match version>
    data: <the viewer's view, JSON>

The first frame is the current view; then one frame per newer version (several changes
arriving together may give one frame: a view is the whole state, and versions only
grow). ``Last-Event-ID`` (the header EventSource sends when it reconnects; else
``?lastEventId=``) resumes: no frame with an id <= it is sent again, and when the client
missed versions the first frame's object also holds ``missed`` — the history items
after Last-Event-ID up to the frame's id, redacted for the viewer
(:func:`services.history.match_history`), and ``missedMore: true`` when there were more
than :attr:`StreamSettings.missed_max` of them (page the rest from the history
resource). A ``: ping`` comment goes out after ``heartbeat_s`` of silence; after
``lifetime_s`` (or at shutdown) the stream ends with a ``retry:`` hint and the client
reconnects with its Last-Event-ID.

R33: every frame's content comes from :func:`services.views.table_view` or from the
history's redaction — nothing else reaches a viewer.

Fan-out (ARCHITECTURE decision 3): a process follows each watched match once (a
:class:`_Feed`: one hub subscription, one reload per wake-up in a worker thread); a
subscriber's wake-up is a version check, and a version's frame is built and encoded once
per viewer, then shared by every subscriber with that viewer. The hub comes from
``infra`` through :class:`LiveStreams` (injected as the ``live`` dependency), typed by
the :class:`MatchHub` protocol, so this module does not import ``infra``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Protocol
from uuid import UUID

import anyio
import msgspec

from api.runtime import snapshot
from api.spectating import reader_of
from domain.game.match import Match
from domain.game.round import DRAWS, Round, RoundPhase
from services.embargo import Embargo, view_embargo
from services.game import GameService
from services.history import MAX_LIMIT, match_history
from services.views import table_view

log = logging.getLogger(__name__)

EVENT_STREAM = "text/event-stream"
PING = b": ping\n\n"


class HubSubscription(Protocol):
    """Signals that a match changed, for one subscriber (coalesced; may be spurious)."""

    async def wait(self) -> bool:
        """True after a change since the last wait; False once the hub has stopped."""
        ...

    def close(self) -> None: ...


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
    missed_max: int = 1000
    """At most this many history items in a resumed stream's first frame."""
    linger_s: float = 10.0
    """A match nobody watches is still followed this long (reconnects are cheap)."""


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A match and its current round as they were at one moment; ``version`` is the
    match's version (:meth:`~domain.game.match.Match.sequence`)."""

    version: int
    match: Match
    round: Round | None
    embargo: Embargo | None = None
    """R36: a tournament table's scored deal stays withheld (:mod:`services.embargo`);
    its release is no new version, so a stream shows it from the next reload on."""


@dataclass(frozen=True, slots=True)
class _Frame:
    version: int
    data: bytes
    """The view's JSON object."""
    frame: bytes
    expires: float
    """Loop time after which the frame must be rebuilt (a paced deal's hand grows, R16)."""


class _Feed:
    """One match followed by this process: the latest snapshot and its frames."""

    def __init__(self, live: LiveStreams, match_id: UUID) -> None:
        self.live = live
        self.match_id = match_id
        self.users = 0
        self.closed = False
        self.snapshot: Snapshot | None = None
        self.clients: set[asyncio.Event] = set()
        self._frames: dict[int | None, _Frame] = {}
        self.resumed: dict[tuple[int, int, int | None], asyncio.Task[bytes]] = {}
        """Resumed first frames by (version, Last-Event-ID, viewer): after a restart many
        clients resume from the same version; their history is read once."""
        self._sub = live.hub.subscribe(match_id)  # before the first load: nothing slips by
        self._follow: asyncio.Task[None] | None = None
        self.ready = asyncio.create_task(self._start(), name=f"feed {match_id}")

    async def _start(self) -> None:
        self.snapshot = await self.live.load(self.match_id)
        self._follow = asyncio.create_task(self._run(), name=f"follow {self.match_id}")

    async def _run(self) -> None:
        retry = False
        while retry or await self._sub.wait():
            try:
                snapshot = await self.live.load(self.match_id)
            except Exception as e:  # the store is unreachable: try again shortly
                log.warning("live: reloading match %s failed: %s", self.match_id, e)
                retry = True
                await asyncio.sleep(0.5)
                continue
            retry = False
            if self.snapshot is None or snapshot.version > self.snapshot.version:
                self.snapshot = snapshot
                self._frames = {}
                self.resumed = {}
                self.wake()
        self.closed = True  # the hub stopped
        self.wake()

    def wake(self) -> None:
        for client in self.clients:
            client.set()

    def frame(self, viewer: int | None) -> _Frame:
        """The current version's frame for ``viewer``, built once (R33: table_view)."""
        snapshot = self.snapshot
        assert snapshot is not None
        now = asyncio.get_running_loop().time()
        cached = self._frames.get(viewer)
        if cached is not None and cached.expires > now:
            return cached
        at = self.live.service.clock()
        view = table_view(snapshot.match, snapshot.round, viewer, at, embargo=snapshot.embargo)
        data = msgspec.json.encode(view)
        round_ = snapshot.round
        expires = float("inf")
        if (
            round_ is not None
            and round_.phase is RoundPhase.DEALING
            and round_.pacing.interval_ms
            and round_.drawn_at(at) < DRAWS
        ):
            expires = now + round_.pacing.interval_ms / 1000
        frame = b"event: view\nid: %d\ndata: %s\n\n" % (snapshot.version, data)
        built = _Frame(snapshot.version, data, frame, expires)
        self._frames[viewer] = built
        return built

    async def close(self) -> None:
        self.closed = True
        self._sub.close()
        tasks = [t for t in (self.ready, self._follow) if t is not None]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(BaseException):
                await task
        self.wake()


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
        self.streams = 0
        """Streams open right now."""
        self._feeds: dict[UUID, _Feed] = {}
        self._closing_feeds: set[asyncio.Task[None]] = set()
        self._closing = False

    # -- lifecycle ----------------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def lifespan(self, _app: object = None) -> AsyncIterator[None]:
        """Start the hub; at shutdown end every stream (with a ``retry:`` hint), stop it.
        Pass as ``Litestar(lifespan=[live.lifespan])``."""
        self._closing = False
        await self.hub.start()
        try:
            yield
        finally:
            await self.close()
            await self.hub.stop()

    async def close(self, timeout: float = 2.0) -> None:
        """End every stream, then stop following matches."""
        self._closing = True
        for feed in list(self._feeds.values()):
            feed.wake()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                while self.streams:
                    await asyncio.sleep(0.01)
        feeds, self._feeds = list(self._feeds.values()), {}
        for feed in feeds:
            await feed.close()

    def provide(self) -> LiveStreams:
        """The ``live`` dependency: ``dependencies={"live": Provide(live.provide,
        sync_to_thread=False)}``."""
        return self

    # -- matches followed -----------------------------------------------------------------------

    async def load(self, match_id: UUID) -> Snapshot:
        return await anyio.to_thread.run_sync(self._load, match_id, limiter=self.limiter)

    def _load(self, match_id: UUID) -> Snapshot:
        """The match and its round read as one moment (:func:`api.runtime.snapshot`)."""
        service = self.service
        match, round_ = snapshot(service, match_id)
        version = match.sequence(0 if round_ is None else round_.version)
        return Snapshot(version, match, round_, view_embargo(service, match, round_))

    async def acquire(self, match_id: UUID) -> _Feed:
        """The match's feed with its first snapshot (NotFoundError when there is none)."""
        feed = self._feeds.get(match_id)
        if feed is None or feed.closed:
            feed = self._feeds[match_id] = _Feed(self, match_id)
        feed.users += 1
        try:
            await asyncio.shield(feed.ready)
        except BaseException:
            self.release(feed)
            raise
        return feed

    def release(self, feed: _Feed) -> None:
        feed.users -= 1
        if feed.users == 0:
            loop = asyncio.get_running_loop()
            loop.call_later(self.settings.linger_s, self._drop_if_unused, feed)
            ready = feed.ready
            if ready.done() and (ready.cancelled() or ready.exception() is not None):
                self._drop_if_unused(feed)  # e.g. no such match: do not keep the failure

    def _drop_if_unused(self, feed: _Feed) -> None:
        if feed.users == 0 and self._feeds.get(feed.match_id) is feed:
            del self._feeds[feed.match_id]
            task = asyncio.get_running_loop().create_task(feed.close())
            self._closing_feeds.add(task)
            task.add_done_callback(self._closing_feeds.discard)

    # -- one stream ---------------------------------------------------------------------------

    async def frames(
        self, match_id: UUID, viewer: int | None, last: int | None
    ) -> AsyncIterator[bytes]:
        """The stream's chunks: ``retry:``, frames, pings, and a final ``retry:``."""
        settings = self.settings
        retry = b"retry: %d\n\n" % settings.retry_ms
        self.streams += 1
        wake = asyncio.Event()
        feed: _Feed | None = None
        try:
            yield retry
            if self._closing:
                return
            feed = await self.acquire(match_id)
            feed.clients.add(wake)
            loop = asyncio.get_running_loop()
            deadline = loop.time() + settings.lifetime_s
            resuming = last is not None
            while True:
                snapshot = feed.snapshot
                assert snapshot is not None
                if last is None or snapshot.version > last:
                    frame = feed.frame(viewer)
                    if resuming and last is not None:
                        yield await self._resumed(feed, frame, viewer, last)
                    else:
                        yield frame.frame
                    last = frame.version
                resuming = False
                remaining = deadline - loop.time()
                if self._closing or feed.closed or remaining <= 0:
                    break
                try:
                    async with asyncio.timeout(min(settings.heartbeat_s, remaining)):
                        await wake.wait()
                    wake.clear()
                except TimeoutError:
                    if loop.time() < deadline:
                        yield PING
            yield retry
        finally:
            self.streams -= 1
            if feed is not None:
                feed.clients.discard(wake)
                self.release(feed)

    async def _resumed(self, feed: _Feed, frame: _Frame, viewer: int | None, last: int) -> bytes:
        """``frame`` plus the history items in (last, frame.version], built once for
        every client resuming from ``last`` with this viewer (R33: redacted)."""
        key = (frame.version, last, viewer)
        task = feed.resumed.get(key)
        if task is None:
            task = asyncio.create_task(self._resume_frame(feed.match_id, frame, viewer, last))
            feed.resumed[key] = task

            def forget_failure(done: asyncio.Task[bytes]) -> None:
                if done.cancelled() or done.exception() is not None:
                    feed.resumed.pop(key, None)

            task.add_done_callback(forget_failure)
        return await asyncio.shield(task)

    async def _resume_frame(
        self, match_id: UUID, frame: _Frame, viewer: int | None, last: int
    ) -> bytes:
        items, more = await anyio.to_thread.run_sync(
            self._missed, match_id, frame.version, viewer, last, limiter=self.limiter
        )
        data = frame.data[:-1] + b',"missed":' + msgspec.json.encode(items)
        data += b',"missedMore":true}' if more else b"}"
        return b"event: view\nid: %d\ndata: %s\n\n" % (frame.version, data)

    def _missed(
        self, match_id: UUID, upto: int, viewer: int | None, last: int
    ) -> tuple[list[Any], bool]:
        """The match's history items after version ``last`` up to ``upto``, at most
        ``missed_max`` (then ``True``: there are more)."""
        items: list[Any] = []
        cursor = last
        cap = self.settings.missed_max
        while True:
            limit = max(1, min(MAX_LIMIT, cap + 1 - len(items)))
            page = match_history(self.service, match_id, viewer, after=cursor, limit=limit)
            for item in page.items:
                if item.version > upto:
                    return items, False
                if len(items) == cap:
                    return items, True
                items.append(item)
            if not page.more:
                return items, False
            cursor = page.next

    def viewer(self, feed: _Feed, token: str | None) -> int | None:
        """Whose eyes the stream uses (R33), by :func:`api.spectating.reader_of`: a seat
        for its seat token, a spectator without a token (or with the organiser's); any
        other token is refused (401, or 403 for another match's) rather than silently
        shown the public view; a tournament table in play only to its seats and the
        organiser (403 ``table-closed``, R36)."""
        assert feed.snapshot is not None
        return reader_of(self.service, feed.snapshot.match, token)

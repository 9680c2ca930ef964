"""Server-Sent Event streams that follow something by reading it again when it changes:
the events feed (:mod:`api.feed`), a player's stream (:mod:`api.players.stream`), a lobby
ticket (:mod:`api.players.lobby`), a tournament's standings (:mod:`api.tournaments.live`)
and its display (:mod:`api.tournaments.pages`).

One loop for all of them (:func:`polled`): each answer's frames go out at once; an answer
with ``more`` is polled again at once, otherwise after ``poll_s``; ``: ping`` comments
keep a quiet connection alive every ``heartbeat_s``; the stream ends when an answer says
``done``, or — with a ``retry:`` hint, so the client reconnects with its Last-Event-ID —
once its lifetime has passed or the server drains. A stream told of changes (``wake``)
reads again as soon as one comes, and ``poll_s`` is only its safety net: the tournament
streams are woken by the hub (:class:`HubWakes`: a save of the tournament or of a table's
match, in any process). The match streams follow the hub and the event log instead
(:mod:`api.sse`).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Final
from uuid import UUID

import anyio
from litestar.response import Stream

from api.match_follower import ChangeSignal
from api.sse import PING, MatchHub
from api.streams import EVENT_STREAM

SSE_HEADERS: Final = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
"""No cache, and no buffering by a proxy in front (nginx), so frames arrive as sent."""


def sse_frame(event: str, data: bytes, frame_id: int | None = None) -> bytes:
    """One frame: ``event:``, ``id:`` (when given) and ``data:`` (one line of JSON)."""
    head = b"event: %s\n" % event.encode()
    if frame_id is not None:
        head += b"id: %d\n" % frame_id
    return head + b"data: %s\n\n" % data


def retry_hint(retry_ms: int) -> bytes:
    """How long the client waits before it reconnects (``retry:``)."""
    return b"retry: %d\n\n" % retry_ms


def event_stream(frames: AsyncIterator[bytes]) -> Stream:
    """The response that sends ``frames`` as ``text/event-stream``."""
    return Stream(frames, media_type=EVENT_STREAM, headers=SSE_HEADERS)


@dataclass(frozen=True, slots=True)
class Timing:
    """A polled stream's timing (seconds; the ``retry:`` hint in ms, None: no hint)."""

    poll_s: float
    heartbeat_s: float
    lifetime_s: float
    retry_ms: int | None = None
    min_gap_s: float = 0.0
    """A woken stream reads again no sooner than this after its last read: the changes of
    a burst (bots moving at every table of a round) are one read, not one each."""


@dataclass(frozen=True, slots=True)
class Polled:
    """One answer of a poll: frames to send, and what next."""

    frames: list[bytes] = field(default_factory=list)
    more: bool = False
    """Poll again at once (a page was full)."""
    done: bool = False
    """The stream is over once these frames are sent."""


class HubWakes:
    """One event (:attr:`event`) set whenever an aggregate it follows changes — a
    tournament, the matches of its round's tables — as the hub tells (coalesced, maybe
    spurious; a save in any process). Use on the hub's event loop; :meth:`close` at the end.
    """

    def __init__(self, hub: MatchHub) -> None:
        self.hub = hub
        self.event = asyncio.Event()
        self._signals: dict[UUID, ChangeSignal] = {}
        self._relays: set[asyncio.Task[None]] = set()

    def follow(self, ids: Iterable[UUID]) -> None:
        """Follow exactly ``ids`` from now on."""
        wanted = set(ids)
        for gone in set(self._signals) - wanted:
            self._signals.pop(gone).close()
        for new in wanted.difference(self._signals):
            signal = self._signals[new] = self.hub.subscribe(new)
            relay = asyncio.get_running_loop().create_task(self._relay(signal))
            self._relays.add(relay)
            relay.add_done_callback(self._relays.discard)

    async def _relay(self, signal: ChangeSignal) -> None:
        while await signal.wait():  # False once closed (here, or the hub stopped)
            signal.take()  # the events the hub read are not needed: the stream reads again
            self.event.set()

    def close(self) -> None:
        self.follow(())


def _never() -> bool:
    return False


async def polled(
    poll: Callable[[], Awaitable[Polled]],
    timing: Timing,
    closing: Callable[[], bool] = _never,
    wake: asyncio.Event | None = None,
) -> AsyncIterator[bytes]:
    """The frames of ``poll`` until it is done, the lifetime passes or ``closing()``;
    ``wake``: set by whoever has news (a live feed), it polls at once instead of waiting
    for the next tick."""
    clock = anyio.current_time
    deadline = clock() + timing.lifetime_s
    quiet_since = clock()
    while True:
        read_at = clock()
        answer = await poll()
        for frame in answer.frames:
            yield frame
        if answer.frames:
            quiet_since = clock()
        if answer.done:
            return
        if closing() or clock() >= deadline:
            if timing.retry_ms is not None:
                yield retry_hint(timing.retry_ms)
            return
        if answer.more:
            continue
        if clock() - quiet_since >= timing.heartbeat_s:
            quiet_since = clock()
            yield PING
        pause = min(timing.poll_s, max(0.0, deadline - clock()))
        if wake is None:
            await anyio.sleep(pause)
            continue
        with anyio.move_on_after(pause):
            await wake.wait()
        await anyio.sleep(max(0.0, min(read_at + timing.min_gap_s, deadline) - clock()))
        wake.clear()

"""The live streams' test driver: a small ASGI driver that hands over each chunk of an SSE
answer as the app sends it (httpx's ASGI transport and Litestar's test client buffer the
whole body, which an endless stream never ends), a table of four seats played by the
tests, and a uvicorn server on a free port for the real-HTTP run."""

from __future__ import annotations

import asyncio
import json
import random
import socket
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

import anyio
import msgspec
import pytest
import uvicorn
from litestar import Litestar
from litestar.di import Provide

from api.errors import EXCEPTION_HANDLERS
from api.sse import LiveStreams, StreamSettings
from api.stream import MatchStreamController
from domain.game.round_events import Pacing
from domain.rules.cards import parse_cards
from domain.rules.ruleset import RuleSet
from infra.localhub import InProcessHub
from services.game import GameService
from services.views import SeatView, table_view
from tests.commands import act, create_match, take_seat
from tests.conftest import T0, FakeClock, FixedSeeds

TIMEOUT = 5.0
"""Upper bound of any single wait in these tests (they take milliseconds)."""

pytestmark = pytest.mark.anyio
# -- an ASGI driver that streams ----------------------------------------------------------------


@dataclass
class Event:
    """One SSE block: fields as sent (``comment`` for ``: ping``)."""

    event: str | None = None
    id: int | None = None
    tag: str | None = None
    """The id as sent (a match stream's ``V.T`` once table talk was sent on it)."""
    data: str | None = None
    retry: int | None = None
    comment: str | None = None

    def json(self) -> dict[str, Any]:
        assert self.data is not None
        value: dict[str, Any] = json.loads(self.data)
        return value

    def view(self) -> dict[str, Any]:
        """A ``view``/``deal`` frame's view of the table."""
        value: dict[str, Any] = self.json()["view"]
        return value


def parse_block(block: str) -> Event:
    ev = Event()
    for line in block.split("\n"):
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "":
            ev.comment = value
        elif name == "event":
            ev.event = value
        elif name == "id":
            ev.tag = value
            ev.id = int(value.partition(".")[0])
        elif name == "data":
            ev.data = value if ev.data is None else ev.data + "\n" + value
        elif name == "retry":
            ev.retry = int(value)
    return ev


@dataclass
class SseStream:
    """A GET sent to an ASGI app whose response body is read chunk by chunk."""

    status: int = 0
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    """The body as the app sent it (compressed under ``Content-Encoding: gzip``)."""
    chunks: int = 0
    """Body messages the app sent with bytes in them."""
    ended: bool = False
    _chunks: asyncio.Queue[bytes | None] = field(default_factory=asyncio.Queue)
    _buffer: str = ""
    _disconnect: asyncio.Event = field(default_factory=asyncio.Event)
    _started: asyncio.Event = field(default_factory=asyncio.Event)
    _task: asyncio.Task[None] | None = None

    async def next(self, timeout: float = TIMEOUT) -> Event | None:
        """The next SSE block; None when the stream has ended."""
        async with asyncio.timeout(timeout):
            while "\n\n" not in self._buffer:
                chunk = await self._chunks.get()
                if chunk is None:
                    self.ended = True
                    return None
                self._buffer += chunk.decode()
        block, self._buffer = self._buffer.split("\n\n", 1)
        return parse_block(block)

    async def next_view(self, timeout: float = TIMEOUT) -> Event:
        """The next ``view`` frame (skipping ``retry:`` and pings)."""
        while True:
            ev = await self.next(timeout)
            assert ev is not None, "the stream ended"
            if ev.event == "view":
                return ev

    async def close(self) -> None:
        """The client disconnects; the app must stop sending."""
        self._disconnect.set()
        if self._task is not None:
            async with asyncio.timeout(TIMEOUT):
                await self._task

    async def rest(self, timeout: float = TIMEOUT) -> list[Event]:
        """Every block until the server ends the stream."""
        out: list[Event] = []
        while (ev := await self.next(timeout)) is not None:
            out.append(ev)
        return out

    async def nothing_for(self, seconds: float) -> None:
        """No view frame arrives within ``seconds`` (pings may)."""
        try:
            async with asyncio.timeout(seconds):
                while True:
                    ev = await self.next(seconds + 1)
                    assert ev is None or ev.event != "view", f"unexpected frame {ev}"
                    if ev is None:
                        return
        except TimeoutError:
            return


def get_scope(path: str, headers: list[tuple[bytes, bytes]], server: str) -> dict[str, Any]:
    """The ASGI scope of ``GET path`` over HTTP/1.1 from 127.0.0.1 to ``server`` (port
    80), with ``headers`` (the ``host`` header among them) as sent."""
    target, _, query = path.partition("?")
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": target,
        "raw_path": target.encode(),
        "root_path": "",
        "query_string": query.encode(),
        "headers": headers,
        "client": ("127.0.0.1", 1234),
        "server": (server, 80),
        "state": {},
    }


def get_receive(disconnect: asyncio.Event) -> Callable[[], Awaitable[dict[str, Any]]]:
    """The client's side of an ASGI ``GET``: its (empty) request, then, once
    ``disconnect`` is set, ``http.disconnect``."""
    requested = False

    async def receive() -> dict[str, Any]:
        nonlocal requested
        if not requested:
            requested = True
            return {"type": "http.request", "body": b"", "more_body": False}
        await disconnect.wait()
        return {"type": "http.disconnect"}

    return receive


@asynccontextmanager
async def stream(
    app: Litestar, path: str, headers: dict[str, str] | None = None
) -> AsyncIterator[SseStream]:
    """GET ``path`` from ``app``; on exit the client disconnects and the app must stop."""
    s = SseStream()
    raw = [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()]
    scope = get_scope(path, [(b"host", b"test"), *raw], "test")
    receive = get_receive(s._disconnect)
    inflate: Any = None  # a zlib decompressor when the answer is gzip: blocks as they come

    async def send(message: dict[str, Any]) -> None:
        nonlocal inflate
        if message["type"] == "http.response.start":
            s.status = message["status"]
            s.headers = {k.decode(): v.decode() for k, v in message.get("headers", [])}
            if s.headers.get("content-encoding") == "gzip":
                inflate = zlib.decompressobj(wbits=31)
            s._started.set()
        elif message["type"] == "http.response.body":
            body = message.get("body", b"")
            s.body += body
            if body:
                s.chunks += 1
                s._chunks.put_nowait(body if inflate is None else inflate.decompress(body))
            if not message.get("more_body", False):
                s._chunks.put_nowait(None)
                s._disconnect.set()  # like a server: receive() says disconnect after the end

    async def run() -> None:
        await app(scope, receive, send)  # type: ignore[arg-type]

    s._task = asyncio.create_task(run())
    async with asyncio.timeout(TIMEOUT):
        await s._started.wait()
    try:
        yield s
    finally:
        s._disconnect.set()
        async with asyncio.timeout(TIMEOUT):
            await s._task


# -- the app under test ---------------------------------------------------------------------------


def build_app(live: LiveStreams) -> Litestar:
    """A small app with the stream controller, wired like ``api.app`` will be."""
    return Litestar(
        route_handlers=[MatchStreamController],
        dependencies={"live": Provide(live.provide, sync_to_thread=False)},
        lifespan=[live.lifespan],
        exception_handlers=EXCEPTION_HANDLERS,
    )


def new_service() -> GameService:
    rng = random.Random(11)
    return GameService(
        {"PERSISTENCE_MODULE": "eventsourcing.popo"},
        clock=lambda: T0,
        seeds=lambda: rng.randbytes(32),
    )


def paced_service(clock: FakeClock) -> GameService:
    """A POPO service whose deals hand out a card every 100 ms of ``clock`` (the paced
    deal the streams show), with fixed seeds."""
    return GameService(
        {"PERSISTENCE_MODULE": "eventsourcing.popo"},
        clock=clock,
        seeds=FixedSeeds(5),
        pacing=Pacing(interval_ms=100, declare_ms=30_000, window_ms=0),
    )


@dataclass
class Table:
    service: GameService
    hub: InProcessHub
    live: LiveStreams
    app: Litestar
    match_id: UUID
    tokens: list[str]

    def version(self) -> int:
        match = self.service.get_match(self.match_id)
        round_ = self.service.current_round(match)
        return match.sequence(0 if round_ is None else round_.version)

    def view(self, viewer: int | None) -> dict[str, Any]:
        """What ``table_view`` says ``viewer`` sees now, as JSON."""
        match = self.service.get_match(self.match_id)
        view = table_view(match, self.service.current_round(match), viewer, T0)
        decoded: dict[str, Any] = json.loads(msgspec.json.encode(view))
        return decoded

    def step(self) -> None:
        step(self.service, self.match_id)

    async def steps(self, n: int) -> None:
        """``n`` commands, each on a worker thread (as the API runs them)."""
        for _ in range(n):
            await anyio.to_thread.run_sync(self.step)


def step(service: GameService, match_id: UUID) -> None:
    """One command a seat's view offers (R16-R31), sent through ``service``."""
    match = service.get_match(match_id)
    round_ = service.current_round(match)
    assert round_ is not None
    expected = table_view(match, round_, None, T0).expected
    assert expected is not None
    for seat in range(4) if expected.seat is None else (expected.seat,):
        choice = choose_move(table_view(match, round_, seat, T0))
        if choice is not None:
            action, cards = choice
            act(service, match_id, seat, action, tuple(parse_cards(cards)))
            return
    raise AssertionError(f"no action offered for {expected}")


def choose_move(view: SeatView) -> tuple[str, list[str]] | None:
    legal = view.legal
    if "bury" in legal.actions:
        return "bury", legal.bury_from[: legal.bury_count]
    if "play" in legal.actions:
        return "play", legal.follows[0] if legal.follows else view.hand[:1]
    if "declare" in legal.actions and not view.declarations:
        return "declare", legal.shows[0]
    if "pass" in legal.actions:
        return "pass", []
    return None


@asynccontextmanager
async def table(settings: StreamSettings | None = None) -> AsyncIterator[Table]:
    """A seated match (round 1 dealt) behind a running app."""
    service = new_service()
    hub = InProcessHub()
    hub.attach(service)
    live = LiveStreams(service, hub, settings or StreamSettings(heartbeat_s=30, lifetime_s=60))
    app = build_app(live)
    match_id = create_match(service, RuleSet())
    tokens = [take_seat(service, match_id, seat, f"p{seat}")[0] for seat in range(4)]
    async with app.lifespan():
        yield Table(service, hub, live, app, match_id, tokens)
    assert live.streams == 0
    service.close()


def url(t: Table, query: str = "") -> str:
    return f"/v1/matches/{t.match_id}/stream" + (f"?{query}" if query else "")


# -- frames for a spectator and for a seat (R33) --------------------------------------------------


@asynccontextmanager
async def many(
    t: Table, n: int, headers: dict[str, str] | None = None
) -> AsyncIterator[list[SseStream]]:
    async with AsyncExitStack() as stack:
        yield [await stack.enter_async_context(stream(t.app, url(t), headers)) for _ in range(n)]


# -- over real HTTP ------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@asynccontextmanager
async def serve(app: Litestar) -> AsyncIterator[str]:
    """``app`` behind uvicorn on a free loopback port; the base URL."""
    port = free_port()
    config = uvicorn.Config(
        app, host="127.0.0.1", port=port, log_config=None, lifespan="on", ws="none"
    )
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    try:
        async with asyncio.timeout(TIMEOUT):
            while not server.started:
                await asyncio.sleep(0.01)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        async with asyncio.timeout(TIMEOUT):
            await task


async def events_of(lines: AsyncIterator[str]) -> AsyncIterator[Event]:
    block: list[str] = []
    async for line in lines:
        if line:
            block.append(line)
            continue
        if block:
            ev = parse_block("\n".join(block))
            block = []
            if ev.event == "view":
                yield ev


# -- the in-process hub ---------------------------------------------------------------------------

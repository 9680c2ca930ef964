"""Live views over SSE (issue 4, ARCHITECTURE decision 3): frames for a seat and for a
spectator with increasing ids, redacted by ``table_view`` (R33); Last-Event-ID resumes
with nothing lost or repeated; heartbeats, lifetime and shutdown; one view per version
for many spectators; the in-process hub.

Streams are read through :class:`SseStream`, a small ASGI driver that hands over each
chunk as the app sends it (httpx's ASGI transport and Litestar's test client buffer the
whole body, which an endless stream never ends), plus one run over real HTTP (uvicorn).
"""

from __future__ import annotations

import asyncio
import json
import random
import socket
import threading
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID, uuid4

import anyio
import httpx
import msgspec
import pytest
import uvicorn
from litestar import Litestar
from litestar.di import Provide

import api.sse
from api.errors import EXCEPTION_HANDLERS
from api.sse import LiveStreams, MatchHub, StreamSettings
from api.stream import MatchStreamController
from domain.rules.cards import parse_cards
from domain.rules.ruleset import RuleSet
from infra.hub import InProcessHub, LocalHub
from services.game import ORGANISER_ROLE, GameService, new_token, token_hash
from services.history import match_history
from services.views import SeatView, table_view
from tests.conftest import T0

TIMEOUT = 5.0
"""Upper bound of any single wait in these tests (they take milliseconds)."""

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # asyncpg and the hub are asyncio-only


# -- an ASGI driver that streams ----------------------------------------------------------------


@dataclass
class Event:
    """One SSE block: fields as sent (``comment`` for ``: ping``)."""

    event: str | None = None
    id: int | None = None
    data: str | None = None
    retry: int | None = None
    comment: str | None = None

    def json(self) -> dict[str, Any]:
        assert self.data is not None
        value: dict[str, Any] = json.loads(self.data)
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
            ev.id = int(value)
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


@asynccontextmanager
async def stream(
    app: Litestar, path: str, headers: dict[str, str] | None = None
) -> AsyncIterator[SseStream]:
    """GET ``path`` from ``app``; on exit the client disconnects and the app must stop."""
    s = SseStream()
    raw = [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()]
    target, _, query = path.partition("?")
    scope: dict[str, Any] = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": target,
        "raw_path": target.encode(),
        "root_path": "",
        "query_string": query.encode(),
        "headers": [(b"host", b"test"), *raw],
        "client": ("127.0.0.1", 1234),
        "server": ("test", 80),
        "state": {},
    }
    requested = False

    async def receive() -> dict[str, Any]:
        nonlocal requested
        if not requested:
            requested = True
            return {"type": "http.request", "body": b"", "more_body": False}
        await s._disconnect.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            s.status = message["status"]
            s.headers = {k.decode(): v.decode() for k, v in message.get("headers", [])}
            s._started.set()
        elif message["type"] == "http.response.body":
            body = message.get("body", b"")
            s.body += body
            if body:
                s._chunks.put_nowait(body)
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
        choice = _choose(table_view(match, round_, seat, T0))
        if choice is not None:
            action, cards = choice
            service.act(match_id, seat, action, tuple(parse_cards(cards)))
            return
    raise AssertionError(f"no action offered for {expected}")


def _choose(view: SeatView) -> tuple[str, list[str]] | None:
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
    match_id = service.create_match(RuleSet())
    tokens = [service.take_seat(match_id, seat, f"p{seat}")[0] for seat in range(4)]
    async with app.lifespan():
        yield Table(service, hub, live, app, match_id, tokens)
    assert live.streams == 0
    service.close()


def url(t: Table, query: str = "") -> str:
    return f"/v1/matches/{t.match_id}/stream" + (f"?{query}" if query else "")


# -- frames for a spectator and for a seat (R33) --------------------------------------------------


async def test_spectator_frames_follow_every_change() -> None:
    async with table() as t, stream(t.app, url(t)) as s:
        assert s.status == 200
        assert s.headers["content-type"].startswith("text/event-stream")
        assert s.headers["cache-control"] == "no-cache"
        first = await s.next()
        assert first is not None and first.retry == 1000
        ev = await s.next_view()
        assert ev.id == t.version()
        assert ev.json() == t.view(None)
        assert "hand" not in ev.json() and "bottom" not in ev.json()
        assert ev.id is not None
        ids = [ev.id]
        for _ in range(6):
            await t.steps(1)
            ev = await s.next_view()
            assert ev.id is not None
            ids.append(ev.id)
            assert ev.json() == t.view(None)
        assert ids == sorted(set(ids))
        assert ids[-1] == t.version()


@pytest.mark.parametrize("how", ["header", "query"])
async def test_a_seat_sees_its_own_view(how: str) -> None:
    async with table() as t:
        seat = 2
        headers = {"Authorization": f"Bearer {t.tokens[seat]}"} if how == "header" else {}
        path = url(t) if how == "header" else url(t, f"token={t.tokens[seat]}")
        async with stream(t.app, path, headers) as s:
            last = 0
            for n in range(12):
                ev = await s.next_view()
                assert ev.id is not None and ev.id > last
                last = ev.id
                data = ev.json()
                assert data == t.view(seat)  # R33: the frame is table_view for this seat
                assert data["seat"] == seat
                assert data["hand"] and data["hand"] != t.view((seat + 1) % 4)["hand"]
                if n < 11:
                    await t.steps(1)


async def test_tokens_that_are_not_this_matchs_seats_are_refused() -> None:
    async with table() as t:
        other = t.service.create_match(RuleSet())
        foreign = t.service.take_seat(other, 0, "x")[0]
        for path, headers, status in [
            (url(t, "token=nope"), {}, 401),
            (url(t), {"Authorization": "Bearer nope"}, 401),
            (url(t), {"Authorization": f"Basic {t.tokens[0]}"}, 401),
            (url(t, f"token={foreign}"), {}, 403),  # a seat token of another match
        ]:
            async with stream(t.app, path, headers) as s:
                await s.rest()
                assert s.status == status
                assert s.headers["content-type"] == "application/problem+json"
                assert t.tokens[0] not in s.body.decode()
        async with stream(t.app, f"/v1/matches/{uuid4()}/stream") as s:
            await s.rest()
            assert s.status == 404
        async with stream(t.app, url(t), {"Last-Event-ID": "x1"}) as s:
            await s.rest()
            assert s.status == 422
        async with stream(t.app, url(t, "lastEventId=-1")) as s:
            await s.rest()
            assert s.status in (400, 422)


async def test_the_organiser_watches_as_a_spectator() -> None:
    service = new_service()
    hub = InProcessHub()
    hub.attach(service)
    live = LiveStreams(service, hub)
    app = build_app(live)
    match_id = uuid4()
    organiser = new_token(match_id, ORGANISER_ROLE)
    service.create_match(RuleSet(), match_id=match_id, organiser_token_hash=token_hash(organiser))
    async with app.lifespan(), stream(app, f"/v1/matches/{match_id}/stream?token={organiser}") as s:
        data = (await s.next_view()).json()
        assert "seat" not in data and "hand" not in data
    service.close()


# -- resuming with Last-Event-ID -------------------------------------------------------------------


@pytest.mark.parametrize("viewer", [None, 1])
async def test_resume_loses_and_repeats_nothing(viewer: int | None) -> None:
    async with table() as t:
        headers = {} if viewer is None else {"Authorization": f"Bearer {t.tokens[viewer]}"}
        seen: list[int] = []
        async with stream(t.app, url(t), headers) as s:
            for _ in range(3):
                ev = await s.next_view()
                assert ev.id is not None
                seen.append(ev.id)
                await t.steps(2)
            ev = await s.next_view()
            assert ev.id is not None
            seen.append(ev.id)
        last = seen[-1]
        await t.steps(5)  # missed while away
        resumed = {**headers, "Last-Event-ID": str(last)}
        async with stream(t.app, url(t), resumed) as s:
            ev = await s.next_view()
            assert ev.id is not None and ev.id > last
            missed = ev.json()["missed"]
            assert "missedMore" not in ev.json()
            # exactly the history items (last, id], redacted for this viewer (R33)
            page = match_history(t.service, t.match_id, viewer, after=last, limit=1000)
            expected = [i for i in page.items if i.version <= ev.id]
            assert missed == json.loads(msgspec.json.encode(expected))
            assert [i["version"] for i in missed] == list(range(last + 1, ev.id + 1))
            ids = [ev.id]
            while ids[-1] < t.version():  # a lingering feed may still be catching up
                nxt = await s.next_view()
                assert nxt.id is not None and "missed" not in nxt.json()
                ids.append(nxt.id)
            assert ids == sorted(set(ids))
            await t.steps(1)
            nxt = await s.next_view()
            assert nxt.id == t.version() > ids[-1]
            assert nxt.json() == t.view(viewer)
            assert "missed" not in nxt.json()


async def test_resume_when_nothing_was_missed_sends_nothing_old() -> None:
    async with table() as t:
        now = t.version()
        async with stream(t.app, url(t), {"Last-Event-ID": str(now)}) as s:
            await s.nothing_for(0.1)
            await t.steps(1)
            ev = await s.next_view()
            assert ev.id == t.version() > now
            assert "missed" not in ev.json()


async def test_the_header_wins_over_a_stale_query() -> None:
    async with table() as t:
        v0 = t.version()
        await t.steps(3)
        path = url(t, f"lastEventId={v0}")
        async with stream(t.app, path, {"Last-Event-ID": str(t.version())}) as s:
            await s.nothing_for(0.1)
        async with stream(t.app, path) as s:
            ev = await s.next_view()
            assert [i["version"] for i in ev.json()["missed"]] == list(
                range(v0 + 1, t.version() + 1)
            )


async def test_missed_is_capped_and_says_so() -> None:
    async with table(StreamSettings(missed_max=3)) as t:
        v0 = t.version()
        await t.steps(4)
        async with stream(t.app, url(t, f"lastEventId={v0}")) as s:
            data = (await s.next_view()).json()
            assert [i["version"] for i in data["missed"]] == [v0 + 1, v0 + 2, v0 + 3]
            assert data["missedMore"] is True


# -- heartbeats, lifetime, shutdown ---------------------------------------------------------------


async def test_heartbeats_and_lifetime() -> None:
    settings = StreamSettings(heartbeat_s=0.05, lifetime_s=0.4, retry_ms=250)
    async with table(settings) as t, stream(t.app, url(t)) as s:
        started = time.monotonic()
        blocks = await s.rest(timeout=2)
        took = time.monotonic() - started
        assert 0.3 < took < 1.5
        assert blocks[0].retry == 250  # the client learns the reconnection delay first
        assert blocks[1].event == "view"
        assert sum(b.comment == "ping" for b in blocks) >= 4
        assert blocks[-1].retry == 250  # the server ends with a retry hint
        assert s.ended


async def test_shutdown_ends_open_streams() -> None:
    service = new_service()
    hub = InProcessHub()
    hub.attach(service)
    live = LiveStreams(service, hub, StreamSettings(heartbeat_s=30, lifetime_s=60))
    app = build_app(live)
    match_id = service.create_match(RuleSet())
    async with app.lifespan(), stream(app, f"/v1/matches/{match_id}/stream") as s:
        await s.next_view()
        started = time.monotonic()
        async with asyncio.timeout(TIMEOUT):
            await live.close()
        rest = await s.rest()
        assert time.monotonic() - started < 1
        assert rest[-1].retry is not None
    assert live.streams == 0
    service.close()


# -- fan-out -----------------------------------------------------------------------------------


async def test_a_version_is_rendered_once_for_all_spectators(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[int | None] = []

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append(args[2])
        return table_view(*args, **kwargs)

    monkeypatch.setattr(api.sse, "table_view", counting)
    async with table() as t:
        n = 200
        async with _many(t, n) as streams:
            views = [await s.next_view() for s in streams]
            assert {v.id for v in views} == {t.version()}
            calls.clear()
            await t.steps(1)
            views = await asyncio.gather(*(s.next_view() for s in streams))
            assert {v.id for v in views} == {t.version()}
            assert len({v.data for v in views}) == 1
            assert calls == [None]  # one spectator view for 200 subscribers


async def test_clients_resuming_together_read_the_history_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reads: list[int | None] = []

    def counting(*args: Any, **kwargs: Any) -> Any:
        reads.append(kwargs.get("after"))
        return match_history(*args, **kwargs)

    monkeypatch.setattr(api.sse, "match_history", counting)
    async with table() as t:
        v0 = t.version()
        await t.steps(3)
        async with _many(t, 50, {"Last-Event-ID": str(v0)}) as streams:
            frames = await asyncio.gather(*(s.next_view() for s in streams))
        assert {f.data for f in frames} == {frames[0].data}
        assert [i["version"] for i in frames[0].json()["missed"]] == list(
            range(v0 + 1, t.version() + 1)
        )
        assert reads == [v0]


@asynccontextmanager
async def _many(
    t: Table, n: int, headers: dict[str, str] | None = None
) -> AsyncIterator[list[SseStream]]:
    async with AsyncExitStack() as stack:
        yield [await stack.enter_async_context(stream(t.app, url(t), headers)) for _ in range(n)]


# -- over real HTTP ------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@asynccontextmanager
async def serve(app: Litestar) -> AsyncIterator[str]:
    """``app`` behind uvicorn on a free loopback port; the base URL."""
    port = _free_port()
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


async def test_over_http_with_uvicorn() -> None:
    service = new_service()
    hub = InProcessHub()
    hub.attach(service)
    live = LiveStreams(service, hub, StreamSettings(heartbeat_s=30, lifetime_s=60))
    match_id = service.create_match(RuleSet())
    token = service.take_seat(match_id, 0, "p0")[0]
    async with serve(build_app(live)) as base, httpx.AsyncClient(base_url=base) as client:
        path = f"/v1/matches/{match_id}/stream?token={token}"
        async with client.stream("GET", path, timeout=TIMEOUT) as response:
            assert response.status_code == 200
            assert response.headers["content-type"].startswith("text/event-stream")
            lines = response.aiter_lines()
            events = _events(lines)
            first = await anext(events)
            assert first.event == "view" and first.json()["seat"] == 0
            await anyio.to_thread.run_sync(service.take_seat, match_id, 1, "p1")
            second = await anext(events)
            assert second.id is not None and first.id is not None and second.id > first.id
            assert second.json()["seats"][1]["name"] == "p1"
        async with asyncio.timeout(TIMEOUT):  # the server noticed the client leave
            while live.streams:
                await asyncio.sleep(0.01)
    service.close()


async def _events(lines: AsyncIterator[str]) -> AsyncIterator[Event]:
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


async def test_hub_wakes_coalesces_and_stops() -> None:
    hub = InProcessHub()
    _typed: MatchHub = hub  # the protocol api.sse depends on
    await hub.start()
    a, b = uuid4(), uuid4()
    sub_a, sub_b = hub.subscribe(a), hub.subscribe(b)
    hub.publish(a)
    hub.publish(a)  # coalesced into one wake-up
    async with asyncio.timeout(TIMEOUT):
        assert await sub_a.wait() is True
    assert not sub_b._event.is_set() and not sub_a._event.is_set()
    done = threading.Event()

    def from_a_thread() -> None:
        hub.publish_many([b])
        done.set()

    threading.Thread(target=from_a_thread).start()
    async with asyncio.timeout(TIMEOUT):
        assert await sub_b.wait() is True
    assert done.wait(TIMEOUT)
    sub_a.close()
    assert hub.subscribed() == {b}
    await hub.stop()
    async with asyncio.timeout(TIMEOUT):
        assert await sub_b.wait() is False
    assert [x async for x in sub_b] == []


async def test_saves_wake_the_hub_and_a_failing_listener_loses_nothing() -> None:
    service = new_service()
    hub = InProcessHub()
    hub.attach(service)
    await hub.start()
    broken: Callable[[frozenset[UUID]], None] = _raise
    service.on_saved.insert(0, broken)
    match_id = service.create_match(RuleSet())
    sub = hub.subscribe(match_id)
    await anyio.to_thread.run_sync(service.take_seat, match_id, 0, "p0")
    async with asyncio.timeout(TIMEOUT):
        assert await sub.wait()
    assert service.get_match(match_id).seats[0] is not None
    hub.detach(service)
    await hub.stop()
    service.close()


def _raise(_: frozenset[UUID]) -> None:
    raise RuntimeError("listener bug")


def test_local_hub_without_subscribers_ignores_publish() -> None:
    hub = LocalHub()
    hub.publish(uuid4())  # no loop, nobody subscribed: nothing to do, no error

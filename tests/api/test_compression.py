"""Answers compressed when asked (docs/decisions.md D-light-frames): a JSON answer with
``Accept-Encoding: gzip`` comes gzip-encoded, and a live stream too — each frame flushed as it
is sent (a client inflating the bytes received so far reads every frame at once, while the
stream goes on), one gzip stream over all of them (later frames cost a fraction of the
first). Without ``Accept-Encoding`` nothing changes."""

from __future__ import annotations

import asyncio
import gzip
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest

from domain.rules.ruleset import RuleSet
from services.game import GameService
from tests.api.rest import auth
from tests.api.sse_driver import TIMEOUT, Event, parse_block, serve, stream
from tests.api.test_sse_versions import seat_table
from tests.apps import make_app
from tests.commands import create_match, take_seat
from tests.conftest import FakeClock, FixedSeeds

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@asynccontextmanager
async def served() -> AsyncIterator[tuple[Any, httpx.AsyncClient]]:
    service = GameService(
        {"PERSISTENCE_MODULE": "eventsourcing.popo"}, clock=FakeClock(), seeds=FixedSeeds(3)
    )
    app = make_app(service)
    transport = httpx.ASGITransport(app=app)  # type: ignore[arg-type]
    async with app.lifespan(), httpx.AsyncClient(transport=transport, base_url="http://t") as c:
        yield app, c
    service.close()


async def test_a_json_answer_is_gzipped_when_asked() -> None:
    async with served() as (_, c):
        match_id, _, tokens = await seat_table(c, people=4)
        url = f"/v1/matches/{match_id}/view"
        plain = await c.get(url, headers={**auth(tokens[0]), "Accept-Encoding": "identity"})
        assert plain.status_code == 200
        assert "content-encoding" not in plain.headers
        async with c.stream(
            "GET", url, headers={**auth(tokens[0]), "Accept-Encoding": "gzip"}
        ) as packed:
            raw = b"".join([chunk async for chunk in packed.aiter_raw()])
        assert packed.headers["content-encoding"] == "gzip"
        assert "accept-encoding" in packed.headers["vary"].lower()
        assert gzip.decompress(raw) == plain.content
        assert len(raw) < len(plain.content) / 2


async def test_a_live_stream_is_gzipped_frame_by_frame() -> None:
    async with served() as (app, c):
        match_id, _, tokens = await seat_table(c, people=2)
        assert await anyio.to_thread.run_sync(app.state.bots.idle)
        url = f"/v1/matches/{match_id}/stream"
        headers = {**auth(tokens[0]), "Accept-Encoding": "gzip"}
        async with stream(app, url, headers) as packed, stream(app, url, auth(tokens[0])) as plain:
            assert packed.headers["content-encoding"] == "gzip"
            assert "content-encoding" not in plain.headers
            first = await packed.next_view()  # readable while the stream is open: flushed
            assert first.json() == (await plain.next_view()).json()
            sent = len(packed.body)
            # a move: the next frame arrives compressed on its own, at once
            view = (await c.get(f"/v1/matches/{match_id}/view", headers=auth(tokens[0]))).json()
            legal = view["legal"]
            action = "pass" if "pass" in legal["actions"] else legal["actions"][0]
            r = await c.post(
                f"/v1/matches/{match_id}/actions/{action}",
                json={"cards": legal["shows"][0] if action == "declare" else []},
                headers=auth(tokens[0]),
            )
            assert r.status_code == 200, r.text
            second = await packed.next_view()
            assert second.id == (first.id or 0) + 1
            assert second.json() == (await plain.next_view()).json()
            assert not packed.ended
            assert len(packed.body) - sent < len(plain.body) / 4  # the window spans frames


async def test_over_http_each_gzipped_patch_frame_arrives_at_once() -> None:
    """Through uvicorn, as a phone would: ``Accept-Encoding: gzip`` and ``?frames=patch``;
    a frame is readable as soon as it is sent, while the stream stays open."""
    service = GameService(
        {"PERSISTENCE_MODULE": "eventsourcing.popo"}, clock=FakeClock(), seeds=FixedSeeds(4)
    )
    app = make_app(service)
    match_id = create_match(service, RuleSet())
    token = take_seat(service, match_id, 0, "p0")[0]
    async with serve(app) as base, httpx.AsyncClient(base_url=base) as client:
        path = f"/v1/matches/{match_id}/stream?frames=patch"
        headers = {**auth(token), "Accept-Encoding": "gzip"}
        async with client.stream("GET", path, headers=headers, timeout=TIMEOUT) as response:
            assert response.headers["content-encoding"] == "gzip"
            blocks = sse_blocks(response.aiter_lines())  # httpx inflates as bytes arrive
            async with asyncio.timeout(TIMEOUT):
                first = await anext(b async for b in blocks if b.event == "view")
            assert first.view()["seat"] == 0
            await anyio.to_thread.run_sync(take_seat, service, match_id, 1, "p1")
            async with asyncio.timeout(TIMEOUT):
                ev = await anext(b async for b in blocks if b.event == "patch")
            assert ev.id == (first.id or 0) + 1
            ops = ev.json()["patch"]
            assert {"op": "replace", "path": "/seats/1", "value": ops[-1]["value"]} in ops
    service.close()


async def sse_blocks(lines: AsyncIterator[str]) -> AsyncIterator[Event]:
    """Every SSE block of ``lines`` (frames, pings, hints)."""
    block: list[str] = []
    async for line in lines:
        if line:
            block.append(line)
        elif block:
            yield parse_block("\n".join(block))
            block = []

"""Live views over SSE (issue 4, ARCHITECTURE decision 3): frames for a seat and for a
spectator with increasing ids, redacted by ``table_view`` (R33); Last-Event-ID resumes
with nothing lost or repeated; heartbeats, lifetime and shutdown; one view per version
for many spectators. The driver is :mod:`tests.api.sse_driver`.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any
from uuid import uuid4

import msgspec
import pytest

import api.sse
from api.sse import LiveStreams, StreamSettings
from domain.rules.ruleset import RuleSet
from infra.localhub import InProcessHub
from services.history import match_history
from services.sources import ORGANISER_ROLE, new_token, token_hash
from services.views import table_view
from tests.api.sse_driver import (
    TIMEOUT,
    build_app,
    many,
    new_service,
    stream,
    table,
    url,
)

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # asyncpg and the hub are asyncio-only


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
        async with many(t, n) as streams:
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
        async with many(t, 50, {"Last-Event-ID": str(v0)}) as streams:
            frames = await asyncio.gather(*(s.next_view() for s in streams))
        assert {f.data for f in frames} == {frames[0].data}
        assert [i["version"] for i in frames[0].json()["missed"]] == list(
            range(v0 + 1, t.version() + 1)
        )
        assert reads == [v0]

"""Live views over SSE (docs/observability.md, docs/decisions.md F3): frames for a seat and for a
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

import anyio
import msgspec
import pytest

import api.match_follower
import services.live
from api.sse import LiveStreams, StreamSettings, Wake
from domain.rules.ruleset import RuleSet
from infra.localhub import InProcessHub
from services.history import state_at
from services.live import LiveTable
from services.sources import ORGANISER_ROLE, new_token, token_hash
from services.views import stored_views
from tests.api.sse_driver import (
    TIMEOUT,
    build_app,
    many,
    new_service,
    stream,
    table,
    url,
)
from tests.commands import create_match, take_seat
from tests.conftest import T0

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
        assert ev.view() == t.view(None)
        assert "hand" not in ev.view() and "bottom" not in ev.view()
        assert ev.id is not None
        ids = [ev.id]
        for _ in range(6):
            await t.steps(1)
            while ids[-1] < t.version():  # a step may make several versions: one frame each
                ev = await s.next_view()
                assert ev.id is not None
                ids.append(ev.id)
            assert ev.view() == t.view(None)
        assert ids == list(range(ids[0], t.version() + 1))


@pytest.mark.parametrize("how", ["header", "query"])
async def test_a_seat_sees_its_own_view(how: str) -> None:
    async with table() as t:
        seat = 2
        headers = {"Authorization": f"Bearer {t.tokens[seat]}"} if how == "header" else {}
        path = url(t) if how == "header" else url(t, f"token={t.tokens[seat]}")
        async with stream(t.app, path, headers) as s:
            ev = await s.next_view()
            assert ev.id is not None
            last = ev.id
            for _ in range(12):
                await t.steps(1)
                while last < t.version():
                    ev = await s.next_view()
                    assert ev.id == last + 1
                    last = ev.id
                data = ev.view()
                assert data == t.view(seat)  # R33: the frame is table_view for this seat
                assert data["seat"] == seat
                assert data["hand"] and data["hand"] != t.view((seat + 1) % 4)["hand"]


async def test_tokens_that_are_not_this_matchs_seats_are_refused() -> None:
    async with table() as t:
        other = create_match(t.service, RuleSet())
        foreign = take_seat(t.service, other, 0, "x")[0]
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
    create_match(service, RuleSet(), match_id=match_id, organiser_token_hash=token_hash(organiser))
    async with app.lifespan(), stream(app, f"/v1/matches/{match_id}/stream?token={organiser}") as s:
        data = (await s.next_view()).view()
        assert "seat" not in data and "hand" not in data
    service.close()


# -- resuming with Last-Event-ID -------------------------------------------------------------------


@pytest.mark.parametrize("viewer", [None, 1])
@pytest.mark.parametrize("ring", [64, 2])
async def test_resume_loses_and_repeats_nothing(
    viewer: int | None, ring: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Within the feed's ring or from the store (a ring of 2), a resumed stream sends a
    frame for every version after Last-Event-ID, in order, each the event that made it
    and the view as of it (R34: as ``state_at`` shows it), redacted for its viewer (R33)."""
    monkeypatch.setattr(api.match_follower, "RING", ring)
    async with table() as t:
        headers = {} if viewer is None else {"Authorization": f"Bearer {t.tokens[viewer]}"}
        async with stream(t.app, url(t), headers) as s:
            for _ in range(3):
                await s.next_view()
                await t.steps(2)
            last = (await s.next_view()).id
            assert last is not None
        await t.steps(5)  # missed while away
        resumed = {**headers, "Last-Event-ID": str(last)}
        async with stream(t.app, url(t), resumed) as s:
            ids: list[int] = []
            while not ids or ids[-1] < t.version():
                ev = await s.next_view()
                assert ev.id is not None
                frame = ev.json()
                assert frame["version"] == frame["event"]["version"] == ev.id
                expected = state_at(t.service, t.match_id, ev.id, viewer).view
                assert frame["view"] == json.loads(msgspec.json.encode(expected))
                ids.append(ev.id)
            assert ids == list(range(last + 1, t.version() + 1))
            await t.steps(1)
            nxt = await s.next_view()
            assert nxt.id == t.version() == ids[-1] + 1
            assert nxt.view() == t.view(viewer)


async def test_resume_when_nothing_was_missed_sends_nothing_old() -> None:
    async with table() as t:
        now = t.version()
        async with stream(t.app, url(t), {"Last-Event-ID": str(now)}) as s:
            await s.nothing_for(0.1)
            await t.steps(1)
            ev = await s.next_view()
            assert ev.id == t.version() == now + 1


async def test_the_header_wins_over_a_stale_query() -> None:
    async with table() as t:
        v0 = t.version()
        await t.steps(3)
        path = url(t, f"lastEventId={v0}")
        async with stream(t.app, path, {"Last-Event-ID": str(t.version())}) as s:
            await s.nothing_for(0.1)
        async with stream(t.app, path) as s:
            ids = [(await s.next_view()).id for _ in range(t.version() - v0)]
            assert ids == list(range(v0 + 1, t.version() + 1))


# -- heartbeats, lifetime, shutdown ---------------------------------------------------------------


async def test_heartbeats_and_lifetime() -> None:
    settings = StreamSettings(heartbeat_s=0.05, lifetime_s=0.4, retry_ms=250)
    async with table(settings) as t, stream(t.app, url(t)) as s:
        started = time.monotonic()
        blocks = await s.rest(timeout=2)
        took = time.monotonic() - started
        assert took > 0.3  # it lived its lifetime, then ended (s.rest: within 2 s of a block)
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
    match_id = create_match(service, RuleSet())
    async with app.lifespan(), stream(app, f"/v1/matches/{match_id}/stream") as s:
        await s.next_view()
        started = time.monotonic()
        async with asyncio.timeout(TIMEOUT):
            await live.close()
        rest = await s.rest()
        # ended by the close, not by the next heartbeat (30 s) or the stream's lifetime
        # (60 s); the bound leaves room for a loaded machine
        assert time.monotonic() - started < 10
        assert rest[-1].retry is not None
    assert live.streams == 0
    service.close()


# -- fan-out -----------------------------------------------------------------------------------


async def test_a_version_is_rendered_once_for_all_spectators(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[int | None] = []

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls.extend(args[3])  # the viewers of one look-up
        return stored_views(*args, **kwargs)

    monkeypatch.setattr(services.live, "stored_views", counting)
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


async def test_clients_resuming_within_the_ring_read_nothing_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reads: list[int] = []
    at = LiveTable.at

    def counting(service: Any, match_id: Any, version: int) -> LiveTable:
        reads.append(version)
        return at(service, match_id, version)

    monkeypatch.setattr(LiveTable, "at", counting)
    async with table() as t:
        async with stream(t.app, url(t)) as watching:
            v0 = (await watching.next_view()).id
            assert v0 is not None
            await t.steps(3)
            while (await watching.next_view()).id != t.version():
                pass
            async with many(t, 50, {"Last-Event-ID": str(v0)}) as streams:
                for s in streams:
                    ids = [(await s.next_view()).id for _ in range(3)]
                    assert ids == [v0 + 1, v0 + 2, v0 + 3]
        assert reads == []  # the ring held them: no client replayed from the store


async def test_a_seats_stream_ends_when_its_token_is_reissued() -> None:
    """The old token stops working: its open stream ends with `event: revoked` (no retry
    hint: reconnecting with it is a 401); the other seats' and the spectators' streams go
    on (a re-issue is no version, R34)."""
    async with table() as t:
        mine = {"Authorization": f"Bearer {t.tokens[1]}"}
        other = {"Authorization": f"Bearer {t.tokens[2]}"}
        async with (
            stream(t.app, url(t), mine) as s1,
            stream(t.app, url(t), other) as s2,
        ):
            await s1.next_view()
            await s2.next_view()
            match = t.service.get_match(t.match_id)
            match.reissue_token(1, "0" * 64, T0)
            await anyio.to_thread.run_sync(t.service.save, match)
            rest = await s1.rest()
            assert rest and rest[-1].event == "revoked" and s1.ended
            await t.steps(1)
            assert (await s2.next_view()).id == t.version()
            async with stream(t.app, url(t), mine) as again:
                await again.rest()
                assert again.status == 401


@pytest.mark.parametrize("ring", [64, 2])
async def test_a_resumed_stream_says_caught_up_after_its_backlog(
    ring: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One ``caught-up`` frame (no id, so Last-Event-ID is unchanged) right after the last
    backlog version, within the ring or replayed from the store; then live frames only."""
    monkeypatch.setattr(api.match_follower, "RING", ring)
    async with table() as t:
        last = t.version()
        await t.steps(6)  # missed while away
        async with stream(t.app, url(t), {"Last-Event-ID": str(last)}) as s:
            blocks: list[Any] = []
            while not blocks or blocks[-1].event != "caught-up":
                ev = await s.next()
                assert ev is not None
                if ev.event in ("view", "caught-up"):
                    blocks.append(ev)
            *backlog, caught = blocks
            assert [b.id for b in backlog] == list(range(last + 1, t.version() + 1))
            assert (caught.id, caught.json()) == (None, {"version": t.version()})
            await t.steps(1)
            nxt = await s.next()
            while nxt is not None and nxt.event != "view":
                assert nxt.event != "caught-up"
                nxt = await s.next()
            assert nxt is not None and nxt.id == t.version()


async def test_a_streams_alarm_rings_once_and_tells_a_wake_up_from_a_ring() -> None:
    """The heartbeat's one alarm: set again only after it rang; a wake-up by the follower
    is never taken for the alarm's ring (no ping for it), a ring alone is."""
    loop = asyncio.get_running_loop()
    wake = Wake()
    wake.arm(loop, loop.time())  # due now
    wake.arm(loop, loop.time() + 3600)  # set already: unchanged
    await wake.wait()
    assert wake.take() is True  # the alarm alone
    assert not wake.is_set()
    wake.arm(loop, loop.time() + 3600)
    wake.set()  # the follower
    await wake.wait()
    assert wake.take() is False
    wake.disarm()
    wake.arm(loop, loop.time())
    await asyncio.sleep(0)
    wake.set()  # rung and woken at once: a wake-up
    await wake.wait()
    assert wake.take() is False
    wake.disarm()


async def test_the_versions_of_one_wake_up_go_out_in_one_chunk() -> None:
    """Several versions saved before the stream wakes (a command and the bots after it,
    a trick's last card and the trick won) reach it as one body chunk — one ``send``, one
    socket write — each frame as it is, in order (docs/decisions.md D-fan)."""
    async with table() as t:
        first = t.version()
        async with stream(t.app, url(t)) as s:
            assert (await s.next_view()).id == first
            ev = await s.next()
            assert ev is not None and ev.event == "caught-up"
            chunks = s.chunks
            for _ in range(3):  # on the loop: the stream wakes once for the three
                t.step()
            ids = [(await s.next_view()).id for _ in range(3)]
            assert ids == [first + 1, first + 2, first + 3]
            assert s.chunks == chunks + 1
            await t.steps(1)  # one more version: one more chunk, as before
            assert (await s.next_view()).id == first + 4
            assert s.chunks == chunks + 2

"""Live views over real HTTP (uvicorn) and the in-process hub: wake-ups coalesce, a
save wakes the hub, a failing listener loses nothing (docs/decisions.md F3)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from uuid import UUID, uuid4

import anyio
import httpx
import pytest

from api.sse import LiveStreams, MatchHub, StreamSettings
from domain.rules.ruleset import RuleSet
from infra.localhub import InProcessHub, LocalHub
from tests.api.sse_driver import (
    TIMEOUT,
    build_app,
    events_of,
    new_service,
    serve,
)
from tests.commands import create_match, take_seat

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # asyncpg and the hub are asyncio-only


async def test_over_http_with_uvicorn() -> None:
    service = new_service()
    hub = InProcessHub()
    hub.attach(service)
    live = LiveStreams(service, hub, StreamSettings(heartbeat_s=30, lifetime_s=60))
    match_id = create_match(service, RuleSet())
    token = take_seat(service, match_id, 0, "p0")[0]
    async with serve(build_app(live)) as base, httpx.AsyncClient(base_url=base) as client:
        path = f"/v1/matches/{match_id}/stream?token={token}"
        async with client.stream("GET", path, timeout=TIMEOUT) as response:
            assert response.status_code == 200
            assert response.headers["content-type"].startswith("text/event-stream")
            lines = response.aiter_lines()
            events = events_of(lines)
            first = await anext(events)
            assert first.event == "view" and first.view()["seat"] == 0
            await anyio.to_thread.run_sync(take_seat, service, match_id, 1, "p1")
            second = await anext(events)
            assert second.id is not None and first.id is not None and second.id > first.id
            assert second.view()["seats"][1]["name"] == "p1"
        async with asyncio.timeout(TIMEOUT):  # the server noticed the client leave
            while live.streams:
                await asyncio.sleep(0.01)
    service.close()


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
    service.saves.changed.add(broken, first=True)
    match_id = create_match(service, RuleSet())
    sub = hub.subscribe(match_id)
    await anyio.to_thread.run_sync(take_seat, service, match_id, 0, "p0")
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

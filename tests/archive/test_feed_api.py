"""``GET /v1/events`` and ``GET /v1/events/stream`` over HTTP: the operator token, the
refusals as problems, the rate limit, and the stream's exact resume — on one app, and on
two replicas of one PostgreSQL store (D17)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from litestar import Litestar
from litestar.testing import TestClient

from infra.settings import Settings
from services.feed import feed_page, last_position
from services.game import GameService
from tests.api.sse_driver import SseStream, stream
from tests.apps import TEST_SETTINGS, make_app
from tests.archive.matches import bot_match, open_match
from tests.conftest import Backend

TOKEN = "operator-token-0123456789"
pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def app_on(service: GameService, settings: Settings | None = None, **kw: Any) -> Litestar:
    quiet = {"rate_limit_per_minute": 0, "sweep_interval_ms": 0, "webhook_interval_ms": 0}
    return make_app(
        service,
        settings=settings or TEST_SETTINGS,
        operator_token=TOKEN,
        feed_poll_ms=20,
        **{**quiet, **kw},
    )


def popo() -> GameService:
    return GameService({"PERSISTENCE_MODULE": "eventsourcing.popo"})


async def frames_until(s: SseStream, position: int) -> list[int]:
    """The ids of the ``event`` frames up to ``position``, checking each frame's data."""
    seen: list[int] = []
    while not seen or seen[-1] < position:
        ev = await s.next()
        assert ev is not None, f"the stream ended at {seen[-1:]}"
        if ev.event == "event":
            assert ev.id is not None and ev.json()["position"] == ev.id
            seen.append(ev.id)
    return seen


def test_pages_the_public_and_the_operator_reads_unredacted() -> None:
    service = popo()
    open_match(service)
    with TestClient(app_on(service)) as c:
        public = c.get("/v1/events", params={"limit": 1000}).json()
        assert public == msgspec_plain(feed_page(service, limit=1000))
        dealt = next(i for i in public["items"] if i["type"] == "Dealt")
        assert dealt["hidden"] == ["seed"] and "seed" not in dealt["data"]
        full = c.get("/v1/events", params={"limit": 1000}, headers=bearer(TOKEN)).json()
        assert all(not i["hidden"] for i in full["items"])
        page = c.get("/v1/events", params={"after": 3, "limit": 2}).json()
        assert [i["position"] for i in page["items"]] == [4, 5] and page["next"] == 5
        end = full["items"][-1]["position"]
        last = c.get("/v1/events", params={"after": end})  # the end: an empty page
        assert last.json() == {"items": [], "next": end, "more": False}
        ahead = c.get("/v1/events", params={"after": end + 1})
        assert ahead.status_code == 422 and ahead.json()["code"] == "last-event-id-ahead"
        assert f"after {end + 1}" in ahead.json()["detail"] and "R34" in ahead.json()["detail"]


@pytest.fixture(scope="module")
def empty() -> Iterator[TestClient[Litestar]]:
    """One app on an empty log for the refusals: they only read, so it stays empty."""
    with TestClient(app_on(popo())) as c:
        yield c


@pytest.mark.parametrize(
    ("params", "headers", "status", "code"),
    [
        ({}, {"Authorization": "Bearer not-the-operator"}, 401, "unauthorized"),
        ({}, {"Authorization": f"Bearer {TOKEN}x"}, 401, "unauthorized"),
        ({"limit": 0}, {}, 400, None),
        ({"limit": 1001}, {}, 400, None),
        ({"after": -1}, {}, 400, None),
        # a position the (empty) log never had: another deployment's, or made up (R34)
        ({"after": 1}, {}, 422, "last-event-id-ahead"),
        ({"after": 10**9}, {"Authorization": f"Bearer {TOKEN}"}, 422, "last-event-id-ahead"),
        ([("after", "0"), ("after", "5")], {}, 422, "invalid-input"),  # not one silently
        ([("limit", "5"), ("limit", "500")], {}, 422, "invalid-input"),
    ],
)
def test_refusals_are_problems(
    empty: TestClient[Litestar], params: Any, headers: dict[str, str], status: int, code: str | None
) -> None:
    c = empty
    r = c.get("/v1/events", params=params, headers=headers)
    assert r.headers["content-type"].startswith("application/problem+json")
    assert r.status_code in (status, 422)
    if code is not None:
        assert r.status_code == status and r.json()["code"] == code


def test_the_feed_is_rate_limited_as_other_reads() -> None:
    with TestClient(make_app(popo(), rate_limit_per_minute=3)) as c:
        statuses = [c.get("/v1/events").status_code for _ in range(8)]
    assert statuses[0] == 200 and 429 in statuses


async def test_the_stream_resumes_exactly_after_last_event_id() -> None:
    service = popo()
    await anyio.to_thread.run_sync(bot_match, service)
    last = last_position(service)
    app = app_on(service)
    async with stream(app, "/v1/events/stream") as s:
        first = await frames_until(s, 40)
    async with stream(app, "/v1/events/stream", {"Last-Event-ID": str(first[-1])}) as s:
        rest = await frames_until(s, last)
        assert first + rest == list(range(1, last + 1))
        await anyio.to_thread.run_sync(open_match, service)  # new events arrive live
        fresh = await frames_until(s, last_position(service))
        assert fresh == list(range(last + 1, last_position(service) + 1))
    async with stream(app, f"/v1/events/stream?lastEventId={last}") as s:
        assert (await frames_until(s, last + 1)) == [last + 1]
    async with stream(app, "/v1/events/stream", {"Last-Event-ID": str(10**6)}) as s:
        await s.rest()
        assert s.status == 422 and b"last-event-id-ahead" in s.body


@pytest.mark.postgres
@pytest.mark.parametrize("backend", ["postgres"], indirect=True)
async def test_two_replicas_on_one_postgres_resume_each_others_stream(backend: Backend) -> None:
    one, two = backend.service(), backend.service()
    app_one, app_two = app_on(one, backend.settings), app_on(two, backend.settings)
    await anyio.to_thread.run_sync(bot_match, one)
    last = await anyio.to_thread.run_sync(last_position, two)
    async with stream(app_two, "/v1/events/stream") as s:
        first = await frames_until(s, 25)
    # the client reconnects to the other replica with the id of the last frame it got
    async with stream(app_one, "/v1/events/stream", {"Last-Event-ID": str(first[-1])}) as s:
        rest = await frames_until(s, last)
    assert first + rest == list(range(1, last + 1))
    # a stream on one replica sees what the other writes (it polls the shared log)
    async with stream(app_two, "/v1/events/stream", {"Last-Event-ID": str(last)}) as s:
        await anyio.to_thread.run_sync(open_match, one)
        top = await anyio.to_thread.run_sync(last_position, one)
        assert (await frames_until(s, top)) == list(range(last + 1, top + 1))


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def msgspec_plain(value: Any) -> Any:
    import msgspec  # noqa: PLC0415

    return msgspec.json.decode(msgspec.json.encode(value))


async def test_a_draining_server_ends_the_streams_with_a_reconnect_hint() -> None:
    service = popo()
    open_match(service)
    app = app_on(service)
    archive = app.state.archive
    async with stream(app, "/v1/events/stream") as s:
        await frames_until(s, last_position(service))
        assert archive.streams == 1
        await archive.close()
        rest = await s.rest()
        assert rest and rest[-1].retry == 1000
    assert archive.streams == 0

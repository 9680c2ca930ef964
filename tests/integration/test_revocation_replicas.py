"""A stream lives no longer than its credential, across replicas (docs/decisions.md D-fair):
two apps on one PostgreSQL database; a player's streams open on replica B end with
``event: revoked`` within a second of the token being rotated, or its session ended, on
replica A — B's live hub hears A's save (LISTEN/NOTIFY) and the stream checks the token
again — and B then refuses the token (401)."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, asynccontextmanager

import httpx
import pytest
from litestar import Litestar

from infra.bootstrap import build_app
from infra.settings import Settings
from tests.api.sse_driver import SseStream, stream
from tests.resilience.harness import schema_settings

pytestmark = [pytest.mark.postgres, pytest.mark.anyio]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def settings(pg_url: str) -> Iterator[Settings]:
    with schema_settings(
        pg_url, rate_limit_per_minute=0, sweep_interval_ms=0, webhook_interval_ms=0
    ) as settings:
        yield settings


@asynccontextmanager
async def client(app: Litestar) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=app)  # type: ignore[arg-type]
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as c:
        yield c


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def revoked_within(s: SseStream, since: float) -> float:
    while True:
        ev = await s.next(timeout=5)
        assert ev is not None, "the stream ended without event: revoked"
        if ev.event == "revoked":
            return time.perf_counter() - since


async def test_a_token_revoked_on_one_replica_ends_its_streams_on_the_other(
    settings: Settings,
) -> None:
    a, b = build_app(settings), build_app(settings)
    took: list[float] = []
    async with a.lifespan(), b.lifespan(), client(a) as on_a, client(b) as on_b:
        player = (await on_a.post("/v1/players", json={"displayName": "Mei"})).json()
        made = (await on_a.post("/v1/matches", json={})).json()
        claim = {"matchId": made["matchId"], "seat": 0}
        r = await on_a.post("/v1/players/me/seats", json=claim, headers=bearer(player["token"]))
        assert r.status_code == 201, r.text
        token = player["token"]
        paths = ["/v1/players/me/stream", f"/v1/matches/{made['matchId']}/stream"]
        for round_ in range(5):
            async with AsyncExitStack() as stack:
                streams = [
                    await stack.enter_async_context(stream(b, path, bearer(token)))
                    for path in paths
                ]
                for s in streams:
                    assert s.status == 200
                    assert await s.next(timeout=5) is not None
                started = time.perf_counter()
                if round_ % 2 == 0:  # rotated on A
                    r = await on_a.post("/v1/players/me/token", headers=bearer(token))
                    old, token = token, r.json()["token"]
                else:  # the session ended from another device, on A
                    other = await on_a.post("/v1/players/me/sessions", headers=bearer(token))
                    me = (await on_a.get("/v1/players/me", headers=bearer(token))).json()
                    r = await on_a.delete(
                        f"/v1/players/me/sessions/{me['sessionId']}",
                        headers=bearer(other.json()["token"]),
                    )
                    assert r.status_code == 204
                    old, token = token, other.json()["token"]
                for s in streams:
                    took.append(await revoked_within(s, started))
            assert (await on_b.get("/v1/players/me", headers=bearer(old))).status_code == 401
    assert len(took) == 5 * len(paths), took  # every stream ended (how soon: bench-fairplay)

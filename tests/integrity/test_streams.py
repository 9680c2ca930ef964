"""Every live stream opens on every match, ticket, player and tournament of the population
and yields at least one frame with data, then closes when its client goes — over real
HTTP, on an app opened afresh on the population's file (docs/decisions.md D-integrity)."""

from __future__ import annotations

from collections import Counter

import httpx
import pytest
from litestar.testing import TestClient

from tests.api.sse_driver import serve
from tests.integrity.population import Population
from tests.integrity.routes import Read, get_routes, reads

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def first_frame(client: httpx.AsyncClient, read: Read) -> tuple[int, str | None]:
    """The status, and the first frame's ``data`` (None: the stream had none)."""
    async with client.stream("GET", read.url, headers=read.headers) as r:
        if r.status_code != 200:
            await r.aread()
            return r.status_code, None
        async for line in r.aiter_lines():
            if line.startswith("data:"):
                return 200, line[5:].strip()
        return 200, None


async def test_every_stream_opens_yields_a_frame_and_closes(population: Population) -> None:
    app = population.app()
    with TestClient(app) as c:  # the reads that fill the paths
        routes = [path for path, stream in get_routes(app) if stream]
        plan = {path: list(reads(c, population, path)) for path in routes}
    assert len(routes) == 5
    opened: Counter[str] = Counter()
    failures: list[str] = []
    async with (
        serve(population.app()) as base,
        httpx.AsyncClient(base_url=base, timeout=10) as client,
    ):
        for path, planned in plan.items():
            for read in planned:
                status, data = await first_frame(client, read)
                if status >= 500 or (status == 200 and not data):
                    failures.append(f"{read.url}: {status}, first data {data!r}")
                if status == 200:
                    opened[path] += 1
    print(f"\n{sum(opened.values())} streams opened: {dict(opened)}")
    assert not failures, "\n".join(failures)
    assert set(opened) == set(routes)
    # every match's stream opened for some reader
    assert opened["/v1/matches/{match_id:uuid}/stream"] >= len(population.all_matches())

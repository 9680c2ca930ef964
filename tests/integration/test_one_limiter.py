"""docs/decisions.md F2: every blocking call into the store made from async code —
commands, reads, history, live-stream loads, the readiness probe — runs in a worker
thread under the app's one ``CapacityLimiter``, sized to the store's connection pool, so
no more calls are ever inside the store at once than it has connections."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import msgspec

from infra.bootstrap import SQLITE_POOL
from infra.store import build_service
from tests.api.rest import auth
from tests.apps import TEST_SETTINGS, make_app
from tests.conftest import FakeClock, FixedSeeds

STORE_CALLS = ("select_events", "insert_events", "max_notification_id", "select_notifications")


class Inside:
    """Counts the calls inside the store at once (each held a little, to overlap)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.now = 0
        self.most = 0
        self.calls = 0

    def wrap(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        def counted(*args: Any, **kwargs: Any) -> Any:
            with self.lock:
                self.now += 1
                self.calls += 1
                self.most = max(self.most, self.now)
            try:
                time.sleep(0.003)
                return fn(*args, **kwargs)
            finally:
                with self.lock:
                    self.now -= 1

        return counted


def test_no_more_calls_inside_the_store_than_its_pool(tmp_path: Path) -> None:
    settings = msgspec.structs.replace(
        TEST_SETTINGS, backend="sqlite", sqlite_path=tmp_path / "events.sqlite3"
    )
    service = build_service(settings, clock=FakeClock(), seeds=FixedSeeds())
    inside = Inside()
    for name in STORE_CALLS:
        setattr(service.recorder, name, inside.wrap(getattr(service.recorder, name)))
    app = make_app(service, settings=settings)

    async def load() -> None:
        transport = httpx.ASGITransport(app=app)  # type: ignore[arg-type]  # concurrent requests on this loop
        async with httpx.AsyncClient(transport=transport, base_url="http://limits") as c:
            made = (await c.post("/v1/matches", json={"name": "limits"})).json()
            match = f"/v1/matches/{made['matchId']}"
            tokens = []
            for seat in range(4):
                r = await c.post(f"{match}/seats/{seat}", json={"name": f"p{seat}"})
                tokens.append(r.json()["token"])
            top = (await c.get(f"{match}/public")).json()["version"]
            requests = []
            for i in range(120):
                version = 1 + i % top
                requests += [
                    c.get(f"{match}/state?version={version}", headers=auth(tokens[i % 4])),
                    c.get(f"{match}/history?after={i % top}&limit=5"),
                    c.post("/v1/matches", json={"name": f"m{i}"}),
                ]
            answers = await asyncio.gather(*requests)
            assert {r.status_code for r in answers} <= {200, 201}, {
                r.status_code: r.text for r in answers if r.status_code >= 300
            }

    try:
        asyncio.run(load())
    finally:
        service.close()
    assert inside.calls > 300
    assert 2 <= inside.most <= SQLITE_POOL, inside.most

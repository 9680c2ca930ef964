"""Feed subscriptions kept by the server (docs/events.md, "Subscriptions"): two consumers
share one named subscription across a restart of the server without losing or repeating
an event; an unacknowledged range is handed out again once its lease expires; a streaming
consumer commits its position and resumes after it; only the operator reads them."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from litestar.testing import TestClient

from infra.settings import Settings
from infra.store import build_service
from services.feed import feed_page, last_position
from services.feed_subscriptions import BOOKKEEPING
from services.game import GameService
from tests.api.sse_driver import stream
from tests.apps import TEST_SETTINGS, make_app
from tests.archive.matches import bot_match

TOKEN = "operator-token-0123456789"
OPERATOR = {"Authorization": f"Bearer {TOKEN}"}


def sqlite_settings(path: Path) -> Settings:
    return Settings(
        backend="sqlite",
        sqlite_path=path,
        rate_limit_per_minute=0,
        sweep_interval_ms=0,
        webhook_interval_ms=0,
        operator_token=TOKEN,
    )


def history(service: GameService) -> list[int]:
    """Every position a subscription of every type hands out (its bookkeeping aside)."""
    seen: list[int] = []
    after = 0
    while True:
        page = feed_page(service, after=after, limit=1000, operator=True)
        seen += [i.position for i in page.items if i.type not in BOOKKEEPING]
        after = page.next
        if not page.more:
            return seen


class Consumer:
    """A worker: claims a range, processes its items, acknowledges the lease."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.processed: list[int] = []

    def claim(self, client: TestClient[Any], limit: int = 40) -> dict[str, Any]:
        r = client.post(
            "/v1/events/subscriptions/warehouse/claims",
            json={"consumer": self.name, "limit": limit},
            headers=OPERATOR,
        )
        assert r.status_code == 200, r.text
        body: dict[str, Any] = r.json()
        return body

    def step(self, client: TestClient[Any]) -> bool:
        """One claim, processed and acknowledged; False once caught up."""
        got = self.claim(client)
        if got["lease"] is None:
            return False
        self.processed += [i["position"] for i in got["items"]]
        r = client.post(
            "/v1/events/subscriptions/warehouse/acks",
            json={"consumer": self.name, "lease": got["lease"]["lease"]},
            headers=OPERATOR,
        )
        assert r.status_code == 200, r.text
        return True


def test_two_consumers_share_a_subscription_across_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "events.sqlite3"
    service = build_service(sqlite_settings(path))
    try:
        for _ in range(3):
            bot_match(service)
        expected = history(service)
    finally:
        service.close()
    one, two = Consumer("one"), Consumer("two")
    with TestClient(make_app(settings=sqlite_settings(path))) as client:
        r = client.post(
            "/v1/events/subscriptions",
            json={"name": "warehouse", "leaseMs": 1000},
            headers=OPERATOR,
        )
        assert r.status_code == 201, r.text
        assert r.json()["checkpoint"] == 0
        for _ in range(3):
            assert one.step(client) and two.step(client)
        crashed = one.claim(client)  # it dies before acknowledging
        lost = crashed["lease"]
        assert lost is not None and crashed["items"]
        before = client.get("/v1/events/subscriptions/warehouse", headers=OPERATOR).json()
        assert before["checkpoint"] == lost["after"] and len(before["leases"]) == 1
    time.sleep(1.1)  # the lease expires while the server is down
    with TestClient(make_app(settings=sqlite_settings(path))) as client:
        again = client.get("/v1/events/subscriptions/warehouse", headers=OPERATOR).json()
        assert again["checkpoint"] == before["checkpoint"], "the position survived the restart"
        got = two.claim(client)  # the expired range is handed out first
        assert (got["lease"]["after"], got["lease"]["upto"]) == (lost["after"], lost["upto"])
        assert [i["position"] for i in got["items"]] == [i["position"] for i in crashed["items"]]
        two.processed += [i["position"] for i in got["items"]]
        r = client.post(
            "/v1/events/subscriptions/warehouse/acks",
            json={"consumer": "two", "lease": got["lease"]["lease"]},
            headers=OPERATOR,
        )
        assert r.status_code == 200
        late = client.post(
            "/v1/events/subscriptions/warehouse/acks",
            json={"consumer": "one", "lease": lost["lease"]},
            headers=OPERATOR,
        )
        assert late.status_code == 409 and late.json()["type"].endswith("lease-lost")
        busy = True
        while busy:
            busy = one.step(client) | two.step(client)
        done = client.get("/v1/events/subscriptions/warehouse", headers=OPERATOR).json()
    both = one.processed + two.processed
    assert sorted(both) == expected, "every event once: none lost"
    assert len(both) == len(set(both)), "none processed twice"
    assert one.processed and two.processed, "both consumers had a share"
    assert done["leases"] == [] and done["checkpoint"] == done["handed"]
    assert done["checkpoint"] >= expected[-1]


def test_only_the_types_asked_for_and_only_the_operator() -> None:
    service = GameService({"PERSISTENCE_MODULE": "eventsourcing.popo"})
    bot_match(service)
    with TestClient(make_app(service, operator_token=TOKEN)) as client:
        body = {"name": "tricks", "types": ["TrickWon"]}
        assert client.post("/v1/events/subscriptions", json=body).status_code == 401
        other = {"Authorization": "Bearer not-the-operator-token-000"}
        assert client.post("/v1/events/subscriptions", json=body, headers=other).status_code == 403
        assert (
            client.post("/v1/events/subscriptions", json=body, headers=OPERATOR).status_code == 201
        )
        taken = client.post("/v1/events/subscriptions", json=body, headers=OPERATOR)
        assert taken.status_code == 409 and taken.json()["type"].endswith("subscription-exists")
        bad = client.post(
            "/v1/events/subscriptions", json={"name": "x", "types": ["Nonsense"]}, headers=OPERATOR
        )
        assert bad.status_code == 422
        missing = client.get("/v1/events/subscriptions/nobody", headers=OPERATOR)
        assert missing.status_code == 404
        got = client.post(
            "/v1/events/subscriptions/tricks/claims",
            json={"consumer": "w", "limit": 1000},
            headers=OPERATOR,
        ).json()
        tricks = [i.position for i in feed_page(service, limit=1000).items if i.type == "TrickWon"]
        assert [i["position"] for i in got["items"]] == tricks
        assert {i["type"] for i in got["items"]} == {"TrickWon"}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_a_streaming_consumer_commits_and_resumes_after_its_checkpoint() -> None:
    service = GameService({"PERSISTENCE_MODULE": "eventsourcing.popo"})
    await anyio.to_thread.run_sync(bot_match, service)
    app = make_app(service, settings=TEST_SETTINGS, operator_token=TOKEN, feed_poll_ms=20)
    with TestClient(app) as client:
        assert (
            client.post(
                "/v1/events/subscriptions", json={"name": "tail"}, headers=OPERATOR
            ).status_code
            == 201
        )
        r = client.post(
            "/v1/events/subscriptions/tail/checkpoint", json={"position": 30}, headers=OPERATOR
        )
        assert r.status_code == 200 and r.json()["checkpoint"] == 30
        ahead = last_position(service) + 1000
        r = client.post(
            "/v1/events/subscriptions/tail/checkpoint", json={"position": ahead}, headers=OPERATOR
        )
        assert r.status_code == 422
    async with stream(app, "/v1/events/stream?subscription=tail", OPERATOR) as s:
        ev = await s.next()
        while ev is not None and ev.event != "event":
            ev = await s.next()
        assert ev is not None and ev.id == 31
    async with stream(app, "/v1/events/stream?subscription=tail") as s:
        await s.rest()
        assert s.status == 403

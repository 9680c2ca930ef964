"""Processes by role on PostgreSQL (docs/scaling.md): an API process (``PROCESS_ROLE=api``)
serves HTTP and streams only, a worker (``shengji worker``) runs the background work. With
the API process alone a table of three bots and a person stands still and no webhook is
sent; once a worker runs beside it, the bots move, the absent person's turn times out and
the person's ``your-turn`` webhook arrives, and the lists show the match — all through the
worker, which hears the API process's saves through the hub."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.resilience.harness import (
    SECRET,
    TLS,
    Receiver,
    Replica,
    Worker,
    drop_schema,
    fresh_schema,
)
from tests.resilience.zygote import Zygote

pytestmark = pytest.mark.postgres

OPERATOR = "operator-token-0123456789abcdef"
SHARED = {
    "OPERATOR_TOKEN": OPERATOR,
    "WEBHOOK_INTERVAL_MS": "100",
    "WEBHOOK_ALLOW_HTTP": "true",  # the receiver is a local test server
    "WEBHOOK_PRIVATE_TARGETS": "127.0.0.1",
    "SWEEP_INTERVAL_MS": "100",
    "DEAL_INTERVAL_MS": "10",
    "DECLARE_MS": "1000",
    "WINDOW_MS": "0",
}


@pytest.fixture
def schema(pg_url: str) -> Iterator[str]:
    name = fresh_schema(pg_url)
    yield name
    drop_schema(pg_url, name)


def call(base: str, method: str, path: str, body: Any = None, token: str | None = None) -> Any:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    r = httpx.request(method, base + path, json=body, headers=headers, timeout=10, verify=TLS)
    assert r.status_code in (200, 201), f"{method} {path}: {r.status_code} {r.text}"
    return r.json()


def history(base: str, match_id: str) -> list[Any]:
    items: list[Any] = call(base, "GET", f"/v1/matches/{match_id}/history?after=0&limit=1000")[
        "items"
    ]
    return items


def test_the_worker_runs_bots_timers_and_webhooks_for_the_api_process(
    pg_url: str, schema: str, tmp_path: Path, zygote: Zygote
) -> None:
    api = Replica(pg_url, schema, tmp_path, PROCESS_ROLE="api", **SHARED).forked_from(zygote)
    worker = Worker(pg_url, schema, tmp_path, PROCESS_ROLE="worker", **SHARED).forked_from(zygote)
    receiver = Receiver(failing=False)
    try:
        api.start()
        asyncio.run(api.ready())
        base = api.base
        call(
            base,
            "POST",
            "/v1/webhooks",
            {"url": receiver.url, "secret": SECRET, "kinds": ["your-turn"]},
            OPERATOR,
        )
        person = call(base, "POST", "/v1/players", {"displayName": "absent"})
        timers = {"declareMs": 1000, "buryMs": 1000, "playMs": 1000}
        made = call(base, "POST", "/v1/matches", {"name": "roles", "timers": timers})
        match_id, organiser = made["matchId"], made["organiserToken"]
        for seat in (1, 2, 3):
            call(
                base,
                "POST",
                f"/v1/matches/{match_id}/seats/{seat}/bot",
                {"kind": "heuristic"},
                organiser,
            )
        call(
            base, "POST", "/v1/players/me/seats", {"matchId": match_id, "seat": 0}, person["token"]
        )
        seated = history(base, match_id)
        time.sleep(2.0)  # the API process alone: nobody moves the bots or claims a timeout
        assert history(base, match_id) == seated
        assert receiver.got == []
        # nobody follows the log into the lists' view: a list waits (1 s at most) and
        # answers what the view has (docs/decisions.md D-readmodels)
        started = time.monotonic()
        assert call(base, "GET", "/v1/matches")["items"] == []
        assert 0.9 <= time.monotonic() - started < 5

        worker.start()
        asyncio.run(worker.ready())
        assert (
            httpx.get(worker.base + "/v1/matches", timeout=5, verify=TLS).status_code == 404
        )  # no API
        deadline = time.monotonic() + 60
        types: list[str] = []
        while time.monotonic() < deadline:
            types = [i["type"] for i in history(base, match_id)]
            if "TurnTimedOut" in types and types.count("CardPlayed") >= 8 and receiver.got:
                break
            time.sleep(0.3)
        assert "TurnTimedOut" in types, (types[-10:], worker.tail())
        assert types.count("CardPlayed") >= 8, (types[-10:], worker.tail())
        assert any(
            body["kind"] == "your-turn" and body["playerId"] == person["playerId"]
            for _, body in receiver.got
        ), receiver.got
        # the worker follows the log into the view; the API process's lists read it
        listed = [i["matchId"] for i in call(base, "GET", "/v1/matches")["items"]]
        assert listed == [match_id]
        mine = call(base, "GET", "/v1/players/me/matches", token=person["token"])
        assert [m["matchId"] for m in mine["current"] + mine["finished"]] == [match_id]
    finally:
        worker.stop()
        api.stop()
        receiver.server.shutdown()
        receiver.server.server_close()


def test_a_worker_serves_its_probes_and_metrics_and_no_api_route(
    pg_url: str, schema: str, tmp_path: Path, zygote: Zygote
) -> None:
    """``shengji worker`` builds no API app (docs/decisions.md D-rooms): its port answers
    the probes and ``/metrics`` and nothing else; SIGTERM stops its background work
    cleanly and it exits 0."""
    worker = Worker(pg_url, schema, tmp_path, PROCESS_ROLE="worker", **SHARED).forked_from(zygote)
    try:
        worker.start()
        asyncio.run(worker.ready())
        for path in ("/healthz", "/readyz"):
            assert httpx.get(worker.base + path, timeout=5, verify=TLS).status_code == 200, path
        metrics = httpx.get(worker.base + "/metrics", timeout=5, verify=TLS)
        assert metrics.status_code == 200
        assert "shengji_live_hub_connected 1.0" in metrics.text  # its hub listens
        assert "shengji_bot_steps_total" in metrics.text
        for path in ("/v1/matches", "/v1/tournaments", "/schema", "/schema/openapi.json"):
            assert httpx.get(worker.base + path, timeout=5, verify=TLS).status_code == 404, path
    finally:
        worker.stop()
    assert worker.proc is not None and worker.proc.returncode == 0, worker.tail()

"""A deployment as ``k8s/`` runs it, on a real PostgreSQL (docs/deploy.md;
docs/decisions.md D-migrate): the migration Job's ``shengji migrate``, then an API process
(``shengji serve``, ``PROCESS_ROLE=api``) and a worker process (``shengji worker``), real
processes with the ConfigMap's settings (``k8s/configmap.yaml``: ``CREATE_TABLES=false``,
no DDL from a serving process). A webhook subscribed through the API reaches its receiver:
the worker's outbox found every table it reads and writes, and logged no failure.

The receiver is a local HTTP server: the ConfigMap's webhook policy (public ``https``
addresses only) is opened for loopback by ``WEBHOOK_ALLOW_HTTP`` and
``WEBHOOK_PRIVATE_TARGETS`` (docs/webhooks.md), as an in-cluster receiver would be.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.documents import load_yaml_all
from tests.resilience.harness import ROOT, SECRET, Receiver, Replica, Worker, drop_schema
from tests.resilience.harness import fresh_schema as new_schema

pytestmark = pytest.mark.postgres

OPERATOR = "operator-token-0123456789abcdef"
PER_PROCESS = ("HOST", "PORT", "POSTGRES_SCHEMA", "PROCESS_ROLE")
"""What each test process sets itself (its own port, the test's schema, its role)."""
LOOPBACK_RECEIVER = {"WEBHOOK_ALLOW_HTTP": "true", "WEBHOOK_PRIVATE_TARGETS": "127.0.0.1"}


def configmap() -> dict[str, str]:
    """The ConfigMap's settings, as every process of the deployment reads them."""
    text = (ROOT / "k8s" / "configmap.yaml").read_text(encoding="utf-8")
    data: dict[str, str] = next(d for d in load_yaml_all(text) if d)["data"]
    return {k: str(v) for k, v in data.items() if k not in PER_PROCESS}


@pytest.fixture
def schema(pg_url: str) -> Iterator[str]:
    name = new_schema(pg_url)
    yield name
    drop_schema(pg_url, name)
    drop_schema(pg_url, f"{name}_webhooks")


def call(base: str, method: str, path: str, body: Any = None, token: str | None = None) -> Any:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    r = httpx.request(method, base + path, json=body, headers=headers, timeout=10)
    assert r.status_code in (200, 201), f"{method} {path}: {r.status_code} {r.text}"
    return r.json()


def test_after_the_migration_the_worker_delivers_webhooks_without_creating_tables(
    pg_url: str, schema: str, tmp_path: Path
) -> None:
    settings = configmap()
    assert settings["CREATE_TABLES"] == "false"
    env = {**settings, **LOOPBACK_RECEIVER, "OPERATOR_TOKEN": OPERATOR}
    migration = subprocess.run(
        [str(Path(sys.executable).parent / "shengji"), "migrate"],
        cwd=ROOT,
        env={**os.environ, "DATABASE_URL": pg_url, "POSTGRES_SCHEMA": schema, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert migration.returncode == 0, migration.stderr
    assert f"migrate: created table {schema}_webhooks.webhookoutbox_events" in migration.stdout

    api = Replica(pg_url, schema, tmp_path, PROCESS_ROLE="api", **env)
    worker = Worker(pg_url, schema, tmp_path, PROCESS_ROLE="worker", **env)
    receiver = Receiver(failing=False)
    try:
        api.start()
        worker.start()
        asyncio.run(api.ready())
        asyncio.run(worker.ready())
        base = api.base
        call(
            base,
            "POST",
            "/v1/webhooks",
            {"url": receiver.url, "secret": SECRET, "kinds": ["match-found"]},
            OPERATOR,
        )
        person = call(base, "POST", "/v1/players", {"displayName": "deployed"})
        match_id = call(base, "POST", "/v1/matches", {"name": "deployed"})["matchId"]
        call(
            base, "POST", "/v1/players/me/seats", {"matchId": match_id, "seat": 0}, person["token"]
        )
        deadline = time.monotonic() + 60
        while not receiver.got and time.monotonic() < deadline:
            time.sleep(0.2)
        assert [(body["kind"], body["playerId"], body["data"]) for _, body in receiver.got] == [
            ("match-found", person["playerId"], {"matchId": match_id, "seat": 0})
        ], worker.tail()
    finally:
        worker.stop()
        api.stop()
        receiver.server.shutdown()
        receiver.server.server_close()
    log = worker.log_path.read_text(errors="replace")
    assert "failed" not in log and "Traceback" not in log, log[-3000:]

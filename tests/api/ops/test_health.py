"""Health probes: ``/healthz`` always, ``/readyz`` through the store (503 problems when it
fails, hangs or has no schema).
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from api.health import store_probe
from infra.settings import Settings
from infra.store import build_service
from services.game import GameService
from tests.api.ops.small_app import failing_probe, is_problem, small_app


def test_healthz_is_always_ok() -> None:
    with TestClient(small_app(probe=failing_probe)) as c:
        r = c.get("/healthz")
    assert r.status_code == 200
    assert r.json() == {"status": "ok"}


def test_readyz_is_ready_when_the_probe_answers(client: TestClient[Litestar]) -> None:
    r = client.get("/readyz")
    assert r.status_code == 200
    assert r.json() == {"status": "ready"}


def test_readyz_is_a_503_problem_when_the_probe_fails() -> None:
    with TestClient(small_app(probe=failing_probe)) as c:
        r = c.get("/readyz")
    body = is_problem(r, "not-ready", 503)
    assert r.headers["retry-after"] == "5"
    assert "OSError" in body["detail"] and "refused" not in body["detail"]


def test_readyz_is_a_503_problem_when_the_probe_hangs() -> None:
    release = threading.Event()

    def hanging() -> object:
        return release.wait(10)

    try:
        with TestClient(small_app(probe=hanging, timeout=0.05)) as c:
            r = c.get("/readyz")
            body = is_problem(r, "not-ready", 503)
            assert "0.05 s" in body["detail"]
            assert c.get("/healthz").status_code == 200
    finally:
        release.set()


def test_readyz_reads_through_the_service(tmp_path: Path) -> None:
    service = build_service(Settings(backend="sqlite", sqlite_path=tmp_path / "ok.sqlite3"))
    try:
        with TestClient(small_app(probe=store_probe(service))) as c:
            assert c.get("/readyz").json() == {"status": "ready"}
    finally:
        service.close()


def test_readyz_is_503_without_the_schema(tmp_path: Path) -> None:
    settings = Settings(
        backend="sqlite", sqlite_path=tmp_path / "bare.sqlite3", create_tables=False
    )
    service = build_service(settings)
    try:
        with TestClient(small_app(probe=store_probe(service))) as c:
            is_problem(c.get("/readyz"), "not-ready", 503)
    finally:
        service.close()


def test_readyz_is_503_when_the_recorder_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    service = GameService({"PERSISTENCE_MODULE": "eventsourcing.popo"})

    def unreachable() -> int:
        raise ConnectionError("store unreachable")

    monkeypatch.setattr(service.recorder, "max_notification_id", unreachable)
    with TestClient(small_app(probe=store_probe(service))) as c:
        is_problem(c.get("/readyz"), "not-ready", 503)

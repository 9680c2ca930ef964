"""The runner of a process's background work (``infra.workers``, docs/decisions.md D-rooms)
and the worker's own server (``infra.worker``): every loop runs on a thread of its own,
is woken by its doorbell, survives a failing step, and stops cleanly — its step in
progress ends, nothing is left running, nobody hears saves any more; a worker serves its
probes and metrics and no API route."""

from __future__ import annotations

import threading
import time

import pytest
from litestar.testing import TestClient

from infra.worker import build_worker
from infra.workers import Workers
from services.background import Loop
from tests.api.rest import new_service
from tests.apps import settings_of

LOOPS = (
    "sweeper",
    "tournament-clerk",
    "tournament-results",
    "lobby-sweeper",
    "webhook-outbox",
    "read-models",
)
"""Every loop of a worker process whose settings turn them all on."""


def test_a_worker_runs_every_loop_and_serves_its_probes_and_metrics_only() -> None:
    service = new_service()
    settings = settings_of(sweep_interval_ms=20, webhook_interval_ms=20)
    before = set(threading.enumerate())
    with TestClient(build_worker(settings, service=service)) as worker:
        ours = set(threading.enumerate()) - before
        names = {t.name for t in ours}
        assert set(LOOPS) <= names and {"bot-driver-0", "bot-driver-1"} <= names
        assert worker.get("/healthz").json() == {"status": "ok"}
        assert worker.get("/readyz").json() == {"status": "ready"}
        metrics = worker.get("/metrics")
        assert metrics.status_code == 200 and "shengji_bot_steps_total" in metrics.text
        for path in ("/v1/matches", "/v1/players", "/schema", "/schema/openapi.json"):
            assert worker.get(path).status_code == 404, path  # no API app, no document
        assert worker.post("/v1/matches", json={}).status_code in (404, 405)
    assert not [t.name for t in ours if t.is_alive()]  # every loop and decider stopped
    assert not service.saves.stored  # neither the sweeper nor the bot driver hears saves
    service.close()


def test_a_stop_waits_for_the_step_in_progress_and_wakes_a_sleeping_loop() -> None:
    """A loop asleep for its hour is woken by the stop; a loop mid-step finishes the step
    (its ``halt`` asked it to end soon) and runs no other."""
    steps: list[str] = []
    halted = threading.Event()
    stepping = threading.Event()

    def slow() -> None:
        stepping.set()
        halted.wait(5)
        steps.append("slow")

    workers = Workers(
        [
            Loop("sleepy", lambda: steps.append("sleepy"), 3600.0),
            Loop("slow", slow, 3600.0, halt=halted.set),
        ]
    )
    workers.start()
    assert stepping.wait(5)
    started = time.monotonic()
    workers.stop()
    assert time.monotonic() - started < 5  # neither waited for its period
    assert steps.count("sleepy") == 1 and steps.count("slow") == 1
    assert not {"sleepy", "slow"} & {t.name for t in threading.enumerate()}


def test_a_doorbell_runs_the_step_at_once_and_a_failing_step_runs_again(
    caplog: pytest.LogCaptureFixture,
) -> None:
    runs: list[int] = []
    again = threading.Event()

    def failing_first() -> None:
        runs.append(len(runs))
        if len(runs) == 1:
            raise RuntimeError("a bug in the step")
        again.set()

    rung = Loop("rung", failing_first, 0.05)
    workers = Workers([rung])
    workers.start()
    try:
        assert again.wait(5)  # after the failure, the next period's step ran
        count = len(runs)
        sleeper = Loop("sleeper", lambda: runs.append(-1), 3600.0)
        other = Workers([sleeper])
        other.start()
        deadline = time.monotonic() + 5
        while runs.count(-1) < 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        sleeper.doorbell.ring()
        while runs.count(-1) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert runs.count(-1) == 2  # rung: at once, not in an hour
        other.stop()
    finally:
        workers.stop()
    assert count >= 2
    assert "background work rung failed" in caplog.text

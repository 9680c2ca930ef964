"""The runner of a process's background work (``infra.workers``, docs/decisions.md D-rooms)
and the worker's own server (``infra.worker``): every loop runs on a thread of its own,
is woken by its doorbell, survives a failing step, and stops cleanly — its step in
progress ends, nothing is left running, nobody hears saves any more; a worker serves its
probes and metrics and no API route."""

from __future__ import annotations

import logging
import threading
import time

import pytest
from litestar.testing import TestClient

from infra.worker import build_worker
from infra.workers import Workers
from services.background import BACKOFF_CAP_S, Loop, backoff
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
    app = build_worker(settings, service=service)
    paces = {loop.name: loop.pace_s for loop in app.state.workers.loops}
    assert set(LOOPS) <= set(paces)  # the read models' pass paced (docs/decisions.md D-pace)
    assert paces == {name: 0.05 if name == "read-models" else 0.0 for name in paces}
    with TestClient(app) as worker:
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
    # every loop and decider stopped with the app; the test client's own thread pool
    # (anyio's worker threads, told to end as its event loop closed) may still be ending
    assert not [t.name for t in ours if t.is_alive() and not t.name.startswith("AnyIO")]
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


# -- a step that keeps failing (docs/decisions.md D-migrate) ------------------------------------


class FakeTime:
    """The runner's pause on a clock of the test's own: a wait moves the clock and returns
    at once; once ``span`` seconds have passed the runner is told to stop."""

    def __init__(self, span: float) -> None:
        self.now = 0.0
        self.span = span
        self.waits: list[float] = []
        self.over = threading.Event()

    def pause(self, seconds: float) -> bool:
        self.waits.append(seconds)
        self.now += seconds
        if self.now >= self.span:
            self.over.set()
            return True
        return False


@pytest.mark.parametrize(
    ("period", "failures", "wait"),
    [
        (0.5, 1, 0.5),  # the first retry after the usual period
        (0.5, 2, 1.0),
        (0.5, 3, 2.0),
        (0.5, 6, 16.0),
        (0.5, 7, BACKOFF_CAP_S),  # 32 s, capped
        (0.5, 10_000, BACKOFF_CAP_S),
        (0.02, 12, BACKOFF_CAP_S),  # 40.96 s, capped
        (60.0, 1, 60.0),  # a period beyond the cap stays the period
        (60.0, 5, 60.0),
    ],
)
def test_backoff_doubles_from_the_period_up_to_the_cap(
    period: float, failures: int, wait: float
) -> None:
    assert backoff(period, failures) == wait


def test_a_step_that_always_fails_is_logged_on_a_capped_exponential_backoff(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The webhook outbox without its tables, for 16 minutes of the runner's clock (no
    wall time passes): tried after 0.5, 1, 2 … 16 s, then every 30 s — 37 tries and 37
    lines, one traceback — where a try every period wrote 1,920 tracebacks."""
    clock = FakeTime(16 * 60.0)
    tries: list[float] = []

    def step() -> None:
        tries.append(clock.now)
        raise RuntimeError('relation "webhookoutbox_events" does not exist')

    workers = Workers([Loop("webhook-outbox", step, 0.5)], pause=clock.pause)
    with caplog.at_level(logging.INFO, logger="infra.workers"):
        workers.start()
        assert clock.over.wait(10)
        workers.stop()
    schedule = [0.5, 1.0, 2.0, 4.0, 8.0, 16.0] + [BACKOFF_CAP_S] * 31
    assert clock.waits == schedule
    assert sum(schedule[:-1]) < clock.span <= sum(schedule)
    assert tries == [sum(schedule[:n]) for n in range(len(schedule))]
    lines = [r for r in caplog.records if r.name == "infra.workers"]
    assert len(lines) == len(tries) == 37
    assert all("background work webhook-outbox failed" in r.getMessage() for r in lines)
    assert [bool(r.exc_info) for r in lines] == [True] + [False] * 36


def test_a_new_failure_shows_its_traceback_and_a_success_resets_the_backoff(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = FakeTime(3600.0)
    script = ["a", "a", "b", "ok", "a"]
    loop = Loop("flaky", lambda: None, 0.5)

    def step() -> None:
        outcome = script.pop(0)
        if outcome == "ok":
            loop.doorbell.ring()  # the next step at once: no period of wall time
            return
        if not script:
            clock.span = clock.now  # the last one: the runner stops after it
        raise RuntimeError(outcome)

    workers = Workers([Loop("flaky", step, 0.5, doorbell=loop.doorbell)], pause=clock.pause)
    with caplog.at_level(logging.INFO, logger="infra.workers"):
        workers.start()
        assert clock.over.wait(10)
        workers.stop()
    assert clock.waits == [0.5, 1.0, 2.0, 0.5]  # after the success, the period again
    lines = [r for r in caplog.records if r.name == "infra.workers"]
    assert [(r.levelname, bool(r.exc_info)) for r in lines] == [
        ("ERROR", True),
        ("ERROR", False),  # the same failure again: one line
        ("ERROR", True),  # another failure: its traceback
        ("WARNING", False),  # it runs again
        ("ERROR", True),
    ]
    assert "runs again after 3 failures" in lines[3].getMessage()


# -- a paced loop (docs/decisions.md D-pace) ----------------------------------------------------


def test_a_paced_loop_rung_within_its_pace_waits_for_it_and_rung_after_it_runs_at_once() -> None:
    """Rung while its pace since the last step's start has not passed, the step waits the
    rest of it (the rings meanwhile one step); rung after it, at once — no wait."""
    clock = FakeTime(3600.0)
    steps: list[str] = []
    done = threading.Event()
    loop = Loop("paced", lambda: None, 3600.0)

    def step() -> None:
        steps.append("step")
        if len(steps) < 4:
            loop.doorbell.ring()  # a save heard during the step: rung within the pace
            loop.doorbell.ring()  # rings pile up into one
        else:
            done.set()

    paced = Loop("paced", step, 3600.0, doorbell=loop.doorbell, pace_s=60.0)
    workers = Workers([paced], pause=clock.pause)
    workers.start()
    assert done.wait(10)
    workers.stop()
    assert steps == ["step"] * 4  # one step per ring's pile, not one per ring
    assert len(clock.waits) == 3 and all(59.0 < w <= 60.0 for w in clock.waits)

    clock = FakeTime(3600.0)
    steps.clear()
    done.clear()

    def slow_step() -> None:
        steps.append("step")
        if len(steps) == 1:
            time.sleep(0.05)  # longer than the pace: the ring after it runs at once
            loop.doorbell.ring()
        else:
            done.set()

    workers = Workers(
        [Loop("paced", slow_step, 3600.0, doorbell=loop.doorbell, pace_s=0.01)],
        pause=clock.pause,
    )
    workers.start()
    assert done.wait(10)
    workers.stop()
    assert steps == ["step", "step"] and clock.waits == []

"""``make bench-ceiling`` (``python -m bench.pgstore_bench --ceiling``): the saves it times are
a play command's, its timed function is the service's locking insert function (saves under it
never overlap), its model is the M/G/1 formula it states, and a tiny run ends with its
machine-readable line. Figures are the bench's own, never asserted."""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Iterator

import pytest

from bench._pgstore_ceiling import Store, model_rate, model_wait_p99, store
from bench.pgstore_bench import main
from tests.resilience.harness import drop_schema, fresh_schema

LAST_LINE = re.compile(
    r"pgstore-ceiling writers=1,2 saves_per_s=\d+,\d+ ratio_to_1=1\.00,[\d.]+ "
    r"hold_ms_p50=[\d.]+,[\d.]+ hold_ms_p99=[\d.]+,[\d.]+ wait_ms_p99=[\d.]+,[\d.]+ "
    r"lock_busy=[\d.]+,[\d.]+ nolock_saves_per_s=\d+,\d+ flush_ms=[\d.]+ "
    r"model_saves_per_s=\d+ model_wait_p99_ms=150 load=[\d.]+-[\d.]+"
)


def p99_wait(holds: list[float], rate: float) -> float:
    """The model's p99 wait (ms) at ``rate`` saves/s: S(1+c²)/(2(1-ρ)) · ln(100ρ)."""
    s = sum(holds) / len(holds)
    c2 = sum((h - s) ** 2 for h in holds) / len(holds) / s**2
    rho = rate * s / 1000
    return s * (1 + c2) / (2 * (1 - rho)) * math.log(100 * rho)


@pytest.mark.parametrize(
    ("holds", "budget"),
    [
        ([1.0], 150.0),  # M/D/1: every save holds the lock 1 ms
        ([0.5, 1.5], 150.0),
        ([0.2, 0.2, 0.2, 5.0], 150.0),  # a slow flush now and then
        ([2.0, 4.0], 20.0),
    ],
)
def test_the_model_rate_puts_the_p99_wait_at_the_budget(holds: list[float], budget: float) -> None:
    rate = model_rate(holds, budget)
    assert 0 < rate < 1000 / (sum(holds) / len(holds))  # below the lock's 1/S
    assert p99_wait(holds, rate) == pytest.approx(budget, rel=1e-6)


@pytest.mark.parametrize("rho", [0.5, 0.9, 0.95])
def test_with_exponential_holds_the_model_is_the_m_m_1_queue(rho: float) -> None:
    # holds 0 and 2 ms: mean 1, variance 1, c² = 1 as an exponential's; M/M/1's wait has
    # P(wait > t) = ρ·exp(-t(1-ρ)/S) exactly, so its p99 is S·ln(100ρ)/(1-ρ)
    assert model_wait_p99([0.0, 2.0], rho) == pytest.approx(math.log(100 * rho) / (1 - rho))


def test_a_longer_hold_lowers_the_ceiling() -> None:
    assert model_rate([2.0], 150.0) < model_rate([1.0], 150.0)
    assert model_rate([0.5, 1.5], 150.0) < model_rate([1.0], 150.0)  # the same mean, spread


@pytest.fixture
def ceiling_store(pg_url: str) -> Iterator[Store]:
    schema = fresh_schema(pg_url)
    try:
        with store(pg_url, schema, 3, seed=7) as bench:
            yield bench
    finally:
        drop_schema(pg_url, schema)


@pytest.mark.postgres
def test_the_timed_saves_are_a_play_command_under_the_service_lock(
    ceiling_store: Store,
) -> None:
    shape = ceiling_store.shape
    assert shape.round_topic == "domain.game.round_events:CardPlayed"
    assert shape.record_topic == "services.idempotency:IdempotencyRecord.Recorded"
    assert "LOCK TABLE" in ceiling_store.functions[True]
    assert "LOCK TABLE" not in ceiling_store.functions[False]
    done = ceiling_store.run(2, lock=True, seconds=0.3)
    assert len(done.saves) > 1
    ordered = sorted(done.saves, key=lambda s: s.locked)
    for here, after in itertools.pairwise(ordered):
        assert here.entered <= here.locked <= here.inserted <= here.answered
        assert here.inserted <= after.locked  # the lock: one save at a time, to its commit
    assert all(h >= 0 for h in done.holds())


@pytest.mark.postgres
def test_a_tiny_ceiling_run_prints_its_table_and_its_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    main(["--ceiling", "--writers", "1,2", "--seconds", "0.4"])
    lines = capsys.readouterr().out.strip().splitlines()
    assert LAST_LINE.fullmatch(lines[-1]), lines[-1]
    assert any(line.startswith("| 2 | ") for line in lines)
    assert "fsync, synchronous_commit, full_page_writes on" in lines[0]

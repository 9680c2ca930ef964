"""Scale-out and faults with real processes on loopback (docs/deploy.md), kept short: two
``python -m infra.serve`` replicas on one PostgreSQL (``pg_url``, a fresh schema), bot
tables played through the API by a client that sends every command with its own
Idempotency-Key and retries on another replica. ``make bench-resilience`` runs the same
scenarios (:mod:`tests.resilience.scenarios`) longer.

The PostgreSQL restart runs on a throwaway cluster of its own (never ``$DATABASE_URL``'s
server), stopped and started again on the same port.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from infra.pgcluster import throwaway_server
from tests.resilience.scenarios import (
    Stack,
    cross_replica,
    kill_run,
    outage_run,
    race_run,
)
from tests.resilience.zygote import Zygote

pytestmark = pytest.mark.postgres


@pytest.fixture(scope="module")
def runner() -> Iterator[asyncio.Runner]:
    with asyncio.Runner() as runner:
        yield runner


@pytest.fixture(scope="module")
def stack(runner: asyncio.Runner, pg_url: str, zygote: Zygote) -> Iterator[Stack]:
    started = runner.run(Stack.start(pg_url, 2, zygote=zygote))
    try:
        yield started
    finally:
        runner.run(started.close())


def test_a_command_through_one_replica_reaches_the_others(
    runner: asyncio.Runner, stack: Stack
) -> None:
    (table,) = runner.run(stack.tables(1, seed=100))
    seen = runner.run(cross_replica(stack, table))
    assert seen.polls == [seen.version] * len(stack.replicas)  # polls through any replica
    assert seen.delivered_ms < 5000


def test_kill_9_loses_and_duplicates_no_acknowledged_command(
    runner: asyncio.Runner, stack: Stack
) -> None:
    tables = runner.run(stack.tables(6, seed=200))
    run = runner.run(kill_run(stack, tables, seconds=14, every_s=2, replays=4, kills_wanted=2))
    verdict = run.verdict
    assert run.kills >= 2
    assert min(run.commands_per_table) >= 5, run.commands_per_table  # every table moved on
    assert (verdict.lost, verdict.duplicated, verdict.version_gaps) == (0, 0, 0)
    assert verdict.replay_mismatches == []  # R34: each match replays to what views show
    assert run.replays_checked > 0 and run.replays_wrong == 0  # same key → original answer
    assert stack.client.stats.unexpected == []
    assert [r for t in tables for r in t.refused] == []


def test_of_two_conflicting_commands_exactly_one_wins(runner: asyncio.Runner, stack: Stack) -> None:
    tables = runner.run(stack.tables(4, seed=300))
    run = runner.run(race_run(stack, tables, races_per_table=12))
    assert run.races == 48
    assert run.double_wins == 0
    assert set(run.losers) <= {409, 412} and sum(run.losers.values()) == run.races
    assert run.refused == []
    verdict = run.verdict
    assert (verdict.lost, verdict.duplicated, verdict.version_gaps) == (0, 0, 0)
    assert verdict.replay_mismatches == []


def test_a_postgres_restart_answers_503_then_recovers_by_itself(
    runner: asyncio.Runner, zygote: Zygote
) -> None:
    with throwaway_server() as cluster:
        stack = runner.run(Stack.start(cluster.url, 2, seed=1, zygote=zygote))
        try:
            tables = runner.run(stack.tables(4, seed=400))
            run = runner.run(outage_run(stack, cluster, tables, warm_s=2, down_s=3, after_s=4))
        finally:
            runner.run(stack.close())
    # Shorter than the library's retry of a failed load or save (ten tries, each waiting up
    # to POSTGRES_CONNECT_TIMEOUT): the commands wait it out, none is answered 503
    # (docs/decisions.md D-pgstore; the 503 itself: tests/api/test_metrics.py).
    assert run.unavailable == 0
    assert run.readyz_down == 503
    assert run.unexpected == []
    assert run.recovered_s < 30, run.recovered_s  # no restart of the replicas
    assert run.after.polls == [run.after.version] * 2
    assert min(run.hub_connections) >= 2  # each LISTEN hub reconnected by itself
    verdict = run.verdict
    assert (verdict.lost, verdict.duplicated, verdict.version_gaps) == (0, 0, 0)
    assert verdict.replay_mismatches == []

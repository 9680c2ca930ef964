"""A match's owner serves its loads from the aggregate cache (docs/decisions.md D-owner), and
nothing is lost or doubled when its writes do not all reach it: two API processes
(``PROCESS_ROLE=api``, ``AGGREGATE_CACHE_FASTFORWARD=false``) and a worker on one
PostgreSQL. The client sends each request to either API process at random — the worst
placement, no ingress hash — tables of four people, and tables of one person and three
bots the worker moves (turn timeouts from the worker: test_process_roles.py). An API
process is killed with SIGKILL now and then, preferably with a command in flight, and the
client sends that command again, with the same Idempotency-Key, to the other one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from uuid import UUID

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.resilience.checks import history, store_service
from tests.resilience.client import BotTable, PersonAndBots
from tests.resilience.harness import TLS, Worker
from tests.resilience.scenarios import Stack, kill_run, race_run
from tests.resilience.zygote import Zygote

pytestmark = pytest.mark.postgres

SHARED = {
    "SWEEP_INTERVAL_MS": "100",
    "WEBHOOK_INTERVAL_MS": "0",
    "AGGREGATE_CACHE_FASTFORWARD": "false",
}


@pytest.fixture(scope="module")
def runner() -> Iterator[asyncio.Runner]:
    with asyncio.Runner() as runner:
        yield runner


def counter(base: str, name: str) -> float:
    text = httpx.get(base + "/metrics", timeout=5, verify=TLS).text
    return sum(
        sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name == name
    )


def history_types(url: str, schema: str, table: BotTable) -> list[str]:
    service = store_service(url, schema)
    try:
        return [i.type for i in history(service, UUID(table.match_id))]
    finally:
        service.close()


def test_commands_on_two_api_processes_and_a_worker_are_each_saved_once(
    runner: asyncio.Runner, pg_url: str, zygote: Zygote
) -> None:
    stack = runner.run(Stack.start(pg_url, 2, seed=5, zygote=zygote, PROCESS_ROLE="api", **SHARED))
    worker = Worker(
        pg_url, stack.schema, stack.log_dir, PROCESS_ROLE="worker", **SHARED
    ).forked_from(zygote)
    try:
        worker.start()
        runner.run(worker.ready())
        people = runner.run(stack.tables(2, seed=500))
        mixed: list[BotTable] = [
            runner.run(PersonAndBots.create(stack.client, 600 + i)) for i in range(2)
        ]
        tables = [*people, *mixed]
        run = runner.run(kill_run(stack, tables, seconds=5, every_s=2.5, replays=3))
        # then pairs of one seat's commands at one If-Match version, sent at once to the
        # two processes: the loser loaded the version the winner replaced
        raced = runner.run(race_run(stack, people, races_per_table=5))
        retries = sum(counter(r.base, "shengji_stale_retries_total") for r in stack.replicas)
        retries += counter(worker.base, "shengji_stale_retries_total")
        heard = sum(counter(r.base, "shengji_cache_heard_total") for r in stack.replicas)
        types = [history_types(pg_url, stack.schema, t) for t in mixed]
    finally:
        worker.stop()
        runner.run(stack.close())
    assert run.kills >= 1  # (a replica restarting is not killed again: a loaded machine)
    assert min(run.commands_per_table) >= 3, run.commands_per_table  # every table moved on
    bots = sum(t.count("CardPlayed") for t in types) - sum(
        1 for t in mixed for a in t.acks if a.action == "play"
    )
    assert bots > 0  # the worker's bots played at the people's tables
    verdict = run.verdict
    # each acknowledged command saved once, at a version in the log; every aggregate's
    # versions contiguous; each match replays to what both processes' views show (R34)
    assert (verdict.lost, verdict.duplicated, verdict.version_gaps) == (0, 0, 0)
    assert verdict.replay_mismatches == []
    assert run.replays_checked > 0 and run.replays_wrong == 0  # same key → the first answer
    assert stack.client.stats.unexpected == []
    assert [r for t in people for r in t.refused] == []
    assert raced.double_wins == 0 and raced.refused == []
    assert set(raced.losers) <= {409, 412} and sum(raced.losers.values()) == raced.races
    assert (raced.verdict.lost, raced.verdict.duplicated, raced.verdict.version_gaps) == (0, 0, 0)
    # the other process's saves reached each cache through the hub; a save lost on a
    # copy the other process had replaced was decided again once on fresh copies, and
    # answered the 409 of the race it lost (counted since the last kill: a killed process
    # starts its count again)
    assert heard > 0, heard
    assert retries >= raced.losers.get(409, 0) > 0, (retries, raced.losers)

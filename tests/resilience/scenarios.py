"""The four fault scenarios (docs/deploy.md), shared by the short test module and the longer
bench (``bench/resilience_bench.py``): the same code, other sizes.

1. :func:`cross_replica` — a command through one replica reaches an SSE subscriber of
   another; polls through every replica see it.
2. :func:`kill_run` — replicas are killed with SIGKILL (and started again) while bot
   tables play through the API with Idempotency-Keys, retrying on another replica.
3. :func:`outage_run` — the PostgreSQL cluster stops and starts again during play:
   commands wait for it within the library's retry, or answer 503 ``store-unavailable``
   with ``Retry-After`` past it; ``/readyz`` 503 meanwhile; recovery with no restart.
4. :func:`race_run` — pairs of conflicting commands at the same If-Match version.
"""

from __future__ import annotations

import asyncio
import random
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from prometheus_client.parser import text_string_to_metric_families

from infra.pgcluster import Cluster
from tests.resilience.checks import Json, Verdict, verify
from tests.resilience.client import BotTable, Client, play
from tests.resilience.harness import TLS, Replica, drop_schema, fresh_schema
from tests.resilience.zygote import Zygote


@dataclass
class Stack:
    url: str
    schema: str
    replicas: list[Replica]
    client: Client
    log_dir: Path

    @classmethod
    async def start(
        cls, url: str, n: int, *, seed: int = 0, zygote: Zygote | None = None, **env: str
    ) -> Stack:
        """``n`` replicas on a fresh schema of ``url``'s database (the first creates the
        tables, the others start once it is ready), forked from ``zygote`` if given."""
        schema = fresh_schema(url)
        log_dir = Path(tempfile.mkdtemp(prefix="shengji-resilience-"))
        replicas = [Replica(url, schema, log_dir, **env).forked_from(zygote) for _ in range(n)]
        replicas[0].start()
        await replicas[0].ready()
        for replica in replicas[1:]:
            replica.start()
        for replica in replicas[1:]:
            await replica.ready()
        client = Client([r.base for r in replicas], seed=seed)
        return cls(url, schema, replicas, client, log_dir)

    async def close(self) -> None:
        await self.client.close()
        for replica in self.replicas:
            replica.stop()
        drop_schema(self.url, self.schema)
        shutil.rmtree(self.log_dir, ignore_errors=True)

    async def tables(self, n: int, seed: int = 0) -> list[BotTable]:
        return list(
            await asyncio.gather(*(BotTable.create(self.client, seed + i) for i in range(n)))
        )

    async def views(self, tables: list[BotTable]) -> list[list[Json]]:
        """Each table's public view through every replica."""
        return [[await t.public(base=i) for i in range(len(self.replicas))] for t in tables]

    async def verify(self, tables: list[BotTable]) -> Verdict:
        views = await self.views(tables)
        return await asyncio.to_thread(verify, self.url, self.schema, tables, views)


# -- 1. across replicas ----------------------------------------------------------------------


@dataclass
class CrossReplica:
    delivered_ms: float
    """Command answered by replica A → frame with its version on replica B's stream."""
    polls: list[int]
    """The match version each replica's poll answered afterwards."""
    version: int


async def _frame_at_least(lines: Any, version: int) -> None:
    async for line in lines:
        if line.startswith("id: ") and int(line[4:]) >= version:
            return


async def cross_replica(stack: Stack, table: BotTable, timeout: float = 10.0) -> CrossReplica:
    """A's command reaches B's SSE subscriber (the PostgreSQL hub: LISTEN/NOTIFY)."""
    http = stack.client.http
    stream_url = stack.replicas[-1].base + table.url + "/stream"
    async with asyncio.timeout(timeout), http.stream("GET", stream_url) as r:
        assert r.status_code == 200, await r.aread()
        lines = r.aiter_lines()
        await _frame_at_least(lines, 0)  # the current view first
        _, seat, options = await table.moves()
        answer = await table.command(seat, *options[0], base=0)
        assert answer.status_code == 200, answer.text
        version = answer.json()["version"]
        sent = time.monotonic()
        await _frame_at_least(lines, version)
        delivered_ms = (time.monotonic() - sent) * 1000
    polls = [(await table.public(base=i))["version"] for i in range(len(stack.replicas))]
    return CrossReplica(delivered_ms, polls, version)


# -- 2. kill -9 ----------------------------------------------------------------------------


@dataclass
class KillRun:
    kills: int
    verdict: Verdict
    replays_checked: int
    replays_wrong: int
    commands_per_table: list[int] = field(default_factory=list)


async def kill_run(
    stack: Stack,
    tables: list[BotTable],
    *,
    seconds: float,
    every_s: float,
    replays: int = 5,
    kills_wanted: int = 1,
) -> KillRun:
    """Kill a random replica every ``every_s`` and start it again at once; a replica is
    killed only while another one is up and ready, and preferably 0–40 ms after a
    command was sent to it (so some kills land between its commit and its answer). The
    play goes on past ``seconds`` until ``kills_wanted`` kills were made (a loaded machine
    restarts a replica slowly), for four times ``seconds`` at most."""
    rng = random.Random(7)
    until = time.monotonic() + seconds
    hard = time.monotonic() + 4 * seconds
    done = asyncio.Event()
    kills = 0
    up = set(range(len(stack.replicas)))
    restarts: list[asyncio.Task[None]] = []

    async def restart(i: int) -> None:
        stack.replicas[i].start()
        await stack.replicas[i].ready()
        up.add(i)

    async def killer() -> None:
        nonlocal kills
        while (time.monotonic() + every_s < until or kills < kills_wanted) and (
            time.monotonic() + every_s < hard
        ):
            await asyncio.sleep(every_s * rng.uniform(0.7, 1.3))
            if len(up) < 2:
                continue
            victim = rng.choice(sorted(up))
            for _ in range(500):  # aim at a command in flight (its commit may be done)
                if stack.client.posting[victim]:
                    await asyncio.sleep(rng.uniform(0, 0.04))
                    break
                await asyncio.sleep(0.002)
            up.discard(victim)
            stack.replicas[victim].kill()
            kills += 1
            restarts.append(asyncio.create_task(restart(victim)))
        done.set()

    await asyncio.gather(play(tables, hard, stop=done), killer())
    await asyncio.gather(*restarts)
    checked = wrong = 0
    for table in tables:
        for ack in rng.sample(table.acks, min(replays, len(table.acks))):
            checked += 1
            wrong += not await table.replays_match(ack)
    verdict = await stack.verify(tables)
    return KillRun(kills, verdict, checked, wrong, [len(t.acks) for t in tables])


# -- 3. PostgreSQL restarts ----------------------------------------------------------------


@dataclass
class OutageRun:
    unavailable: int
    """503 answers the clients got (each with the problem type and Retry-After)."""
    readyz_down: int
    """``/readyz`` status while the cluster was down."""
    recovered_s: float
    """From the cluster back up to the last table's first acknowledged command."""
    verdict: Verdict
    after: CrossReplica
    unexpected: list[str]
    hub_connections: list[float] = field(default_factory=list)
    """Each replica's ``shengji_live_hub_connections_total`` afterwards (a reconnect: ≥ 2)."""


async def outage_run(
    stack: Stack,
    cluster: Cluster,
    tables: list[BotTable],
    *,
    warm_s: float,
    down_s: float,
    after_s: float,
) -> OutageRun:
    """The tables play throughout; after ``warm_s`` the cluster stops (immediate: every
    connection cut) for ``down_s`` and starts again on the same port; play goes on for
    ``after_s``. Nothing restarts the replicas."""
    until = time.monotonic() + warm_s + down_s + after_s
    up_at = float("inf")
    readyz = 0

    async def outage() -> None:
        nonlocal up_at, readyz
        await asyncio.sleep(warm_s)
        await asyncio.to_thread(cluster.stop)
        await asyncio.sleep(down_s / 2)
        async with httpx.AsyncClient(timeout=10, verify=TLS) as http:
            readyz = (await http.get(stack.replicas[0].base + "/readyz")).status_code
        await asyncio.sleep(down_s / 2)
        await asyncio.to_thread(cluster.start)
        up_at = time.monotonic()

    await asyncio.gather(play(tables, until), outage())
    firsts = [next((a.at for a in t.acks if a.at >= up_at), None) for t in tables]
    recovered = (
        max(f for f in firsts if f is not None) - up_at
        if all(f is not None for f in firsts)
        else float("inf")
    )
    after = await cross_replica(stack, tables[0])  # the hubs LISTEN again
    stats = stack.client.stats
    return OutageRun(
        stats.unavailable,
        readyz,
        recovered,
        await stack.verify(tables),
        after,
        stats.unexpected,
        [await hub_connections(r) for r in stack.replicas],
    )


async def hub_connections(replica: Replica, *, wait_s: float = 30.0) -> float:
    """A replica's ``shengji_live_hub_connections_total`` once its hub has connected again
    (≥ 2), or as it is after ``wait_s``: the hub reconnects by itself after its backoff,
    which a loaded machine may leave behind the replicas' first answers."""
    deadline = time.monotonic() + wait_s
    while True:
        found = await metric(replica, "shengji_live_hub_connections_total")
        if found >= 2 or time.monotonic() >= deadline:
            return found
        await asyncio.sleep(0.2)


async def metric(replica: Replica, name: str) -> float:
    """A replica's unlabelled metric from ``/metrics`` (NaN when absent)."""
    async with httpx.AsyncClient(timeout=10, verify=TLS) as http:
        text = (await http.get(replica.base + "/metrics")).text
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name and not sample.labels:
                return float(sample.value)
    return float("nan")


# -- 4. races --------------------------------------------------------------------------------


@dataclass
class RaceRun:
    races: int
    double_wins: int
    losers: dict[int, int]
    """Status of each race's loser: 409 (lost at the store) or 412 (stale If-Match)."""
    verdict: Verdict
    refused: list[str]


async def race_run(stack: Stack, tables: list[BotTable], *, races_per_table: int) -> RaceRun:
    async def run(table: BotTable) -> None:
        for _ in range(races_per_table):
            if not await table.race():
                await asyncio.sleep(0.05)

    await asyncio.gather(*(run(t) for t in tables))
    losers: dict[int, int] = {}
    for table in tables:
        for status, n in table.race_losers.items():
            losers[status] = losers.get(status, 0) + n
    return RaceRun(
        sum(t.races for t in tables),
        sum(t.double_wins for t in tables),
        losers,
        await stack.verify(tables),
        [r for t in tables for r in t.refused],
    )

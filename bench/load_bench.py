"""Load and scale figures: ``make bench-load`` / ``python -m bench.load_bench``.

Two parts, on a throwaway PostgreSQL cluster of its own (:func:`infra.pgcluster.
throwaway_server`: ``fsync`` and ``synchronous_commit`` off, so the figures are an upper
bound of what a durable server gives):

(a) **Concurrent matches on one process.** One ``python -m infra.serve`` replica; for
    each ``--matches`` level, that many bot tables play at once through the API for
    ``--seconds`` (asyncio + httpx in this process: each move reads the public view and
    the seat's view, then POSTs the command with an Idempotency-Key), and each match
    has one spectator on its live stream (SSE). Measured: commands/s, command latency
    p50/p99 (the POST, sent → answered), and SSE delivery p99: the command's answer
    received → the first frame with an id ≥ its version on that match's stream (both
    clocks in this process; a frame that arrives before the answer counts 0).
(b) **The event store's global write lock.** ``infra.pgstore``'s insert function takes
    ``LOCK TABLE … IN EXCLUSIVE MODE`` so notification ids follow commit order (the SSE
    hub relies on it): every save in the database is serialised. ``--writers`` threads,
    each with its own connection pool, insert batches of 2 events (a command's usual
    save) for ``--lock-seconds``; inserts/s by writer count, for the locking function
    and for the library's own function without the lock (order not kept), as a ceiling.

Everything shares the machine's cores (server, PostgreSQL, this load generator and
whatever else runs), so the figures are indicative. The last line is machine-readable::

    load-bench matches=<max level> cmd_p50_ms=<f> cmd_p99_ms=<f> sse_p99_ms=<f> \
        lock_saves_per_s=<max> nolock_saves_per_s=<max>
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import shutil
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from uuid import uuid4

import httpx
from eventsourcing.persistence import StoredEvent

from infra.pgcluster import throwaway_server
from infra.settings import Settings
from infra.store import build_service, persistence_env
from services.game import GameService
from tests.resilience.client import BotTable, Client
from tests.resilience.harness import Replica, drop_schema, fresh_schema


class TimedTable(BotTable):
    """A bot table that times its commands and follows its match's live stream."""

    def __init__(self, table: BotTable) -> None:
        super().__init__(table.client, table.match_id, table.tokens, seed=0)
        self.rng = table.rng
        self.latencies: list[float] = []
        self.answered: list[tuple[int, float]] = []
        self.frames: list[tuple[int, float]] = []

    async def command(self, seat: int, action: str, cards: list[str], **kw: Any) -> httpx.Response:
        sent = time.monotonic()
        r = await super().command(seat, action, cards, **kw)
        answered = time.monotonic()
        if r.status_code == 200:
            self.latencies.append(answered - sent)
            self.answered.append((r.json()["version"], answered))
        return r

    async def follow(self, base: str, stop: asyncio.Event) -> None:
        async with self.client.http.stream("GET", base + self.url + "/stream") as r:
            async for line in r.aiter_lines():
                if line.startswith("id: "):
                    self.frames.append((int(line[4:]), time.monotonic()))
                if stop.is_set():
                    return

    def deliveries(self) -> list[float]:
        out = []
        for version, answered in self.answered:
            arrival = next((t for v, t in self.frames if v >= version), None)
            if arrival is not None:
                out.append(max(0.0, arrival - answered))
        return out


@dataclass
class Level:
    matches: int
    commands: int = 0
    seconds: float = 0.0
    latencies: list[float] = field(default_factory=list)
    deliveries: list[float] = field(default_factory=list)
    undelivered: int = 0


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


async def load_level(replica: Replica, matches: int, seconds: float) -> Level:
    client = Client([replica.base], deadline_s=120)
    try:
        tables = [
            TimedTable(t)
            for t in await asyncio.gather(*(BotTable.create(client, i) for i in range(matches)))
        ]
        stop = asyncio.Event()
        followers = [asyncio.create_task(t.follow(replica.base, stop)) for t in tables]
        await asyncio.sleep(1.0)  # streams open, first frames in
        started = time.monotonic()
        until = started + seconds

        async def run(table: TimedTable) -> None:
            while time.monotonic() < until:
                if not await table.step():
                    await asyncio.sleep(0.05)

        await asyncio.gather(*(run(t) for t in tables))
        elapsed = time.monotonic() - started
        await asyncio.sleep(1.0)  # the last frames
        stop.set()
        for task in followers:
            task.cancel()
        await asyncio.gather(*followers, return_exceptions=True)
        level = Level(matches, seconds=elapsed)
        for t in tables:
            level.commands += len(t.latencies)
            level.latencies += t.latencies
            delivered = t.deliveries()
            level.deliveries += delivered
            level.undelivered += len(t.answered) - len(delivered)
        return level
    finally:
        await client.close()


def _service(url: str, schema: str, locking: bool) -> GameService:
    settings = Settings(
        backend="postgres",
        database_url=url,
        postgres_schema=schema,
        postgres_pool_size=1,
        postgres_max_overflow=0,
    )
    if locking:
        return build_service(settings)
    env = persistence_env(settings)
    env.pop("APPLICATION_RECORDER_TOPIC")
    env["POSTGRES_ENABLE_DB_FUNCTIONS"] = "y"  # the library's stored function: no table lock
    return GameService(env)


def insert_rate(url: str, locking: bool, writers: int, seconds: float) -> float:
    """Saves/s of ``writers`` threads inserting 2-event batches (own pools each)."""
    schema = fresh_schema(url)
    services = [_service(url, schema, locking) for _ in range(writers)]
    try:
        counts = [0] * writers
        start = threading.Barrier(writers + 1)
        until = [0.0]

        def write(i: int) -> None:
            recorder = services[i].recorder
            start.wait()
            while time.monotonic() < until[0]:
                oid = uuid4()
                batch = [StoredEvent(oid, v, "bench:Event", b"x" * 200) for v in (1, 2)]
                recorder.insert_events(batch)
                counts[i] += 1

        threads = [threading.Thread(target=write, args=(i,)) for i in range(writers)]
        for t in threads:
            t.start()
        until[0] = time.monotonic() + seconds
        start.wait()
        for t in threads:
            t.join()
        return sum(counts) / seconds
    finally:
        for s in services:
            s.close()
        drop_schema(url, schema)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--matches", default="10,40,100", help="concurrent matches, by level")
    parser.add_argument("--seconds", type=float, default=15)
    parser.add_argument("--writers", default="1,2,4,8,16")
    parser.add_argument("--lock-seconds", type=float, default=3)
    args = parser.parse_args(argv)
    levels = [int(n) for n in args.matches.split(",")]
    writer_counts = [int(n) for n in args.writers.split(",")]
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()}", flush=True)
    results: list[Level] = []
    rates: dict[tuple[bool, int], float] = {}
    with throwaway_server() as cluster:
        schema = fresh_schema(cluster.url)
        log_dir = Path(tempfile.mkdtemp(prefix="shengji-load-"))
        replica = Replica(
            cluster.url, schema, log_dir, POSTGRES_POOL_SIZE="5", POSTGRES_MAX_OVERFLOW="10"
        )
        replica.start()
        try:
            asyncio.run(replica.ready())
            for matches in levels:
                cpu0 = resource.getrusage(resource.RUSAGE_SELF)
                level = asyncio.run(load_level(replica, matches, args.seconds))
                cpu1 = resource.getrusage(resource.RUSAGE_SELF)
                client_cpu = cpu1.ru_utime + cpu1.ru_stime - cpu0.ru_utime - cpu0.ru_stime
                results.append(level)
                print(
                    f"matches={matches:4d} commands/s={level.commands / level.seconds:7.1f} "
                    f"cmd_p50={pct(level.latencies, 0.5):6.1f}ms "
                    f"cmd_p99={pct(level.latencies, 0.99):7.1f}ms "
                    f"sse_p50={pct(level.deliveries, 0.5):6.1f}ms "
                    f"sse_p99={pct(level.deliveries, 0.99):7.1f}ms "
                    f"undelivered={level.undelivered} "
                    f"client_cpu={client_cpu / level.seconds:.2f} cores",
                    flush=True,
                )
        finally:
            replica.stop()
            drop_schema(cluster.url, schema)
            shutil.rmtree(log_dir, ignore_errors=True)
        for locking in (True, False):
            for writers in writer_counts:
                rate = insert_rate(cluster.url, locking, writers, args.lock_seconds)
                rates[(locking, writers)] = rate
                name = "locking insert (infra.pgstore)" if locking else "library, no lock"
                print(f"{name:32s} writers={writers:3d} saves/s={rate:8.0f}", flush=True)
    top = results[-1]
    print(
        f"load-bench matches={top.matches} cmd_p50_ms={pct(top.latencies, 0.5):.1f} "
        f"cmd_p99_ms={pct(top.latencies, 0.99):.1f} sse_p99_ms={pct(top.deliveries, 0.99):.1f} "
        f"lock_saves_per_s={max(v for (k, _), v in rates.items() if k):.0f} "
        f"nolock_saves_per_s={max(v for (k, _), v in rates.items() if not k):.0f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

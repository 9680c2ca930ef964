"""Capacity benchmark: ``make bench-capacity`` / ``python -m bench.capacity_bench``.

How many matches one server process serves at once with snappy answers, under the load
people make. A throwaway PostgreSQL cluster (:func:`infra.pgcluster.throwaway_server`)
is made durable as production is (``fsync``, ``synchronous_commit`` and
``full_page_writes`` on, checked before the run); one API process (``python -m infra.serve``
with ``PROCESS_ROLE=api``, :class:`tests.resilience.harness.Replica`: rate limit off, streams
live an hour, the production pool of 5 + 10 connections and ``LOG_LEVEL=INFO``) serves it,
``--replicas N`` of them with the clients spread over them (a match's commands and streams
on different processes), and one worker process (``shengji worker``) beside them runs the
background work (docs/scaling.md). This process is
the load generator: one asyncio loop (uvloop when installed), raw HTTP/1.1
(:mod:`bench._http`, :mod:`bench._capacity_stream`).

Each match in play has four seat clients and a spectator, each with its own live stream
(:mod:`bench._capacity_match`): a seat acts when its view offers it a move, after a think
time drawn uniformly from ``--think`` (1–3 s), choosing among the view's legal moves
(declare, overcall, pass, bury, play). New matches start as others end (``--match-end``,
the standard rules by default: matches do not end in a run), so N stay in play.

First ``hello``: ``GET /healthz`` (the bare route) in a closed loop for
``--hello-seconds``, its server CPU per request. Then for each N of ``--ladder`` (rising):
matches are added to N over ``--ramp`` seconds, ``--warmup`` seconds pass, ``--seconds``
are measured, then the seats stop acting and the frames still owed get ``--grace``
seconds. Per N:

* commands/s — ``200`` answers read in the measured window, per second;
* command latency p50/p99 — a command sent → its answer read (every answer in the window);
* push latency p50/p99 — a ``200`` answer's version ``v`` read → the first frame with an
  id ``>= v`` on each of the match's other four streams (three seats and the spectator;
  0 when the frame came first; a stream may give one frame for several versions);
* lost — versions answered in the step (ramp and drain included) that some other stream
  of the match never delivered a frame at or beyond (within ``--grace`` after the seats
  stopped, or before the match ended or one of its streams broke);
* the slowest 1% of the window's commands — how many 100 ms slots they were sent in (a
  pause or a burst holds many up together; queueing spreads them) and their actions;
* the API processes' CPU per command, fan-out included (``/proc/<pid>/stat``: all their
  threads, the window's CPU over its commands), the worker's and PostgreSQL's likewise
  (the postmaster and its backends), the generator's own CPU and the machine's.

``N`` passes when ``cmd_p99_ms <= 150``, ``push_p99_ms <= 300`` and nothing is lost. The
last line is machine-readable::

    capacity matches=<largest N passing, else 0> cmd_p99_ms=<at that N> \\
        push_p99_ms=<at that N> server_cpu_ms_per_cmd=<at that N> \\
        worker_cpu_ms_per_cmd=<at that N> pg_cpu_ms_per_cmd=<at that N> \\
        hello_cpu_ms=<API CPU per GET /healthz> \\
        cmd_cost_x=<server_cpu_ms_per_cmd / hello_cpu_ms> lost=<total over the ladder>

(one line, ``capacity-replicas`` with ``--replicas`` above 1; "at that N" is the smallest N
tried when none passes). Targets: ``cmd_cost_x <= 20`` (a command with its fan-out costs at
most twenty bare requests) with ``lost=0``, and ``matches >= 300``. Everything shares the
machine's cores, so each N's line says how busy the generator and the machine were; a
generator near a full core is what limits.

``--spy DIR`` samples the first API process with py-spy during each N's measured window
(:mod:`bench._capacity_spy`: the thread holding the GIL, the server unchanged and not
paused) and prints its shares by part and by function; ``--spy-worker DIR`` does the same
for the worker process (its parts: the hub, the read models' pass, the sweeper …);
``--profile`` is cProfile inside the server instead (every call timed: slower, and what it
times is distorted by that).
``--zygote`` starts the API and worker processes as forks of one process that has
imported them (:mod:`tests.resilience.zygote`): ~0.3 CPU-s a start instead of ~2 (the
tests' tiny runs, tests/integration/test_capacity_bench.py). Each is still a process of its
own, on its own settings, measured as before; the figures of a run to keep are taken
without it (a fork starts with the zygote's heap frozen and its pages shared).
``--pg-statements N`` loads ``pg_stat_statements`` in the cluster
(:mod:`bench._capacity_pgstat`) and prints, after each N's measured window, PostgreSQL's
execution and planning time and calls per command, the top N statements, and the
connections opened in the window (docs/decisions.md D-pgcost). Every N's report counts
the API processes' write system calls per command (``syscw`` of ``/proc/<pid>/io``: the
sockets' writes — answers' heads and bodies, the streams' frames — and the few of its
PostgreSQL connections; docs/decisions.md D-fan).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import os
import random
import signal
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
import psycopg

from bench import _capacity_pgstat as pgstat
from bench._capacity_cpu import Sample, Usage
from bench._capacity_crowd import Crowd
from bench._capacity_match import BenchError, Step
from bench._capacity_spy import WORKER_AREAS
from bench._capacity_spy import start as start_spy
from bench._capacity_spy import summary as spy_summary
from bench._http import HttpError, build_request, connect
from bench.api_bench import print_gc, print_profile, raise_nofile
from bench.load_bench import pct
from infra.pgcluster import Cluster, throwaway_server
from tests.resilience.harness import ROOT, Replica, Worker, drop_schema, fresh_schema
from tests.resilience.zygote import Zygote

HOST = "127.0.0.1"
CMD_P99_MS = 150.0
PUSH_P99_MS = 300.0
DURABLE = ("fsync", "synchronous_commit", "full_page_writes")


# -- the durable cluster -------------------------------------------------------------------------


def _setting(conn: psycopg.Connection[tuple[object, ...]], name: str) -> str:
    row = conn.execute(f"SHOW {name}").fetchone()
    return "" if row is None else str(row[0])


def make_durable(url: str, timeout: float = 10.0) -> None:
    """Turn the throwaway cluster's speed settings back to production's (durable
    commits), and check that new sessions see them."""
    with psycopg.connect(url, autocommit=True) as conn:
        for name in DURABLE:
            conn.execute(f"ALTER SYSTEM SET {name} = on")
        conn.execute("SELECT pg_reload_conf()")
    deadline = time.monotonic() + timeout
    while True:
        with psycopg.connect(url, autocommit=True) as conn:
            values = {n: _setting(conn, n) for n in DURABLE}
        if all(v == "on" for v in values.values()):
            return
        if time.monotonic() > deadline:
            raise BenchError(f"PostgreSQL did not take the durable settings: {values}")
        time.sleep(0.1)


# -- the bare route ---------------------------------------------------------------------------


async def hello(port: int, conns: int, seconds: float, server_pid: int, cluster: Cluster) -> float:
    """``GET /healthz`` on ``conns`` connections in a closed loop; server CPU ms each."""
    raw = build_request("GET", "/healthz", host=f"{HOST}:{port}")
    connections = [await connect(HOST, port) for _ in range(conns)]
    count = 0
    stop = False

    async def loop(i: int) -> None:
        nonlocal count
        while not stop:
            r = await connections[i].request(raw)
            if r.status != 200:
                raise BenchError(f"GET /healthz: {r.status}")
            count += 1

    tasks = [asyncio.create_task(loop(i)) for i in range(conns)]
    await asyncio.sleep(0.5)  # warm-up
    a, n0 = Sample.take((server_pid,), None, cluster), count
    await asyncio.sleep(seconds)
    b, n1 = Sample.take((server_pid,), None, cluster), count
    stop = True
    await asyncio.gather(*tasks)
    for c in connections:
        c.close()
    use = Usage.between(a, b)
    done = max(1, n1 - n0)
    print(
        f"hello (GET /healthz, {conns} connections, closed loop): {done / use.seconds:,.0f} "
        f"requests/s; server {1000 * use.server * use.seconds / done:.3f} ms CPU each "
        f"({100 * use.server:.0f}% of a core); generator {100 * use.generator:.0f}% of a "
        f"core; machine {100 * use.machine:.0f}% busy",
        flush=True,
    )
    return 1000 * use.server * use.seconds / done


# -- the ladder -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Rung:
    """One N's figures (times in ms)."""

    step: Step
    use: Usage

    @property
    def matches(self) -> int:
        return self.step.matches

    @property
    def rate(self) -> float:
        return self.step.commands / self.use.seconds

    def cmd(self, q: float) -> float:
        return pct(self.step.latencies, q)

    def push(self, q: float) -> float:
        return pct(self.step.pushes, q)

    @property
    def server_ms(self) -> float:
        return 1000 * self.use.server * self.use.seconds / max(1, self.step.commands)

    @property
    def worker_ms(self) -> float:
        return 1000 * self.use.worker * self.use.seconds / max(1, self.step.commands)

    @property
    def postgres_ms(self) -> float:
        return 1000 * self.use.postgres * self.use.seconds / max(1, self.step.commands)

    @property
    def others(self) -> float:
        """Cores used by processes other than the server, PostgreSQL and the generator."""
        u = self.use
        used = u.server + u.worker + u.postgres + u.generator
        return max(0.0, u.machine * (os.cpu_count() or 1) - used)

    @property
    def passed(self) -> bool:
        return (
            self.step.commands > 0
            and self.cmd(0.99) <= CMD_P99_MS
            and self.push(0.99) <= PUSH_P99_MS
            and self.step.lost == 0
        )

    def report(self) -> str:
        s, u = self.step, self.use
        refused = sum(n for k, n in s.answers.items() if not k.endswith(" 200"))
        lines = [
            f"matches={s.matches}: {self.rate:.1f} commands/s ({s.commands} in "
            f"{u.seconds:.0f} s, {refused} refused) cmd_p50={self.cmd(0.5):.1f}ms "
            f"cmd_p99={self.cmd(0.99):.1f}ms push_p50={self.push(0.5):.1f}ms "
            f"push_p99={self.push(0.99):.1f}ms lost={s.lost} "
            f"{'PASS' if self.passed else 'FAIL'}",
            f"    CPU: API {100 * u.server:.0f}% of a core, {self.server_ms:.2f} ms per "
            f"command; worker {100 * u.worker:.0f}%, {self.worker_ms:.2f} ms per command; "
            f"PostgreSQL {100 * u.postgres:.0f}%, {self.postgres_ms:.2f} ms per "
            f"command; generator {100 * u.generator:.0f}% of a core"
            f"{' (SATURATED: it may be what limits)' if u.generator > 0.85 else ''}; "
            f"other processes {100 * self.others:.0f}%; machine {100 * u.machine:.0f}% busy "
            f"({os.cpu_count()} cores)",
            f"    {len(s.pushes)} pushes timed, {s.acked} versions answered in the step, "
            f"seat connections opened while measuring {s.opened}, reopened after a failed "
            f"request {s.retries}; the API's write system calls "
            f"{u.writes / max(1, s.commands):.2f} per command; answers: "
            + ", ".join(f"{k}: {n}" for k, n in sorted(s.answers.items())),
        ]
        lines.append(self.tail())
        if s.broken:
            lines.append(f"    {len(s.broken)} problems, e.g. {s.broken[:3]}")
        return "\n".join(lines)

    def tail(self, slot_s: float = 0.1) -> str:
        """The slowest 1% of the window's commands: how many of the window's ``slot_s``
        slots they were sent in (bunched: a pause or a burst held them up together; spread:
        each was slow on its own), and their actions against all commands'."""
        s = self.step
        if not s.latencies:
            return "    slowest 1%: no commands"
        ranked = sorted(range(len(s.latencies)), key=s.latencies.__getitem__)
        slow = ranked[-max(1, len(ranked) // 100) :]
        start = min(t for t, _ in s.sent)
        slots = Counter(int((s.sent[i][0] - start) / slot_s) for i in slow)
        top = slots.most_common(5)
        busiest = sum(n for _, n in top)
        at = ", ".join(f"{k * slot_s:.1f}" for k, _ in sorted(top))
        span = int((max(t for t, _ in s.sent) - start) / slot_s) + 1
        actions = Counter(s.sent[i][1] for i in slow)
        every = Counter(a for _, a in s.sent)
        mix = ", ".join(
            f"{a} {n} ({100 * n / len(slow):.0f}% against {100 * every[a] / len(s.sent):.0f}%)"
            for a, n in actions.most_common()
        )
        return (
            f"    slowest 1% ({len(slow)}, from {1000 * s.latencies[slow[0]]:.0f} ms): sent in "
            f"{len(slots)} of {span} slots of {1000 * slot_s:.0f} ms, "
            f"{100 * busiest / len(slow):.0f}% in the busiest 5 (at {at} s); by action: {mix}"
        )


async def ramp(crowd: Crowd, target: int, seconds: float) -> None:
    """Add matches until ``target`` are in play, spread over ``seconds``."""
    missing = target - len(crowd.matches)
    for _ in range(max(0, missing)):
        crowd.spawn()
        await asyncio.sleep(seconds / missing)


async def run(
    args: argparse.Namespace, replicas: list[Replica], worker: Replica, cluster: Cluster
) -> str:
    task = asyncio.current_task()
    assert task is not None
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, task.cancel)
    for process in (*replicas, worker):  # one at a time: the first creates the tables
        process.start()
        await process.ready()
    pids = [r.proc.pid for r in replicas if r.proc is not None]
    assert worker.proc is not None and len(pids) == len(replicas)
    loop_kind = type(asyncio.get_running_loop()).__module__
    print(
        f"API: {len(replicas)} x python -m infra.serve (PROCESS_ROLE=api), pids {pids}, "
        f"ports {[r.port for r in replicas]}; worker: shengji worker, pid {worker.proc.pid}; "
        f"PostgreSQL {cluster.url} with {', '.join(DURABLE)} on; generator: pid "
        f"{os.getpid()}, {loop_kind}; think {args.think[0]:g}-{args.think[1]:g} s; "
        f"{os.cpu_count()} cores",
        flush=True,
    )
    first = replicas[0]
    hello_ms = await hello(first.port, args.hello_conns, args.hello_seconds, pids[0], cluster)
    rules = {"rules": {"matchEnd": args.match_end}} if args.match_end else {}
    crowd = Crowd(
        HOST,
        tuple(r.port for r in replicas),
        think=args.think,
        grace=args.grace,
        rng=random.Random(args.seed),
        create_body=msgspec.json.encode({"name": "capacity", **rules}),
    )
    rungs: list[Rung] = []
    try:
        for n in args.ladder:
            step = crowd.step = Step(n)
            crowd.resume()
            await ramp(crowd, n, args.ramp)
            await asyncio.sleep(args.warmup)
            sessions = 0
            if args.pg_statements:
                sessions = await asyncio.to_thread(pgstat.reset, cluster.url)
            a = Sample.take(pids, worker.proc.pid, cluster)
            step.measuring = True
            spy = spy_worker = None
            if args.spy is not None:
                spy = start_spy(pids[0], args.seconds, args.spy / f"spy-{n}.txt")
            if args.spy_worker is not None:
                spy_worker = start_spy(
                    worker.proc.pid, args.seconds, args.spy_worker / f"spy-worker-{n}.txt"
                )
            await asyncio.sleep(args.seconds)
            step.measuring = False
            b = Sample.take(pids, worker.proc.pid, cluster)
            crowd.pause()
            await crowd.drain(args.grace)
            rungs.append(Rung(step, Usage.between(a, b)))
            print(rungs[-1].report(), flush=True)
            if args.pg_statements:
                top = await asyncio.to_thread(
                    pgstat.top, cluster.url, args.pg_statements, step.commands, sessions
                )
                print(top, flush=True)
            if spy is not None and args.spy is not None:
                await asyncio.to_thread(spy.wait)
                print(spy_summary(args.spy / f"spy-{n}.txt"), flush=True)
            if spy_worker is not None and args.spy_worker is not None:
                await asyncio.to_thread(spy_worker.wait)
                out = args.spy_worker / f"spy-worker-{n}.txt"
                print(spy_summary(out, parts=WORKER_AREAS), flush=True)
            for process in (*replicas, worker):
                if process.proc is None or process.proc.poll() is not None:
                    raise BenchError(f"a server process exited: {process.tail()}")
    finally:
        await crowd.close()
    print(
        f"matches started {crowd.started}, ended {crowd.finished}, failed {len(crowd.failures)}"
        + (f" (e.g. {crowd.failures[0]})" if crowd.failures else "")
    )
    passing = [r for r in rungs if r.passed]
    best = max(passing, key=lambda r: r.matches) if passing else min(rungs, key=lambda r: r.matches)
    lost = sum(r.step.lost for r in rungs)
    name = "capacity" if len(replicas) == 1 else "capacity-replicas"
    return (
        f"{name} matches={best.matches if passing else 0} cmd_p99_ms={best.cmd(0.99):.1f} "
        f"push_p99_ms={best.push(0.99):.1f} server_cpu_ms_per_cmd={best.server_ms:.2f} "
        f"worker_cpu_ms_per_cmd={best.worker_ms:.2f} pg_cpu_ms_per_cmd={best.postgres_ms:.2f} "
        f"hello_cpu_ms={hello_ms:.3f} cmd_cost_x={best.server_ms / hello_ms:.1f} lost={lost}"
    )


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python -m bench.capacity_bench", description=__doc__.split("\n")[0]
    )
    p.add_argument("--ladder", default="100,200,300", help="matches in play, rising [100,200,300]")
    p.add_argument("--seconds", type=float, default=45.0, help="measured seconds per N [45]")
    p.add_argument("--ramp", type=float, default=10.0, help="seconds to add matches [10]")
    p.add_argument("--warmup", type=float, default=10.0, help="seconds before measuring [10]")
    p.add_argument("--grace", type=float, default=5.0, help="seconds for frames owed [5]")
    p.add_argument("--think", default="1,3", help="think time range, seconds [1,3]")
    p.add_argument("--match-end", default=None, help="rules matchEnd, e.g. rounds:1 [standard]")
    p.add_argument("--hello-seconds", type=float, default=5.0, help="hello measured [5]")
    p.add_argument("--hello-conns", type=int, default=8, help="hello connections [8]")
    p.add_argument("--log-level", default="INFO", help="the server's LOG_LEVEL [INFO]")
    p.add_argument("--seed", type=int, default=1, help="the players' random seed [1]")
    p.add_argument(
        "--replicas", type=int, default=1, help="API processes beside the one worker [1]"
    )
    p.add_argument(
        "--profile",
        type=Path,
        default=None,
        help="cProfile the first API process (all threads, CPU time) into this file, and "
        "print its top functions at the end",
    )
    p.add_argument(
        "--zygote",
        action="store_true",
        help="start the API and worker processes as forks of one process that has imported "
        "them (~0.3 CPU-s a start instead of ~2): a quick run's, not the figures'",
    )
    p.add_argument(
        "--gc-trace",
        type=Path,
        default=None,
        help="record the first API process's garbage collections into this file "
        "(bench._profiled_serve gc) and print them at the end",
    )
    p.add_argument(
        "--gc-census",
        default=None,
        metavar="S[,N]",
        help="with --gc-trace: a census of the first young generation of at least 50,000 "
        "objects (or N) S seconds after the API started (by shape and referrer, into FILE.census"
        ".json; it holds the server up for seconds: a run for counts, not times)",
    )
    p.add_argument(
        "--spy",
        type=Path,
        default=None,
        help="sample the first API process with py-spy during each N's measured window "
        "(raw stacks into this directory as spy-N.txt) and print the top functions by share",
    )
    p.add_argument(
        "--spy-worker",
        type=Path,
        default=None,
        help="sample the worker process likewise (raw stacks into this directory as "
        "spy-worker-N.txt) and print its top functions and its parts by share",
    )
    p.add_argument(
        "--pg-statements",
        type=int,
        default=0,
        metavar="N",
        help="load pg_stat_statements in the cluster and print the top N statements by "
        "execution time (calls and ms per command) after each N's measured window [0: off]",
    )
    args = p.parse_args(argv)
    for spies in (args.spy, args.spy_worker):
        if spies is not None:
            spies.mkdir(parents=True, exist_ok=True)
    try:
        args.ladder = sorted({int(n) for n in args.ladder.split(",") if n.strip()})
        low, high = (float(x) for x in args.think.split(","))
    except ValueError:
        p.error("--ladder: integers, --think: two numbers (low,high)")
    if not args.ladder or args.ladder[0] < 1 or not 0 <= low <= high or args.replicas < 1:
        p.error("--ladder needs N >= 1, --think 0 <= low <= high, --replicas >= 1")
    args.think = (low, high)
    return args


WINDOW_S = 40
"""The last seconds of a run's GC trace :func:`print_young` reads (the measured window and
a little before: the server stops soon after it)."""


STEADY_S = 5.0
"""A young collection this long after the one before is the steady state's: the count that
starts one stalls once the matches are all in play (docs/performance.md)."""


def print_young(path: Path) -> None:
    """The young generation's growth between young collections (objects a second) and its
    size at each, in the run's last half (the measured window); and the census, if any."""
    if not path.exists():
        return
    rows = [msgspec.json.decode(line) for line in path.read_bytes().splitlines() if line]
    young = [(r[0], r[5], r[3]) for r in rows if r[2] == 0]
    if young:
        end = young[-1][0]
        window = [y for y in young if y[0] >= end - WINDOW_S and y[1] >= 1000]
        pairs = [(t - s, n, cpu) for (s, _, _), (t, n, cpu) in itertools.pairwise(young)]
        pairs = [p for p in pairs[-len(window) :] if p[0] > 0] if window else []
        if pairs:
            rates = sorted(n / dt for dt, n, _ in pairs)
            sizes = sorted(n for _, n, _ in pairs)
            print(
                f"  young collections in the last {WINDOW_S} s: {len(pairs)}, "
                f"{1000 * sum(c for *_, c in pairs):.0f} ms of CPU, longest "
                f"{1000 * max(c for *_, c in pairs):.1f} ms; the young generation grew by a "
                f"median {rates[len(rates) // 2]:,.0f} objects/s (most {rates[-1]:,.0f}); "
                f"at collection a median {sizes[len(sizes) // 2]:,}, at most {sizes[-1]:,}"
            )
    steady = [
        (n / (t - s), t - s, n, cpu)
        for (s, _, _), (t, n, cpu) in itertools.pairwise(r for r in young if r[1] >= 5000)
        if t - s >= STEADY_S
    ]
    if steady:
        print(
            f"  young collections after a stall of {STEADY_S:.0f} s or more (the steady state): "
            f"{len(steady)}; the young generation grew by a median "
            f"{statistics.median(x[0] for x in steady):,.0f} objects/s over a median "
            f"{statistics.median(x[1] for x in steady):.1f} s, walked a median "
            f"{statistics.median(x[2] for x in steady):,.0f} in "
            f"{1000 * statistics.median(x[3] for x in steady):.0f} ms of CPU"
        )
    census = Path(f"{path}.census.json")
    if census.exists():
        c = msgspec.json.decode(census.read_bytes())
        print(
            f"  census of one young generation ({c['young']:,} objects; "
            f"generations {c['generations']}):"
        )
        for shape, n in c["shapes"][:30]:
            refs = ", ".join(f"{r} {m:,}" for r, m in c["referrers"].get(shape, [])[:3])
            print(f"    {n:>8,}  {shape}   <- {refs}")
        print("  tracked objects by kind (generations 0, 1, 2):")
        for kind, gens in c["kinds"].items():
            print(f"    {kind}: {gens}")


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    runner: Callable[[Coroutine[Any, Any, str]], str] = asyncio.run
    with contextlib.suppress(ImportError):
        import uvloop  # noqa: PLC0415 - optional: a cheaper generator

        runner = uvloop.run
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
    raise_nofile(12 * args.ladder[-1] + 1000)  # the server (a child) inherits it too
    extra = pgstat.SETTINGS if args.pg_statements else ()
    with (
        throwaway_server(settings=extra) as cluster,
        tempfile.TemporaryDirectory(prefix="capacity-") as tmp,
    ):
        make_durable(cluster.url)
        if args.pg_statements:
            pgstat.install(cluster.url)
        schema = fresh_schema(cluster.url)
        common = {
            "POSTGRES_POOL_SIZE": "5",
            "POSTGRES_MAX_OVERFLOW": "10",
            "LOG_LEVEL": args.log_level,
            "SSE_HEARTBEAT_S": "15",
            "SSE_LIFETIME_S": "3600",
            "SHUTDOWN_TIMEOUT": "3",
        }
        replicas = [
            Replica(cluster.url, schema, Path(tmp), PROCESS_ROLE="api", **common)
            for _ in range(args.replicas)
        ]
        if args.profile is not None:
            replicas[0].command = ("-m", "bench._profiled_serve", str(args.profile), "cpu")
        elif args.gc_trace is not None:
            census = () if args.gc_census is None else (f"census={args.gc_census}",)
            replicas[0].command = (
                "-m",
                "bench._profiled_serve",
                str(args.gc_trace),
                "gc",
                *census,
            )
        worker = Worker(cluster.url, schema, Path(tmp), PROCESS_ROLE="worker", **common)
        processes = [*replicas, worker]
        zygote = Zygote(ROOT, os.environ, Path(tmp) / "zygote.log") if args.zygote else None
        for process in processes:
            process.forked_from(zygote)
        try:
            line = runner(run(args, replicas, worker, cluster))
        except (BenchError, HttpError, OSError, TimeoutError) as e:
            tails = "\n".join(p.tail() for p in processes)
            sys.stderr.write(f"capacity-bench failed: {e!r}\n{tails}\n")
            raise SystemExit(1) from None
        except asyncio.CancelledError:
            sys.stderr.write("capacity-bench stopped (SIGTERM)\n")
            raise SystemExit(128 + signal.SIGTERM) from None
        finally:
            for process in processes:
                process.stop()
            if zygote is not None:
                zygote.close()
            drop_schema(cluster.url, schema)
    if args.profile is not None:
        print_profile(args.profile, 30)
    if args.gc_trace is not None:
        print_gc(args.gc_trace, None)
        print_young(args.gc_trace)
    print(line, flush=True)


if __name__ == "__main__":
    main()

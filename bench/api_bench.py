"""HTTP API benchmark: ``make bench-api`` / ``python -m bench.api_bench``.

Starts the real server (``python -m infra.serve``: uvicorn, the app of ``infra.bootstrap``) on a
free loopback port with the embedded SQLite store in a temporary folder (rate limiting
off: ``RATE_LIMIT_PER_MINUTE=0``; streams live an hour: ``SSE_LIFETIME_S=3600``; the deal
at once), waits for ``/readyz``, then measures in the same run:

(a) **hello** — ``GET /healthz``: a bare Litestar route answering ``{"status":"ok"}``
    (async, no store, no worker thread; the app's middleware and its JSON access line —
    ``--log-level`` INFO, as ``make serve`` — apply to it as to every route), in the same
    process: the yardstick the others are divided by.
(b) **poll304** — ``GET /v1/matches/{id}/view`` with a seat token and ``If-None-Match``
    of the current ETag → ``304 Not Modified``, over the 16 seats of 4 matches that stand
    still mid-round (``--poll-advance`` commands into their play).
(c) **play** — ``POST /v1/matches/{id}/actions/play`` on ``--matches`` matches at once,
    each with four claimed seats that the load generator plays as fast as the server
    answers: a single card led, a single of the led suit category followed (R22, R23),
    from the hands each seat's own command answers show (no extra read per move); the
    next deal's passes and bury go through the same endpoint (counted apart); a refused
    move makes the driver read the seat's view and play its legal hint. Only successful
    ``play`` commands count in ``play_rps``.
(d) **SSE fan-out** — ``--sse-subscribers`` spectators (default 2,000) stream one match
    (``GET …/stream``), then commands are sent one at a time; for each, the time until the
    LAST subscriber has received a frame whose ``id`` is at least the command's version.
    The clock starts at the command's own event timestamp, read back from the match
    history: the service's ``now`` when it began the command, a little before the commit,
    so the figure errs high. Times from the request sent and from the answer read are
    printed too.

(a), (b) and (c) are closed loops (each connection sends its next request when the last
is answered) measured in ``--slices`` slices taken in turn, a, b, c, a, b, c, …, so a
change in whatever else runs on the machine touches the three alike; the ratios by slice
are printed. The load generator is a raw asyncio HTTP/1.1 client (:mod:`bench._http`,
uvloop when installed) in this process; the server is one uvicorn process. They share the
machine's cores (with anything else running), so each figure comes with the CPU the
server, the client and other processes used: the client must not be what limits it.

``--profile`` runs the server under cProfile (all threads, :mod:`bench._profiled_serve`)
and prints its hottest functions at the end (figures measured so are slower; do not
compare them); ``--gc-trace`` records the server's garbage collections and prints how
much of each slow SSE delivery they took. The last line is machine-readable::

    api-bench hello_rps=<f> poll304_rps=<f> play_rps=<f> poll_ratio=<b/a> \
        sse_subscribers=<n> sse_p99_ms=<f>

(one line; broken here for width). Targets: poll_ratio >= 0.6, sse_p99_ms <= 250 with
>= 2,000 subscribers. ``play_rps`` is for information: the play target of D2a/D2b is
withdrawn (docs/decisions.md, D2c); ``make bench-capacity`` measures commands as users
send them.

The pieces: the server and CPU accounting (:mod:`bench._api_server`), a table of four seats
played over HTTP (:mod:`bench._api_table`), the closed-loop loads (:mod:`bench._api_load`)
and the SSE fan-out (:mod:`bench._api_sse`).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import os
import pstats
import resource
import signal
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import msgspec

from bench._api_load import Load, hello_load, play_load, poll_load, set_tables
from bench._api_server import HOST, BenchError, Server
from bench._api_sse import SseResult, bench_sse
from bench._api_table import Table, Tally
from bench._http import HttpError


def raise_nofile(wanted: int) -> int:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(hard, max(soft, wanted))
    if target > soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def print_profile(path: Path, top: int) -> None:
    if not path.exists():
        print(f"(no profile written at {path})")
        return
    for key in ("tottime", "cumulative"):
        out = io.StringIO()
        pstats.Stats(str(path), stream=out).sort_stats(key).print_stats(top)
        text = out.getvalue()
        start = text.find("   ncalls")
        print(f"\nserver profile, by {key} (all threads, whole run):")
        print(text[start:] if start >= 0 else text)


def print_gc(path: Path, sse: SseResult | None) -> None:
    """The server's collections, and the share they took of the slowest SSE deliveries."""
    if not path.exists():
        print(f"(no GC trace written at {path})")
        return
    runs = [msgspec.json.decode(line) for line in path.read_bytes().splitlines() if line]
    print("\nserver garbage collections (whole run):")
    for gen in (0, 1, 2):
        ms = [1000 * r[1] for r in runs if r[2] == gen]
        cpu = [1000 * r[3] for r in runs if r[2] == gen]
        if ms:
            young = max((r[5] for r in runs if r[2] == gen), default=-1)
            print(
                f"  generation {gen}: {len(ms)} collections, {sum(ms):.0f} ms in all "
                f"({sum(cpu):.0f} ms of CPU), longest {max(ms):.1f} ms "
                f"({max(cpu):.1f} ms of CPU)"
                + (f", at most {young:,} young objects walked" if young >= 0 else "")
            )
    if sse is None or not sse.deliveries:
        return

    def overlap(a: float, b: float) -> tuple[float, int]:
        spans = [(max(a, s), min(b, s + d)) for s, d, *_ in runs if s < b and s + d > a]
        return 1000 * sum(y - x for x, y in spans), sum(
            1 for s, _, g, *_ in runs if g == 2 and a < s < b
        )

    print("  the slowest SSE deliveries (commit → last subscriber) and the GC inside them:")
    slowest = sorted(sse.deliveries, key=lambda d: d.delivered - (d.committed or d.sent))
    for d in reversed(slowest[-5:]):
        start = d.committed or d.sent
        gc_ms, gen2 = overlap(start, d.delivered)
        print(
            f"    v{d.version}: {1000 * (d.delivered - start):.0f} ms, of it GC {gc_ms:.0f} ms "
            f"({gen2} full collections)"
        )
    total = sum(overlap(d.committed or d.sent, d.delivered)[0] for d in sse.deliveries)
    print(f"  GC inside all {len(sse.deliveries)} deliveries: {total:.0f} ms")


PHASES = ("hello", "poll", "play", "sse")


async def run(args: argparse.Namespace, workdir: Path) -> str:
    task = asyncio.current_task()
    assert task is not None
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, task.cancel)
    phases = set(args.phases)
    limit = raise_nofile(args.sse_subscribers + 1000)
    if "sse" in phases and limit < args.sse_subscribers + 100:
        raise BenchError(f"open files limit {limit} is too low for {args.sse_subscribers} streams")
    profile = workdir / "server.prof" if args.profile or args.gc_trace else None
    mode = "gc" if args.gc_trace else args.profile or "cpu"
    server = Server(workdir, log_level=args.log_level, profile=profile, clock=mode)
    tally = Tally()
    hello: Load | None = None
    poll: Load | None = None
    play: Load | None = None
    sse: SseResult | None = None
    try:
        t_start = time.perf_counter()
        await server.wait_ready()
        print(
            f"server: python -m infra.serve, pid {server.pid}, http://{HOST}:{server.port}, "
            f"SQLite {workdir / 'bench.sqlite3'}, LOG_LEVEL={args.log_level}, rate limit off, "
            "SSE lifetime 3600 s"
            f"{f', observed ({mode})' if profile else ''}; ready in "
            f"{time.perf_counter() - t_start:.1f} s",
            flush=True,
        )
        print(
            f"client: raw asyncio HTTP/1.1 ({type(asyncio.get_running_loop()).__module__}), "
            f"{args.conns} connections for hello/poll, {args.matches} matches for play; "
            f"{args.seconds:g} s each in {args.slices} interleaved slices (warm-up "
            f"{args.warmup:g} s, then {args.slice_warmup:g} s a slice); {os.cpu_count()} "
            "cores shared by the client, the server and anything else running",
            flush=True,
        )
        loads: list[Load] = []
        tables: list[Table] = []
        if "hello" in phases:
            hello = await hello_load(server, args, tally)
            loads.append(hello)
        if "poll" in phases:
            still = await set_tables(server, 4, tally, "poll", advance=args.poll_advance)
            tables += still
            poll = await poll_load(server, args, still, tally)
            loads.append(poll)
        if "play" in phases:
            players = await set_tables(server, args.matches, tally, "play")
            tables += players
            play = play_load(server, players)
            loads.append(play)
        before = Counter(tally.answers)
        commands0, plays0 = tally.commands, tally.plays
        per_slice = args.seconds / args.slices
        for i in range(args.slices):
            for load in loads:
                await load.run(args.warmup if i == 0 else args.slice_warmup, per_slice)
        if play is not None:
            during = tally.answers - before
            other = {k: v for k, v in sorted(during.items()) if k[0].startswith("act:")}
            play.note = (
                f"\n    all commands while playing, warm-ups included: "
                f"{tally.commands - commands0} done ({tally.plays - plays0} plays); answers "
                + ", ".join(f"{w[4:]} {s}: {n}" for (w, s), n in other.items())
            )
        for load in loads:
            print(load.report(), flush=True)
        if hello is not None and len(hello.slices) == args.slices:
            for other_load in (poll, play):
                if other_load is not None:
                    pairs = zip(other_load.slices, hello.slices, strict=True)
                    print(
                        f"  {other_load.name.split(' ')[0]} / hello by slice: "
                        + " ".join(f"{x / h:.3f}" for x, h in pairs if h)
                    )
        for t in tables:
            t.conn.close()
        if "sse" in phases:
            sse = await bench_sse(server, args, tally)
            print(sse.report(), flush=True)
            if args.sse_detail:
                for d in sse.deliveries:
                    c = d.committed or d.sent
                    print(
                        f"    v{d.version} {d.action}: commit→first "
                        f"{1000 * (d.first - c):.1f} ms, first→last "
                        f"{1000 * (d.delivered - d.first):.1f} ms"
                    )
        odd = tally.unexpected()
        if odd:
            print(f"  other answers: {odd}")
        print(f"run time {time.perf_counter() - t_start:.0f} s", flush=True)
    finally:
        server.stop()
        if server.proc.returncode not in (0, -signal.SIGTERM, None):
            print(f"server exit code {server.proc.returncode}; log tail:\n{server.log_tail()}")
    if profile is not None and args.gc_trace:
        print_gc(profile, sse)
    elif profile is not None:
        print_profile(profile, args.profile_top)

    nan = float("nan")
    a = hello.rps if hello else nan
    b = poll.rps if poll else nan
    c = play.rps if play else nan
    poll_ratio = b / a if a > 0 else nan
    subscribers = sse.subscribers if sse else 0
    p99 = sse.p99_ms if sse else nan
    targets = [
        ("poll_ratio >= 0.6", poll_ratio >= 0.6),
        ("sse_p99_ms <= 250", p99 <= 250),
        ("sse_subscribers >= 2000", subscribers >= 2000),
    ]
    print("targets: " + ", ".join(f"{name} {'met' if ok else 'MISSED'}" for name, ok in targets))
    return (
        f"api-bench hello_rps={a:.1f} poll304_rps={b:.1f} play_rps={c:.1f} "
        f"poll_ratio={poll_ratio:.3f} "
        f"sse_subscribers={subscribers} sse_p99_ms={p99:.1f}"
    )


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python -m bench.api_bench", description=__doc__.split("\n")[0]
    )
    p.add_argument("--seconds", type=float, default=10.0, help="measured seconds per rate [10]")
    p.add_argument("--slices", type=int, default=5, help="interleaved slices per rate [5]")
    p.add_argument("--warmup", type=float, default=1.5, help="first warm-up seconds [1.5]")
    p.add_argument("--slice-warmup", type=float, default=0.3, help="warm-up of later slices [0.3]")
    p.add_argument(
        "--poll-advance", type=int, default=40, help="commands played before polling [40]"
    )
    p.add_argument("--conns", type=int, default=32, help="connections for hello/poll [32]")
    p.add_argument("--matches", type=int, default=16, help="matches played at once [16]")
    p.add_argument("--sse-subscribers", type=int, default=2000, help="SSE subscribers [2000]")
    p.add_argument("--sse-commands", type=int, default=40, help="commands timed [40]")
    p.add_argument("--sse-timeout", type=float, default=10.0, help="seconds per delivery [10]")
    p.add_argument("--sse-gap", type=float, default=0.02, help="pause between commands [0.02]")
    p.add_argument("--sse-detail", action="store_true", help="print every SSE delivery")
    p.add_argument("--log-level", default="INFO", help="the server's LOG_LEVEL [INFO]")
    p.add_argument(
        "--profile",
        nargs="?",
        const="cpu",
        choices=["cpu", "wall"],
        help="cProfile the server (per-thread CPU time, or wall time) and print hot spots",
    )
    p.add_argument(
        "--phases",
        default="hello,poll,play,sse",
        help="comma-separated subset of hello,poll,play,sse (for profiling) [all]",
    )
    p.add_argument("--profile-top", type=int, default=30, help="functions printed [30]")
    p.add_argument("--gc-trace", action="store_true", help="trace the server's garbage collections")
    args = p.parse_args(argv)
    args.phases = [x.strip() for x in args.phases.split(",") if x.strip()]
    unknown = sorted(set(args.phases) - set(PHASES))
    if unknown or not args.phases:
        p.error(f"--phases: one or more of {','.join(PHASES)}, not {unknown or 'nothing'}")
    if args.profile and args.gc_trace:
        p.error("--profile and --gc-trace: one at a time")
    if min(args.sse_subscribers, args.matches, args.conns, args.slices) < 1:
        p.error("--sse-subscribers, --matches, --conns and --slices must be >= 1")
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    runner: Callable[[Coroutine[Any, Any, str]], str] = asyncio.run
    with contextlib.suppress(ImportError):
        import uvloop  # noqa: PLC0415 - optional: a cheaper client

        runner = uvloop.run
    with tempfile.TemporaryDirectory(prefix="api-bench-") as tmp:
        try:
            line = runner(run(args, Path(tmp)))
        except (BenchError, HttpError, OSError) as e:
            sys.stderr.write(f"api-bench failed: {e!r}\n")
            raise SystemExit(1) from None
        except asyncio.CancelledError:
            sys.stderr.write("api-bench stopped (SIGTERM); the server was stopped\n")
            raise SystemExit(128 + signal.SIGTERM) from None
    print(line, flush=True)


if __name__ == "__main__":
    main()

"""Sampling profiles of the capacity bench's first API process (``--spy DIR``) and of its
worker (``--spy-worker DIR``).

py-spy (a dev extra) samples the process from outside during each N's measured window:
the server runs unchanged and unslowed (``--nonblocking``: the process is not paused to
read its stacks), unlike cProfile, whose per-call overhead distorts what it measures.
Only the thread holding the GIL is sampled (``--gil``): one interpreter runs Python one
thread at a time, so the shares below are shares of the interpreter's busy time — what
binds an API process — and waits (a thread blocked on the database, an idle worker
thread) are left out.

The raw output (one line per distinct stack, ``frame;frame;… count``) is kept in ``DIR``;
:func:`summary` prints the functions that take the most, by their own time (the leaf of the
stack) and including what they call (each function counted once per stack), and the
process's parts (:data:`AREAS` for an API process, :data:`WORKER_AREAS` for the worker).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path


def start(pid: int, seconds: float, out: Path) -> subprocess.Popen[bytes] | None:
    """``py-spy record`` of ``pid`` for ``seconds`` into ``out`` (raw); None when py-spy is
    not installed."""
    beside = Path(sys.executable).with_name("py-spy")  # the virtualenv's, off PATH
    spy = str(beside) if beside.exists() else shutil.which("py-spy")
    if spy is None:
        print("(py-spy is not installed: no sampling profile)", flush=True)
        return None
    command = [spy, "record", "--pid", str(pid), "--duration", str(max(1, round(seconds)))]
    command += ["--rate", "100", "--format", "raw", "--nolineno", "--nonblocking", "--gil"]
    return subprocess.Popen(
        [*command, "--output", str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )


def _name(frame: str) -> str:
    """``function (path/module.py)`` → ``module.py:function``, the package path kept."""
    function, _, where = frame.partition(" (")
    return f"{where.rstrip(')')}:{function}" if where else function


AREAS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("worker-thread hand-offs (anyio)", ("run_sync_in_worker_thread",)),
    ("the access log line", ("edge.py:_log",)),
    ("command: the bus (key, load, rules, save, answer)", ("bus.py:Bus.handle",)),
    (
        "fan-out: a match's new versions applied, views and frames built",
        ("match_follower.py:advance", "match_follower.py:MatchFollower._catch_up"),
    ),
    (
        "streams opened (load, join, who watches)",
        ("LiveStreams.acquire", "MatchFollower.join", "LiveStreams.viewer", "load_followed"),
    ),
    ("streams: frames to the sockets", ("ASGIStreamingResponse._stream",)),
    ("the hub (LISTEN, new rows, decode)", ("hub.py:PostgresHub",)),
    ("HTTP: uvicorn, Litestar, middleware", ("run_asgi", "data_received", "connection_made")),
)
"""The parts of an API process's time, each named by the functions that mark it: a sample
goes to the first part one of whose functions is on its stack (the order above)."""


WORKER_AREAS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("the hub: new rows read, decoded, told the cache", ("hub.py:PostgresHub._read",)),
    ("the hub's change listeners (sweeper, bot driver, doorbells)", ("LocalHub._wake",)),
    ("read models: the pass over the log (lists, ratings, careers, friends)", ("Pass.",)),
    ("the sweeper's sweeps", ("sweeper.py:Sweeper.sweep",)),
    ("the bot driver", ("bot_driver.py:",)),
    ("the tournament clerk and results policy", ("tournaments/",)),
    ("the rating notices", ("notices.py:",)),
    ("the lobby sweeper", ("lobby_sweeper.py:",)),
    ("the webhook outbox", ("webhooks/delivery.py:",)),
    ("HTTP (probes, metrics)", ("run_asgi",)),
)
"""The parts of the worker's time, marked as :data:`AREAS` marks an API process's."""


def areas(
    path: Path, parts: tuple[tuple[str, tuple[str, ...]], ...] = AREAS
) -> list[tuple[str, float]]:
    """The shares of ``parts`` (and ``other``) in the raw profile at ``path``."""
    counts: Counter[str] = Counter()
    total = 0
    for line in path.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        frames = [_name(f) for f in stack.split(";")]
        total += int(count)
        area = next(
            (name for name, marks in parts if any(m in f for f in frames for m in marks)),
            "other (the event loop's own, asyncio, GC)",
        )
        counts[area] += int(count)
    return [(name, n / total) for name, n in counts.most_common()] if total else []


def summary(
    path: Path, top: int = 25, parts: tuple[tuple[str, tuple[str, ...]], ...] = AREAS
) -> str:
    """The ``top`` functions of the raw profile at ``path`` by their share of the samples,
    and the shares of ``parts``."""
    own: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    total = 0
    for line in path.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        n = int(count)
        frames = [_name(f) for f in stack.split(";")]
        total += n
        own[frames[-1]] += n
        for name in set(frames):
            inclusive[name] += n
    if not total:
        return f"(no samples in {path})"
    lines = [f"{path.name}: {total} samples", "  by part:"]
    lines += [f"    {100 * share:5.1f}%  {name}" for name, share in areas(path, parts)]
    for title, counts in (("own time", own), ("including callees", inclusive)):
        lines.append(f"  by {title}:")
        lines += [f"    {100 * n / total:5.1f}%  {name}" for name, n in counts.most_common(top)]
    return "\n".join(lines)

"""``make bench-capacity`` at a tiny scale (docs/scaling.md): the real command — a throwaway
durable PostgreSQL cluster, one API process (or two, ``--replicas 2``) and a worker, two
matches of four seat clients and a spectator for a few seconds with short think times — ends
with its machine-readable line and loses no frame. Only the shape and the losses are checked,
never a time (figures belong to the bench itself). The servers are forks of one process
that imported them (``--zygote``: ~0.3 CPU-s a start, not ~2; tests/resilience/zygote.py)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.postgres

ROOT = Path(__file__).resolve().parents[2]
LAST_LINE = re.compile(
    r"(capacity|capacity-replicas) matches=(\d+) cmd_p99_ms=([\d.]+) push_p99_ms=([\d.]+) "
    r"server_cpu_ms_per_cmd=([\d.]+) worker_cpu_ms_per_cmd=([\d.]+) "
    r"pg_cpu_ms_per_cmd=([\d.]+) hello_cpu_ms=([\d.]+) cmd_cost_x=([\d.]+) lost=(\d+)"
)
TINY = (
    "--ladder 2 --seconds 3 --ramp 0.5 --warmup 0.5 --grace 5 --think 0.02,0.1 "
    "--match-end rounds:1 --hello-seconds 0.5 --hello-conns 2 --zygote"
)


@pytest.mark.parametrize("replicas", [1, 2])
def test_a_tiny_capacity_run_prints_its_line_and_loses_nothing(replicas: int) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench.capacity_bench", *TINY.split(), f"--replicas={replicas}"],
        check=False,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr[-3000:] + done.stdout[-3000:]
    lines = done.stdout.strip().splitlines()
    last = LAST_LINE.fullmatch(lines[-1])
    assert last is not None, lines[-1]
    assert last.group(1) == ("capacity" if replicas == 1 else "capacity-replicas")
    assert last.group(10) == "0"  # lost: every answered version reached the other streams
    assert float(last.group(6)) > 0  # the worker process's CPU is measured
    (rung,) = [line for line in lines if line.startswith("matches=2:")]
    commands = int(re.search(r"\((\d+) in ", rung).group(1))  # type: ignore[union-attr]
    assert commands > 0, rung
    assert " lost=0 " in rung
    # the slowest 1% of the window's commands: when they were sent, and which actions
    assert re.search(r"slowest 1% \(\d+, from \d+ ms\): sent in \d+ of \d+ slots", done.stdout)
    assert "fsync, synchronous_commit, full_page_writes on" in done.stdout

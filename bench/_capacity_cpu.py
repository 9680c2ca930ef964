"""CPU accounting of the capacity bench (:mod:`bench.capacity_bench`): the API processes, the
worker,
the PostgreSQL cluster (the postmaster, its backends and those that have exited), this
load generator and the whole machine, read from ``/proc``."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bench._api_server import CLK_TCK, machine_ticks
from infra.pgcluster import Cluster


def _stat(pid: int | str) -> list[str]:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def process_cpu(pid: int, *, children: bool = False) -> float:
    """User + system CPU seconds of ``pid`` (all its threads); with ``children``, plus
    those of its children that have exited and were waited for."""
    try:
        fields = _stat(pid)
    except OSError:
        return 0.0
    ticks = int(fields[11]) + int(fields[12])
    if children:
        ticks += int(fields[13]) + int(fields[14])
    return ticks / CLK_TCK


def process_writes(pid: int) -> int:
    """Write system calls ``pid`` made so far (``syscw`` of ``/proc/<pid>/io``: ``write``,
    ``writev``; an event loop's socket writes are these), 0 when unreadable."""
    with contextlib.suppress(OSError, ValueError):
        for line in Path(f"/proc/{pid}/io").read_text().splitlines():
            if line.startswith("syscw:"):
                return int(line.split()[1])
    return 0


def postgres_cpu(cluster: Cluster) -> float:
    """CPU seconds of the cluster: the postmaster, its children, those gone."""
    try:
        postmaster = int((cluster.data / "postmaster.pid").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 0.0
    total = process_cpu(postmaster, children=True)
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                fields = _stat(entry.name)
                if int(fields[1]) == postmaster:
                    total += (int(fields[11]) + int(fields[12])) / CLK_TCK
    return total


@dataclass(frozen=True)
class Sample:
    """CPU counters at one moment."""

    wall: float
    server: float
    worker: float
    postgres: float
    generator: float
    busy: int
    ticks: int
    writes: int = 0
    """The API processes' write system calls so far (:func:`process_writes`)."""

    @classmethod
    def take(cls, server_pids: Sequence[int], worker_pid: int | None, cluster: Cluster) -> Sample:
        """``server_pids``: the API processes (their CPU summed); ``worker_pid``: the
        worker process, if any."""
        busy, ticks = machine_ticks()
        return cls(
            time.perf_counter(),
            sum(process_cpu(pid) for pid in server_pids),
            0.0 if worker_pid is None else process_cpu(worker_pid),
            postgres_cpu(cluster),
            time.process_time(),
            busy,
            ticks,
            sum(process_writes(pid) for pid in server_pids),
        )


@dataclass(frozen=True)
class Usage:
    """CPU between two samples: cores used (seconds per second) and the machine's share."""

    seconds: float
    server: float
    worker: float
    postgres: float
    generator: float
    machine: float
    writes: int = 0
    """The API processes' write system calls between the samples."""

    @classmethod
    def between(cls, a: Sample, b: Sample) -> Usage:
        wall = max(1e-9, b.wall - a.wall)
        return cls(
            wall,
            (b.server - a.server) / wall,
            (b.worker - a.worker) / wall,
            (b.postgres - a.postgres) / wall,
            (b.generator - a.generator) / wall,
            (b.busy - a.busy) / max(1, b.ticks - a.ticks),
            b.writes - a.writes,
        )

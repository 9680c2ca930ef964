"""The server under test of the API bench (:mod:`bench.api_bench`): ``python -m infra.serve``
in a subprocess on SQLite in a temporary folder, and the CPU it, this load generator and
the whole machine use (read from ``/proc``).
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from bench._http import HttpError, build_request, connect

HOST = "127.0.0.1"
ROOT = Path(__file__).resolve().parent.parent
CLK_TCK = os.sysconf("SC_CLK_TCK")
PR_SET_PDEATHSIG = 1


class BenchError(RuntimeError):
    """The bench cannot go on (the server failed, an answer was not what the API says)."""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        port: int = s.getsockname()[1]
        return port


def _die_with_parent() -> None:
    """In the child before exec: SIGTERM it if the bench dies first (Linux), so even a
    killed bench leaves no server behind."""
    with contextlib.suppress(Exception):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


class Server:
    """``python -m infra.serve`` in a subprocess, on SQLite in ``workdir``."""

    def __init__(
        self, workdir: Path, *, log_level: str, profile: Path | None, clock: str = "cpu"
    ) -> None:
        self.port = free_port()
        self.log_path = workdir / "server.log"
        self.profile = profile
        dropped = ("DATABASE_URL", "PERSISTENCE", "PYTHONUNBUFFERED")
        env = {k: v for k, v in os.environ.items() if k not in dropped}
        env.update(
            HOST=HOST,
            PORT=str(self.port),
            PERSISTENCE="sqlite",
            SQLITE_PATH=str(workdir / "bench.sqlite3"),
            LOG_LEVEL=log_level,
            RATE_LIMIT_PER_MINUTE="0",
            SSE_LIFETIME_S="3600",
            DEAL_INTERVAL_MS="0",
            WINDOW_MS="0",
            CREATE_TABLES="true",
            SHUTDOWN_TIMEOUT="3",
        )
        module = ["-m", "infra.serve"]
        if profile is not None:
            module = ["-m", "bench._profiled_serve", str(profile), clock]
        self._log = self.log_path.open("wb")
        self.proc = subprocess.Popen(
            [sys.executable, *module],
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_die_with_parent,  # noqa: PLW1509 - no other thread runs yet
        )

    @property
    def pid(self) -> int:
        return self.proc.pid

    def log_tail(self, lines: int = 30) -> str:
        try:
            text = self.log_path.read_text(errors="replace").splitlines()
        except OSError:
            return ""
        return "\n".join(text[-lines:])

    async def wait_ready(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        ready = build_request("GET", "/readyz", host=f"{HOST}:{self.port}")
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise BenchError(f"the server exited ({self.proc.returncode}):\n{self.log_tail()}")
            try:
                conn = await connect(HOST, self.port)
            except OSError:
                await asyncio.sleep(0.1)
                continue
            try:
                r = await asyncio.wait_for(conn.request(ready), 5)
            except (HttpError, TimeoutError):
                r = None
            finally:
                conn.close()
            if r is not None and r.status == 200:
                return
            await asyncio.sleep(0.1)
        raise BenchError(f"the server was not ready within {timeout:g} s:\n{self.log_tail()}")

    def cpu_seconds(self) -> float:
        """User + system CPU of the server process (all its threads) so far."""
        try:
            fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return 0.0
        return (int(fields[11]) + int(fields[12])) / CLK_TCK

    def stop(self) -> None:
        """SIGTERM (graceful), then SIGKILL after a while; always closes the log."""
        try:
            if self.proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    self.proc.send_signal(signal.SIGTERM)
                try:
                    self.proc.wait(timeout=15 if self.profile else 8)
                except subprocess.TimeoutExpired:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(self.proc.pid, signal.SIGKILL)
                    self.proc.wait(timeout=5)
        finally:
            self._log.close()


def machine_ticks() -> tuple[int, int]:
    """(busy, total) jiffies of all CPUs (/proc/stat)."""
    parts = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = parts[3] + (parts[4] if len(parts) > 4 else 0)
    total = sum(parts[:8])
    return total - idle, total


@dataclass
class CpuWindow:
    """CPU used between :meth:`start` and :meth:`stop` by this process, the server and
    the whole machine (windows can be summed with :meth:`add`)."""

    server: Server
    wall: float = 0.0
    client_s: float = 0.0
    server_s: float = 0.0
    busy_ticks: int = 0
    total_ticks: int = 0
    _t: tuple[float, float, float, int, int] = (0.0, 0.0, 0.0, 0, 0)

    def start(self) -> None:
        busy, total = machine_ticks()
        self._t = (time.perf_counter(), time.process_time(), self.server.cpu_seconds(), busy, total)

    def stop(self) -> None:
        busy, total = machine_ticks()
        t0, c0, s0, b0, n0 = self._t
        self.wall += time.perf_counter() - t0
        self.client_s += time.process_time() - c0
        self.server_s += self.server.cpu_seconds() - s0
        self.busy_ticks += busy - b0
        self.total_ticks += total - n0

    def add(self, other: CpuWindow) -> None:
        self.wall += other.wall
        self.client_s += other.client_s
        self.server_s += other.server_s
        self.busy_ticks += other.busy_ticks
        self.total_ticks += other.total_ticks

    def describe(self, requests: int, unit: str = "request") -> str:
        cores = os.cpu_count() or 1
        wall = max(self.wall, 1e-9)
        busy = self.busy_ticks / max(1, self.total_ticks)
        others = max(0.0, busy * cores - (self.client_s + self.server_s) / wall)
        per = ""
        if requests:
            per = (
                f"; per {unit}: server {1e6 * self.server_s / requests:.0f} µs, "
                f"client {1e6 * self.client_s / requests:.0f} µs"
            )
        return (
            f"CPU: server {100 * self.server_s / wall:.0f}% of a core, client "
            f"{100 * self.client_s / wall:.0f}%, other processes {100 * others:.0f}%; machine "
            f"{100 * busy:.0f}% busy ({cores} cores){per}"
        )

"""The app served for real: ``python -m infra.serve`` (uvicorn) on a free loopback port,
SQLite in a temporary folder, as ``make serve`` runs it — for the tests that drive it the
way a client outside the process does (the README walkthrough, a generated client)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@contextmanager
def served(folder: Path, **extra: str) -> Iterator[str]:
    """The base URL of a fresh server (stopped on exit); ``extra``: more settings."""
    port = free_port()
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"DATABASE_URL", "PERSISTENCE", "CREATE_TABLES"}
    }
    env.update(
        HOST="127.0.0.1",
        PORT=str(port),
        PERSISTENCE="sqlite",
        SQLITE_PATH=str(folder / "events.sqlite3"),
        RATE_LIMIT_PER_MINUTE="0",
        LOG_LEVEL="WARNING",
        **extra,
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "infra.serve"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else b""
            try:
                with urllib.request.urlopen(f"{base}/readyz", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            assert time.monotonic() < deadline, "the server did not become ready in 60 s"
            time.sleep(0.1)
        yield base
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
        if proc.stderr:
            proc.stderr.close()

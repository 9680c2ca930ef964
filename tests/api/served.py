"""The app served for real: ``python -m infra.serve`` (uvicorn) on a free loopback port,
SQLite in a temporary folder, as ``make serve`` runs it — for the tests that drive it the
way a client outside the process does (the README walkthrough, a generated client).

:func:`served_here` serves the same app with the same server configuration on a thread of
the test process instead, for the tests that need a real HTTP server but not a process
start (a browser's pages, two devices' streams, the TypeScript client's round): a fresh
process spends ~2 CPU-s importing the server, which the test process has imported already."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from infra.serve import Server, uvicorn_config
from infra.settings import Settings

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def environment(folder: Path, port: int, extra: dict[str, str]) -> dict[str, str]:
    """The server's environment: this process's, on SQLite in ``folder``, with ``extra``."""
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
    return env


@contextmanager
def served(folder: Path, **extra: str) -> Iterator[str]:
    """The base URL of a fresh server (stopped on exit); ``extra``: more settings."""
    port = free_port()
    env = environment(folder, port, extra)
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


@contextmanager
def served_here(folder: Path, **extra: str) -> Iterator[str]:
    """The base URL of :func:`served`'s server — the app of the same settings under
    ``infra.serve``'s uvicorn configuration and server — on a thread of this process
    (stopped on exit: streams ended, the app shut down). The process's logging stays the
    suite's (the product's own, at WARNING, as ``LOG_LEVEL`` says for :func:`served`)."""
    port = free_port()
    server = Server(uvicorn_config(Settings.from_env(environment(folder, port, extra))))
    thread = threading.Thread(target=server.run, name=f"served-{port}", daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 60
        while not server.started:
            assert thread.is_alive(), "the server stopped before it started"
            assert time.monotonic() < deadline, "the server did not start in 60 s"
            time.sleep(0.02)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        assert not thread.is_alive(), "the server did not stop in 30 s"

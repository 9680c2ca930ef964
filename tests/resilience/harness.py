"""Real processes on loopback for the resilience tests and ``bench/resilience_bench.py``
(docs/deploy.md: scale-out and faults).

* :class:`Replica` — one ``python -m infra.serve`` process on PostgreSQL (its own port,
  the run's schema), started, killed with SIGKILL, started again;
* :func:`fresh_schema` / :func:`drop_schema` — the run's schema.

The client side (a client over several replicas, bot tables) is in
:mod:`tests.resilience.client`; checks of what the store holds in
:mod:`tests.resilience.checks`.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, Self
from uuid import uuid4

import httpx
import psycopg
from psycopg import sql

from infra.settings import Settings
from services.webhooks.dispatch import SIGNATURE_HEADER, verify

if TYPE_CHECKING:
    from tests.resilience.zygote import Zygote

ROOT = Path(__file__).resolve().parents[2]
SECRET = "a-webhook-secret-of-32-characters"
"""The webhook receivers' signing secret."""
TLS = httpx.create_ssl_context()
"""The TLS context of every HTTP client these tests make, made once: httpx otherwise makes
one for each client (certifi's authorities loaded, ~35 ms of CPU), and the tests make a
client for each readiness poll and many a request. The servers are plain HTTP on loopback;
the context is never used."""
Json = dict[str, Any]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def fresh_schema(url: str) -> str:
    """A new, empty schema for one run (dropped by :func:`drop_schema`)."""
    schema = f"resilience_{uuid4().hex[:12]}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
    return schema


def drop_schema(url: str, schema: str) -> None:
    with psycopg.connect(url, autocommit=True, connect_timeout=10) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


@contextmanager
def schema_settings(url: str, **changes: Any) -> Iterator[Settings]:
    """Settings of a store on a new schema of ``url``'s database (a pool of 2 + 4
    connections unless ``changes`` say otherwise); the schema and the webhook outbox's
    beside it (``<schema>_webhooks``, :func:`infra.store.outbox_env`) are dropped after."""
    schema = fresh_schema(url)
    pool: dict[str, Any] = {"postgres_pool_size": 2, "postgres_max_overflow": 4}
    try:
        yield Settings(
            backend="postgres",
            database_url=url,
            postgres_schema=schema,
            **(pool | changes),
        )
    finally:
        drop_schema(url, schema)
        drop_schema(url, f"{schema}_webhooks")


class Process(Protocol):
    """A server process: a :class:`subprocess.Popen`, or a fork of a zygote
    (:class:`tests.resilience.zygote.Forked`)."""

    @property
    def pid(self) -> int: ...
    @property
    def returncode(self) -> int | None: ...
    def poll(self) -> int | None: ...
    def wait(self, timeout: float | None = None) -> int: ...
    def terminate(self) -> None: ...


class Replica:
    """One app process (``python -m infra.serve``) on ``url``'s database, ``schema``."""

    command: tuple[str, ...] = ("-m", "infra.serve")

    def __init__(self, url: str, schema: str, log_dir: Path, **env: str) -> None:
        self.zygote: Zygote | None = None
        """Where the process is forked from (:mod:`tests.resilience.zygote`), if not anew:
        see :meth:`forked_from`."""
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log_path = log_dir / f"replica-{self.port}.log"
        self.env = {
            **os.environ,
            "DATABASE_URL": url,
            "PERSISTENCE": "postgres",
            "POSTGRES_SCHEMA": schema,
            "POSTGRES_POOL_SIZE": "2",
            "POSTGRES_MAX_OVERFLOW": "6",
            "POSTGRES_CONNECT_TIMEOUT": "2",
            "HOST": "127.0.0.1",
            "PORT": str(self.port),
            "RATE_LIMIT_PER_MINUTE": "0",
            "LOG_LEVEL": "WARNING",
            "SHUTDOWN_TIMEOUT": "1",
            "SSE_HEARTBEAT_S": "2",
            **env,
        }
        self.proc: Process | None = None
        self.starts = 0

    def forked_from(self, zygote: Zygote | None) -> Self:
        """Start (and restart) this process as a fork of ``zygote`` (None: afresh)."""
        self.zygote = zygote
        return self

    def start(self) -> None:
        if self.zygote is not None:
            self.proc = self.zygote.fork(self.command[1:], self.env, self.log_path)
            self.starts += 1
            return
        with self.log_path.open("ab") as log:
            self.proc = subprocess.Popen(
                [sys.executable, *self.command],
                cwd=ROOT,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        self.starts += 1

    async def ready(self, timeout: float = 90.0) -> None:
        """Wait until ``/readyz`` answers 200 (the store is reachable); a loaded machine
        (two suites at once on two cores) can take a minute to start a server."""
        deadline = time.monotonic() + timeout
        async with httpx.AsyncClient(timeout=2.0, verify=TLS) as http:
            while time.monotonic() < deadline:
                if self.proc is not None and self.proc.poll() is not None:
                    raise RuntimeError(f"replica {self.port} exited: {self.tail()}")
                try:
                    if (await http.get(self.base + "/readyz")).status_code == 200:
                        return
                except httpx.TransportError:
                    pass
                await asyncio.sleep(0.1)
        raise TimeoutError(f"replica {self.port} not ready in {timeout}s: {self.tail()}")

    def kill(self) -> None:
        """SIGKILL: no shutdown, no drain, connections cut mid-request."""
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()

    def tail(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-1500:]
        except OSError:
            return ""


class Receiver:
    """A webhook receiver on loopback: refuses (503) while ``failing``, else keeps each
    delivery's id and body (signatures checked with :data:`SECRET`)."""

    def __init__(self, failing: bool = True) -> None:
        self.failing = failing
        self.got: list[tuple[str, dict[str, Any]]] = []
        self.refused = 0
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                assert verify(SECRET, self.headers[SIGNATURE_HEADER], body, int(time.time()))
                with receiver.lock:
                    if receiver.failing:
                        receiver.refused += 1
                        self.send_response(503)
                    else:
                        receiver.got.append((self.headers["Shengji-Delivery"], json.loads(body)))
                        self.send_response(204)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


class Worker(Replica):
    """``shengji worker``: the background work beside API processes (docs/scaling.md)."""

    command = ("-m", "infra.cli", "worker")

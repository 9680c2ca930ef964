"""Graceful drain of a real server process on SIGTERM (docs/deploy.md, Deployment).

``python -m infra.serve`` runs on a free loopback port with SQLite in ``tmp_path``. A live
stream (SSE) is open and a request is in flight (its headers sent, its body not yet) when
SIGTERM arrives. Then: the listener closes (new connections are refused), the stream
gets a final ``retry:`` reconnect hint and ends, the in-flight request is answered in
full, and the process exits 0 — all within a bound. The same with ``CREATE_TABLES=false``
and no schema: the server does not listen, and exits 1 naming ``shengji migrate``.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO
from uuid import UUID, uuid4

import psycopg
import pytest
from psycopg import sql

from infra.migrate import migrate
from infra.settings import Settings, SettingsError
from infra.store import build_service

ROOT = Path(__file__).resolve().parents[2]
RETRY_MS = 1234
DRAIN_BOUND_S = 8.0
"""SIGTERM to exit: streams end at once, the in-flight request takes ~0.5 s here."""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _env(tmp_path: Path, port: int, **extra: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"DATABASE_URL", "PERSISTENCE", "CREATE_TABLES"}
    }
    env.update(
        HOST="127.0.0.1",
        PORT=str(port),
        PERSISTENCE="sqlite",
        SQLITE_PATH=str(tmp_path / "events.sqlite3"),
        SSE_RETRY_MS=str(RETRY_MS),
        SSE_HEARTBEAT_S="30",
        SHUTDOWN_TIMEOUT="5",
        RATE_LIMIT_PER_MINUTE="0",
        LOG_LEVEL="WARNING",
    )
    env.update(extra)
    return env


def _request(port: int, method: str, path: str, body: bytes = b"") -> bytes:
    head = (
        f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(head.encode() + body)
        return _read_all(s)


def _read_all(s: socket.socket) -> bytes:
    chunks = []
    while chunk := s.recv(65536):
        chunks.append(chunk)
    return b"".join(chunks)


def _status(response: bytes) -> int:
    return int(response.split(b" ", 2)[1])


def _body(response: bytes) -> bytes:
    return response.split(b"\r\n\r\n", 1)[1]


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], int]]:
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "infra.serve"],
        cwd=ROOT,
        env=_env(tmp_path, port),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else b""
            try:
                if _status(_request(port, "GET", "/readyz")) == 200:
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline, "the server did not become ready in 60 s"
            time.sleep(0.1)
        yield proc, port
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=10)
        if proc.stderr:
            proc.stderr.close()


def _blocks(data: bytes) -> list[dict[str, str]]:
    """SSE blocks as {field: value} ("" holds a comment line)."""
    out = []
    for block in data.replace(b"\r\n", b"\n").split(b"\n\n"):
        if not block.strip():
            continue
        fields: dict[str, str] = {}
        for line in block.decode().split("\n"):
            name, _, value = line.partition(":")
            fields[name] = value.removeprefix(" ")
        out.append(fields)
    return out


def test_sigterm_drains_streams_with_a_retry_hint_and_finishes_requests(
    server: tuple[subprocess.Popen[bytes], int], tmp_path: Path
) -> None:
    proc, port = server
    created = _request(port, "POST", "/v1/matches", b'{"name":"drain"}')
    assert _status(created) == 201, created
    match_id = json.loads(_body(created))["matchId"]

    stream = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    inflight = socket.create_connection(("127.0.0.1", port), timeout=10)
    with contextlib.closing(stream), inflight:
        stream.request(
            "GET", f"/v1/matches/{match_id}/stream", headers={"Accept": "text/event-stream"}
        )
        live = stream.getresponse()
        assert live.status == 200
        first = b""
        while not first.endswith(b"\n\n") or b"event: view" not in first:
            line = live.readline()
            assert line, "the stream closed before its first frame"
            first += line
        assert _blocks(first)[0] == {"retry": str(RETRY_MS)}  # the stream opens with a hint

        body = b'{"name":"in flight"}'
        inflight.sendall(
            b"POST /v1/matches HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\n\r\n" % len(body)
        )
        time.sleep(0.3)  # the server has read the headers: the request is in flight

        sent = time.monotonic()
        proc.send_signal(signal.SIGTERM)

        rest = live.read()  # to the chunked body's end: IncompleteRead if cut off
        stream_ended = time.monotonic() - sent
        blocks = _blocks(rest)
        assert blocks, "no final frame"
        assert blocks[-1] == {"retry": str(RETRY_MS)}  # the reconnect hint, last
        assert stream_ended < DRAIN_BOUND_S

        with pytest.raises(ConnectionRefusedError):  # the listener closed first
            socket.create_connection(("127.0.0.1", port), timeout=2).close()

        inflight.sendall(body)  # the rest of the in-flight request, after SIGTERM
        answer = _read_all(inflight)  # returns at EOF: the server closed the connection
    assert _status(answer) == 201, answer
    acknowledged = UUID(json.loads(_body(answer))["matchId"])

    assert proc.wait(timeout=DRAIN_BOUND_S) == 0
    elapsed = time.monotonic() - sent
    assert elapsed < DRAIN_BOUND_S, f"drained in {elapsed:.2f} s"
    print(f"drain: stream ended {stream_ended:.3f} s, exited {elapsed:.3f} s after SIGTERM")
    store = build_service(Settings(sqlite_path=tmp_path / "events.sqlite3"))
    try:  # the command answered during the drain is stored
        assert store.get_match(acknowledged).name == "in flight"
    finally:
        store.close()


@pytest.fixture(
    params=[
        pytest.param("sqlite", id="sqlite"),
        pytest.param("postgres", id="postgres", marks=pytest.mark.postgres),
    ]
)
def store_env(request: pytest.FixtureRequest) -> Iterator[dict[str, str]]:
    """The store of a server: SQLite in tmp_path, or a fresh PostgreSQL schema."""
    if request.param == "sqlite":
        yield {}
        return
    url: str = request.getfixturevalue("pg_url")
    schema = f"drain_{uuid4().hex[:12]}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
    try:
        yield {"PERSISTENCE": "postgres", "DATABASE_URL": url, "POSTGRES_SCHEMA": schema}
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(schema)))


def _line_with(out: IO[bytes], text: bytes, timeout: float) -> bytes:
    """The first line of ``out`` holding ``text`` (the server starts slowly on a busy
    machine: the migration must come after it began to wait)."""
    found: list[bytes] = []

    def read() -> None:
        for line in out:
            if text in line:
                found.append(line)
                return

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout)
    assert found, f"no line with {text!r} in {timeout} s"
    return found[0]


def test_without_table_creation_the_server_listens_once_migrate_has_run(
    tmp_path: Path, store_env: dict[str, str]
) -> None:
    """On PostgreSQL this is what makes the wait necessary: a replica built before the
    migration could never save (the insert function's type is looked up at start-up)."""
    port = _free_port()
    env = _env(tmp_path, port, CREATE_TABLES="false", SCHEMA_WAIT_TIMEOUT="60", **store_env)
    proc = subprocess.Popen(
        [sys.executable, "-m", "infra.serve"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert proc.stdout is not None
        first = _line_with(proc.stdout, b"waiting for the schema", timeout=60)
        assert proc.poll() is None
        with pytest.raises(ConnectionRefusedError):  # not listening: waiting for the schema
            socket.create_connection(("127.0.0.1", port), timeout=2).close()
        # the migration, run in this process on the server's settings: the test is the
        # server's wait (the command is tests/deploy/test_migrate.py's, run as the
        # migration Job's process by tests/deploy/test_migrated_deployment.py)
        report = migrate(Settings.from_env(env))
        assert any(line.startswith("migrate: created table ") for line in report.lines())
        deadline = time.monotonic() + 90
        while True:
            try:
                if _status(_request(port, "GET", "/readyz")) == 200:
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline, "not ready 90 s after the migration"
            time.sleep(0.1)
        assert _status(_request(port, "POST", "/v1/matches", b"{}")) == 201
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=DRAIN_BOUND_S) == 0
        proc.communicate(timeout=5)
        assert json.loads(first)["reason"].startswith("missing table ")
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=10)


def test_without_table_creation_and_no_migration_the_server_exits_1(tmp_path: Path) -> None:
    port = _free_port()
    env = _env(tmp_path, port, CREATE_TABLES="false", SCHEMA_WAIT_TIMEOUT="2")
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "infra.serve"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1
    assert b"run `shengji migrate` (CREATE_TABLES=false)" in done.stderr
    assert time.monotonic() - started < 30


@pytest.mark.parametrize(
    ("environ", "shutdown", "schema_wait"),
    [
        ({}, 10, 120),
        ({"SHUTDOWN_TIMEOUT": "15", "SCHEMA_WAIT_TIMEOUT": "60"}, 15, 60),
        ({"SCHEMA_WAIT_TIMEOUT": " 0 "}, 10, 0),
    ],
)
def test_serve_options_read_the_drain_and_schema_wait_timeouts(
    environ: dict[str, str], shutdown: int, schema_wait: int
) -> None:
    settings = Settings.from_env(environ)
    assert (settings.shutdown_timeout, settings.schema_wait_timeout) == (shutdown, schema_wait)


@pytest.mark.parametrize("value", ["soon", "-1", "3601", "1.5"])
def test_serve_options_refuse_a_bad_schema_wait(value: str) -> None:
    with pytest.raises(SettingsError, match="SCHEMA_WAIT_TIMEOUT"):
        Settings.from_env({"SCHEMA_WAIT_TIMEOUT": value})

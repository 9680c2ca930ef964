"""``make serve``: the entry point's options, its refusals, uvicorn configured from the
settings, and the README's command itself serving the API on the port it is given.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest
from litestar import Litestar

from infra.serve import main, uvicorn_config
from infra.settings import Settings, SettingsError
from tests.api.ops.small_app import ROOT


@pytest.mark.parametrize(
    ("environ", "seconds"),
    [({}, 10), ({"SHUTDOWN_TIMEOUT": "30"}, 30), ({"SHUTDOWN_TIMEOUT": " 0 "}, 0)],
)
def test_serve_options(environ: dict[str, str], seconds: int) -> None:
    assert Settings.from_env(environ).shutdown_timeout == seconds


@pytest.mark.parametrize("value", ["soon", "-1", "3601"])
def test_serve_options_refuse_bad_values(value: str) -> None:
    with pytest.raises(SettingsError, match="SHUTDOWN_TIMEOUT"):
        Settings.from_env({"SHUTDOWN_TIMEOUT": value})


def test_serve_exits_2_on_bad_settings(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main({"PORT": "eighty"})
    assert stop.value.code == 2
    assert "PORT" in capsys.readouterr().err


def test_serve_configures_uvicorn_from_the_settings(tmp_path: Path) -> None:
    settings = Settings.from_env(
        {
            "HOST": "0.0.0.0",
            "PORT": "8123",
            "SQLITE_PATH": str(tmp_path / "s.sqlite3"),
            "SHUTDOWN_TIMEOUT": "7",
        }
    )
    config = uvicorn_config(settings)
    assert (config.host, config.port) == ("0.0.0.0", 8123)
    assert config.timeout_graceful_shutdown == 7
    assert config.access_log is False and config.log_config is None
    assert isinstance(config.app, Litestar)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _get(port: int, path: str) -> tuple[int, bytes]:
    # the first /schema request builds the document: seconds of CPU on a loaded machine
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=60) as response:
        status: int = response.status
        return status, response.read()


def test_make_serve_serves_the_api_on_host_and_port(tmp_path: Path) -> None:
    """The README's ``make serve`` (its own recipe, on the virtualenv already built: ``-o``
    keeps make from reinstalling it) answers on the PORT it is given: ready, the docs, and a
    match created in the embedded SQLite file SQLITE_PATH names."""
    port = _free_port()
    store = tmp_path / "served.sqlite3"
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"DATABASE_URL", "PERSISTENCE", "CREATE_TABLES", "MAKEFLAGS", "MFLAGS"}
    }
    env.update(SQLITE_PATH=str(store), RATE_LIMIT_PER_MINUTE="0", LOG_LEVEL="WARNING")
    make = shutil.which("make")
    assert make is not None, "make is not installed"
    proc = subprocess.Popen(
        [make, "--no-print-directory", "-o", ".venv/.installed", "serve", f"PORT={port}"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,  # make and the server it starts: one process group to stop
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else b""
            try:
                if _get(port, "/readyz")[0] == 200:
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline, "make serve did not become ready in 60 s"
            time.sleep(0.2)
        assert _get(port, "/healthz")[0] == 200
        status, body = _get(port, "/schema/openapi.json")
        assert status == 200 and json.loads(body)["openapi"].startswith("3.")
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/v1/matches",
            data=b'{"name": "served"}',
            headers={"Content-Type": "application/json"},
            method="POST",
        )
        with urllib.request.urlopen(request, timeout=5) as created:
            assert created.status == 201
        assert store.exists()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=5)
        if proc.stderr:
            proc.stderr.close()

"""``make serve``: the entry point's options, its refusals, and uvicorn configured from the
settings.
"""

from __future__ import annotations

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


def test_make_serve_runs_the_entry_point_on_host_and_port() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    recipe = makefile.split("\nserve:", 1)[1].split("\n\n", 1)[0]
    assert "$(STAMP)" in recipe and "-m infra.serve" in recipe
    assert "HOST='$(HOST)'" in recipe and "PORT='$(PORT)'" in recipe
    assert "HOST ?= 127.0.0.1" in makefile and "PORT ?= 8000" in makefile

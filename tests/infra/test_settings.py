"""The settings are declared once (``infra/settings.py``): each variable is one field, read
from the environment, checked and documented from that declaration alone."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest

from infra.settings import Settings, SettingsError, declared, markdown_table

ROOT = Path(__file__).resolve().parents[2]

VARIABLES = [item.env for item in declared()]


def test_every_variable_is_declared_once() -> None:
    names = VARIABLES + [item.also for item in declared() if item.also]
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)
    assert len(VARIABLES) == len(msgspec.structs.fields(Settings))


def test_the_configuration_doc_is_generated_from_the_declaration() -> None:
    doc = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert markdown_table() in doc, "docs/configuration.md drifted: scripts/gen_configuration.py"
    check = [sys.executable, str(ROOT / "scripts" / "gen_configuration.py"), "--check"]
    assert subprocess.run(check, check=False, capture_output=True).returncode == 0
    for name in VARIABLES:
        assert f"| `{name}`" in doc, name


def test_every_variable_has_a_meaning() -> None:
    for item in declared():
        assert item.description.endswith((".", ")")), item.env


# -- reading -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("environ", "field", "value"),
    [
        ({}, "backend", "sqlite"),
        ({"DATABASE_URL": "postgresql://u@h/db"}, "backend", "postgres"),
        ({"DATABASE_URL": "postgresql://u@h/db", "PERSISTENCE": "SQLite"}, "backend", "sqlite"),
        ({"PORT": " 9000 "}, "port", 9000),
        ({"PORT": ""}, "port", 8000),  # empty is unset
        ({"CREATE_TABLES": "no"}, "create_tables", False),
        ({"CREATE_TABLES": "ON"}, "create_tables", True),
        ({"LOG_LEVEL": "debug"}, "log_level", "DEBUG"),
        ({"TIMEOUT_BOT": "Strong"}, "timeout_bot", "strong"),
        ({"TRUSTED_PROXIES": "10.0.0.1, ,10.0.0.2"}, "trusted_proxies", ("10.0.0.1", "10.0.0.2")),
        ({"SQLITE_PATH": "/tmp/x.sqlite3"}, "sqlite_path", Path("/tmp/x.sqlite3")),
        ({"OIDC_ISSUER": "", "OIDC_AUDIENCE": "", "OIDC_JWKS_URL": ""}, "oidc", None),
        ({"SHUTDOWN_TIMEOUT": "0"}, "shutdown_timeout", 0),
        ({"WEBHOOK_INTERVAL_MS": "0"}, "webhook_interval_ms", 0),
        ({"PLAYER_QUOTA_PER_HOUR": "5"}, "player_quota_per_hour", 5),
    ],
)
def test_reading_the_environment(environ: dict[str, str], field: str, value: Any) -> None:
    assert getattr(Settings.from_env(environ), field) == value


@pytest.mark.parametrize(
    ("environ", "named"),
    [
        ({"PERSISTENCE": "mongo"}, "PERSISTENCE must be one of popo, sqlite, postgres"),
        ({"PERSISTENCE": "postgres"}, "PERSISTENCE=postgres needs DATABASE_URL"),
        ({"DATABASE_URL": "mysql://u@h/db"}, "DATABASE_URL must start with postgresql://"),
        ({"CREATE_TABLES": "maybe"}, "CREATE_TABLES must be true or false"),
        ({"PORT": "eighty"}, "PORT must be an integer"),
        ({"LOG_LEVEL": "LOUD"}, "LOG_LEVEL must be one of"),
        ({"TIMEOUT_BOT": "genius"}, "TIMEOUT_BOT must be one of"),
        ({"OPERATOR_TOKEN": "short"}, "OPERATOR_TOKEN must be at least 24 characters"),
        ({"OIDC_ISSUER": "https://id.example"}, "OIDC_ISSUER, OIDC_AUDIENCE and OIDC_JWKS_URL"),
        ({"TRUSTED_PROXIES": "*"}, "TRUSTED_PROXIES"),
    ],
)
def test_a_bad_value_names_its_variable(environ: dict[str, str], named: str) -> None:
    with pytest.raises(SettingsError, match=named):
        Settings.from_env(environ)


BOUNDED = [(i.env, i.name, i.low, i.high) for i in declared() if i.low is not None]


@pytest.mark.parametrize(("env", "name", "low", "high"), BOUNDED)
def test_every_bound_is_checked_from_the_environment_and_in_code(
    env: str, name: str, low: int, high: int
) -> None:
    assert high is not None
    for inside in {low, high}:
        assert getattr(Settings.from_env({env: str(inside)}), name) == inside
    for outside in (low - 1, high + 1):
        with pytest.raises(SettingsError, match=env):
            Settings.from_env({env: str(outside)})
        with pytest.raises(SettingsError, match=env):
            msgspec.structs.replace(Settings(), **{name: outside})


def test_secrets_stay_out_of_the_repr() -> None:
    token = "operator-token-0123456789abcdef"
    settings = Settings(
        backend="postgres", database_url="postgresql://u:hunter2@h/db", operator_token=token
    )
    assert "hunter2" not in repr(settings) and token not in repr(settings)
    assert "backend='postgres'" in repr(settings)

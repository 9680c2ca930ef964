"""The wiring under the store contract: ``infra.settings`` chooses the store (POPO, SQLite,
PostgreSQL) and reads the pacing, server and socket URLs; ``infra.pgcluster`` passes
``DATABASE_URL`` through, and no PostgreSQL server is an error, not a skip.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from domain.rules.ruleset import RuleSet
from infra.pgcluster import PostgresUnavailableError, postgres_url
from infra.settings import Settings, SettingsError
from infra.store import build_service, persistence_env
from tests.conftest import FakeClock, FixedSeeds
from tests.integration.store_bots import new_match


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        (
            {"PERSISTENCE": "popo"},
            {"PERSISTENCE_MODULE": "eventsourcing.popo", "AGGREGATE_CACHE_MAXSIZE": "5000"},
        ),
        (
            {},
            {
                "PERSISTENCE_MODULE": "eventsourcing.sqlite",
                "SQLITE_DBNAME": "var/shengji.sqlite3",
                "SQLITE_LOCK_TIMEOUT": "5",
                "CREATE_TABLE": "y",
                "AGGREGATE_CACHE_MAXSIZE": "5000",
                "AGGREGATE_CACHE_FASTFORWARD": "n",
            },
        ),
        (
            {"SQLITE_PATH": "/data/x.db", "CREATE_TABLES": "off", "SQLITE_LOCK_TIMEOUT": "9"},
            {
                "PERSISTENCE_MODULE": "eventsourcing.sqlite",
                "SQLITE_DBNAME": "/data/x.db",
                "SQLITE_LOCK_TIMEOUT": "9",
                "CREATE_TABLE": "n",
                "AGGREGATE_CACHE_MAXSIZE": "5000",
                "AGGREGATE_CACHE_FASTFORWARD": "n",
            },
        ),
        (
            {
                "DATABASE_URL": "postgresql://sheng%40ji:p%3Ass%2Fw@db.local:6543/games",
                "POSTGRES_POOL_SIZE": "7",
            },
            {
                "PERSISTENCE_MODULE": "eventsourcing.postgres",
                "APPLICATION_RECORDER_TOPIC": "infra.pgstore:LockingInsertRecorder",
                "POSTGRES_ENABLE_DB_FUNCTIONS": "y",
                "POSTGRES_DBNAME": "games",
                "POSTGRES_HOST": "db.local",
                "POSTGRES_PORT": "6543",
                "POSTGRES_USER": "sheng@ji",
                "POSTGRES_PASSWORD": "p:ss/w",
                "POSTGRES_POOL_SIZE": "7",
                "POSTGRES_MAX_OVERFLOW": "10",
                "POSTGRES_CONNECT_TIMEOUT": "10",
                "POSTGRES_SCHEMA": "",
                "CREATE_TABLE": "y",
                "AGGREGATE_CACHE_MAXSIZE": "5000",
                "AGGREGATE_CACHE_FASTFORWARD": "n",
            },
        ),
    ],
    ids=["popo", "sqlite-default", "sqlite-path", "postgres-url-decoded"],
)
def test_settings_choose_the_store(environ: dict[str, str], expected: dict[str, str]) -> None:
    assert persistence_env(Settings.from_env(environ)) == expected


def test_settings_read_pacing_server_and_socket_urls() -> None:
    s = Settings.from_env(
        {
            "DATABASE_URL": "postgresql://postgres:@/shengji?host=/tmp/pg",
            "HOST": "0.0.0.0",
            "PORT": "9000",
            "DEAL_INTERVAL_MS": "250",
            "DECLARE_MS": "5000",
            "WINDOW_MS": "8000",
            "LOG_LEVEL": "debug",
        }
    )
    assert (s.backend, s.host, s.port, s.log_level) == ("postgres", "0.0.0.0", 9000, "DEBUG")
    pacing = s.pacing
    assert (pacing.interval_ms, pacing.declare_ms, pacing.window_ms) == (250, 5000, 8000)
    env = persistence_env(s)
    assert (env["POSTGRES_HOST"], env["POSTGRES_PORT"], env["POSTGRES_PASSWORD"]) == (
        "/tmp/pg",
        "5432",
        "",
    )


@pytest.mark.parametrize(
    "environ",
    [
        {"PERSISTENCE": "mongo"},
        {"PERSISTENCE": "postgres"},
        {"DATABASE_URL": "mysql://u@h/db"},
        {"DATABASE_URL": "postgresql://u@h/db?sslmode=require"},
        {"DATABASE_URL": "postgresql://h/db"},
        {"DATABASE_URL": "postgresql://u@h:99999/db"},
        {"PORT": "http"},
        {"CREATE_TABLES": "maybe"},
        {"DECLARE_MS": "-1"},
        {"LOG_LEVEL": "LOUD"},
    ],
)
def test_settings_refuse_what_cannot_work(environ: dict[str, str]) -> None:
    with pytest.raises(SettingsError):
        Settings.from_env(environ)


def test_build_service_makes_the_sqlite_folder_and_uses_the_pacing(tmp_path: Path) -> None:
    settings = Settings(sqlite_path=tmp_path / "var" / "db" / "x.sqlite3", window_ms=5_000)
    svc = build_service(settings, clock=FakeClock(), seeds=FixedSeeds())
    try:
        mid = new_match(svc, RuleSet())
        assert settings.sqlite_path.is_file()
        r = svc.current_round(svc.get_match(mid))
        assert r is not None and r.pacing.window_ms == 5_000
    finally:
        svc.close()


def test_postgres_url_passes_database_url_through() -> None:
    with postgres_url({"DATABASE_URL": "postgresql://u@h/db"}) as url:
        assert url == "postgresql://u@h/db"


def test_no_postgres_server_is_an_error_not_a_skip() -> None:
    with (
        pytest.raises(PostgresUnavailableError),
        postgres_url({}, search_path="", globs=(), allow_pgserver=False),
    ):
        pass  # pragma: no cover - never reached

"""``shengji migrate``: the schema once, a no-op the second time (docs/deploy.md, Deployment;
docs/decisions.md D-migrate).

On SQLite (a file in ``tmp_path``) and on a real PostgreSQL (``pg_url``, a fresh schema
per test). Replicas run with ``CREATE_TABLES=false`` (eventsourcing's ``CREATE_TABLE=n``)
and create nothing; the migration creates every table the service uses: the events table
(matches, rounds and idempotency records share it), and on PostgreSQL its index, the
composite type and the insert function of ``infra.pgstore`` that keeps the table lock; the
read models; the players' keys; the webhook outbox's own schema (or file) and tables. What
it creates is what a server with ``CREATE_TABLES=true`` creates, object for object.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import os
import socket
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from uuid import uuid4

import msgspec
import psycopg
import pytest
from litestar.testing import TestClient
from psycopg import sql

from domain.rules.ruleset import preset
from infra import cli
from infra.bootstrap import build_app
from infra.migrate import (
    EXIT_FAILED,
    EXIT_PENDING,
    EXIT_SETTINGS,
    MigrationError,
    check,
    migrate,
    wait_for_schema,
)
from infra.settings import Settings
from infra.store import build_service, persistence_env
from tests.commands import create_match

PG_OBJECTS = (
    "table {s}.shengji_events",
    "type {s}.stored_event_uuid",
    "index {s}.shengji_events_notification_id_idx",
    "function {s}.es_insert_events_uuid",
    # the read models (docs/decisions.md D-readmodels)
    "table {s}.readmodel_tracking",
    "table {s}.readmodel_matches",
    "index {s}.readmodel_matches_listed",
    "index {s}.readmodel_matches_played",
    "index {s}.readmodel_matches_imported",
    "table {s}.readmodel_seats",
    "table {s}.readmodel_tournaments",
    "index {s}.readmodel_tournaments_status",
    # the ratings (docs/decisions.md D-ratings)
    "table {s}.ratings_tracking",
    "table {s}.ratings",
    "index {s}.ratings_board",
    "index {s}.ratings_player",
    "table {s}.rating_history",
    "index {s}.rating_history_at",
    "index {s}.rating_history_foursome",
    "table {s}.rating_seasons",
    "table {s}.rating_counts",
    "table {s}.rating_model",
    # the players' careers (docs/decisions.md D-career)
    "table {s}.career_tracking",
    "table {s}.career_matches",
    "index {s}.career_matches_released",
    "index {s}.career_matches_round",
    "table {s}.career_entries",
    "index {s}.career_entries_history",
    "index {s}.career_entries_public",
    "table {s}.career_totals",
    "table {s}.career_partners",
    "index {s}.career_partners_top",
    "index {s}.career_partners_partner",
    "table {s}.career_released",
    # the friends (docs/decisions.md D-social)
    "table {s}.social_tracking",
    "table {s}.social_links",
    "index {s}.social_links_page",
    "table {s}.social_invitations",
    "index {s}.social_invitations_invitee",
    "index {s}.social_invitations_inviter",
    # the players' keys (infra.keys)
    "table {s}.shengji_player_keys",
    # the webhook outbox, in a schema of its own (infra.store.outbox_env)
    "schema {s}_webhooks",
    "table {s}_webhooks.webhookoutbox_events",
    "type {s}_webhooks.stored_event_uuid",
    "index {s}_webhooks.webhookoutbox_events_notification_id_idx",
    "function {s}_webhooks.es_insert_events_uuid",
    "table {s}_webhooks.webhookoutbox_tracking",
)
SQLITE_OBJECTS = (
    "table stored_events in events.sqlite3",
    "table tracking in events.sqlite3",
    "table readmodel_matches in events.sqlite3",
    "index readmodel_matches_listed in events.sqlite3",
    "index readmodel_matches_played in events.sqlite3",
    "index readmodel_matches_imported in events.sqlite3",
    "table readmodel_seats in events.sqlite3",
    "table readmodel_tournaments in events.sqlite3",
    "index readmodel_tournaments_status in events.sqlite3",
    "table ratings in events.sqlite3",
    "index ratings_board in events.sqlite3",
    "index ratings_player in events.sqlite3",
    "table rating_history in events.sqlite3",
    "index rating_history_at in events.sqlite3",
    "index rating_history_foursome in events.sqlite3",
    "table rating_seasons in events.sqlite3",
    "table rating_counts in events.sqlite3",
    "table rating_model in events.sqlite3",
    "table career_matches in events.sqlite3",
    "index career_matches_released in events.sqlite3",
    "index career_matches_round in events.sqlite3",
    "table career_entries in events.sqlite3",
    "index career_entries_history in events.sqlite3",
    "index career_entries_public in events.sqlite3",
    "table career_totals in events.sqlite3",
    "table career_partners in events.sqlite3",
    "index career_partners_top in events.sqlite3",
    "index career_partners_partner in events.sqlite3",
    "table career_released in events.sqlite3",
    "table social_links in events.sqlite3",
    "index social_links_page in events.sqlite3",
    "table social_invitations in events.sqlite3",
    "index social_invitations_invitee in events.sqlite3",
    "index social_invitations_inviter in events.sqlite3",
    "table player_keys in events.sqlite3.keys",
    "table stored_events in events.sqlite3.outbox",
    "table tracking in events.sqlite3.outbox",
)


@dataclasses.dataclass(frozen=True)
class Store:
    settings: Settings
    env: dict[str, str]
    objects: tuple[str, ...]
    url: str | None = None


def _sqlite_store(folder: Path) -> Store:
    path = folder / "events.sqlite3"
    env = {"PERSISTENCE": "sqlite", "SQLITE_PATH": str(path), "CREATE_TABLES": "false"}
    return Store(Settings.from_env(env), env, SQLITE_OBJECTS)


@pytest.fixture
def sqlite_store(tmp_path: Path) -> Store:
    return _sqlite_store(tmp_path / "var")


@contextlib.contextmanager
def _pg_store(url: str) -> Iterator[Store]:
    schema = f"mig_{uuid4().hex[:12]}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
    env = {"DATABASE_URL": url, "POSTGRES_SCHEMA": schema, "CREATE_TABLES": "false"}
    try:
        yield Store(Settings.from_env(env), env, tuple(o.format(s=schema) for o in PG_OBJECTS), url)
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            for name in (schema, f"{schema}_webhooks"):
                conn.execute(
                    sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(name))
                )


@pytest.fixture
def pg_store(pg_url: str) -> Iterator[Store]:
    with _pg_store(pg_url) as store:
        yield store


@pytest.fixture(
    params=[
        pytest.param("sqlite", id="sqlite"),
        pytest.param("postgres", id="postgres", marks=pytest.mark.postgres),
    ]
)
def store(request: pytest.FixtureRequest) -> Store:
    found: Store = request.getfixturevalue(f"{request.param.replace('postgres', 'pg')}_store")
    return found


def _catalog(store: Store) -> list[tuple[object, ...]]:
    """The PostgreSQL catalog rows of the schemas' objects (the game's and the outbox's),
    with ``xmin``: any DDL on them (a CREATE OR REPLACE too) gives a new row version."""
    assert store.url is not None
    schema = store.settings.postgres_schema
    with psycopg.connect(store.url) as conn:
        return conn.execute(
            "SELECT 'class', n.nspname, c.relname, c.xmin::text FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = ANY(%(s)s) "
            "UNION ALL SELECT 'proc', n.nspname, p.proname, p.xmin::text FROM pg_proc p "
            "JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = ANY(%(s)s) "
            "UNION ALL SELECT 'type', n.nspname, t.typname, t.xmin::text FROM pg_type t "
            "JOIN pg_namespace n ON n.oid = t.typnamespace WHERE n.nspname = ANY(%(s)s) "
            "ORDER BY 1, 2, 3",
            {"s": [schema, f"{schema}_webhooks"]},
        ).fetchall()


# -- the setting ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("environ", "create_table"),
    [
        ({"PERSISTENCE": "sqlite"}, "y"),
        ({"PERSISTENCE": "sqlite", "CREATE_TABLES": "false"}, "n"),
        ({"DATABASE_URL": "postgresql://u@h/db"}, "y"),
        ({"DATABASE_URL": "postgresql://u@h/db", "CREATE_TABLES": "false"}, "n"),
        ({"DATABASE_URL": "postgresql://u@h/db", "CREATE_TABLES": "0"}, "n"),
    ],
)
def test_create_tables_reaches_the_library(environ: dict[str, str], create_table: str) -> None:
    assert persistence_env(Settings.from_env(environ))["CREATE_TABLE"] == create_table


def test_a_replica_without_table_creation_creates_nothing(store: Store) -> None:
    build_service(store.settings).close()
    state = check(store.settings)
    assert state.missing == store.objects and not state.ready


# -- migrate --------------------------------------------------------------------------------


def test_migrate_creates_the_schema_once(store: Store) -> None:
    first = migrate(store.settings)
    assert (first.created, first.replaced, first.unchanged) == (store.objects, (), ())
    assert first.changed
    catalog = _catalog(store) if store.url else None

    second = migrate(store.settings)
    assert (second.created, second.replaced, second.unchanged) == ((), (), store.objects)
    assert not second.changed
    assert second.lines() == [f"migrate: up to date ({', '.join(store.objects)})"]
    if store.url:
        assert _catalog(store) == catalog  # no DDL at all the second time
    assert check(store.settings).up_to_date


def _pg_layout(store: Store) -> list[tuple[object, ...]]:
    """Every object of the store's schemas (the game's, the outbox's) as the catalog
    describes it — relations, columns, indexes, types, functions — with the schema's
    name replaced by ``{s}``."""
    assert store.url is not None
    schema = store.settings.postgres_schema
    with psycopg.connect(store.url) as conn:
        rows = conn.execute(
            "SELECT 'schema', nspname, '', '' FROM pg_namespace WHERE nspname = ANY(%(s)s) "
            "UNION ALL SELECT 'relation', n.nspname, c.relname, c.relkind::text "
            "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = ANY(%(s)s) "
            "UNION ALL SELECT 'column', table_schema, table_name || '.' || column_name, "
            "concat_ws(' ', data_type, is_nullable, column_default) "
            "FROM information_schema.columns WHERE table_schema = ANY(%(s)s) "
            "UNION ALL SELECT 'index', schemaname, indexname, indexdef FROM pg_indexes "
            "WHERE schemaname = ANY(%(s)s) "
            "UNION ALL SELECT 'type', n.nspname, t.typname, t.typtype::text FROM pg_type t "
            "JOIN pg_namespace n ON n.oid = t.typnamespace WHERE n.nspname = ANY(%(s)s) "
            "UNION ALL SELECT 'function', n.nspname, p.proname, p.prosrc FROM pg_proc p "
            "JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = ANY(%(s)s) "
            "ORDER BY 1, 2, 3, 4",
            {"s": [schema, f"{schema}_webhooks"]},
        ).fetchall()
    return [tuple(str(v).replace(schema, "{s}") for v in row) for row in rows]


def _sqlite_layout(store: Store) -> list[tuple[object, ...]]:
    """Every file beside the store's (its journals aside) and every object in each."""
    folder = store.settings.sqlite_path.parent
    rows: list[tuple[object, ...]] = []
    for path in sorted(folder.iterdir()):
        if path.name.endswith(("-wal", "-shm", "-journal")):
            continue
        rows.append(("file", path.name, "", ""))
        if path.read_bytes()[:16] != b"SQLite format 3\x00":
            continue
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            rows += [
                (path.name, *row)
                for row in db.execute("SELECT type, name, sql FROM sqlite_master ORDER BY 1, 2")
            ]
        finally:
            db.close()
    return rows


def _layout(store: Store) -> list[tuple[object, ...]]:
    return _pg_layout(store) if store.url else _sqlite_layout(store)


def test_migrate_creates_what_a_server_that_creates_its_tables_creates(
    store: Store, tmp_path: Path
) -> None:
    """Every table the service uses: a server started with ``CREATE_TABLES=true`` on one
    empty store (its API and its background work, the webhook outbox among them), and
    ``shengji migrate`` on another, leave the same schema, object for object."""
    started: contextlib.AbstractContextManager[Store] = (
        _pg_store(store.url)
        if store.url
        else contextlib.nullcontext(_sqlite_store(tmp_path / "started"))
    )
    with started as other:
        settings = msgspec.structs.replace(
            other.settings, create_tables=True, postgres_pool_size=2, postgres_max_overflow=2
        )
        with TestClient(build_app(settings)) as client:
            assert client.get("/readyz").status_code == 200
        expected = _layout(other)
    migrate(store.settings)
    made = _layout(store)
    assert made == expected
    assert {row[0] for row in made} >= ({"relation"} if store.url else {"file"})


def test_a_replica_started_after_the_migration_stores_and_keeps_events(store: Store) -> None:
    migrate(store.settings)
    replica = build_service(store.settings)  # CREATE_TABLES=false
    try:
        match_id = create_match(replica, preset("standard"), name="after migrate")
    finally:
        replica.close()
    migrate(store.settings)
    again = build_service(store.settings)
    try:
        assert again.get_match(match_id).name == "after migrate"
    finally:
        again.close()


@pytest.mark.postgres
def test_migrate_replaces_a_stale_insert_function(pg_store: Store) -> None:
    migrate(pg_store.settings)
    assert pg_store.url is not None
    schema = sql.Identifier(pg_store.settings.postgres_schema)
    with psycopg.connect(pg_store.url, autocommit=True) as conn:
        conn.execute(  # the library's own function: no table lock (an older release)
            sql.SQL(
                "CREATE OR REPLACE FUNCTION {s}.es_insert_events_uuid"
                "(events {s}.stored_event_uuid[]) RETURNS SETOF bigint LANGUAGE plpgsql "
                "AS $BODY$ BEGIN RETURN QUERY INSERT INTO {s}.shengji_events AS t "
                "(originator_id, originator_version, topic, state) SELECT originator_id, "
                "originator_version, topic, state FROM unnest(events) "
                "RETURNING notification_id; END; $BODY$"
            ).format(s=schema)
        )
    function = pg_store.objects[3]
    assert check(pg_store.settings).stale == (function,)
    report = migrate(pg_store.settings)
    assert (report.created, report.replaced) == ((), (function,))
    assert report.lines() == [f"migrate: replaced {function} (changed definition)"]
    assert check(pg_store.settings).up_to_date


@pytest.mark.postgres
def test_concurrent_migrations_create_the_schema_once(pg_store: Store) -> None:
    reports = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            reports.append(migrate(pg_store.settings))
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=run) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors
    assert sorted(len(r.created) for r in reports) == [0, 0, len(pg_store.objects)]


def test_an_unreachable_store_is_a_migration_error_without_the_password() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    settings = Settings.from_env(
        {
            "DATABASE_URL": f"postgresql://shengji:hunter2@127.0.0.1:{port}/db",
            "POSTGRES_CONNECT_TIMEOUT": "1",
        }
    )
    with pytest.raises(MigrationError) as failed:
        migrate(settings)
    assert "hunter2" not in str(failed.value)


# -- waiting for the schema (infra.serve with CREATE_TABLES=false) ----------------------------


def test_wait_for_schema_gives_up_then_sees_the_migration(store: Store) -> None:
    """On a clock of the test's own: a look at the store takes what it takes (more on a
    loaded machine); the waits between looks are what the deadline counts."""
    reasons: list[str] = []
    naps: list[float] = []
    now = [0.0]

    def nap(seconds: float) -> None:
        naps.append(seconds)
        now[0] += seconds

    def clock() -> float:
        return now[0]

    assert not wait_for_schema(
        store.settings, 0.5, interval=0.2, on_wait=reasons.append, sleep=nap, clock=clock
    )
    assert naps == [0.2, 0.2]  # looks at 0, 0.2 and 0.4 s; the next would be past 0.5 s
    assert reasons == ["missing " + ", ".join(store.objects)] * 2
    migrate(store.settings)
    assert wait_for_schema(store.settings, 0.5, interval=0.2, sleep=nap, clock=clock)
    assert len(naps) == 2  # there at the first look


def test_a_look_at_the_schema_leaves_the_embedded_store_to_its_writer(
    sqlite_store: Store,
) -> None:
    """A server waiting for the schema looks at the file once a second; the look is a read,
    so it neither fails on nor holds the writer's claim (a migration started while a look
    was under way was turned away as "another process writes the embedded store")."""
    path = sqlite_store.settings.sqlite_path
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    holder = os.open(f"{path}.writer", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(holder, fcntl.LOCK_EX | fcntl.LOCK_NB)  # as another process's writer
        assert check(sqlite_store.settings).missing == sqlite_store.objects
        with pytest.raises(MigrationError, match="another process writes"):
            migrate(sqlite_store.settings)  # creating is the writer's, not a look's
    finally:
        os.close(holder)
    assert migrate(sqlite_store.settings).created == sqlite_store.objects
    assert check(sqlite_store.settings).ready


# -- the command line -----------------------------------------------------------------------


def _run(
    argv: list[str],
    environ: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> tuple[int, str, str]:
    for name in ("DATABASE_URL", "PERSISTENCE", "SQLITE_PATH", "POSTGRES_SCHEMA"):
        monkeypatch.delenv(name, raising=False)
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(SystemExit) as stop:
        cli.main(argv)
    out, err = capsys.readouterr()
    code = stop.value.code
    assert isinstance(code, int)
    return code, out, err


def test_cli_migrate_twice_is_a_no_op(
    store: Store, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = _run(["migrate", "--check"], store.env, monkeypatch, capsys)
    assert code == EXIT_PENDING
    assert out.splitlines() == [f"migrate --check: missing {o}" for o in store.objects]

    code, out, _ = _run(["migrate"], store.env, monkeypatch, capsys)
    assert code == 0
    assert out.splitlines() == [f"migrate: created {o}" for o in store.objects]

    code, out, _ = _run(["migrate"], store.env, monkeypatch, capsys)
    assert (code, out) == (0, f"migrate: up to date ({', '.join(store.objects)})\n")

    code, out, _ = _run(["migrate", "--check"], store.env, monkeypatch, capsys)
    assert (code, out) == (0, "migrate --check: up to date\n")


@pytest.mark.parametrize(
    ("environ", "code", "message"),
    [
        ({"PERSISTENCE": "mysql"}, EXIT_SETTINGS, "PERSISTENCE must be one of"),
        ({"DATABASE_URL": "mysql://u@h/db"}, EXIT_SETTINGS, "DATABASE_URL must start with"),
        ({"CREATE_TABLES": "maybe"}, EXIT_SETTINGS, "CREATE_TABLES must be true or false"),
        (
            {"DATABASE_URL": "postgresql://u:pw@127.0.0.1:9/db", "POSTGRES_CONNECT_TIMEOUT": "1"},
            EXIT_FAILED,
            "shengji migrate: failed on the postgres store",
        ),
    ],
)
def test_cli_migrate_refuses_bad_settings_and_reports_failures(
    environ: dict[str, str],
    code: int,
    message: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    got, out, err = _run(["migrate"], environ, monkeypatch, capsys)
    assert (got, out) == (code, "")
    assert message in err


def test_cli_migrate_on_popo_has_nothing_to_do(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = _run(["migrate"], {"PERSISTENCE": "popo"}, monkeypatch, capsys)
    assert code == 0 and "no schema to create" in out

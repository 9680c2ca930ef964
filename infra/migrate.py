"""Schema migration: every table the service uses, once, before the replicas start.

In production the replicas run with ``CREATE_TABLES=false`` (no DDL from serving
processes) and one ``shengji migrate`` (the Kubernetes Job ``k8s/migrate-job.yaml``)
creates the schema of the configured store (:class:`~infra.settings.Settings`): every
store of :data:`infra.schema.STORES` — the game's events (on PostgreSQL their table, its
notification-id index, the composite type and the insert function that keeps the table
lock, :class:`infra.pgstore.LockingInsertRecorder`; a function whose body differs from
this release's is replaced), the read models and their tracking table
(docs/decisions.md D-readmodels), the players' keys, and the webhook outbox's schema,
events and tracking tables (docs/decisions.md D-migrate).

The objects are created by each store's own recorder (``create_table``) and named from its
statements (:func:`infra.schema.objects`), so they are exactly those the service uses.
Running it again is a no-op: when every object is present and the function up to date, no
statement that changes the schema is sent. Concurrent runs are serialised by a PostgreSQL
advisory lock.

:func:`wait_for_schema` lets ``infra.serve`` wait (bounded) for the Job before it
listens: a process whose recorder started before the composite type existed could not
insert (the library registers the type's adapter when the recorder is built).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Final

import msgspec
import psycopg
from eventsourcing.postgres import PostgresApplicationRecorder

from infra.schema import SchemaState, inspect, objects, open_parts
from infra.settings import Settings, SettingsError, parse_database_url
from infra.store import build_service
from services.accounts.keys import MemoryKeys
from services.game import GameService

ADVISORY_LOCK_KEY: Final = 0x5348_454E_474A_49  # "SHENGJI": one migration at a time
EXIT_OK: Final = 0
EXIT_FAILED: Final = 1
EXIT_SETTINGS: Final = 2
EXIT_PENDING: Final = 3
"""``migrate --check``: the schema needs a migration."""


class MigrationError(RuntimeError):
    """The store could not be migrated (unreachable, no rights, …)."""


@dataclass(frozen=True, slots=True)
class MigrationReport:
    backend: str
    created: tuple[str, ...]
    replaced: tuple[str, ...]
    unchanged: tuple[str, ...]

    @property
    def changed(self) -> bool:
        return bool(self.created or self.replaced)

    def lines(self) -> list[str]:
        if self.backend == "popo":
            return ["migrate: PERSISTENCE=popo keeps events in memory: no schema to create"]
        lines = [f"migrate: created {name}" for name in self.created]
        lines += [f"migrate: replaced {name} (changed definition)" for name in self.replaced]
        if not self.changed:
            lines.append(f"migrate: up to date ({', '.join(self.unchanged)})")
        return lines


# -- migration -------------------------------------------------------------------------------


def _reason(error: Exception) -> str:
    """``error`` on one line (libpq's messages span several)."""
    return " ".join(f"{type(error).__name__}: {error}".split())


def _connect_once(settings: Settings) -> None:
    """Fail fast, with libpq's own reason, on a store that cannot be reached (before a
    connection pool and its background threads are built)."""
    assert settings.database_url is not None  # Settings checked it
    target = parse_database_url(settings.database_url)
    with psycopg.connect(
        dbname=target.dbname,
        host=target.host,
        port=target.port,
        user=target.user,
        password=target.password,
        connect_timeout=settings.postgres_connect_timeout,
    ):
        pass


@contextlib.contextmanager
def _schema_service(settings: Settings, *, writing: bool) -> Iterator[GameService]:
    """A service on the store that creates nothing by itself (two connections at least:
    one holds the advisory lock while the recorder creates the tables); a check
    (``writing=False``) leaves the embedded store's file to its writer, so a server
    polling for the schema never turns the migration away."""
    if settings.backend == "postgres":
        _connect_once(settings)
    settings = msgspec.structs.replace(
        settings,
        create_tables=False,
        postgres_pool_size=max(2, settings.postgres_pool_size),
    )
    service = build_service(
        settings, keys=MemoryKeys(), writing=writing
    )  # the keys' table: infra.schema
    try:
        yield service
    finally:
        service.close()


@contextlib.contextmanager
def _migration_lock(service: GameService) -> Iterator[None]:
    recorder = service.recorder
    if not isinstance(recorder, PostgresApplicationRecorder):
        yield
        return
    with recorder.datastore.get_connection() as conn:
        conn.execute("SELECT pg_advisory_lock(%s)", (ADVISORY_LOCK_KEY,))
        try:
            yield
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s)", (ADVISORY_LOCK_KEY,))


def migrate(settings: Settings) -> MigrationReport:
    """Create what the store lacks, replace a stale insert function; else change nothing."""
    if settings.backend == "popo":
        return MigrationReport("popo", (), (), ())
    try:
        with (
            _schema_service(settings, writing=True) as service,
            _migration_lock(service),
            open_parts(settings, service) as parts,
        ):
            wanted = objects(parts)
            before = inspect(service, wanted)
            for part in parts:
                state = inspect(service, objects((part,)))
                if not state.up_to_date:
                    part.create()
            after = inspect(service, wanted)
    except Exception as e:
        raise MigrationError(_reason(e)) from e
    if not after.up_to_date:
        raise MigrationError(
            "the schema is still incomplete after creating it: "
            + ", ".join(after.missing + after.stale)
        )
    return MigrationReport(
        settings.backend,
        created=before.missing,
        replaced=before.stale,
        unchanged=tuple(name for name in before.present if name not in before.stale),
    )


def check(settings: Settings) -> SchemaState:
    """The store's schema as it is (``migrate --check``), changing nothing."""
    if settings.backend == "popo":
        return SchemaState((), ())
    try:
        with (
            _schema_service(settings, writing=False) as service,
            open_parts(settings, service) as parts,
        ):
            return inspect(service, objects(parts))
    except Exception as e:
        raise MigrationError(_reason(e)) from e


def wait_for_schema(
    settings: Settings,
    timeout: float,
    *,
    interval: float = 1.0,
    on_wait: Callable[[str], None] | None = None,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> bool:
    """Poll until every schema object exists (True) or ``timeout`` seconds pass (False).

    ``on_wait`` is told why each failed attempt failed (missing objects, no connection);
    ``sleep`` and ``clock`` are the waits' and the deadline's (tests pass their own).
    """
    deadline = clock() + timeout
    while True:
        try:
            state = check(settings)
            if state.ready:
                return True
            reason = "missing " + ", ".join(state.missing)
        except MigrationError as e:
            reason = str(e)
        if clock() + interval > deadline:
            return False
        if on_wait is not None:
            on_wait(reason)
        sleep(interval)


# -- the command line ------------------------------------------------------------------------


def add_migrate_parser(commands: Any) -> None:
    """``shengji migrate [--check]`` (``commands``: the CLI's subparsers)."""
    parser = commands.add_parser(
        "migrate",
        help="create every table the service uses (a no-op when they are there)",
        description=(
            "Create the tables, indexes, types and functions of every store the service uses "
            "(the events, the read models, the players' keys, the webhook outbox) on the "
            "store configured by the environment (DATABASE_URL, PERSISTENCE, SQLITE_PATH, "
            "POSTGRES_SCHEMA). Serving replicas run with CREATE_TABLES=false."
        ),
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help=f"change nothing; exit {EXIT_PENDING} when a migration is needed",
    )


def run_migrate(args: argparse.Namespace, environ: dict[str, str] | None = None) -> int:
    """Run ``migrate``; the exit status (0 done or up to date, 1 failed, 2 bad settings,
    3 ``--check`` found work to do)."""
    env = dict(os.environ) if environ is None else environ
    try:
        settings = Settings.from_env(env)
    except SettingsError as e:
        sys.stderr.write(f"shengji migrate: {e}\n")
        return EXIT_SETTINGS
    try:
        if args.check:
            state = check(settings)
            for name in state.missing:
                sys.stdout.write(f"migrate --check: missing {name}\n")
            for name in state.stale:
                sys.stdout.write(f"migrate --check: out of date {name}\n")
            if state.up_to_date:
                sys.stdout.write("migrate --check: up to date\n")
                return EXIT_OK
            return EXIT_PENDING
        report = migrate(settings)
    except MigrationError as e:
        sys.stderr.write(f"shengji migrate: failed on the {settings.backend} store: {e}\n")
        return EXIT_FAILED
    sys.stdout.write("\n".join(report.lines()) + "\n")
    return EXIT_OK

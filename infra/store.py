"""The store of the settings: the eventsourcing library's environment, the game service
on it, and what lives beside it (the webhook outbox's tables, the players' keys).

Part of the composition root (``infra.bootstrap`` builds the app on it; ``shengji
migrate`` and ``shengji rebuild`` use it alone): POPO in tests, the embedded SQLite file
by default, PostgreSQL in production (docs/decisions.md F1). Infra may import services;
services never import infra.
"""

from __future__ import annotations

from collections.abc import Callable

import psycopg
from psycopg import sql

from infra.keys import PostgresKeys, SQLiteKeys, private_file
from infra.pgstore import RECORDER_TOPIC
from infra.settings import Settings, parse_database_url
from infra.writerlock import claim_writer
from services.accounts.keys import KeyStore, MemoryKeys
from services.game import Clock, GameService, SeedSource
from services.saves import Saves
from services.sources import new_seed, utc_now


def persistence_env(settings: Settings) -> dict[str, str]:
    """The eventsourcing library's environment for ``settings``' store.

    Every key the chosen module reads is given explicitly, so a stray variable of the
    process environment (which the library merges in) cannot redirect the store.
    """
    cache = str(settings.aggregate_cache_maxsize)
    if settings.backend == "popo":
        return {"PERSISTENCE_MODULE": "eventsourcing.popo", "AGGREGATE_CACHE_MAXSIZE": cache}
    create = "y" if settings.create_tables else "n"
    if settings.backend == "sqlite":
        return {
            # The library's own recorder: WAL, synchronous=FULL (a COMMIT is on disk).
            "PERSISTENCE_MODULE": "eventsourcing.sqlite",
            "SQLITE_DBNAME": str(settings.sqlite_path),
            "SQLITE_LOCK_TIMEOUT": str(settings.sqlite_lock_timeout),
            "CREATE_TABLE": create,
            # The embedded store has one writer, this process: every save refreshes the
            # aggregate cache, so a load need not ask the file for newer events.
            "AGGREGATE_CACHE_MAXSIZE": cache,
            "AGGREGATE_CACHE_FASTFORWARD": "n",
        }
    assert settings.database_url is not None  # Settings checked it
    target = parse_database_url(settings.database_url)
    return {
        "PERSISTENCE_MODULE": "eventsourcing.postgres",
        # The library's recorder, saving by one call of its stored insert function, which
        # infra.pgstore defines to take the table lock first.
        "APPLICATION_RECORDER_TOPIC": RECORDER_TOPIC,
        "POSTGRES_ENABLE_DB_FUNCTIONS": "y",
        "POSTGRES_DBNAME": target.dbname,
        "POSTGRES_HOST": target.host,
        "POSTGRES_PORT": str(target.port),
        "POSTGRES_USER": target.user,
        "POSTGRES_PASSWORD": target.password,
        "POSTGRES_POOL_SIZE": str(settings.postgres_pool_size),
        "POSTGRES_MAX_OVERFLOW": str(settings.postgres_max_overflow),
        "POSTGRES_CONNECT_TIMEOUT": str(settings.postgres_connect_timeout),
        "POSTGRES_SCHEMA": settings.postgres_schema,
        "CREATE_TABLE": create,
        "AGGREGATE_CACHE_MAXSIZE": cache,
        # A match's writes go to its owner (the ingress's hash of its id); the hub brings
        # the cache up to what other processes save, and a command decided on a stale
        # copy is decided again once (docs/decisions.md D-owner).
        "AGGREGATE_CACHE_FASTFORWARD": "y" if settings.aggregate_cache_fastforward else "n",
    }


def build_service(
    settings: Settings,
    *,
    clock: Clock | None = None,
    seeds: SeedSource | None = None,
    keys: KeyStore | None = None,
    saves: Saves | None = None,
    writing: bool = True,
) -> GameService:
    """A :class:`GameService` on the configured store, complete: its table policy, the
    players' ``keys`` (by default the store's own, :func:`key_store`), who hears of its
    saves. A service that only reads (``writing=False``: the schema's check) does not
    claim the embedded store's file, so it never keeps its writer out.

    ``clock`` and ``seeds`` default to the wall clock and the OS's CSPRNG (R35); tests
    pass fakes. Close the service (``service.close()``) to release its connections.
    """
    release = None
    if settings.backend == "sqlite" and not str(settings.sqlite_path).startswith(":memory:"):
        settings.sqlite_path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        if writing:
            release = claim_writer(str(settings.sqlite_path))  # one writing process per file
        private_file(settings.sqlite_path)
        private_file(f"{settings.sqlite_path}.outbox")
    on_close: list[Callable[[], None]] = [] if release is None else [release]
    try:
        if keys is None:
            keys = key_store(settings)
            if isinstance(keys, PostgresKeys):
                on_close.append(keys.close)  # its kept connection
        service = GameService(
            persistence_env(settings),
            clock=clock or utc_now,
            seeds=seeds or new_seed,
            pacing=settings.pacing,
            table=settings.table,
            keys=keys,
            saves=saves,
            on_close=on_close,
        )
    except BaseException:
        if release is not None:
            release()
        raise
    return service


def outbox_env(settings: Settings) -> dict[str, str]:
    """The webhook outbox's eventsourcing environment: the game's store, its own tables, so
    its events and tracking records commit together — on PostgreSQL a schema of its own
    (:func:`outbox_schema`, made here if missing when ``CREATE_TABLES`` is on, else by
    ``shengji migrate``), beside SQLite a file of its own (``<file>.outbox``). A second
    application creating its tables in the game's schema would replace the game's insert
    function (the library names it after the id type, not the table: docs/decisions.md D3).

    On PostgreSQL the outbox saves with the library's process recorder as shipped: its
    transaction takes the table lock and inserts the tracking record with the events. (The
    library's stored insert function inserts the events alone: through it, the outbox's
    position was never recorded, so it processed the whole log again on every catch-up.)"""
    env = persistence_env(settings)
    env.pop("APPLICATION_RECORDER_TOPIC", None)  # the outbox uses the library's recorder
    if settings.backend == "sqlite":
        env["SQLITE_DBNAME"] = f"{settings.sqlite_path}.outbox"
    elif settings.backend == "postgres":
        env["POSTGRES_SCHEMA"] = outbox_schema(settings)
        env["POSTGRES_ENABLE_DB_FUNCTIONS"] = "n"
        if settings.create_tables:
            create_outbox_schema(settings)
    return env


def outbox_schema(settings: Settings) -> str:
    """The webhook outbox's PostgreSQL schema: ``<schema>_webhooks``."""
    return f"{settings.postgres_schema or 'public'}_webhooks"


def outbox_schema_statement(settings: Settings) -> sql.Composed:
    """The statement that makes :func:`outbox_schema` if it is missing."""
    return sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(outbox_schema(settings)))


def create_outbox_schema(settings: Settings) -> None:
    assert settings.database_url is not None
    with psycopg.connect(settings.database_url, autocommit=True) as db:
        db.execute(outbox_schema_statement(settings))


def key_store(settings: Settings) -> KeyStore:
    """The players' keys beside the store (crypto-shredding, :mod:`infra.keys`); their
    table made if missing when ``CREATE_TABLES`` is on, else by ``shengji migrate``."""
    if settings.backend == "sqlite":
        return SQLiteKeys(f"{settings.sqlite_path}.keys", create=settings.create_tables)
    if settings.backend == "postgres":
        return PostgresKeys(settings, create=settings.create_tables)
    return MemoryKeys()

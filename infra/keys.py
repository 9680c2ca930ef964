"""Where the players' keys live (crypto-shredding, docs/players.md): outside the event
store, in a place that can really delete.

* SQLite: a file of its own beside the events' (``<file>.keys``) with ``secure_delete``
  (deleted rows are overwritten with zeros) and a WAL checkpoint after each erasure, so
  an erased key is not left in free pages or the log;
* PostgreSQL: a table ``<schema>.shengji_player_keys``; after a DELETE the row's old
  version lingers until VACUUM, which :meth:`PostgresKeys.erase` runs on the table. Its
  statements run on one kept connection (opened when first needed, again when it broke),
  not a new connection per key read (docs/decisions.md D-path).

Each makes its table when built with ``create`` (``CREATE_TABLES``), else ``shengji
migrate`` does (:mod:`infra.schema`: its ``create_table_statements``).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import weakref
from typing import Any
from uuid import UUID

import psycopg
from psycopg import sql

from infra.settings import Settings, parse_database_url

PRIVATE = 0o600
"""The mode of every file the service stores data in: the store, its outbox, the keys."""


def private_file(path: str | os.PathLike[str]) -> None:
    """Make ``path`` (if missing) with mode 0600 before SQLite opens it, and bring an
    existing one and its journal files (``-wal``, ``-shm``) to 0600: SQLite gives the files
    it makes beside a database the database's own mode, so none is world-readable."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, PRIVATE)
    os.close(fd)
    for suffix in ("", "-wal", "-shm", "-journal"):
        with contextlib.suppress(FileNotFoundError):
            os.chmod(f"{os.fspath(path)}{suffix}", PRIVATE)


class SQLiteKeys:
    def __init__(self, path: str, *, create: bool = True) -> None:
        self.path = path
        self._lock = threading.Lock()
        private_file(path)  # the keys: readable by the service's user only
        self.create_table_statements = [
            "CREATE TABLE IF NOT EXISTS player_keys (id TEXT PRIMARY KEY, key BLOB)"
        ]
        if create:
            self.create_table()

    def create_table(self) -> None:
        with self._lock, self._connect() as db:
            for statement in self.create_table_statements:
                db.execute(statement)
        db.close()

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=5)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=FULL")
        db.execute("PRAGMA secure_delete=ON")
        return db

    def get(self, account_id: UUID) -> bytes | None:
        with self._lock, self._connect() as db:
            row = db.execute("SELECT key FROM player_keys WHERE id=?", (account_id.hex,)).fetchone()
        db.close()
        return None if row is None else bytes(row[0])

    def create(self, account_id: UUID, key: bytes) -> None:
        with self._lock, self._connect() as db:
            db.execute("INSERT OR IGNORE INTO player_keys VALUES (?, ?)", (account_id.hex, key))
        db.close()

    def erase(self, account_id: UUID) -> None:
        with self._lock:
            db = self._connect()
            try:
                with db:
                    db.execute("DELETE FROM player_keys WHERE id=?", (account_id.hex,))
                db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            finally:
                db.close()


class PostgresKeys:
    def __init__(self, settings: Settings, *, create: bool = True) -> None:
        assert settings.database_url is not None
        target = parse_database_url(settings.database_url)
        self.conninfo = psycopg.conninfo.make_conninfo(
            dbname=target.dbname,
            host=target.host,
            port=str(target.port),
            user=target.user,
            password=target.password,
        )
        # beside the event tables: in their schema, or (none set, POSTGRES_SCHEMA's
        # default) where the connection's search_path puts them, as the library does
        schema = settings.postgres_schema
        names = (schema, "shengji_player_keys") if schema else ("shengji_player_keys",)
        self.table = sql.Identifier(*names)
        self.sql_create_statements = [
            sql.SQL("CREATE TABLE IF NOT EXISTS {} (id uuid PRIMARY KEY, key bytea)").format(
                self.table
            )
        ]
        self._lock = threading.Lock()
        self._db: psycopg.Connection[tuple[Any, ...]] | None = None
        if create:
            self.create_table()

    def create_table(self) -> None:
        with psycopg.connect(self.conninfo, autocommit=True) as db:
            for statement in self.sql_create_statements:
                db.execute(statement)

    def _execute(self, statement: sql.Composed, params: tuple[object, ...]) -> Any:
        """``statement`` on the kept connection (autocommit: it commits on its own, no
        transaction is left open), its first row (None: none). One thread at a time; a
        connection that broke is closed and opened again, once (what runs here may run
        twice: a read, an insert that ignores a key it has)."""
        with self._lock:
            for attempt in (1, 2):
                db = self._db
                if db is None or db.closed:
                    db = self._db = psycopg.connect(self.conninfo, autocommit=True)
                    weakref.finalize(self, db.close)  # a service never closed: closed with it
                try:
                    cursor = db.execute(statement, params)
                    return cursor.fetchone() if cursor.description else None
                except psycopg.OperationalError:
                    self._db = None
                    with contextlib.suppress(psycopg.Error):
                        db.close()
                    if attempt == 2:
                        raise
            return None  # pragma: no cover - the loop returns or raises

    def get(self, account_id: UUID) -> bytes | None:
        query = sql.SQL("SELECT key FROM {} WHERE id=%s").format(self.table)
        row = self._execute(query, (account_id,))
        return None if row is None else bytes(row[0])

    def create(self, account_id: UUID, key: bytes) -> None:
        insert = sql.SQL("INSERT INTO {} VALUES (%s, %s) ON CONFLICT DO NOTHING")
        self._execute(insert.format(self.table), (account_id, key))

    def erase(self, account_id: UUID) -> None:
        """Delete the key and VACUUM its table (rare: a connection of its own)."""
        with psycopg.connect(self.conninfo, autocommit=True) as db:
            db.execute(sql.SQL("DELETE FROM {} WHERE id=%s").format(self.table), (account_id,))
            db.execute(sql.SQL("VACUUM {}").format(self.table))

    def close(self) -> None:
        """Close the kept connection (the service's ``on_close``); a later call opens
        another."""
        with self._lock:
            db, self._db = self._db, None
        if db is not None:
            db.close()

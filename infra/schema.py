"""Every table the service uses, declared once (docs/decisions.md D-migrate).

A process opens four stores on its settings' database, each with objects of its own:

* the game's events: the library's application recorder (:mod:`infra.pgstore` on
  PostgreSQL: the table, its index, the composite type and the insert function);
* the lists' read models beside them (:mod:`infra.readviews`: their tables and tracking
  table, docs/decisions.md D-readmodels);
* the players' keys (:mod:`infra.keys`: a table, beside SQLite in a file of its own);
* the webhook outbox: the library's process recorder, in a schema of its own on
  PostgreSQL, a file of its own beside SQLite (:func:`infra.store.outbox_env`).

:data:`STORES` declares them: each entry opens its store the way the service opens it (the
same functions, ``create`` off) and gives the statements its ``create_table`` runs. What
``shengji migrate`` creates, what ``migrate --check`` and a server with
``CREATE_TABLES=false`` look for, and what the reports name, is read from those statements
(:func:`objects`): no table name is listed by hand. A statement whose object cannot be
read is an error, not a table left out.
"""

from __future__ import annotations

import contextlib
import re
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Final

import msgspec
from eventsourcing.postgres import PostgresApplicationRecorder, PostgresRecorder
from eventsourcing.sqlite import SQLiteApplicationRecorder, SQLiteRecorder
from psycopg import sql

from infra.careerviews import open_career_view
from infra.keys import PostgresKeys, SQLiteKeys
from infra.ratingviews import open_ratings_view
from infra.readviews import open_view
from infra.settings import Settings
from infra.socialviews import open_social_view
from infra.store import key_store, outbox_env, outbox_schema_statement
from services.game import GameService
from services.webhooks.outbox import WebhookOutbox


@dataclass(frozen=True, slots=True)
class SchemaObject:
    """One object a store's statements create."""

    kind: str
    """``schema``, ``table``, ``index``, ``type`` or ``function``."""
    name: str
    """As reports show it: ``<schema>.<name>`` on PostgreSQL, ``<name> in <file>`` on
    SQLite."""
    ref: str
    """The name as the statement writes it (quoted, qualified), for the catalog."""
    file: str = ""
    """The SQLite file it lives in."""
    body: str | None = None
    """A function's body as this release defines it."""

    def __str__(self) -> str:
        return f"{self.kind} {self.name}"


@dataclass(frozen=True, slots=True)
class Part:
    """One store's schema, as its recorder would create it."""

    store: str
    statements: tuple[str, ...]
    """The statements ``create`` runs, in order."""
    create: Callable[[], None]
    file: str = ""
    """The SQLite file they run in (empty on PostgreSQL)."""


Opener = Callable[[Settings, GameService, contextlib.ExitStack], Part | None]
"""Opens a store on the settings and the game's service (what it opens closes with the
stack); None: the store keeps nothing on this backend (POPO)."""


@dataclass(frozen=True, slots=True)
class Store:
    name: str
    open: Opener


# -- the stores -------------------------------------------------------------------------------


def _postgres(recorder: PostgresRecorder | PostgresKeys) -> tuple[str, ...]:
    return tuple(s.as_string() for s in recorder.sql_create_statements)


def _sqlite(recorder: SQLiteRecorder | SQLiteKeys) -> tuple[str, ...]:
    return tuple(recorder.create_table_statements)


def _events(settings: Settings, service: GameService, _: contextlib.ExitStack) -> Part | None:
    recorder = service.recorder
    if isinstance(recorder, PostgresApplicationRecorder):
        return Part("events", _postgres(recorder), recorder.create_table)
    if isinstance(recorder, SQLiteApplicationRecorder):
        return Part("events", _sqlite(recorder), recorder.create_table, str(settings.sqlite_path))
    return None


def _view(
    name: str,
    open_: Callable[..., object],
    settings: Settings,
    service: GameService,
    _: contextlib.ExitStack,
) -> Part | None:
    """A read view's tables (the lists', the ratings'): its recorder's own statements."""
    view = open_(service, create=False)
    if isinstance(view, PostgresRecorder):
        return Part(name, _postgres(view), view.create_table)
    if isinstance(view, SQLiteRecorder):
        return Part(name, _sqlite(view), view.create_table, str(settings.sqlite_path))
    return None


def _keys(settings: Settings, _: GameService, __: contextlib.ExitStack) -> Part | None:
    keys = key_store(msgspec.structs.replace(settings, create_tables=False))
    if isinstance(keys, PostgresKeys):
        return Part("player keys", _postgres(keys), keys.create_table)
    if isinstance(keys, SQLiteKeys):
        return Part("player keys", _sqlite(keys), keys.create_table, keys.path)
    return None


def _outbox(settings: Settings, service: GameService, stack: contextlib.ExitStack) -> Part | None:
    if settings.backend == "popo":
        return None
    env = outbox_env(msgspec.structs.replace(settings, create_tables=False))
    outbox = stack.enter_context(contextlib.closing(WebhookOutbox(env, leader=service)))
    recorder = outbox.recorder
    if isinstance(recorder, PostgresRecorder):
        schema = outbox_schema_statement(settings)

        def create() -> None:
            with recorder.datastore.get_connection() as conn:
                conn.execute(schema)
            recorder.create_table()  # which registers the type it made

        return Part("webhook outbox", (schema.as_string(), *_postgres(recorder)), create)
    assert isinstance(recorder, SQLiteRecorder)
    return Part("webhook outbox", _sqlite(recorder), recorder.create_table, env["SQLITE_DBNAME"])


STORES: Final[tuple[Store, ...]] = (
    Store("events", _events),
    Store("read models", partial(_view, "read models", open_view)),
    Store("ratings", partial(_view, "ratings", open_ratings_view)),
    Store("record", partial(_view, "record", open_career_view)),
    Store("friends", partial(_view, "friends", open_social_view)),
    Store("player keys", _keys),
    Store("webhook outbox", _outbox),
)
"""Every store a process opens (the module docstring), in the order they are created."""


@contextlib.contextmanager
def open_parts(settings: Settings, service: GameService) -> Iterator[tuple[Part, ...]]:
    """The schema of every store of :data:`STORES` on ``service``'s store (none on POPO)."""
    with contextlib.ExitStack() as stack:
        parts = [store.open(settings, service, stack) for store in STORES]
        yield tuple(part for part in parts if part is not None)


# -- what the statements create -----------------------------------------------------------------

_NAME: Final = r'(?:"[^"]+"|\w+)'
_QUALIFIED: Final = rf"{_NAME}(?:\.{_NAME})?"
_CREATES: Final = (
    ("schema", re.compile(rf"CREATE SCHEMA IF NOT EXISTS (?P<name>{_NAME})")),
    ("table", re.compile(rf"CREATE TABLE IF NOT EXISTS (?P<name>{_QUALIFIED})")),
    (
        "index",
        re.compile(
            rf"CREATE (?:UNIQUE )?INDEX IF NOT EXISTS (?P<name>{_NAME}) ON (?P<on>{_QUALIFIED})"
        ),
    ),
    ("type", re.compile(rf"CREATE TYPE (?P<name>{_QUALIFIED})")),
    ("function", re.compile(rf"CREATE OR REPLACE FUNCTION (?P<name>{_QUALIFIED})\(")),
)
_BODY: Final = re.compile(r"\$BODY\$(.*)\$BODY\$", re.DOTALL)


class UnreadableStatementError(ValueError):
    """A store's statement creates something :func:`objects` cannot name."""


def _parts(name: str) -> list[str]:
    return [p.strip('"') for p in re.findall(_NAME, name)]


def _object(statement: str, file: str) -> SchemaObject:
    text = " ".join(statement.split())
    for kind, pattern in _CREATES:
        found = pattern.match(text)
        if found is None:
            continue
        ref = found["name"]
        if kind == "index" and file == "":  # an index lives in its table's schema
            schema = _parts(found["on"])[:-1]
            ref = ".".join(sql.Identifier(p).as_string() for p in [*schema, *_parts(ref)])
        body = _BODY.search(statement) if kind == "function" else None
        if file:
            return SchemaObject(kind, f"{_parts(ref)[-1]} in {Path(file).name}", ref, file)
        shown = ".".join(_parts(ref))
        return SchemaObject(kind, shown, ref, body=None if body is None else body[1])
    raise UnreadableStatementError(f"migrate cannot tell what this creates: {text[:200]}")


def objects(parts: Sequence[Part]) -> tuple[SchemaObject, ...]:
    """What ``parts``' statements create, in order; an object defined twice (a function
    replaced by a later statement) once, as last defined."""
    found: dict[tuple[str, str, str], SchemaObject] = {}
    for part in parts:
        for statement in part.statements:
            made = _object(statement, part.file)
            found[(made.kind, made.file, made.ref)] = made
    return tuple(found.values())


# -- what the store has -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SchemaState:
    """Which of the store's schema objects exist (``kind name`` strings)."""

    present: tuple[str, ...]
    missing: tuple[str, ...]
    stale: tuple[str, ...] = ()
    """Present, but not as this release defines it (a function's body)."""

    @property
    def ready(self) -> bool:
        """Every object exists: a serving process can start."""
        return not self.missing

    @property
    def up_to_date(self) -> bool:
        return not self.missing and not self.stale


def _postgres_has(conn: Any, o: SchemaObject) -> tuple[bool, bool]:
    """(present, stale) of ``o`` in the database of ``conn``."""
    if o.kind == "schema":
        row = conn.execute(
            "SELECT count(*) AS n FROM pg_catalog.pg_namespace WHERE nspname = %s", (o.name,)
        ).fetchone()
        return row["n"] > 0, False
    if o.kind in ("table", "index"):
        row = conn.execute("SELECT to_regclass(%s) IS NOT NULL AS ok", (o.ref,)).fetchone()
        return row["ok"], False
    if o.kind == "type":
        row = conn.execute("SELECT to_regtype(%s) IS NOT NULL AS ok", (o.ref,)).fetchone()
        return row["ok"], False
    *schema, name = _parts(o.ref)
    rows = conn.execute(
        "SELECT p.prosrc FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n "
        "ON n.oid = p.pronamespace WHERE n.nspname = %s AND p.proname = %s",
        (schema[0] if schema else "public", name),
    ).fetchall()
    bodies = [r["prosrc"] for r in rows]
    return bool(bodies), bool(bodies) and o.body is not None and o.body not in bodies


def _sqlite_names(file: str) -> set[tuple[str, str]]:
    """The (type, name) of every object in ``file`` (none when it is missing)."""
    if not Path(file).exists():
        return set()
    db = sqlite3.connect(f"file:{file}?mode=ro", uri=True)
    try:
        return {(t, n) for t, n in db.execute("SELECT type, name FROM sqlite_master")}
    finally:
        db.close()


def inspect(service: GameService, wanted: Sequence[SchemaObject]) -> SchemaState:
    """Which of ``wanted`` the store of ``service`` has."""
    seen: dict[SchemaObject, tuple[bool, bool]] = {}
    recorder = service.recorder
    if isinstance(recorder, PostgresApplicationRecorder):
        with recorder.datastore.get_connection() as conn:
            seen = {o: _postgres_has(conn, o) for o in wanted}
    else:
        files = {o.file: _sqlite_names(o.file) for o in wanted}
        seen = {o: ((o.kind, _parts(o.ref)[-1]) in files[o.file], False) for o in wanted}
    return SchemaState(
        present=tuple(str(o) for o, (ok, _) in seen.items() if ok),
        missing=tuple(str(o) for o, (ok, _) in seen.items() if not ok),
        stale=tuple(str(o) for o, (ok, old) in seen.items() if ok and old),
    )

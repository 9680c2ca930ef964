"""A read view in SQL tables beside the events (docs/decisions.md D-readmodels): what the
lists' views (:mod:`infra.readviews`) and the ratings' (:mod:`infra.ratingviews`) do the
same way on SQLite and PostgreSQL.

* :class:`SqlView` — a batch written in one transaction after checking that the view's
  position is the one the batch started from (:meth:`SqlView.check_position`: the file's
  write lock on SQLite, ``SELECT … FOR UPDATE`` on the tracking row on PostgreSQL), its
  tracking record by the library's own statement, the rows emptied with the position;
* :func:`open_sql_view` — the view of a service's store (its datastore), its tables made
  by the library's ``create_table()`` if asked;
* :func:`kept` — who keeps the view up to the log in a process: its follower, woken by
  the process's saves and the hub's news of others' (every process but a PostgreSQL
  ``api`` one, which waits for the worker's: :class:`~services.readmodels.runner.Watcher`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, TypeVar
from uuid import UUID

from eventsourcing.persistence import IntegrityError, Tracking
from eventsourcing.postgres import PostgresApplicationRecorder, PostgresDatastore
from eventsourcing.sqlite import SQLiteApplicationRecorder, SQLiteDatastore
from psycopg.sql import SQL, Composed, Identifier

from infra.localhub import InProcessHub, LocalHub
from infra.settings import Settings
from services.game import GameService
from services.readmodels.runner import Follower, Freshness, Watcher
from services.readmodels.tracked import PositionMovedError, TrackedView

V = TypeVar("V", bound=TrackedView[Any])


class Statements(Protocol):
    """A view's statements (its tables' names qualified, its store's placeholder)."""

    emptied: list[str]
    """Delete every row of the view's own tables."""
    untrack: str
    """Delete the view's tracking record (its application name the parameter)."""


class SqlView:
    """The statements' use shared by a view's SQLite and PostgreSQL classes (module
    docstring); the class that mixes it in is a :class:`TrackedView` and the library's
    tracking recorder of its store."""

    ids_as_text: bool
    """SQLite keeps ids and flags as text and integers."""
    tracked: str
    datastore: Any
    insert_tracking_statement: Any
    """The library's (its tracking recorder sets it)."""
    sql: Statements

    def transaction(self, *, commit: bool) -> Any:
        return self.datastore.transaction(commit=commit)

    def create_table(self) -> None:
        """The view's tables (the library's tracking recorder of the store makes them)."""
        raise NotImplementedError

    def key(self, value: Any) -> Any:
        """An id as the store keeps it."""
        return str(value) if self.ids_as_text else value

    def flag(self, value: bool) -> Any:
        return int(value) if self.ids_as_text else value

    def check_position(self, c: Any, start: int) -> None:
        """:class:`PositionMovedError` unless the view is at ``start`` (the store's lock
        held until the transaction ends)."""
        raise NotImplementedError

    def write(self, c: Any, change: Any, tracking: Tracking) -> None:
        """``change`` and ``tracking`` in the transaction of ``c``."""
        raise NotImplementedError

    def store(self, change: Any, start: int, tracking: Tracking) -> None:
        with self.transaction(commit=True) as c:
            self.check_position(c, start)
            self.write(c, change, tracking)

    def write_tracking(self, c: Any, tracking: Tracking) -> None:
        """The library's own tracking statement (single-row tracking: the row moves forward
        only; RETURNING nothing means it would not)."""
        c.execute(
            self.insert_tracking_statement,
            {"application_name": self.tracked, "notification_id": tracking.notification_id},
        )
        if self.datastore.single_row_tracking and c.fetchone() is None:
            raise IntegrityError(f"tracking {tracking} is not beyond the view's position")

    def delete_all(self, c: Any) -> None:
        """Every row and the position, in the transaction of ``c``."""
        for statement in self.sql.emptied:
            c.execute(statement)
        c.execute(self.sql.untrack, (self.tracked,))

    def fetch_one(self, statement: str, params: tuple[Any, ...]) -> Any:
        with self.transaction(commit=False) as c:
            c.execute(statement, params)
            return c.fetchone()

    def fetch_all(self, statement: str, params: tuple[Any, ...] = ()) -> list[Any]:
        with self.transaction(commit=False) as c:
            c.execute(statement, params)
            return list(c.fetchall())


class SQLitePosition(SqlView):
    """The position on SQLite: a write first takes the file's write lock (waiting as long
    as the store's lock timeout), so the position read next is the one the transaction
    commits after (the library's one ``tracking`` table, by application name)."""

    select_max_tracking_id_statement: str

    def check_position(self, c: Any, start: int) -> None:
        c.execute(
            "UPDATE tracking SET notification_id = notification_id WHERE application_name = ?",
            (self.tracked,),
        )
        c.execute(self.select_max_tracking_id_statement, (self.tracked,))
        now = c.fetchone()[0] or 0
        if now != start:
            raise PositionMovedError(f"the view is at {now}, not {start}")


class PostgresPosition(SqlView):
    """The position on PostgreSQL: the view's tracking row locked (``FOR UPDATE``)."""

    lock_position: str

    def lock(self, tracking_table: str) -> None:
        """Call once from the constructor, with the view's qualified tracking table."""
        self.lock_position = (
            f"SELECT notification_id FROM {tracking_table} WHERE application_name = %s FOR UPDATE"
        )

    def check_position(self, c: Any, start: int) -> None:
        c.execute(self.lock_position, (self.tracked,))
        r = c.fetchone()
        now = 0 if r is None else r["notification_id"]
        if now != start:
            raise PositionMovedError(f"the view is at {now}, not {start}")


def as_uuid(value: Any) -> UUID:
    """An id as read from either store (text on SQLite)."""
    return value if isinstance(value, UUID) else UUID(str(value))


def qualified(schema: str) -> Callable[[str], str]:
    """A table's name in the game's PostgreSQL schema, quoted."""

    def q(table: str) -> str:
        return Composed([Identifier(schema), SQL("."), Identifier(table)]).as_string()

    return q


def postgres_ddl(statements: list[str]) -> list[Composed]:
    """Statements for the library's ``sql_create_statements``."""
    return [Composed([SQL(s)]) for s in statements]


def open_sql_view(
    service: GameService,
    *,
    sqlite: Callable[[SQLiteDatastore], V],
    postgres: Callable[[PostgresDatastore], V],
    memory: Callable[[], V],
    create: bool,
) -> V:
    """The view on ``service``'s store (its datastore), its tables made if ``create``; in
    memory on a POPO store."""
    recorder = service.recorder
    view: V
    if isinstance(recorder, SQLiteApplicationRecorder):
        view = sqlite(recorder.datastore)
    elif isinstance(recorder, PostgresApplicationRecorder):
        view = postgres(recorder.datastore)
    else:
        return memory()
    if create:
        assert isinstance(view, SqlView)
        view.create_table()
    return view


def kept(
    settings: Settings,
    service: GameService,
    hub: LocalHub,
    view: TrackedView[Any],
    follower: Callable[[], Follower],
) -> Freshness:
    """What keeps ``view`` up to the log in ``settings``' process (module docstring)."""
    if settings.backend == "postgres" and settings.process_role == "api":
        return Watcher(view)
    found = follower()
    service.saves.changed.add(found.poke)
    if not isinstance(hub, InProcessHub):
        hub.on_changed.append(found.poke)
    return found

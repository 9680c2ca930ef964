"""A read view in SQL tables beside the events (docs/decisions.md D-readmodels): what the
lists' views (:mod:`infra.readviews`) and the ratings' (:mod:`infra.ratingviews`) do the
same way on SQLite and PostgreSQL — a batch written in one transaction after checking that
the view's position is the one the batch started from (:mod:`infra.viewkeeping`'s checks:
the file's write lock on SQLite, the tracking row ``FOR UPDATE`` on PostgreSQL), its
tracking record by the library's own statement, the rows emptied with the position, and
the reads' one-row and all-rows queries. How a view is opened and kept up to the log is
:mod:`infra.viewkeeping`'s."""

from __future__ import annotations

from typing import Any, Protocol
from uuid import UUID

from eventsourcing.persistence import IntegrityError, Tracking
from eventsourcing.postgres import PostgresDatastore
from psycopg.sql import SQL, Composed

from infra.viewkeeping import check_postgres_position, check_sqlite_position


class Statements(Protocol):
    """A view's statements (its tables' names qualified, its store's placeholder)."""

    emptied: list[str]
    """Delete every row of the view's own tables."""
    untrack: str
    """Delete the view's tracking record (its application name the parameter)."""


class Joined:
    """A view in SQL tables written by :meth:`check_position` and :meth:`write` inside
    a transaction of its store: its batch alone (:meth:`store`) or beside the other
    views' of the same store, in one transaction (``store_together``,
    docs/decisions.md D-follow). Reads of one statement run outside any transaction on
    PostgreSQL (:meth:`reading`: the pool's connections commit by themselves), inside
    one on SQLite (the library's file lock)."""

    datastore: Any

    def check_position(self, c: Any, start: int) -> None:
        """:class:`PositionMovedError` unless the view is at ``start`` (the store's lock
        held until the transaction ends)."""
        raise NotImplementedError

    def write(self, c: Any, change: Any, tracking: Tracking) -> None:
        """``change`` and ``tracking`` in the transaction of ``c``."""
        raise NotImplementedError

    def joint(self) -> object | None:
        store: object = self.datastore
        return store

    def joint_transaction(self) -> Any:
        return self.datastore.transaction(commit=True)

    def store_in(self, c: Any, change: Any, start: int, tracking: Tracking) -> None:
        self.check_position(c, start)
        self.write(c, change, tracking)

    def store(self, change: Any, start: int, tracking: Tracking) -> None:
        with self.joint_transaction() as c:
            self.store_in(c, change, start, tracking)

    def reading(self) -> Any:
        """A cursor for one read statement."""
        if isinstance(self.datastore, PostgresDatastore):
            return self.datastore.cursor()
        return self.datastore.transaction(commit=False)


class SqlView(Joined):
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
        with self.reading() as c:
            c.execute(statement, params)
            return c.fetchone()

    def fetch_all(self, statement: str, params: tuple[Any, ...] = ()) -> list[Any]:
        with self.reading() as c:
            c.execute(statement, params)
            return list(c.fetchall())


class SQLitePosition(SqlView):
    """The position on SQLite (the library's one ``tracking`` table, by application name)."""

    select_max_tracking_id_statement: str

    def check_position(self, c: Any, start: int) -> None:
        check_sqlite_position(c, self.select_max_tracking_id_statement, self.tracked, start)


class PostgresPosition(SqlView):
    """The position on PostgreSQL: the view's tracking row locked (``FOR UPDATE``)."""

    tracking_table: str
    """The view's tracking table, qualified (set by the constructor)."""

    def check_position(self, c: Any, start: int) -> None:
        check_postgres_position(c, self.tracking_table, self.tracked, start)


def as_uuid(value: Any) -> UUID:
    """An id as read from either store (text on SQLite)."""
    return value if isinstance(value, UUID) else UUID(str(value))


def postgres_ddl(statements: list[str]) -> list[Composed]:
    """Statements for the library's ``sql_create_statements``."""
    return [Composed([SQL(s)]) for s in statements]

"""The PostgreSQL recorder: the library's, saving through one call that keeps the table lock.

The eventsourcing library's ``PostgresApplicationRecorder`` saves in a pipelined
transaction: ``SET LOCAL lock_timeout``, ``LOCK TABLE … IN EXCLUSIVE MODE`` (so notification
ids follow commit order and a reader of ``notification_id > last`` — the live hub, the
feed — never skips an event), ``NOTIFY``, ``INSERT … RETURNING``, then ``COMMIT``: the lock
is held across client/server round-trips, and every save in the database waits behind it.
The library's optional stored function (``POSTGRES_ENABLE_DB_FUNCTIONS``) saves in one call
but takes no table lock, so ids would no longer follow commit order.

:class:`LockingInsertRecorder` keeps the library's recorder and adds, the way the library's
own examples extend a recorder, one statement to its schema — a function
``<schema>.<table>_insert`` doing exactly the library's statements, lock first — and
implements the recorder's public ``insert_events`` by one call of it, under the library's
own retry of a call that failed on the connection (``InterfaceError``,
``OperationalError``). The lock is then held for no round-trip at all. Everything else —
loads (``select_events``, with its retry), notifications, the library's own function, the
tables — is the library's. A duplicate ``(originator_id, originator_version)`` raises the
library's ``IntegrityError`` (the optimistic concurrency of every command).

Measured by ``bench/pgstore_bench.py`` (docs/performance.md, "PostgreSQL store";
docs/decisions.md D-pgstore).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from eventsourcing.persistence import InterfaceError, OperationalError, StoredEvent
from eventsourcing.postgres import PostgresApplicationRecorder, PostgresDatastore
from eventsourcing.utils import retry
from psycopg import sql

RECORDER_TOPIC = "infra.pgstore:LockingInsertRecorder"
"""The library's ``APPLICATION_RECORDER_TOPIC`` that selects this recorder."""


class LockingInsertRecorder(PostgresApplicationRecorder):
    """The library's PostgreSQL application recorder, inserting by one locking call."""

    def __init__(
        self, datastore: PostgresDatastore, *, events_table_name: str = "stored_events"
    ) -> None:
        super().__init__(datastore, events_table_name=events_table_name)
        self.insert_function_name = f"{self.events_table_name}_insert"
        self.check_identifier_length(self.insert_function_name)
        schema = sql.Identifier(datastore.schema)
        function = sql.Identifier(self.insert_function_name)
        self.create_insert_function_statement = sql.SQL(
            "CREATE OR REPLACE FUNCTION {schema}.{function}(events {schema}.{event}[]) "
            "RETURNS SETOF bigint LANGUAGE plpgsql AS $BODY$ BEGIN "
            "SET LOCAL lock_timeout = '{timeout}s'; "
            "LOCK TABLE {schema}.{table} IN EXCLUSIVE MODE; "
            "NOTIFY {channel}; "
            "RETURN QUERY INSERT INTO {schema}.{table} AS t "
            "(originator_id, originator_version, topic, state) "
            "SELECT originator_id, originator_version, topic, state FROM unnest(events) "
            "RETURNING notification_id; END; $BODY$"
        ).format(
            schema=schema,
            function=function,
            event=sql.Identifier(self.stored_event_type_name),
            timeout=datastore.lock_timeout,
            table=sql.Identifier(self.events_table_name),
            channel=sql.Identifier(self.channel_name),
        )
        self.sql_create_statements.append(self.create_insert_function_statement)
        self.insert_function_call = sql.SQL("SELECT * FROM {schema}.{function}(%s)").format(
            schema=schema, function=function
        )

    @retry((InterfaceError, OperationalError), max_attempts=10, wait=0.2)
    def insert_events(
        self, stored_events: Sequence[StoredEvent], **kwargs: Any
    ) -> Sequence[int] | None:
        """Insert ``stored_events`` in one call; their notification ids, in order."""
        if not stored_events:
            return []
        events = [
            self.construct_pg_stored_event(e.originator_id, e.originator_version, e.topic, e.state)
            for e in stored_events
        ]
        with self.datastore.get_connection() as conn, conn.cursor() as curs:
            curs.execute(self.insert_function_call, (events,), prepare=True)
            return [row[self.insert_function_name] for row in curs.fetchall()]

"""The PostgreSQL recorder: the library's, whose stored insert function keeps the table lock.

The eventsourcing library's ``PostgresApplicationRecorder`` saves in one of two ways. By
default, a pipelined transaction: ``SET LOCAL lock_timeout``, ``LOCK TABLE … IN EXCLUSIVE
MODE`` (so notification ids follow commit order and a reader of ``notification_id > last``
— the live hub, the feed — never skips an event), ``NOTIFY``, ``INSERT … RETURNING``, then
``COMMIT``: the lock is held across client/server round-trips, and every save in the
database waits behind it. With ``POSTGRES_ENABLE_DB_FUNCTIONS`` it saves by one call of a
stored function instead, which takes no table lock.

:class:`LockingInsertRecorder` keeps the library's recorder whole — its saves by the stored
function, its loads (``select_events``), its notifications, each with the library's retry
of a call that failed on the connection (``InterfaceError``, ``OperationalError``) — and
extends it the way the library's own examples extend a recorder: it appends one statement
to the schema it creates, which defines the library's insert function
(``<schema>.es_insert_events_uuid``) again, in the same transaction, with the library's
statements and the table lock first. A save is then one call, and the lock is held for no
round-trip. A duplicate ``(originator_id, originator_version)`` raises the library's
``IntegrityError`` (the optimistic concurrency of every command). The call sends its rows
in psycopg's binary format (``%b``), not as the text of a composite array
(docs/decisions.md D-path4).

Measured by ``bench/pgstore_bench.py`` (docs/performance.md, "PostgreSQL store";
docs/decisions.md D-pgstore).
"""

from __future__ import annotations

from eventsourcing.postgres import PostgresApplicationRecorder, PostgresDatastore
from psycopg import sql

RECORDER_TOPIC = "infra.pgstore:LockingInsertRecorder"
"""The library's ``APPLICATION_RECORDER_TOPIC`` that selects this recorder (with
``POSTGRES_ENABLE_DB_FUNCTIONS=y``: ``infra.store.persistence_env``)."""


class LockingInsertRecorder(PostgresApplicationRecorder):
    """The library's PostgreSQL application recorder; its insert function locks the table."""

    def __init__(
        self, datastore: PostgresDatastore, *, events_table_name: str = "stored_events"
    ) -> None:
        super().__init__(datastore, events_table_name=events_table_name)
        schema = sql.Identifier(datastore.schema)
        table = sql.Identifier(self.events_table_name)
        self.create_locking_insert_function = sql.SQL(
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
            function=sql.Identifier(self.pg_function_name_insert_events),
            event=sql.Identifier(self.stored_event_type_name),
            timeout=datastore.lock_timeout,
            table=table,
            channel=sql.Identifier(self.channel_name),
        )
        """The insert function, lock first (after the library's own definition of it)."""
        self.sql_create_statements.append(self.create_locking_insert_function)
        self.sql_invoke_pg_function_insert_events = sql.SQL(
            "SELECT * FROM {schema}.{function}((%b))"
        ).format(schema=schema, function=sql.Identifier(self.pg_function_name_insert_events))
        """The library's call of its insert function, its rows sent in binary (``%b``:
        psycopg's binary dumper of the composite, which the library registers beside the
        text one) rather than as the text of a composite array, whose every ``state`` is
        hex-encoded and then quoted and escaped field by field (docs/decisions.md D-path4)."""

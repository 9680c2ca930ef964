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
round-trip. Its notification, sent on commit, names the schema and the first and last
notification ids it saved (the library's names none), so a live hub reaches a commit its own
process made without reading it back (:func:`notified_ids`, docs/decisions.md D-path5).
A duplicate ``(originator_id, originator_version)`` raises the library's
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
            "RETURNS SETOF bigint LANGUAGE plpgsql AS $BODY$ DECLARE ids bigint[]; BEGIN "
            "SET LOCAL lock_timeout = '{timeout}s'; "
            "LOCK TABLE {schema}.{table} IN EXCLUSIVE MODE; "
            "WITH saved AS (INSERT INTO {schema}.{table} AS t "
            "(originator_id, originator_version, topic, state) "
            "SELECT originator_id, originator_version, topic, state FROM unnest(events) "
            "RETURNING notification_id) "
            "SELECT array_agg(notification_id ORDER BY notification_id) INTO ids FROM saved; "
            "IF ids IS NOT NULL THEN PERFORM pg_notify({channel_name}, "
            "{notified} || ids[1] || ' ' || ids[cardinality(ids)]); END IF; "
            "RETURN QUERY SELECT unnest(ids); END; $BODY$"
        ).format(
            schema=schema,
            function=sql.Identifier(self.pg_function_name_insert_events),
            event=sql.Identifier(self.stored_event_type_name),
            timeout=datastore.lock_timeout,
            table=table,
            channel_name=sql.Literal(self.channel_name),
            notified=sql.Literal(f"{datastore.schema} "),
        )
        """The insert function, lock first (after the library's own definition of it); its
        notification names the schema and the first and last notification ids it saved
        (:func:`notified_ids`), so a live hub knows which rows a commit made without
        reading them (docs/decisions.md D-path5)."""
        self.sql_create_statements.append(self.create_locking_insert_function)
        invoke = sql.SQL("SELECT * FROM {schema}.{function}((%b))").format(
            schema=schema, function=sql.Identifier(self.pg_function_name_insert_events)
        )
        self.sql_invoke_pg_function_insert_events = sql.Composed([sql.SQL(invoke.as_string())])
        """The library's call of its insert function, its rows sent in binary (``%b``:
        psycopg's binary dumper of the composite, which the library registers beside the
        text one) rather than as the text of a composite array, whose every ``state`` is
        hex-encoded and then quoted and escaped field by field (docs/decisions.md D-path4);
        its names quoted once here, not by psycopg at every save (D-path5)."""


def notified_ids(payload: str) -> tuple[str, int, int] | None:
    """The schema and the first and last notification ids a save committed, from its
    notification's payload (:class:`LockingInsertRecorder`'s insert function); None when
    the payload says nothing of them (another recorder's notification, an insert function
    of an earlier release: the log is read to learn what changed)."""
    named, _, last = payload.rpartition(" ")
    schema, _, first = named.rpartition(" ")
    if not (schema and first.isdigit() and last.isdigit()):
        return None
    return schema, int(first), int(last)

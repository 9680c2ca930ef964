"""PostgreSQL recorder: one round-trip per save, commit order kept (ARCHITECTURE decision 1).

The eventsourcing library's recorder sends BEGIN, SET LOCAL lock_timeout, LOCK TABLE,
NOTIFY, INSERT and COMMIT as separate round-trips (five per save). Its optional stored
function (``POSTGRES_ENABLE_DB_FUNCTIONS``) does it in one call but drops the EXCLUSIVE
table lock, so notification ids would no longer follow commit order and a reader of
``notification_id > last`` (the SSE hub) could skip events. This recorder installs a
function that keeps the lock before its NOTIFY and INSERT, and inserts through it.
A duplicate ``(originator_id, originator_version)`` still raises the library's
IntegrityError (our optimistic concurrency).
"""

from __future__ import annotations

from typing import Any

from eventsourcing.postgres import PostgresApplicationRecorder
from psycopg import sql

RECORDER_TOPIC = "infra.pgstore:LockingInsertRecorder"


class LockingInsertRecorder(PostgresApplicationRecorder):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        ds = self.datastore
        self.sql_create_statements[self.create_insert_function_statement_index] = sql.SQL(
            "CREATE OR REPLACE FUNCTION {schema}.{fn}(events {schema}.{event}[]) "
            "RETURNS SETOF bigint LANGUAGE plpgsql AS $BODY$ BEGIN "
            "SET LOCAL lock_timeout = '{timeout}s'; "
            "LOCK TABLE {schema}.{table} IN EXCLUSIVE MODE; "
            "NOTIFY {channel}; "
            "RETURN QUERY INSERT INTO {schema}.{table} AS t "
            "(originator_id, originator_version, topic, state) "
            "SELECT originator_id, originator_version, topic, state FROM unnest(events) "
            "RETURNING notification_id; END; $BODY$"
        ).format(
            schema=sql.Identifier(ds.schema),
            fn=sql.Identifier(self.pg_function_name_insert_events),
            event=sql.Identifier(self.stored_event_type_name),
            timeout=ds.lock_timeout,
            table=sql.Identifier(self.events_table_name),
            channel=sql.Identifier(self.channel_name),
        )
        ds.enable_db_functions = True

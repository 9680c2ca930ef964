"""The PostgreSQL recorder (``infra/pgstore.py``) is the library's, with its retry: a
connection the server drops between two calls (a restart, a failover, an idle timeout:
here ``pg_terminate_backend``) costs a load or a save one more attempt, never an error.
Saves go through the library's insert function, defined to take the table lock, and keep
their notification order and the optimistic concurrency of the library."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from uuid import UUID, uuid4

import psycopg
import pytest
from eventsourcing.persistence import (
    IntegrityError,
    OperationalError,
    ProgrammingError,
    StoredEvent,
)
from eventsourcing.postgres import PostgresApplicationRecorder
from psycopg import sql
from psycopg.abc import Buffer
from psycopg.adapt import Dumper

from domain.game.match import Match
from domain.rules.ruleset import RuleSet
from infra.pgstore import LockingInsertRecorder, notified_ids
from infra.settings import Settings
from infra.store import build_service, outbox_env
from services.game import GameService
from services.webhooks.outbox import WebhookOutbox
from tests.commands import create_match
from tests.commands import register_webhook as register
from tests.resilience.harness import drop_schema, fresh_schema

pytestmark = pytest.mark.postgres


@pytest.fixture
def settings(pg_url: str) -> Iterator[Settings]:
    schema = fresh_schema(pg_url)
    try:
        # one connection in the pool: the one the test drops is the one the next call gets
        yield Settings(
            backend="postgres",
            database_url=pg_url,
            postgres_schema=schema,
            postgres_pool_size=1,
            postgres_max_overflow=0,
        )
    finally:
        drop_schema(pg_url, schema)
        drop_schema(pg_url, f"{schema}_webhooks")  # the outbox's (infra.store.outbox_env)


def drop_connection(url: str, recorder: LockingInsertRecorder) -> int:
    """Terminate the server process behind the pool's connection; its pid."""
    with recorder.datastore.get_connection() as conn:
        pid = conn.info.backend_pid
    with psycopg.connect(url, autocommit=True) as admin:
        row = admin.execute("SELECT pg_terminate_backend(%s)", (pid,)).fetchone()
    assert row == (True,)
    return pid


def backend_pid(recorder: LockingInsertRecorder) -> int:
    with recorder.datastore.get_connection() as conn:
        return conn.info.backend_pid


def recorder_of(service: GameService) -> LockingInsertRecorder:
    recorder = service.recorder
    assert isinstance(recorder, LockingInsertRecorder)
    return recorder


def new_match(service: GameService) -> UUID:
    return create_match(service, RuleSet(), name="blip")


def test_a_load_survives_a_dropped_connection(settings: Settings, pg_url: str) -> None:
    writer = build_service(settings)
    reader = build_service(settings)  # its own pool, and no copy of the match cached
    try:
        match_id = new_match(writer)
        recorder = recorder_of(reader)
        assert len(recorder.select_events(match_id)) == 1
        dropped = drop_connection(pg_url, recorder)
        match = reader.get_match(match_id)  # select_events: the dropped connection fails
        assert isinstance(match, Match) and match.id == match_id
        assert backend_pid(recorder) != dropped  # a new connection answered
    finally:
        writer.close()
        reader.close()


def test_the_blip_is_real_without_the_retry(settings: Settings, pg_url: str) -> None:
    """The same blip fails the library's query when it is called once, unretried: the
    test above passes by the retry, not by luck."""
    service = build_service(settings)
    try:
        match_id = new_match(service)
        recorder = recorder_of(service)
        drop_connection(pg_url, recorder)
        once = PostgresApplicationRecorder.select_events.__wrapped__
        with pytest.raises(OperationalError):
            once(recorder, match_id)
    finally:
        service.close()


def test_a_save_survives_a_dropped_connection(settings: Settings, pg_url: str) -> None:
    service = build_service(settings)
    try:
        first = new_match(service)
        recorder = recorder_of(service)
        dropped = drop_connection(pg_url, recorder)
        second = new_match(service)  # insert_events: the dropped connection fails
        assert backend_pid(recorder) != dropped
        positions = [n.originator_id for n in recorder.select_notifications(1, 10)]
        assert positions == [first, second]  # notification order is save order
    finally:
        service.close()


def test_saves_go_through_the_locking_function_with_the_library_s_concurrency(
    settings: Settings, pg_url: str
) -> None:
    service = build_service(settings)
    try:
        recorder = recorder_of(service)
        match_id = new_match(service)
        (stored,) = recorder.select_events(match_id)
        with pytest.raises(IntegrityError):  # the same version twice: one of two wins
            recorder.insert_events([stored])
        name = recorder.pg_function_name_insert_events
        function = sql.SQL("{}.{}").format(
            sql.Identifier(settings.postgres_schema), sql.Identifier(name)
        )
        with psycopg.connect(pg_url, autocommit=True) as admin:
            body = admin.execute(
                "SELECT p.prosrc FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n "
                "ON n.oid = p.pronamespace WHERE n.nspname = %s AND p.proname = %s",
                (settings.postgres_schema, name),
            ).fetchone()
            assert body is not None and "LOCK TABLE" in body[0]  # ours, not the library's
            admin.execute(sql.SQL("DROP FUNCTION {}").format(function))
        with pytest.raises(ProgrammingError, match=name):
            new_match(service)  # no function, no save: saves go through it
        recorder.create_table()  # as `shengji migrate` does
        new_match(service)
    finally:
        service.close()


def test_a_commit_notifies_the_ids_it_saved(settings: Settings, pg_url: str) -> None:
    """The insert function's notification names the schema and the first and last
    notification ids of its commit (docs/decisions.md D-path5): a hub takes its own
    process's commits from their saves, not from a read of the log."""
    service = build_service(settings)
    try:
        recorder = recorder_of(service)
        new_match(service)  # the schema, the function
        with psycopg.connect(pg_url, autocommit=True) as listener:
            listener.execute(sql.SQL("LISTEN {}").format(sql.Identifier(recorder.channel_name)))
            two = [Match.create(RuleSet(), service.clock(), match_id=uuid4()) for _ in range(2)]
            recordings = service.save(*two)  # one commit of two rows
            # the channel is the table's: other tests' schemas on the cluster notify on it too
            ours = []
            for notified in listener.notifies(timeout=10):
                said = notified_ids(notified.payload)
                if said is not None and said[0] == settings.postgres_schema:
                    ours.append(said)
                    break
        ids = [r.notification.id for r in recordings]
        assert len(ids) == 2
        assert ours == [(settings.postgres_schema, ids[0], ids[-1])]
    finally:
        service.close()


class TextRefused(Dumper):
    """A text dumper of the insert function's rows that refuses to dump."""

    def dump(self, obj: Any) -> Buffer | None:
        raise AssertionError("a row of the insert function was dumped as text")


def test_saves_send_their_rows_in_binary(settings: Settings) -> None:
    """The insert function's rows go in psycopg's binary format (docs/decisions.md
    D-path4): with their text dumper refusing, a save still succeeds, and every byte of
    a state, as every field, reads back as it was saved."""
    service = build_service(settings)
    reader = build_service(settings)  # its own pool, and no copy of the match cached
    try:
        recorder = recorder_of(service)
        row_type = recorder.datastore.psycopg_python_types[recorder.stored_event_type_name]
        new_match(service)  # the pool's one connection has the library's adapters now
        with recorder.datastore.get_connection() as conn:
            conn.adapters.register_dumper(row_type, TextRefused)
        match_id = new_match(service)
        state = bytes(range(256)) + b'\\"(),{} '
        odd = StoredEvent(uuid4(), 1, 'odd.topic:With "quotes", (parens)', state)
        recorder.insert_events([odd])
        (got,) = recorder_of(reader).select_events(odd.originator_id)
        assert got == odd
        assert reader.get_match(match_id) == service.get_match(match_id)
    finally:
        reader.close()
        service.close()


def test_the_webhook_outbox_records_its_position(settings: Settings) -> None:
    """The outbox follows the game's log with the library's process recorder: its tracking
    record commits with what it saves, so a catch-up resumes after the last position."""
    service = build_service(settings)
    outbox = WebhookOutbox(outbox_env(settings), leader=service)
    try:
        register(service, "https://push.example/hook", "s" * 32, ("match-found",))
        outbox.catch_up()
        last = service.recorder.max_notification_id()
        assert outbox.recorder.max_tracking_id(service.name) == last
    finally:
        outbox.close()
        service.close()

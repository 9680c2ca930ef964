"""``python -m tests.resilience.killer <point>=<idempotency-key> …``: the real server
(:func:`infra.serve.main`, settings from the environment as always) that kills itself with
SIGKILL at one point of the save of the requests named by their ``Idempotency-Key``
(:mod:`tests.resilience.test_kill_mid_command`).

No hook in production code: before the server starts, this module wraps public methods of
the bus, the game service and the eventsourcing library's recorders and datastores. A
request is armed when its key is in the plan (:meth:`RequestKey.of` is where the API turns
the header into the record's id); the bus's :meth:`~services.bus.Bus.handle` of that
request carries the point on its thread; the first save on that thread dies there:

``decided``
    the handler has decided (the events are pending in the unit of work), the save not
    begun: at the entry of :meth:`GameService.save`;
``inserted``
    inside the save, between the INSERT of the events and the COMMIT: the transaction never
    commits. On PostgreSQL the recorder saves by one call of its stored insert function on
    an autocommit connection (:mod:`infra.pgstore`), whose statement is its own
    transaction; the armed insert's connection (``PostgresDatastore.get_connection``) is
    therefore wrapped in an explicit transaction (``BEGIN``), the library's insert runs in
    it unchanged, and the process dies instead of the ``COMMIT``. On SQLite the library's
    own transaction dies in :meth:`SQLiteConnection.commit`. Either way the key's record
    is read back first on the same connection, inside the open transaction (the INSERT
    happened);
``committed``
    the recorder's ``insert_events`` has returned (committed), before the bus answers.

Before dying it appends ``<point> <key> <detail>`` to the file ``$KILL_MARKS``: the test
knows the process died where it meant it to.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any
from uuid import UUID

from eventsourcing.postgres import PostgresApplicationRecorder, PostgresDatastore
from eventsourcing.sqlite import SQLiteAggregateRecorder, SQLiteConnection
from psycopg import sql

from services.bus import Bus
from services.game import GameService
from services.idempotency import RequestKey

POINTS = ("decided", "inserted", "committed")
"""The points of a command's path, in order (the module docstring)."""


class Armed(threading.local):
    """The request being handled on this thread, when it is armed."""

    point: str | None = None
    key: str = ""
    rid: UUID | None = None
    inserting: bool = False
    """Inside the armed request's ``insert_events`` (point ``inserted``)."""
    table: str = ""
    """The events table of that recorder."""


armed = Armed()


def die(detail: str) -> None:
    """Note where, then SIGKILL this process (no cleanup, no answer)."""
    with open(os.environ["KILL_MARKS"], "a", encoding="utf-8") as marks:
        marks.write(f"{armed.point} {armed.key} {detail}\n")
    os.kill(os.getpid(), signal.SIGKILL)


def install(plan: Mapping[str, str]) -> None:
    """Wrap the public methods (the module docstring) for ``plan``: key → point."""
    rids: dict[UUID, str] = {}

    of = RequestKey.of

    def request_key(scope: str, key: str, fingerprint: str) -> RequestKey:
        made = of(scope, key, fingerprint)
        if key in plan:
            rids[made.rid] = key
        return made

    RequestKey.of = staticmethod(request_key)  # type: ignore[assignment,method-assign]

    handle = Bus.handle

    def bus_handle(self: Bus, command: Any, *args: Any, **kwargs: Any) -> Any:
        key: RequestKey | None = kwargs.get("key")
        name = None if key is None or kwargs.get("dry") else rids.get(key.rid)
        if name is None:
            return handle(self, command, *args, **kwargs)
        assert key is not None
        armed.point, armed.key, armed.rid = plan[name], name, key.rid
        try:
            return handle(self, command, *args, **kwargs)
        finally:
            armed.point = None

    Bus.handle = bus_handle  # type: ignore[method-assign]

    save = GameService.save

    def service_save(self: GameService, *objs: Any, **kwargs: Any) -> Any:
        if armed.point == "decided":
            pending = sum(len(getattr(o, "pending_events", ())) for o in objs)
            die(f"{len(objs)} aggregates, {pending} events pending")
        return save(self, *objs, **kwargs)

    GameService.save = service_save  # type: ignore[method-assign]

    for recorder in (PostgresApplicationRecorder, SQLiteAggregateRecorder):
        recorder.insert_events = _armed_insert(recorder.insert_events)  # type: ignore[method-assign]

    get_connection = PostgresDatastore.get_connection

    @contextmanager
    def pg_connection(self: PostgresDatastore) -> Iterator[Any]:
        with get_connection(self) as conn:
            if not armed.inserting:
                yield conn
                return
            with conn.transaction():  # BEGIN: the insert function's statement runs inside
                yield conn
                row = conn.execute(
                    sql.SQL("SELECT count(*) FROM {}.{} WHERE originator_id = %s").format(
                        sql.Identifier(self.schema), sql.Identifier(armed.table)
                    ),
                    (armed.rid,),
                ).fetchone()
                n = None if row is None else next(iter(row.values()))  # the library's dict rows
                die(f"postgres: uncommitted, the key's record rows: {n}")

    PostgresDatastore.get_connection = pg_connection  # type: ignore[method-assign]

    commit = SQLiteConnection.commit

    def sqlite_commit(self: SQLiteConnection) -> None:
        if armed.inserting:
            assert armed.rid is not None
            cursor = self.cursor()
            query = f"SELECT count(*) FROM {armed.table} WHERE originator_id = ?"
            cursor.execute(query, (armed.rid.hex,))
            row = cursor.fetchone()
            die(f"sqlite: uncommitted, the key's record rows: {None if row is None else row[0]}")
        commit(self)

    SQLiteConnection.commit = sqlite_commit  # type: ignore[method-assign]


def _armed_insert(insert: Callable[..., Any]) -> Callable[..., Any]:
    def insert_events(self: Any, stored_events: Sequence[Any], **kwargs: Any) -> Any:
        if armed.point == "inserted":
            armed.inserting, armed.table = True, self.events_table_name
        try:
            done = insert(self, stored_events, **kwargs)
        finally:
            armed.inserting = False
        if armed.point == "committed":
            die(f"{len(stored_events)} events committed")
        return done

    return insert_events


def main(argv: Sequence[str]) -> None:
    plan: dict[str, str] = {}
    for arg in argv:
        point, _, key = arg.partition("=")
        if point not in POINTS or not key:
            sys.exit(f"usage: python -m tests.resilience.killer [{'|'.join(POINTS)}]=KEY …")
        plan[key] = point
    install(plan)
    from infra.serve import main as serve  # noqa: PLC0415 - after the wrapping

    serve()


if __name__ == "__main__":
    main(sys.argv[1:])

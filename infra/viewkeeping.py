"""Who keeps a read view of the log up to date in a process, and how a view is opened on
the game's store (docs/decisions.md D-readmodels, D-career): one way for every view kept
in tables.

* :func:`open_on` — the view on the service's own datastore (its SQLite file or its
  PostgreSQL schema; in memory on POPO), its tables made when asked;
* :func:`kept_by` — a PostgreSQL ``api`` process follows nothing: it waits for the
  ``worker`` processes' follower (:class:`~services.readmodels.runner.Watcher`); every
  other process runs the follower, woken by its own saves and, on PostgreSQL, by the hub's
  news of the other processes' saves;
* :func:`check_sqlite_position`, :func:`check_postgres_position` — in a batch's
  transaction, the view's position is the one the batch started from (several followers
  on one database never both write the same events): the file's write lock taken first on
  SQLite, the tracking row locked (``FOR UPDATE``) on PostgreSQL;
* :func:`qualified` — a table's name in a PostgreSQL schema.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from eventsourcing.postgres import PostgresApplicationRecorder
from eventsourcing.sqlite import SQLiteApplicationRecorder
from psycopg.sql import SQL, Composed, Identifier

from infra.localhub import InProcessHub, LocalHub
from infra.settings import Settings
from services.game import GameService
from services.readmodels.runner import Follower, Freshness, Watcher
from services.readmodels.tracked import PositionMovedError

V = TypeVar("V")


def open_on(
    service: GameService,
    *,
    sqlite: Callable[[Any], V],
    postgres: Callable[[Any], V],
    memory: Callable[[], V],
    create: bool,
) -> V:
    """The view on ``service``'s store (``sqlite``/``postgres`` take the recorder's
    datastore), its tables made if ``create``."""
    recorder = service.recorder
    if isinstance(recorder, SQLiteApplicationRecorder):
        view = sqlite(recorder.datastore)
    elif isinstance(recorder, PostgresApplicationRecorder):
        view = postgres(recorder.datastore)
    else:
        return memory()
    if create:
        view.create_table()  # type: ignore[attr-defined]
    return view


def kept_by(
    settings: Settings,
    service: GameService,
    hub: LocalHub,
    watcher: Callable[[], Watcher],
    follower: Callable[[], Follower],
) -> Freshness:
    """What keeps a view fresh in ``settings``' process (module docstring)."""
    if settings.backend == "postgres" and settings.process_role == "api":
        return watcher()
    kept = follower()
    service.saves.changed.add(kept.poke)
    if not isinstance(hub, InProcessHub):
        hub.on_changed.append(kept.poke)
    return kept


def qualified(schema: str) -> Callable[[str], str]:
    """A table's name in ``schema``, quoted as PostgreSQL wants it."""

    def q(table: str) -> str:
        return Composed([Identifier(schema), SQL("."), Identifier(table)]).as_string()

    return q


def _same(now: int, start: int) -> None:
    if now != start:
        raise PositionMovedError(f"the view is at {now}, not {start}")


def check_sqlite_position(c: Any, select_position: str, tracked: str, start: int) -> None:
    """The view (tracked as ``tracked`` in the library's ``tracking`` table) is at
    ``start``: the file's write lock is taken before the position is read."""
    c.execute(
        "UPDATE tracking SET notification_id = notification_id WHERE application_name = ?",
        (tracked,),
    )
    c.execute(select_position, (tracked,))
    _same(c.fetchone()[0] or 0, start)


def check_postgres_position(c: Any, tracking_table: str, tracked: str, start: int) -> None:
    """The view (its position in ``tracking_table``, qualified) is at ``start``, its row
    locked until the transaction ends."""
    c.execute(
        f"SELECT notification_id FROM {tracking_table} WHERE application_name = %s FOR UPDATE",
        (tracked,),
    )
    r = c.fetchone()
    _same(0 if r is None else r["notification_id"], start)

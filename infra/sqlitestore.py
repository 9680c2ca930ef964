"""SQLite recorder with group commit: one durable commit for every save waiting at once.

The embedded store keeps ``synchronous=FULL`` (the library's default in WAL mode): a
command is answered only after its events are on disk, so an acknowledged move survives
a power cut, not just a crash of the process. That costs an fsync per transaction
(about 1.4 ms on the machine the benches run on), and SQLite has one writer, so with
the library's one-transaction-per-save the store would commit at most ~700 saves a
second whatever the CPU could do.

This recorder batches instead (the classic group commit of database engines): a save
queues its events; if no commit is under way, it becomes the *leader*, takes every save
queued so far and writes them in one transaction — each save inside its own
``SAVEPOINT``, so a save that conflicts (``IntegrityError`` on
``(originator_id, version)``, our optimistic concurrency) is rolled back alone while the
others commit — then wakes the saves it carried. Saves that arrive while a leader
commits wait for it to finish, and the first of them leads the next batch. Every save
still returns only after the commit that holds its events; each save's events are still
all-or-none; notification ids still follow commit order (one writer).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence
from typing import Any

from eventsourcing.persistence import IntegrityError, StoredEvent
from eventsourcing.sqlite import SQLiteApplicationRecorder, SQLiteCursor

RECORDER_TOPIC = "infra.sqlitestore:GroupCommitRecorder"


class _Save:
    """One ``insert_events`` call waiting for its batch."""

    __slots__ = ("done", "error", "events", "ids", "kwargs")

    def __init__(self, events: Sequence[StoredEvent], kwargs: dict[str, Any]) -> None:
        self.events = events
        self.kwargs = kwargs
        self.done = False
        self.ids: Sequence[int] | None = None
        self.error: BaseException | None = None

    def result(self) -> Sequence[int] | None:
        if self.error is not None:
            raise self.error
        return self.ids


class GroupCommitRecorder(SQLiteApplicationRecorder):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._cv = threading.Condition()
        self._queue: list[_Save] = []
        self._leading = False
        self.batches = 0
        """Transactions committed (a save's events are in exactly one)."""
        self.saves = 0
        """Saves committed or refused."""

    def insert_events(
        self, stored_events: Sequence[StoredEvent], **kwargs: Any
    ) -> Sequence[int] | None:
        save = _Save(stored_events, kwargs)
        with self._cv:
            self._queue.append(save)
            while self._leading and not save.done:
                self._cv.wait()
            if save.done:
                return save.result()
            self._leading = True
            batch, self._queue = self._queue, []
        try:
            self._commit(batch)
        finally:
            with self._cv:
                self._leading = False
                self._cv.notify_all()
        return save.result()

    def _commit(self, batch: list[_Save]) -> None:
        try:
            with self.datastore.transaction(commit=True) as c:
                if len(batch) == 1:
                    # Alone in its transaction: no savepoint needed, a failure rolls
                    # back the transaction (two statements fewer per save).
                    self._insert_alone(c, batch[0])
                else:
                    for save in batch:
                        self._insert_one(c, save)
        except BaseException as e:
            # The transaction did not commit: none of the batch is stored.
            for save in batch:
                if save.error is None:
                    save.ids, save.error = None, e
        finally:
            for save in batch:
                save.done = True
            self.batches += 1
            self.saves += len(batch)

    def _insert_alone(self, c: SQLiteCursor, save: _Save) -> None:
        try:
            save.ids = self._insert_events(c, save.events, **save.kwargs)
        except sqlite3.IntegrityError as e:
            raise IntegrityError(e) from e

    def _insert_one(self, c: SQLiteCursor, save: _Save) -> None:
        c.execute("SAVEPOINT save")
        try:
            save.ids = self._insert_events(c, save.events, **save.kwargs)
        except sqlite3.IntegrityError as e:
            c.execute("ROLLBACK TO save")
            c.execute("RELEASE save")
            save.error = IntegrityError(e)
            return
        except BaseException:
            c.execute("ROLLBACK TO save")
            c.execute("RELEASE save")
            raise
        c.execute("RELEASE save")

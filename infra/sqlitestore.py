"""SQLite recorder with group commit: one durable commit for every save waiting at once.

The embedded store keeps ``synchronous=FULL`` (the library's default in WAL mode): a
command is answered only after its events are on disk, so an acknowledged move survives
a power cut, not just a crash of the process. That costs an fsync per transaction
(about 1.4 ms on the machine the benches run on), and SQLite has one writer, so with
the library's one-transaction-per-save the store would commit at most ~700 saves a
second whatever the CPU could do.

This recorder batches instead (the classic group commit of database engines): a save
queues its events; if no commit is under way, it becomes the *leader*, takes every save
queued so far and writes them in one transaction — each save one multi-row statement
(with its own ``SAVEPOINT`` beyond ``ROWS_PER_STATEMENT`` events), so a save that
conflicts (``IntegrityError`` on ``(originator_id, version)``, our optimistic concurrency)
is rolled back alone while the others commit — then wakes the saves it carried. Saves
that arrive while a leader commits wait for it to finish, and the first of them leads
the next batch. Every save still returns only after the commit that holds its events
(but see the loop's batch below); each save's events are still all-or-none;
notification ids still follow commit order (one writer).

**Durability** is the :class:`~infra.walsync.WalSyncer`'s: the recorder's connections run
``synchronous=NORMAL`` (a ``COMMIT`` writes the log, without the fsync), every committed
batch takes a ticket, and a save returns only once its ticket is durable — unless it runs
inside ``syncer.deferred()`` (the API's calls), whose caller settles before answering. So
the write lock is held for the SQL alone, and the fsync (one for every commit that
arrived meanwhile) happens on the syncer's thread. A file store only: ``:memory:`` and URI
names keep the library's behaviour.

**The loop's batch** (docs/decisions.md D2b): saves made inside ``syncer.batched()`` — the
API's round commands, which run on the event loop — join one open transaction on the
file store's write connection and return before its COMMIT; the next ``settle`` commits
it once for every command of that turn of the loop (:meth:`GroupCommitRecorder.flush`).
Any other save commits the open transaction with its own. Each save is one multi-row
statement (a SAVEPOINT beyond ``ROWS_PER_STATEMENT`` events), so a conflict still rolls
back that save alone. A batch lost after its saves returned fails the store.
"""

from __future__ import annotations

import sqlite3
import threading
import weakref
from collections.abc import Callable, Sequence
from typing import Any
from uuid import UUID

from eventsourcing.persistence import (
    DatabaseError,
    DataError,
    IntegrityError,
    InterfaceError,
    InternalError,
    NotSupportedError,
    OperationalError,
    PersistenceError,
    ProgrammingError,
    StoredEvent,
)
from eventsourcing.sqlite import (
    SQLITE3_DEFAULT_LOCK_TIMEOUT,
    SQLiteApplicationRecorder,
    SQLiteConnection,
    SQLiteCursor,
    SQLiteTransaction,
)

from infra.walsync import CONNECTION_PRAGMAS, WalSyncer, claim_writer

RECORDER_TOPIC = "infra.sqlitestore:GroupCommitRecorder"
ROWS_PER_STATEMENT = 500
"""Rows of one INSERT (4 parameters each; SQLite allows 32,766 parameters)."""
_ERRORS: tuple[tuple[type[sqlite3.Error], type[PersistenceError]], ...] = (
    (sqlite3.InterfaceError, InterfaceError),
    (sqlite3.DataError, DataError),
    (sqlite3.OperationalError, OperationalError),
    (sqlite3.IntegrityError, IntegrityError),
    (sqlite3.InternalError, InternalError),
    (sqlite3.ProgrammingError, ProgrammingError),
    (sqlite3.NotSupportedError, NotSupportedError),
    (sqlite3.DatabaseError, DatabaseError),
)


def library_error(e: sqlite3.Error) -> PersistenceError:
    """The eventsourcing library's error for an ``sqlite3`` one (as its transactions
    raise them: the API answers ``OperationalError`` with a 503, ``IntegrityError`` is a
    version conflict)."""
    for theirs, ours in _ERRORS:
        if isinstance(e, theirs):
            return ours(e)
    return PersistenceError(e)


class _Save:
    """One ``insert_events`` call waiting for its batch."""

    __slots__ = ("batched", "deferred", "done", "error", "events", "ids", "kwargs", "ticket")

    def __init__(self, events: Sequence[StoredEvent], kwargs: dict[str, Any]) -> None:
        self.events = events
        self.kwargs = kwargs
        self.done = False
        self.ids: Sequence[int] | None = None
        self.error: BaseException | None = None
        self.ticket = 0
        """The commit's durability ticket (0: no syncer, or not committed)."""
        self.deferred = False
        """Its caller settles later (``WalSyncer.deferred``): the syncer thread syncs it."""
        self.batched = False
        """It joins the open batch transaction (``WalSyncer.batched``): settling commits it."""

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
        pool = self.datastore.pool
        name = pool.db_name
        self.syncer: WalSyncer | None = None
        self._writer: sqlite3.Connection | None = None
        """The file store's own write connection (below); None: the pool's writer."""
        self._statements: dict[int, str] = {}
        self._open = False
        """A batch transaction is open on the writer (``WalSyncer.batched`` saves)."""
        self._promised = 0
        """Saves of the open transaction that have returned (a lost COMMIT loses them)."""
        if not pool.is_sqlite_memory_mode and not name.startswith("file:"):
            release = claim_writer(name)  # one writing process per file
            weakref.finalize(self, release)
            self.syncer = WalSyncer(name)
            self.syncer.attach(self)
            self._release_on_close(self.syncer, release)

    def insert_events(
        self, stored_events: Sequence[StoredEvent], **kwargs: Any
    ) -> Sequence[int] | None:
        save = _Save(stored_events, kwargs)
        syncer = self.syncer
        save.deferred = syncer is not None and syncer.deferring
        save.batched = save.deferred and syncer is not None and syncer.batching
        with self._cv:
            self._queue.append(save)
            while self._leading and not save.done:
                self._cv.wait()
            if save.done:
                return self._durable(save)
            self._leading = True
            batch, self._queue = self._queue, []
        try:
            self._commit(batch)
        finally:
            with self._cv:
                self._leading = False
                self._cv.notify_all()
        return self._durable(save)

    def _durable(self, save: _Save) -> Sequence[int] | None:
        """The save's result once its commit is durable (at once when deferred)."""
        ids = save.result()
        syncer = self.syncer
        if syncer is not None and save.ticket and not syncer.deferring:
            syncer.wait(save.ticket)
        return ids

    def _commit(self, batch: list[_Save]) -> None:
        committed = True  # False: the batch's saves wait in the open transaction
        try:
            if self.syncer is None:
                with self.datastore.get_connection(commit=True) as conn:
                    self._transact(conn, batch)
                committed = True
            else:
                committed = self._write(batch)
            if self.syncer is not None and committed:
                # A waiting saver makes the fsync itself; deferred ones leave it to the
                # syncer thread.
                ticket = self.syncer.committed(wake=any(save.deferred for save in batch))
                for save in batch:
                    save.ticket = ticket
        except BaseException as e:
            # The transaction did not commit: none of the batch is stored.
            if not isinstance(e, IntegrityError):
                self._drop_writer()  # a fresh connection for the next batch
            for save in batch:
                if save.error is None:
                    save.ids, save.error = None, e
        finally:
            for save in batch:
                save.done = True
            if committed:  # else the flush that commits the open transaction counts it
                self.batches += 1
            self.saves += len(batch)

    @property
    def open(self) -> bool:
        """Saves are in the open batch transaction that no COMMIT has carried yet."""
        return self._open

    def flush(self) -> None:
        """COMMIT the open batch transaction, if any, and take its ticket (called by
        ``WalSyncer.settle``). A failed COMMIT fails the store: its saves had returned."""
        with self._cv:
            while self._leading:
                self._cv.wait()
            if not self._open:
                return
            self._leading = True
        try:
            db = self._writer_connection()
            try:
                db.execute("COMMIT")
            except sqlite3.Error as e:
                self._lose(e)
                return
            self._open, self._promised = False, 0
            assert self.syncer is not None
            self.syncer.committed(wake=True)
            self.batches += 1
        finally:
            with self._cv:
                self._leading = False
                self._cv.notify_all()

    def _lose(self, error: BaseException) -> None:
        """The open transaction is gone (rolled back) with saves that had returned: fail
        the store (every later wait raises, the API answers 503) rather than let it
        answer for them."""
        promised, self._open, self._promised = self._promised, False, 0
        self._drop_writer()  # closing it rolls back whatever is left
        if promised and self.syncer is not None:
            self.syncer.fail(error)

    def _release_on_close(self, syncer: WalSyncer, release: Callable[[], None]) -> None:
        """When the store closes (the application's ``close`` closes the datastore), the
        syncer makes every commit durable and stops, and the file's writer claim goes —
        not only when this recorder is collected."""
        datastore = self.datastore
        close = datastore.close
        recorder = weakref.ref(self)  # the datastore does not keep its recorder alive

        def closing() -> None:
            try:
                me = recorder()
                if me is not None:
                    me.flush()  # the open batch's saves are committed, not lost
                if syncer.failed is None:
                    syncer.close()
                if me is not None:
                    me._drop_writer()
                close()
            finally:
                release()

        datastore.close = closing  # type: ignore[method-assign]

    def _transact(self, conn: SQLiteConnection, batch: list[_Save]) -> None:
        # The library's transaction (BEGIN; COMMIT, or ROLLBACK on error; its errors),
        # without the generator-based context manager around it.
        with SQLiteTransaction(conn, commit=True) as c, c:
            if len(batch) == 1:
                # Alone in its transaction: no savepoint needed, a failure rolls back
                # the transaction (two statements fewer per save).
                self._insert_alone(c, batch[0])
            else:
                for save in batch:
                    self._insert_one(c, save)

    def _writer_connection(self) -> sqlite3.Connection:
        """The file store's write connection: only the batch's leader writes (one at a
        time, ``_leading``), so it needs no pool — the pool's checkout, its locks and
        its context managers cost more than the INSERT itself. Auto-commit, WAL and the
        lock timeout as the pool's connections, with the syncer's pragmas; replaced
        after an error, closed with the store. Reads keep using the pool."""
        db = self._writer
        if db is None:
            pool = self.datastore.pool
            try:
                db = sqlite3.connect(
                    pool.db_name,
                    check_same_thread=False,
                    isolation_level=None,
                    timeout=pool.lock_timeout or SQLITE3_DEFAULT_LOCK_TIMEOUT,
                )
                db.execute("PRAGMA journal_mode=WAL")
                for pragma in CONNECTION_PRAGMAS:
                    db.execute(pragma)
            except sqlite3.Error as e:
                raise library_error(e) from e
            self._writer = db
        return db

    def _write(self, batch: list[_Save]) -> bool:
        """The batch on the file store's connection; True when it committed.

        * Saves made in ``WalSyncer.batched`` (commands on the event loop) join the open
          transaction (BEGIN if none is open) and return before any COMMIT; the next
          ``settle`` commits them all at once (:meth:`flush`).
        * Any other batch commits, with the open transaction's saves if there are some.
          A lone save of a few events outside a transaction is one multi-row statement
          in auto-commit mode: atomic and its own transaction (no BEGIN, no COMMIT).

        A save of up to ``ROWS_PER_STATEMENT`` events is one statement, so a conflict
        (``IntegrityError`` on ``(originator_id, version)``) rolls back that save alone
        and the transaction goes on; a longer save has its own SAVEPOINT."""
        db = self._writer_connection()
        batched = all(save.batched for save in batch)
        lone = len(batch) == 1 and len(batch[0].events) <= ROWS_PER_STATEMENT
        try:
            if lone and not batched and not self._open:
                batch[0].ids = self._insert_rows(db, batch[0].events)
                return True
            if not self._open:
                db.execute("BEGIN")
                self._open = True
            for save in batch:
                self._insert_save(db, save)
            if batched:
                self._promised += sum(1 for save in batch if save.error is None)
                return False
            db.execute("COMMIT")
            self._open, self._promised = False, 0
            return True
        except BaseException as e:
            if self._open:
                self._lose(e)
            if isinstance(e, sqlite3.Error):
                raise library_error(e) from e
            raise

    def _insert_save(self, db: sqlite3.Connection, save: _Save) -> None:
        """One save inside the transaction, all or none; a conflict is its own error."""
        events = save.events
        if len(events) <= ROWS_PER_STATEMENT:
            try:
                save.ids = self._insert_rows(db, events)
            except sqlite3.IntegrityError as e:
                save.error = IntegrityError(e)
            return
        db.execute("SAVEPOINT save")
        try:
            save.ids = self._insert_rows(db, events)
        except sqlite3.IntegrityError as e:
            db.execute("ROLLBACK TO save")
            save.error = IntegrityError(e)
        db.execute("RELEASE save")

    def _insert_rows(self, db: sqlite3.Connection, events: Sequence[StoredEvent]) -> list[int]:
        """Insert ``events`` (in statements of up to ``ROWS_PER_STATEMENT`` rows); their
        rowids (the notification ids) in the events' order."""
        ids: list[int] = []
        for start in range(0, len(events), ROWS_PER_STATEMENT):
            chunk = events[start : start + ROWS_PER_STATEMENT]
            params: list[Any] = []
            for e in chunk:
                oid = e.originator_id
                params += (oid.hex if isinstance(oid, UUID) else oid, e.originator_version)
                params += (e.topic, e.state)
            rows = db.execute(self._insert_statement(len(chunk)), params).fetchall()
            # One statement's rows take increasing rowids in the order they are listed.
            ids += sorted(row[0] for row in rows)
        return ids

    def _insert_statement(self, rows: int) -> str:
        statement = self._statements.get(rows)
        if statement is None:
            values = ",".join(["(?,?,?,?)"] * rows)
            statement = f"INSERT INTO {self.events_table_name} VALUES {values} RETURNING rowid"
            self._statements[rows] = statement
        return statement

    def _drop_writer(self) -> None:
        conn, self._writer = self._writer, None
        if conn is not None:
            conn.close()

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

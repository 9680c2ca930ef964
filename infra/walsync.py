"""Durability of the embedded store off the writer's path: the WAL is fsynced by a syncer
thread, and nothing is answered or shown before the fsync that covers it.

SQLite in WAL mode with ``synchronous=FULL`` fsyncs the log inside every ``COMMIT``: the
committing thread waits about 1.4 ms (on the bench machine) with the store's write lock
held. With ``synchronous=NORMAL`` the ``COMMIT`` only writes the log pages, and SQLite
promises atomicity and consistency across a crash but not durability: a power cut can take
the last commits back (a killed process cannot — the pages are in the kernel's cache).

:class:`WalSyncer` adds the durability back without the wait in the writer: every commit
takes a *ticket* (:meth:`committed`, called by the recorder right after ``COMMIT``
returns); a syncer thread fsyncs the ``-wal`` file (``fdatasync``, as SQLite's own unix
VFS does: the log's data and the size needed to read it, not its timestamps), which
makes every commit written before it durable, and then marks their tickets durable — one
fsync for all the commits that arrived meanwhile (group commit, with the writer never
waiting). Who waits is whoever would *show* a commit:

* a save outside :meth:`deferred` (the CLI, the tests, a worker thread) returns only when
  its ticket is durable: the same guarantee as ``synchronous=FULL``. With no fsync under
  way it makes the fsync itself, so a lone writer pays no hand-off to the thread;
* inside :meth:`deferred` (the API's calls, ``api.runtime``) the save returns at once, and
  the caller awaits :meth:`settle` before it answers — an acknowledged move survives a
  power cut, as before;
* a read is settled too (``Runtime`` settles after every call, the live streams after
  every load): :meth:`settle` waits for every commit made so far, so no response or SSE
  frame shows a commit that a power cut could still take back.

Checkpoints (copying the log into the database file) stay SQLite's own: the committing
connection runs one when the log passes 1000 pages, right after its ``COMMIT``, and with
``synchronous=NORMAL`` it syncs the log and then the file. So about every few hundred
commands one command pays two fsyncs. A checkpoint on another thread cannot do this job:
commits keep arriving while it copies, the log is then never fully copied when the next
writer looks, so SQLite never rewinds it, and the log grows without bound (measured: 534 MB
after 48,000 commits).

If an fsync fails, the store is **failed**: nothing written since the last good fsync can
be promised, so every wait from then on raises ``OperationalError`` (a 503 at the API) and
``failed`` says why (``/readyz`` reports it). A restart recovers from the file as SQLite
does after any crash.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import logging
import os
import threading
import weakref
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import Final, Protocol

from eventsourcing.persistence import OperationalError

log = logging.getLogger(__name__)

_DEFERRED: ContextVar[bool] = ContextVar("shengji_deferred_durability", default=False)
_BATCHED: ContextVar[bool] = ContextVar("shengji_batched_commit", default=False)
IDLE_S: Final = 2.0
"""The syncer thread ends after this long with nothing to do (the next commit starts it)."""
CONNECTION_PRAGMAS: Final = ("PRAGMA synchronous=NORMAL",)
"""Run by the recorder on each of its connections (outside a transaction)."""


class Batch(Protocol):
    """The recorder's transaction that saves made in :meth:`WalSyncer.batched` share."""

    @property
    def open(self) -> bool:
        """Saves are in it that no COMMIT has carried yet."""
        ...

    def flush(self) -> None:
        """COMMIT it (its ticket taken); on failure the store is failed."""
        ...


class WalSyncer:
    """Tickets for commits, one syncer thread that makes them durable (module docstring)."""

    def __init__(
        self,
        db_path: str,
        *,
        fsync: Callable[[int], None] = os.fdatasync,
    ) -> None:
        self.db_path = Path(db_path)
        self.wal_path = Path(db_path + "-wal")
        self._fsync = fsync
        lock = threading.Lock()
        self._cv = threading.Condition(lock)
        """Writers waiting for their ticket wait on this."""
        self._wakeup = threading.Condition(lock)
        """The syncer thread waits on this (a writer's own fsync does not wake it)."""
        self._committed = 0
        self._durable = 0
        self._waiters: list[tuple[int, asyncio.Future[None]]] = []
        self._thread: threading.Thread | None = None
        self._closed = False
        self._syncing = False
        """An fsync is under way (by the thread or by a waiting writer)."""
        self._wal_inode: int | None = None
        self._wal_fd: int | None = None
        self.failed: BaseException | None = None
        """The fsync error that failed the store (None while it is sound)."""
        self.syncs = 0
        """fsyncs of the log made (each covers every commit before it)."""
        self._batch: Callable[[], Batch | None] = lambda: None

    # -- the writers' side --------------------------------------------------------------------

    def committed(self, *, wake: bool = True) -> int:
        """A commit has just returned: its ticket. ``wake``: the syncer thread makes it
        durable (a deferred save); else the saver's own :meth:`wait` does."""
        with self._cv:
            self._committed += 1
            ticket = self._committed
            if wake:
                self._wake()
            return ticket

    def mark(self) -> int:
        """The ticket of the latest commit: settling it covers everything committed so far."""
        return self._committed

    @property
    def deferring(self) -> bool:
        """True inside :meth:`deferred` (a save returns before its fsync)."""
        return _DEFERRED.get()

    @contextlib.contextmanager
    def deferred(self) -> Iterator[None]:
        """Saves in this block return without waiting for their fsync: the caller settles."""
        token = _DEFERRED.set(True)
        try:
            yield
        finally:
            _DEFERRED.reset(token)

    @property
    def batching(self) -> bool:
        """True inside :meth:`batched`."""
        return _BATCHED.get()

    @contextlib.contextmanager
    def batched(self) -> Iterator[None]:
        """:meth:`deferred`, and more: saves in this block (short commands on the event
        loop, ``Runtime.quick``) join one open transaction and return before its COMMIT;
        :meth:`settle` commits it, after the commands ready in the same turn of the loop
        have joined it — one COMMIT, one log write and one fsync for all of them."""
        deferred, batched = _DEFERRED.set(True), _BATCHED.set(True)
        try:
            yield
        finally:
            _BATCHED.reset(batched)
            _DEFERRED.reset(deferred)

    def attach(self, batch: Batch) -> None:
        """The recorder whose batch :meth:`settle` commits (held weakly)."""
        self._batch = weakref.ref(batch)

    def fail(self, error: BaseException) -> None:
        """Fail the store: a commit that was promised to be made is lost (``error``)."""
        log.critical("the event log lost a promised commit: the store is failed (%s)", error)
        self._fail(error)

    def wait(self, ticket: int) -> None:
        """Block until ``ticket`` is durable (raises ``OperationalError`` on a failed store).
        With no fsync under way the caller makes it itself: a lone writer (the CLI, a
        simulation) does not hand its commit to the thread and wait to be handed it back."""
        while True:
            with self._cv:
                while True:
                    self._check()
                    if self._durable >= ticket:
                        return
                    if not self._syncing:
                        break
                    self._cv.wait()
                self._syncing = True
                target = self._committed
            self._sync_round(target)

    async def settle(self, ticket: int | None = None) -> None:
        """Wait, without blocking the loop, until ``ticket`` (default: every commit made so
        far) is durable. An open batch is committed first, after one turn of the loop (the
        commands that turn runs join it), so what a caller settles includes its own
        saves and everything it may have read."""
        batch = self._batch()
        if batch is not None and batch.open:
            try:
                await asyncio.sleep(0)
            finally:
                batch.flush()  # even if the caller is cancelled: no batch is left open
        target = self._committed if ticket is None else ticket
        if self._durable >= target and self.failed is None:
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        with self._cv:
            if self._durable >= target or self.failed is not None:
                self._check()
                return
            self._waiters.append((target, future))
            self._wake()  # whoever committed it may have left the fsync to a waiter
        await future

    # -- the syncer ---------------------------------------------------------------------------

    def _wake(self) -> None:
        """Start or wake the syncer thread (holding the lock)."""
        if self._thread is None and self.failed is None:
            self._thread = threading.Thread(target=self._run, name="wal-sync", daemon=True)
            self._thread.start()
        self._wakeup.notify()

    def _work(self) -> bool:
        """Something for the thread (holding the lock): commits to sync, unless a writer
        is syncing them."""
        return self.failed is None and self._durable < self._committed and not self._syncing

    def _run(self) -> None:
        while True:
            with self._cv:
                while not self._closed and not self._work():
                    if not self._wakeup.wait(IDLE_S) and not self._work():
                        break  # idle: the next deferred commit starts a new thread
                if not self._work():
                    self._thread = None
                    return
                self._syncing = True
                target = self._committed
            try:
                self._sync_round(target)
            except OperationalError:
                with self._cv:
                    self._thread = None
                return

    def _sync_round(self, target: int) -> None:
        """One fsync covering every commit up to ``target`` (``_syncing`` set by the
        caller, cleared here)."""
        try:
            self._sync_log()
        except BaseException as e:  # an OSError, or anything else: nothing is promised
            log.critical("fsync of the event log failed: the store is failed (%s)", e)
            self._fail(e)
            raise self._error() from e
        self._mark_durable(target)

    def _sync_log(self) -> None:
        """fdatasync the log. Its descriptor is kept while the file stays the same (one
        ``stat`` per sync checks that: SQLite removes the log when its last connection
        closes, and a new one is a new file, whose directory entry is synced once)."""
        try:
            inode = os.stat(self.wal_path).st_ino
            if inode != self._wal_inode or self._wal_fd is None:
                self._reopen_log(inode)
        except FileNotFoundError:
            # The last connection closed, checkpointed the log into the file and removed
            # it: the file holds every commit.
            fd = os.open(self.db_path, os.O_RDONLY)
            try:
                self._fsync(fd)
            finally:
                os.close(fd)
            self.syncs += 1
            return
        assert self._wal_fd is not None
        self._fsync(self._wal_fd)
        self.syncs += 1

    def _reopen_log(self, inode: int) -> None:
        """A new log file (or the first): keep a descriptor, sync its directory entry."""
        if self._wal_fd is not None:
            os.close(self._wal_fd)
            self._wal_fd = None
        fd = os.open(self.wal_path, os.O_RDONLY)
        try:
            if os.fstat(fd).st_ino != inode:  # replaced in between: the next sync reopens
                inode = -1
            dir_fd = os.open(self.wal_path.parent, os.O_RDONLY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)
        except BaseException:
            os.close(fd)
            raise
        self._wal_fd, self._wal_inode = fd, inode

    def _mark_durable(self, target: int) -> None:
        with self._cv:
            self._durable = max(self._durable, target)
            self._syncing = False
            ready = [f for t, f in self._waiters if t <= self._durable]
            self._waiters = [(t, f) for t, f in self._waiters if t > self._durable]
            if self._work() and self._waiters:
                self._wake()  # commits left to a waiter's settle
            self._cv.notify_all()
        _resolve(ready, None)

    def _fail(self, error: BaseException) -> None:
        with self._cv:
            self.failed = error
            self._syncing = False
            ready = [f for _, f in self._waiters]
            self._waiters = []
            self._cv.notify_all()
            self._wakeup.notify_all()
        _resolve(ready, self._error())

    # -- errors and shutdown --------------------------------------------------------------------

    def _error(self) -> OperationalError:
        return OperationalError(f"the event log could not be made durable: {self.failed}")

    def _check(self) -> None:
        if self.failed is not None:
            raise self._error()

    def close(self) -> None:
        """Make everything committed durable, then stop the syncer."""
        with self._cv:
            target = self._committed
        if self.failed is None and target:
            self.wait(target)
        with self._cv:
            self._closed = True
            self._wakeup.notify_all()
            if self._wal_fd is not None and not self._syncing:
                os.close(self._wal_fd)
                self._wal_fd = None


def _resolve(futures: list[asyncio.Future[None]], error: BaseException | None) -> None:
    """Complete waiting futures on their own loops (the syncer is another thread)."""
    by_loop: dict[asyncio.AbstractEventLoop, list[asyncio.Future[None]]] = {}
    for f in futures:
        by_loop.setdefault(f.get_loop(), []).append(f)
    for loop, group in by_loop.items():
        with contextlib.suppress(RuntimeError):  # that loop is closed: nobody waits
            loop.call_soon_threadsafe(_complete, group, error)


def _complete(futures: list[asyncio.Future[None]], error: BaseException | None) -> None:
    for f in futures:
        if not f.done():
            if error is None:
                f.set_result(None)
            else:
                f.set_exception(error)


# -- one writing process per file ------------------------------------------------------------

_writers: dict[str, list[int]] = {}
"""The store files this process writes: real path → [lock file descriptor, claims]."""
_writers_lock = threading.Lock()


class StoreTakenError(OperationalError):
    """Another process writes this embedded store."""


def claim_writer(db_path: str) -> Callable[[], None]:
    """Claim ``db_path`` for this process (an exclusive ``flock`` on ``<db>.writer``,
    shared by every service of the process on that file); the returned callable gives the
    claim back. The embedded store has one writing process: its aggregate cache trusts its
    own saves, so a second process would leave it stale (replicas run on PostgreSQL).
    Raises :class:`StoreTakenError` while another process holds the file."""
    key = os.path.realpath(db_path)
    with _writers_lock:
        held = _writers.get(key)
        if held is None:
            fd = os.open(key + ".writer", os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                raise StoreTakenError(
                    f"another process writes the embedded store {db_path}; one process "
                    "serves a SQLite file (run replicas on PostgreSQL)"
                ) from None
            held = _writers[key] = [fd, 0]
        held[1] += 1
    released = [False]

    def release() -> None:
        with _writers_lock:
            if released[0]:
                return
            released[0] = True
            held[1] -= 1
            if held[1] == 0 and _writers.get(key) is held:
                del _writers[key]
                os.close(held[0])  # closing the descriptor drops the lock

    return release

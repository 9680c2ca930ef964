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
  its ticket is durable: the same guarantee as ``synchronous=FULL``;
* inside :meth:`deferred` (the API's calls, ``api.runtime``) the save returns at once, and
  the caller awaits :meth:`settle` before it answers — an acknowledged move survives a
  power cut, as before;
* a read is settled too (``Runtime`` settles after every call, the live streams after
  every load): :meth:`settle` waits for every commit made so far, so no response or SSE
  frame shows a commit that a power cut could still take back.

Checkpoints (copying the log into the database file) are the syncer's too, on its own
connection (``PASSIVE``: never blocking a writer), every ``checkpoint_every`` commits; the
writers' connections run with ``wal_autocheckpoint=0`` so a
checkpoint's two fsyncs never land in a command.

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
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import Final

from eventsourcing.persistence import OperationalError

log = logging.getLogger(__name__)

_DEFERRED: ContextVar[bool] = ContextVar("shengji_deferred_durability", default=False)
IDLE_S: Final = 2.0
"""The syncer thread ends after this long with nothing to do (the next commit starts it)."""
CHECKPOINT_EVERY: Final = 256
"""Commits between two checkpoints (a command writes a few pages: SQLite's own default is
a checkpoint every 1000 pages)."""
CONNECTION_PRAGMAS: Final = ("PRAGMA synchronous=NORMAL", "PRAGMA wal_autocheckpoint=0")
"""Run by the recorder on each of its connections (outside a transaction)."""


class WalSyncer:
    """Tickets for commits, one syncer thread that makes them durable (module docstring)."""

    def __init__(
        self,
        db_path: str,
        *,
        checkpoint_every: int = CHECKPOINT_EVERY,
        fsync: Callable[[int], None] = os.fdatasync,
    ) -> None:
        self.db_path = Path(db_path)
        self.wal_path = Path(db_path + "-wal")
        self.checkpoint_every = checkpoint_every
        self._checkpointed = 0
        self._checkpointer: sqlite3.Connection | None = None
        self._fsync = fsync
        self._cv = threading.Condition()
        self._committed = 0
        self._durable = 0
        self._waiters: list[tuple[int, asyncio.Future[None]]] = []
        self._thread: threading.Thread | None = None
        self._closed = False
        self._wal_inode: int | None = None
        self.failed: BaseException | None = None
        """The fsync error that failed the store (None while it is sound)."""
        self.syncs = 0
        """fsyncs of the log made (each covers every commit before it)."""
        self.checkpoints = 0

    # -- the writers' side --------------------------------------------------------------------

    def committed(self) -> int:
        """A commit has just returned: its ticket (the syncer is woken)."""
        with self._cv:
            self._committed += 1
            ticket = self._committed
            if self._thread is None and self.failed is None:
                self._thread = threading.Thread(target=self._run, name="wal-sync", daemon=True)
                self._thread.start()
            self._cv.notify_all()
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

    def wait(self, ticket: int) -> None:
        """Block until ``ticket`` is durable (raises ``OperationalError`` on a failed store)."""
        with self._cv:
            while self._durable < ticket and self.failed is None:
                self._cv.wait()
            self._check()

    async def settle(self, ticket: int | None = None) -> None:
        """Wait, without blocking the loop, until ``ticket`` (default: every commit made so
        far) is durable."""
        target = self._committed if ticket is None else ticket
        if self._durable >= target and self.failed is None:
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        with self._cv:
            if self._durable >= target or self.failed is not None:
                self._check()
                return
            self._waiters.append((target, future))
        await future

    # -- the syncer ---------------------------------------------------------------------------

    def _run(self) -> None:
        while True:
            with self._cv:
                while self._durable >= self._committed and not self._closed:
                    if not self._cv.wait(IDLE_S) and self._durable >= self._committed:
                        break  # idle: the next commit starts a new thread
                if self._durable >= self._committed:
                    self._thread = None
                    self._close_checkpointer()
                    return
                target = self._committed
            try:
                self._sync_log()
            except BaseException as e:  # an OSError, or anything else: nothing is promised
                log.critical("fsync of the event log failed: the store is failed (%s)", e)
                self._fail(e)
                self._close_checkpointer()
                return
            self._mark_durable(target)
            self._maybe_checkpoint(target)

    def _sync_log(self) -> None:
        try:
            fd = os.open(self.wal_path, os.O_RDONLY)
        except FileNotFoundError:
            # The last connection closed, checkpointed the log into the file and removed
            # it: the file holds every commit.
            fd = os.open(self.db_path, os.O_RDONLY)
        try:
            inode = os.fstat(fd).st_ino
            self._fsync(fd)
        finally:
            os.close(fd)
        if inode != self._wal_inode:  # a new log file: make its directory entry durable
            dir_fd = os.open(self.wal_path.parent, os.O_RDONLY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)
            self._wal_inode = inode
        self.syncs += 1

    def _mark_durable(self, target: int) -> None:
        with self._cv:
            self._durable = max(self._durable, target)
            ready = [f for t, f in self._waiters if t <= self._durable]
            self._waiters = [(t, f) for t, f in self._waiters if t > self._durable]
            self._cv.notify_all()
        _resolve(ready, None)

    def _fail(self, error: BaseException) -> None:
        with self._cv:
            self.failed = error
            ready = [f for _, f in self._waiters]
            self._waiters = []
            self._thread = None
            self._cv.notify_all()
        _resolve(ready, self._error())

    def _maybe_checkpoint(self, target: int) -> None:
        """Copy the log into the file every ``checkpoint_every`` commits (the log's pages
        are reused from the start after a complete checkpoint; its size says nothing)."""
        if target - self._checkpointed < self.checkpoint_every:
            return
        try:
            if self._checkpointer is None:
                self._checkpointer = sqlite3.connect(self.db_path, timeout=1.0)
            self._checkpointer.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
            self._checkpointed = target
            self.checkpoints += 1
        except sqlite3.Error as e:  # busy now: the next sync tries again
            log.info("checkpoint of the event log deferred: %s", e)

    def _close_checkpointer(self) -> None:
        if self._checkpointer is not None:
            self._checkpointer.close()
            self._checkpointer = None

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
            self._cv.notify_all()


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

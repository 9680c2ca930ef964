"""A load sees every save acknowledged before it began (docs/decisions.md D-settle).

With the cache trusted (docs/decisions.md D-owner) the live hub keeps it by reading the
store's log after each notification. A notification of a save another process made may
still be unread in this process's socket when a client, answered by that process, asks
here: waiting for the notifications already *heard* is not enough. A load therefore asks
the store where its log ends (one indexed query, :meth:`Settling.end_of_log`) and waits
until the hub has read and told the cache every row up to there (:meth:`Settling.reach`,
bounded). The store's events table is locked by each inserting transaction until its
commit (docs/decisions.md D-pgstore), so every row at or below that end is committed: a
save acknowledged before the load began is among them.

A request's read is one blocking call (``api.runtime.Runtime.call``, :meth:`Settling.read`):
its first load asks, the later ones began after that answer and take it. The query is
shared: reads that begin while one is in flight take the next one's answer, so a burst of
reads asks once or twice, not once each. A command's loads do not ask
(:meth:`Settling.deciding`): a copy it decided on is checked by its save, and a refused
command checks whether the store moved on (D-owner). Nor do loads outside a request's read:
the background work is woken by the hub once it has read the rows that woke it, and a live
stream follows the hub.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Final, TypeVar

T = TypeVar("T")


class _Read:
    """One blocking call's loads: settled once (or never, a command's)."""

    __slots__ = ("settled", "unsettled")

    def __init__(self, settled: bool) -> None:
        self.settled = settled
        self.unsettled = False
        """The hub did not reach the log's end in time: every load of the read reads the
        store."""


_READ: Final[ContextVar[_Read | None]] = ContextVar("shengji_read", default=None)


class Settling:
    """Where the hub has read the log to, and the store's log end as loads ask it
    (thread-safe: the hub's loop tells, the loads' worker threads ask and wait)."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self.followed = False
        """A hub tells this where it has read to (:meth:`told`); until then loads do not ask."""
        self.position = 0
        """The last notification id whose row the hub has read and told the cache."""
        self._losses = 0
        self._asking = threading.Lock()
        self._begun = 0
        self._answer = (0, 0)
        self.asked = 0
        """Queries of the log's end made (metrics, benches)."""
        self.settles = 0
        """Loads that needed the log's end (metrics, benches)."""

    # -- the hub's side --------------------------------------------------------------------

    def follow(self) -> None:
        """A hub keeps the cache by the log: loads ask where it ends from now on."""
        self.followed = True

    def told(self, position: int) -> None:
        """Every row up to ``position`` is read and told to the cache."""
        with self._changed:
            if position > self.position:
                self.position = position
                self._changed.notify_all()

    def release(self) -> None:
        """The hub lost its connection: loads stop waiting (they read the store)."""
        with self._changed:
            self._losses += 1
            self._changed.notify_all()

    # -- the loads' side -------------------------------------------------------------------

    def needed(self) -> bool:
        """This load must settle: a hub follows the log and this is the first load of a
        request's read (:meth:`one_read`). Marks the read settled. Loads outside a read —
        the background work's, woken by the hub after it read the rows that woke it, and
        a live stream's, which follows the hub — do not ask."""
        if not self.followed:
            return False
        read = _READ.get()
        if read is None or read.settled:
            return False
        read.settled = True
        return True

    @staticmethod
    def unsettled() -> bool:
        """This read could not be settled: its loads read the store."""
        read = _READ.get()
        return read is not None and read.unsettled

    @staticmethod
    def give_up() -> None:
        """The hub did not reach the log's end in time: this read's loads read the store."""
        read = _READ.get()
        if read is not None:
            read.unsettled = True

    def end_of_log(self, ask: Callable[[], int]) -> int:
        """The log's end as of a moment after this call began: ``ask()`` (one query), or
        the answer of a query begun after this call began, if one ended meanwhile."""
        begun = self._begun
        with self._asking:
            self.settles += 1
            number, end = self._answer
            if number > begun:
                return end
            self._begun += 1
            number = self._begun
            self.asked += 1
            end = ask()
            self._answer = (number, end)
            return end

    def reach(self, target: int, timeout: float) -> bool:
        """Wait, at most ``timeout`` s, until the hub has told every row up to ``target``;
        False when it has not (or lost its connection meanwhile): read the store."""
        if self.position >= target:
            return True
        with self._changed:
            losses = self._losses
            self._changed.wait_for(
                lambda: self.position >= target or self._losses != losses, timeout
            )
            return self.position >= target

    @staticmethod
    @contextlib.contextmanager
    def one_read() -> Iterator[None]:
        """The loads inside are one read: the first settles, the others take its answer."""
        token = _READ.set(_Read(settled=False))
        try:
            yield
        finally:
            _READ.reset(token)

    @staticmethod
    def read(fn: Callable[..., T], *args: object) -> T:
        """``fn(*args)`` as :meth:`one_read` (a blocking call of a request)."""
        with Settling.one_read():
            return fn(*args)

    @staticmethod
    @contextlib.contextmanager
    def deciding() -> Iterator[None]:
        """The loads inside are a command's: none settles (its save checks its copies)."""
        token = _READ.set(_Read(settled=True))
        try:
            yield
        finally:
            _READ.reset(token)

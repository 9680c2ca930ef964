"""Saves notified to this process against saves told to its aggregate cache.

With the cache trusted (docs/decisions.md D-owner) a load must not miss a save another
process committed before the load was asked for: PostgreSQL notifies this process as that
save commits, before its client hears the answer, so a client who wrote elsewhere and asks
here next asks after the notification. A load therefore waits until the notifications
heard *before it began* are told — not until the hub is idle, which under a steady stream
of saves it never is. The hub counts each notification (:meth:`Settling.heard`), notes the
count as it starts a read of the new rows (every save notified by then is in that read) and
reports it once the rows are told (:meth:`Settling.told_up_to`).
"""

from __future__ import annotations

import threading


class Settling:
    """Counts of notifications heard and told (thread-safe: the hub's loop counts, the
    loads' worker threads wait)."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self.notified = 0
        """Notifications heard so far."""
        self.told = 0
        """Of those, how many are covered by rows read and told to the cache."""

    def heard(self) -> None:
        """One more notification (its rows not read yet)."""
        with self._changed:
            self.notified += 1

    def told_up_to(self, mark: int) -> None:
        """The notifications counted up to ``mark`` are told (a read started at ``mark``
        has ended)."""
        with self._changed:
            if mark > self.told:
                self.told = mark
                self._changed.notify_all()

    def all_told(self) -> None:
        """Nothing more will be told of what was heard (the hub's connection is gone):
        loads stop waiting for it."""
        self.told_up_to(self.notified)

    def wait(self, timeout: float) -> bool:
        """Wait, at most ``timeout`` seconds, until what was heard before this call is
        told; True if it was."""
        target = self.notified
        if self.told >= target:
            return True
        with self._changed:
            return self._changed.wait_for(lambda: self.told >= target, timeout)

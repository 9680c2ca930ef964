"""Following the log into the view, and waiting for it (docs/decisions.md D-readmodels).

:class:`Follower` reads the game's notification log after the view's position (the
recorder's ``select_notifications``, a page at a time), decodes each notification with the
service's mapper and gives it to the projection with its tracking record, in batches: a
batch is written in one transaction with its last tracking record, and only if the
view's position is still the one it started from (several followers on one database: the
loser's batch is rolled back, it reads the position again and goes on from there).

It is background work (:meth:`Follower.loop`, run by the process's runner on a thread of
its own: docs/decisions.md D-rooms), woken by its doorbell (every save of this process,
the service's ``saves.changed``; on PostgreSQL the hub's notifications of other processes'
saves) and every :attr:`Follower.poll_s` seconds. A read catches up first
(:meth:`Follower.reach`): it waits for the loop's step in progress — or, when none runs
(a test's app without its lifespan), does the work itself — until the view has reached
the log's last notification id, for :data:`WAIT_S` at most; then it reads what the view
has.

A process that writes no view (a PostgreSQL ``api`` process beside ``worker`` ones) waits
for the worker's follower with :class:`Watcher`: the library's ``TrackingRecorder.wait``.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any, Final, Protocol

from eventsourcing.persistence import IntegrityError, Tracking, TrackingRecorder

from services.background import Doorbell, Loop
from services.game import GameService
from services.readmodels.projection import Lists
from services.readmodels.tracked import UPSTREAM, PositionMovedError, TrackedView
from services.readmodels.view import ListsView

log = logging.getLogger(__name__)

WAIT_S: Final = 1.0
"""How long a read waits for the view to reach the log's end before it reads anyway."""
PAGE: Final = 500
"""Notifications read per query."""
BATCH: Final = 5000
"""Events written per transaction at most (a catch-up over a long history)."""


class Freshness(Protocol):
    """What a list read calls first: bring the view up to the log's end (bounded)."""

    def reach(self, target: int, timeout: float = WAIT_S) -> bool:
        """True once the view shows every notification up to ``target``; False when it
        did not within ``timeout`` seconds (the read goes on with what the view has)."""
        ...

    def loops(self) -> tuple[Loop, ...]:
        """The background work that keeps the view (none: another process keeps it)."""
        ...


class Folding(Protocol):
    """What a follower needs of a projection."""

    def process_event(self, domain_event: Any, tracking: Tracking) -> None: ...

    def forget(self) -> None: ...


class Follower:
    """Keeps the view up to the log: the projection run over new notifications (module
    docstring). Thread-safe; one catch-up at a time per process. ``projection``: another
    read model's (the lists' by default)."""

    def __init__(
        self,
        service: GameService,
        view: TrackedView[Any],
        *,
        poll_s: float = 2.0,
        batch: int = BATCH,
        projection: Folding | None = None,
        name: str = "read-models",
    ) -> None:
        self.service = service
        self.view = view
        if projection is None:
            assert isinstance(view, ListsView)
            projection = Lists(view, service)
        self.projection: Folding = projection
        self.name = name
        self.poll_s = poll_s
        self.batch = batch
        self.reached = 0
        """The position this process last saw the view at (never ahead of it)."""
        self.doorbell = Doorbell()
        """Rung by every save heard of: the loop catches up at once."""
        self._lock = threading.Lock()

    # -- the background work ----------------------------------------------------------------

    def poke(self, *_: object) -> None:
        """Something was saved: follow it (thread-safe, returns at once)."""
        self.doorbell.ring()

    def loops(self) -> tuple[Loop, ...]:
        return (Loop(self.name, self.catch_up, self.poll_s, self.doorbell),)

    # -- catching up ---------------------------------------------------------------------------

    def reach(self, target: int, timeout: float = WAIT_S) -> bool:
        if self.reached >= target:
            return True
        deadline = time.monotonic() + timeout
        if not self._lock.acquire(timeout=timeout):
            return False
        try:
            self._catch_up(target, deadline)
        finally:
            self._lock.release()
        return self.reached >= target

    def catch_up(self) -> int:
        """Follow the log to its end; the view's position."""
        with self._lock:
            self._catch_up(self.service.recorder.max_notification_id() or 0, None)
        return self.reached

    def _catch_up(self, target: int, deadline: float | None) -> None:
        self.check_model()
        position = self.view.position()
        if position != self.reached:  # another runner, a rebuild: refold from the rows
            self.projection.forget()
        self.reached = position
        while self.reached < target:
            if deadline is not None and time.monotonic() > deadline:
                return
            try:
                if not self._one_batch(target):
                    return  # nothing stored up to target (ids of rolled-back saves)
            except (PositionMovedError, IntegrityError) as e:
                log.info("read models: the view moved (%s); following on from it", e)
                self.projection.forget()
                self.reached = self.view.position()

    def check_model(self) -> None:
        """Before catching up: a view of another model starts again (none here)."""

    def _one_batch(self, target: int) -> bool:
        """One transaction: the next events up to ``target`` (at most :attr:`batch`);
        False when there were none."""
        start = cursor = self.reached
        recorder, mapper = self.service.recorder, self.service.mapper
        try:
            with self.view.batch(start):
                while cursor < target and cursor - start < self.batch:
                    page = recorder.select_notifications(
                        cursor, PAGE, stop=target, inclusive_of_start=False
                    )
                    if not page:
                        break
                    for n in page:
                        event = mapper.to_domain_event(n)
                        self.projection.process_event(event, Tracking(UPSTREAM, n.id))
                    cursor = page[-1].id
        except BaseException:
            self.projection.forget()  # folded past what was written
            raise
        self.reached = cursor
        return cursor > start


class Watcher:
    """A process that writes no view waits for the one that does (module docstring);
    ``tracked``: the application name the view's tracking records are kept under (the
    lists': the game's; a view of its own, such as the career's, names its own)."""

    def __init__(self, view: TrackingRecorder, tracked: str = UPSTREAM) -> None:
        self.view = view
        self.tracked = tracked

    def reach(self, target: int, timeout: float = WAIT_S) -> bool:
        if target == 0:
            return True  # an empty log
        try:
            self.view.wait(self.tracked, target, timeout=timeout)
        except TimeoutError:
            return False
        return True

    def loops(self) -> tuple[Loop, ...]:
        return ()

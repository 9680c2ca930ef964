"""Following the log into the views, and waiting for them (docs/decisions.md
D-readmodels, D-follow).

A :class:`Follower` keeps one view: its projection and where the view is in the log. A
:class:`Pass` reads the game's notification log after the views' positions (the
recorder's ``select_notifications``, a page at a time) for every follower of a process
at once (:meth:`Pass.of`; a follower made alone has a pass of its own): each new
notification is read once, decoded with the service's mapper only if a follower wants its
topic (:class:`Follows`: the projection's own dispatch says which), and handed to those
that do with its tracking record. A batch is written at its end: each view's rows with
the last notification read as its position — in one transaction when the views share a
store — and only if each view's position is still the one it started from (several
followers on one database: the loser's batch is rolled back, it reads the positions
again and goes on from there).

It is background work (:meth:`Pass.loops`, run by the process's runner on a thread of
its own: docs/decisions.md D-rooms), woken by its doorbell (every save of this process,
the service's ``saves.changed``; on PostgreSQL the hub's notifications of other processes'
saves: rings pile up into one pass) and every :attr:`Pass.poll_s` seconds. The views'
positions are read on the first pass and after a view moved under it, not on every
wake-up. A read catches up first (:meth:`Follower.reach`): it waits for the pass in
progress — or, when none runs (a test's app without its lifespan), does the work itself
— until the view has reached the log's last notification id, for :data:`WAIT_S` at most;
then it reads what the view has.

A process that writes no view (a PostgreSQL ``api`` process beside ``worker`` ones) waits
for the worker's follower with :class:`Watcher`: the library's ``TrackingRecorder.wait``.
"""

from __future__ import annotations

import inspect
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol

from eventsourcing.persistence import IntegrityError, Tracking, TrackingRecorder
from eventsourcing.utils import resolve_topic

from services.background import Doorbell, Loop, backoff
from services.game import GameService
from services.readmodels.projection import Lists
from services.readmodels.tracked import (
    UPSTREAM,
    PositionMovedError,
    TrackedView,
    store_together,
)
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
    """Keeps one view up to the log: its projection run over new notifications (module
    docstring). ``projection``: another read model's (the lists' by default). A follower
    reads the log in a :class:`Pass` of its own, or in one it shares with the other
    views of its process (:meth:`Pass.of`): the pass reads the new notifications once
    for all of them."""

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
        self.reached = 0
        """The position this process last saw the view at (never ahead of it)."""
        self.settled = False
        """``reached`` was read from the view (the first pass, and after the view moved
        under this follower, reads it again)."""
        self.follows = Follows(projection)
        self.name = name
        """The view's name (logs, metrics)."""
        self.group = Pass(service, (self,), poll_s=poll_s, batch=batch, name=name)

    # -- the background work ----------------------------------------------------------------

    def poke(self, *_: object) -> None:
        """Something was saved: follow it (thread-safe, returns at once)."""
        self.group.doorbell.ring()

    def loops(self) -> tuple[Loop, ...]:
        """The pass's loop, when this follower's pass is its own (a shared pass is run
        once, by whoever made it)."""
        return self.group.loops() if self.group.members == (self,) else ()

    # -- catching up ---------------------------------------------------------------------------

    def reach(self, target: int, timeout: float = WAIT_S) -> bool:
        if self.reached >= target:
            return True
        return self.group.reach(self, target, timeout)

    def catch_up(self) -> int:
        """Follow the log to its end; the view's position."""
        self.group.catch_up()
        return self.reached

    def check_model(self) -> None:
        """Before catching up: a view of another model starts again (none here)."""

    def settle(self) -> None:
        """The view's position as stored: where this follower goes on from (a position
        that moved under it — another runner, a rebuild — drops what it folded)."""
        self.check_model()
        position = self.view.position()
        if position != self.reached:
            self.forget()
        self.reached = position
        self.settled = True

    def forget(self) -> None:
        """What was folded and remembered past the stored rows is dropped."""
        self.projection.forget()
        self.view.forget_rows()


class Follows:
    """Which topics a projection follows, told by its own dispatch: an event whose type
    has a handler of its own there (``process_event.register``) changes rows; any other
    moves the position alone (the default handler), which the pass does for all the
    events a view skipped at once. A projection without such a dispatch follows all."""

    def __init__(self, projection: Folding) -> None:
        _ = projection.process_event  # the library's dispatch registers what it deferred
        method = inspect.getattr_static(type(projection), "process_event", None)
        dispatcher = getattr(method, "dispatcher", None)
        self.dispatcher: Any = dispatcher
        self.default: Any = None if dispatcher is None else dispatcher.registry[object]
        self.known: dict[str, bool] = {}

    def __call__(self, topic: str) -> bool:
        found = self.known.get(topic)
        if found is None:
            if self.dispatcher is None:
                found = True
            else:
                found = self.dispatcher.dispatch(resolve_topic(topic)) is not self.default
            self.known[topic] = found
        return found


@dataclass(slots=True)
class Trouble:
    """A view whose projection failed (docs/decisions.md D-isolate): it stays at its
    position and is tried again at ``retry_at`` (the runner's :func:`backoff`)."""

    failures: int
    """Failed passes in a row."""
    error: str
    """The last error (type and message)."""
    retry_at: float
    """When the pass tries it again (``time.monotonic``)."""


class Pass:
    """One read of the log for several followers of one service (module docstring):
    each new notification is read once, decoded once if any follower wants it, and
    handed to those that do; each view's rows and position (the last notification
    read: what it skipped moves only the position) are written at the end, in one
    transaction when the views share a store — only if each view is still at the
    position it started from. One pass at a time per process."""

    def __init__(
        self,
        service: GameService,
        members: tuple[Follower, ...],
        *,
        poll_s: float = 2.0,
        batch: int = BATCH,
        name: str = "read-models",
        pace_s: float = 0.0,
    ) -> None:
        self.service = service
        self.members = members
        self.poll_s = poll_s
        self.pace_s = pace_s
        """A pass at most this often, however often the doorbell rings (the loop's
        ``pace_s``: a worker's; a read that catches up does not wait for it)."""
        self.batch = batch
        self.name = name
        self.doorbell = Doorbell()
        """Rung by every save heard of: the loop catches up at once."""
        self.heard: list[Callable[[frozenset[str]], object]] = []
        """Told the topics of the notifications each pass wrote (a policy that follows
        a rare topic through the log looks when one came: docs/decisions.md D-follow)."""
        self.troubles: dict[str, Trouble] = {}
        """The views whose projection is failing, by name: the others go on without them
        (docs/decisions.md D-isolate; metrics)."""
        self.failures = 0
        """Projection failures so far (metrics)."""
        self.clock: Callable[[], float] = time.monotonic
        self._lock = threading.Lock()

    @classmethod
    def of(
        cls, followers: Sequence[Follower], *, name: str = "read-models", pace_s: float = 0.0
    ) -> Pass:
        """One pass for ``followers`` (of one service): each follower's own is replaced;
        ``pace_s``: its loop's pace."""
        assert followers and all(f.service is followers[0].service for f in followers)
        group = cls(
            followers[0].service,
            tuple(followers),
            poll_s=min(f.group.poll_s for f in followers),
            batch=min(PAGE, *(f.group.batch for f in followers)),
            name=name,
            pace_s=pace_s,
        )
        for f in followers:
            f.group = group
        return group

    def loops(self) -> tuple[Loop, ...]:
        return (Loop(self.name, self.catch_up, self.poll_s, self.doorbell, pace_s=self.pace_s),)

    def reach(self, member: Follower, target: int, timeout: float) -> bool:
        """``member``'s view up to ``target`` (a read waits for it): the pass for every
        member when it is a page behind at most, else for its own view first (a catch-up
        after a start: the read waits for its view alone; the loop brings the others)."""
        deadline = time.monotonic() + timeout
        if not self._lock.acquire(timeout=timeout):
            return False
        try:
            far = target - member.reached > PAGE
            members = (member,) if far else self.members
            while member.reached < target and time.monotonic() <= deadline:
                if not self._step(members, target):
                    break
        finally:
            self._lock.release()
        return member.reached >= target

    def catch_up(self) -> None:
        """Follow the log to its end, a batch at a time (a read may take its turn between
        two: the lock is held for one batch)."""
        while True:
            with self._lock:
                if not self._step(self.members, None):
                    return

    def _step(self, members: tuple[Follower, ...], stop: int | None) -> bool:
        """One batch for ``members`` up to ``stop`` (None: the log's end); True when
        there may be more (or a view moved: it is followed on from where it is). A view
        whose projection failed sits out until its retry is due (D-isolate)."""
        if self.troubles:
            now = self.clock()
            members = tuple(m for m in members if self._due(m, now))
            if not members:
                return False
        for m in members:
            if not m.settled:
                m.settle()
        try:
            return self._one_batch(members, stop)
        except (PositionMovedError, IntegrityError) as e:
            log.info("read models: a view moved (%s); following on from it", e)
            for m in self.members:
                m.settled = False
            return True

    def _one_batch(self, members: tuple[Follower, ...], stop: int | None) -> bool:
        """One transaction: the next notifications (at most :attr:`batch`, none beyond
        ``stop``) for ``members``; True when there may be more."""
        start = cursor = min(m.reached for m in members)
        recorder, mapper = self.service.recorder, self.service.mapper
        topics: set[str] = set()
        failed: dict[Follower, Exception] = {}
        for m in members:
            m.view.open_batch()
        try:
            while cursor - start < self.batch and (stop is None or cursor < stop):
                limit = min(PAGE, self.batch - (cursor - start))
                page = recorder.select_notifications(
                    cursor, limit, stop=stop, inclusive_of_start=False
                )
                for n in page:
                    topics.add(n.topic)
                    event: Any = None
                    for m in members:
                        if n.id > m.reached and m not in failed and m.follows(n.topic):
                            try:  # one view's failure is its own (D-isolate)
                                if event is None:
                                    event = mapper.to_domain_event(n)
                                m.projection.process_event(event, Tracking(UPSTREAM, n.id))
                            except Exception as e:
                                failed[m] = e
                                m.forget()  # folded past what its view holds
                if page:
                    cursor = page[-1].id
                if len(page) < limit:
                    break
            if cursor == start:
                return False
            batches = []
            for m in members:
                if m.reached < cursor and m not in failed:  # the last one read: its position
                    m.view.record(m.view.new_change(), Tracking(UPSTREAM, cursor))
                    taken = m.view.take_batch(m.reached)
                    assert taken is not None
                    batches.append(taken)
            store_together(batches)
        except BaseException:
            for m in members:
                m.forget()  # folded past what was written
            raise
        finally:
            for m in members:
                m.view.close_batch()
        for m in members:
            if m in failed:
                self._failed(m, failed[m])
            else:
                m.reached = max(m.reached, cursor)
                self._recovered(m)
        for listener in self.heard:
            listener(frozenset(topics))
        return cursor - start >= self.batch and (stop is None or cursor < stop)

    def _due(self, member: Follower, now: float) -> bool:
        trouble = self.troubles.get(member.name)
        return trouble is None or trouble.retry_at <= now

    def _failed(self, member: Follower, error: Exception) -> None:
        """``member``'s projection failed: it stays where its view is, logged and tried
        again after the runner's backoff (the traceback once per kind of error)."""
        before = self.troubles.get(member.name)
        failures = 1 if before is None else before.failures + 1
        wait = backoff(self.poll_s, failures)
        text = f"{type(error).__name__}: {error}"
        self.troubles[member.name] = Trouble(failures, text, self.clock() + wait)
        self.failures += 1
        log.error(
            "read models: the %s view failed at position %d (%d in a row); the other views "
            "go on, it is tried again in %s s: %s",
            member.name,
            member.reached,
            failures,
            wait,
            text[:300],
            exc_info=(before is None or before.error != text) and error,
        )

    def _recovered(self, member: Follower) -> None:
        trouble = self.troubles.pop(member.name, None)
        if trouble is not None:
            log.warning(
                "read models: the %s view goes on after %d failures", member.name, trouble.failures
            )


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

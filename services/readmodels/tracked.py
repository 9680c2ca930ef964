"""A view kept from the log: an eventsourcing ``TrackingRecorder`` whose rows and tracking
record are written in one transaction, one event's rows at a time or a batch's
(docs/decisions.md D-readmodels). The lists' view (:mod:`services.readmodels.view`) and
the ratings' (:mod:`services.ratings.view`) are two.

:meth:`TrackedView.record` takes the rows an event changed with the event's tracking
record; inside :meth:`TrackedView.batch` the changes of many events are merged (the last
row of each key) and written at its end with the last tracking record, in one
transaction, and only if the view's position is still the one the batch started from —
so two runners on one database never both write the same events (the loser's batch is
rolled back: :class:`PositionMovedError`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, ClassVar, Generic, Protocol, Self, TypeVar

from eventsourcing.persistence import Tracking, TrackingRecorder

from services.game import GameService

UPSTREAM = GameService.name
"""The application whose notification log the views follow (the lists' tracking records'
name; the ratings' keep theirs under a name of their own)."""


class PositionMovedError(RuntimeError):
    """The view's position is not the one a batch started from: another runner wrote
    (or a rebuild reset the view) meanwhile. Nothing of the batch was written."""


class Rows(Protocol):
    """The rows one event or a batch changed (a view's ``Change``)."""

    def merge(self, other: Self) -> None: ...


C = TypeVar("C", bound=Rows)
K = TypeVar("K")
R = TypeVar("R")


class TrackedView(TrackingRecorder, ABC, Generic[C]):
    """The rows of a view and the position in the log they show (module docstring)."""

    tracked: ClassVar[str] = UPSTREAM
    """The application name its tracking records are kept under."""
    pending: C | None
    pending_tracking: Tracking | None

    def setup_batches(self) -> None:
        """Call once from the constructor."""
        self.pending = None
        self.pending_tracking = None

    @abstractmethod
    def new_change(self) -> C:
        """No rows changed yet (a batch's start)."""

    def position(self) -> int:
        """The last notification id the rows show (0: none yet)."""
        return self.max_tracking_id(self.tracked) or 0

    @contextmanager
    def batch(self, start: int) -> Iterator[None]:
        """Keep what :meth:`record` is given and write it at the end, in one transaction,
        if the view is still at ``start`` (else :class:`PositionMovedError`)."""
        self.pending, self.pending_tracking = self.new_change(), None
        try:
            yield
            if self.pending_tracking is not None:
                self.store(self.pending, start, self.pending_tracking)
        finally:
            self.pending, self.pending_tracking = None, None

    def record(self, change: C, tracking: Tracking) -> None:
        """The rows an event changed, with the event's tracking record (in a batch: kept
        for its end; else written now, in one transaction)."""
        tracking = Tracking(self.tracked, tracking.notification_id)
        if self.pending is None:
            self.store(change, self.position(), tracking)
            return
        self.pending.merge(change)
        self.pending_tracking = tracking

    def as_left(
        self, rows: Callable[[C], Mapping[K, R]], key: K, stored: Callable[[K], R | None]
    ) -> R | None:
        """A row as the projection left it: the batch's (``rows`` of the pending change),
        else the stored one."""
        if self.pending is not None:
            pending = rows(self.pending)
            if key in pending:
                return pending[key]
        return stored(key)

    @abstractmethod
    def store(self, change: C, start: int, tracking: Tracking) -> None:
        """Write ``change`` and ``tracking`` in one transaction if the position is
        ``start``; else :class:`PositionMovedError` and nothing written."""

    @abstractmethod
    def contents(self) -> dict[str, Any]:
        """Every row as JSON-ready values, keyed by table and id, and the position
        (``shengji rebuild --check`` compares these)."""

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
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
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
        self.open_batch()
        try:
            yield
            taken = self.take_batch(start)
            if taken is not None:
                store_together([taken])
        finally:
            self.close_batch()

    def open_batch(self) -> None:
        """From now on :meth:`record` keeps what it is given (:meth:`take_batch`)."""
        self.pending, self.pending_tracking = self.new_change(), None

    def take_batch(self, start: int) -> Batch | None:
        """What the open batch holds, to be written if the view is at ``start``; None
        when nothing was recorded."""
        if self.pending is None or self.pending_tracking is None:
            return None
        return Batch(self, self.pending, start, self.pending_tracking)

    def close_batch(self) -> None:
        """Records are written one at a time again."""
        self.pending, self.pending_tracking = None, None

    # -- one transaction for several views ----------------------------------------------------

    def joint(self) -> object | None:
        """The store whose one transaction may write this view's batch beside other
        views' (:meth:`store_in`); None: the view writes in a transaction of its own."""
        return None

    def joint_transaction(self) -> AbstractContextManager[Any]:
        """A transaction of :meth:`joint` that commits at its end."""
        raise NotImplementedError

    def store_in(self, c: Any, change: C, start: int, tracking: Tracking) -> None:
        """:meth:`store` inside the transaction of ``c`` (its cursor)."""
        raise NotImplementedError

    def kept(self, change: C) -> None:
        """``change`` was written (a view may remember rows it will read again)."""

    def forget_rows(self) -> None:
        """Rows remembered by :meth:`kept` are dropped (the view moved under its runner)."""

    def record(self, change: C, tracking: Tracking) -> None:
        """The rows an event changed, with the event's tracking record (in a batch: kept
        for its end; else written now, in one transaction)."""
        tracking = Tracking(self.tracked, tracking.notification_id)
        if self.pending is None:
            self.store(change, self.position(), tracking)
            self.kept(change)
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


@dataclass(frozen=True, slots=True)
class Batch:
    """A view's rows and tracking record to write if the view is at ``start``."""

    view: TrackedView[Any]
    change: Any
    start: int
    tracking: Tracking


def store_together(batches: Sequence[Batch]) -> None:
    """Write ``batches``: in one transaction when every view shares one store
    (:meth:`TrackedView.joint`), else each in its own; :class:`PositionMovedError` when
    a view is not at its batch's start (in one transaction: nothing written)."""
    if not batches:
        return
    joint = batches[0].view.joint()
    if joint is not None and all(b.view.joint() is joint for b in batches):
        with batches[0].view.joint_transaction() as c:
            for b in batches:
                b.view.store_in(c, b.change, b.start, b.tracking)
    else:
        for b in batches:
            b.view.store(b.change, b.start, b.tracking)
    for b in batches:
        b.view.kept(b.change)

"""A view kept in tables, rebuilt by ``shengji rebuild`` (:mod:`services.projections`,
docs/operations.md "Rebuilding read models"): the stored view first brought up to the log
as far as it goes now, then the whole log replayed into a scratch copy in memory by the
follower's own projection; the copy is compared with the stored view (``--check``:
:meth:`ScratchRebuild.rebuilt` against :meth:`ScratchRebuild.live`) or put in its place
in one transaction (``store()``: rows and position together, so a reader sees the old
view or the new one, never half). The lists' (:mod:`services.readmodels.rebuild`) and the
ratings' (:mod:`services.ratings.rebuild`) are two.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from eventsourcing.persistence import Tracking

from services.readmodels.runner import Folding, Follower
from services.readmodels.tracked import UPSTREAM, TrackedView


class ScratchRebuild(ABC):
    """A stored view's rebuild in a scratch copy (module docstring)."""

    name: str

    def __init__(
        self,
        stored: TrackedView[Any],
        follower: Follower,
        scratch: TrackedView[Any],
        projection: Folding,
    ) -> None:
        self.stored = stored
        follower.catch_up()  # the stored view as far as the log goes now: the rebuild too
        self.scratch = scratch
        self.projection = projection

    @abstractmethod
    def empty_scratch(self) -> None:
        """The scratch copy with no rows and no position."""

    @abstractmethod
    def store(self) -> None:
        """The rebuilt rows and position replace the stored view's, in one transaction."""

    def reset(self) -> None:
        self.empty_scratch()
        self.projection.forget()

    def apply(self, position: int, event: Any) -> None:
        self.projection.process_event(event, Tracking(UPSTREAM, position))

    def finish(self) -> None:
        return

    def rebuilt(self) -> dict[str, Any]:
        return self.scratch.contents()

    def live(self) -> dict[str, Any]:
        return self.stored.contents()

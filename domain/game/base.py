"""Shared base of the game's aggregates and events.

Every event class carries ``class_version`` (for future upcasting, the eventsourcing
library's ``upcast_v1_v2`` convention) and is timestamped with the ``now`` the service
passes in: the domain never reads a clock (docs/decisions.md F5).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from eventsourcing.domain import Aggregate


class GameAggregate(Aggregate):
    """Base aggregate: commands take ``now`` and stamp it on the events they trigger."""

    def _emit(self, event_class: type[Aggregate.Event], now: datetime, **kwargs: Any) -> None:
        self.trigger_event(event_class, timestamp=now, **kwargs)

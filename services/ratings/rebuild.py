"""The ratings in ``shengji rebuild`` (``shengji rebuild --only ratings``): the whole log
rated again into a scratch view in memory by the follower's own projection, compared with
the stored view (``--check``) or put in its place in one transaction (rows, position and
model together; docs/decisions.md D-ratings)."""

from __future__ import annotations

from typing import Any

from eventsourcing.persistence import Tracking

from services.game import GameService
from services.ratings.projection import Ratings
from services.ratings.rows import Change, HistoryRow, RatingRow
from services.ratings.runner import RatingsFollower
from services.ratings.view import TRACKED, MemoryRatingsView, RatingsView
from services.readmodels.view import UPSTREAM


class RatingsRebuild:
    """The ``ratings`` projection of ``shengji rebuild``."""

    name = "ratings"

    def __init__(self, service: GameService, stored: RatingsView, schedule: str) -> None:
        self.service = service
        self.stored = stored
        RatingsFollower(service, stored, schedule=schedule).catch_up()
        self.scratch = MemoryRatingsView()
        self.projection = Ratings(self.scratch, service, schedule=schedule)
        self.scratch.reset(self.projection.signature)

    def reset(self) -> None:
        self.scratch.reset(self.projection.signature)

    def apply(self, position: int, event: Any) -> None:
        self.projection.process_event(event, Tracking(UPSTREAM, position))

    def finish(self) -> None:
        return

    def rebuilt(self) -> dict[str, Any]:
        return self.scratch.contents()

    def live(self) -> dict[str, Any]:
        return self.stored.contents()

    def store(self) -> None:
        change = Change()
        for row in self.scratch.rows():
            if isinstance(row, RatingRow):
                change.ratings[row.family, row.season, row.player_id] = row
            elif isinstance(row, HistoryRow):
                change.history.append(row)
            else:
                change.seasons[row.family, row.season] = row
        self.stored.replace_all(
            change, Tracking(TRACKED, self.scratch.position()), self.projection.signature
        )

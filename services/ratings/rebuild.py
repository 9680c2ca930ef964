"""The ratings in ``shengji rebuild`` (``shengji rebuild ratings``): a
:class:`~services.readmodels.scratch.ScratchRebuild` of the ratings' view — the whole log
rated again into a scratch view in memory by the follower's own projection, compared with
the stored view (``--check``) or put in its place in one transaction (rows, position and
model together; docs/decisions.md D-ratings)."""

from __future__ import annotations

from eventsourcing.persistence import Tracking

from services.game import GameService
from services.ratings.projection import Ratings
from services.ratings.rows import Change, HistoryRow, RatingRow
from services.ratings.runner import RatingsFollower
from services.ratings.view import TRACKED, MemoryRatingsView, RatingsView
from services.readmodels.scratch import ScratchRebuild


class RatingsRebuild(ScratchRebuild):
    """The ``ratings`` projection of ``shengji rebuild``."""

    name = "ratings"

    def __init__(self, service: GameService, stored: RatingsView, schedule: str) -> None:
        self.scratch_view = MemoryRatingsView()
        self.stored_view = stored
        self.ratings = Ratings(self.scratch_view, service, schedule=schedule)
        self.scratch_view.reset(self.ratings.signature)
        super().__init__(
            stored,
            RatingsFollower(service, stored, schedule=schedule),
            self.scratch_view,
            self.ratings,
        )

    def empty_scratch(self) -> None:
        self.scratch_view.reset(self.ratings.signature)

    def store(self) -> None:
        change = Change()
        for row in self.scratch_view.rows():
            if isinstance(row, RatingRow):
                change.ratings[row.family, row.season, row.player_id] = row
            elif isinstance(row, HistoryRow):
                change.history.append(row)
            else:
                change.seasons[row.family, row.season] = row
        self.stored_view.replace_all(
            change, Tracking(TRACKED, self.scratch_view.position()), self.ratings.signature
        )

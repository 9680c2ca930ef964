"""Following the log into the ratings' view (docs/decisions.md D-ratings): the read
models' :class:`~services.readmodels.runner.Follower` with the ratings' projection, which
first checks the model the view was computed with — another one (a new model version, a
new season schedule) resets the view and the log is rated again from its start."""

from __future__ import annotations

import logging

from services.game import GameService
from services.ratings.projection import Ratings
from services.ratings.view import RatingsView
from services.readmodels.runner import BATCH, Follower

log = logging.getLogger(__name__)


class RatingsFollower(Follower):
    """Keeps the ratings' view up to the log, under the model in force."""

    def __init__(
        self,
        service: GameService,
        view: RatingsView,
        *,
        schedule: str = "monthly",
        poll_s: float = 2.0,
        batch: int = BATCH,
    ) -> None:
        self.ratings = Ratings(view, service, schedule=schedule)
        self.ratings_view = view
        super().__init__(
            service, view, poll_s=poll_s, batch=batch, projection=self.ratings, name="ratings"
        )

    def check_model(self) -> None:
        stored, wanted = self.ratings_view.model(), self.ratings.signature
        if stored != wanted:
            if stored is not None:
                log.info("ratings: the view is of %s, not %s: rating the log again", stored, wanted)
            self.ratings_view.reset(wanted)
            self.reached = 0

"""The friends' view in ``shengji rebuild`` (``--only social``): the whole log projected
again into a scratch view in memory, compared with the stored view or put in its place in
one transaction (docs/decisions.md D-social). Nothing is sent again."""

from __future__ import annotations

from typing import Any

from eventsourcing.persistence import Tracking

from services.game import GameService
from services.readmodels.runner import Follower
from services.readmodels.scratch import ScratchRebuild
from services.social.projection import Social
from services.social.view import TRACKED, MemorySocialView, SocialView


def follower(service: GameService, view: SocialView, **options: Any) -> Follower:
    """The follower that keeps ``view`` up to ``service``'s log."""
    return Follower(service, view, projection=Social(view), name="social", **options)


class SocialRebuild(ScratchRebuild):
    name = "social"

    def __init__(self, service: GameService, stored: SocialView) -> None:
        self.scratch_view = MemorySocialView()
        self.stored_view = stored
        super().__init__(
            stored, follower(service, stored), self.scratch_view, Social(self.scratch_view)
        )

    def empty_scratch(self) -> None:
        self.scratch_view.reset()

    def store(self) -> None:
        tracking = Tracking(TRACKED, self.scratch_view.position())
        self.stored_view.replace_all(self.scratch_view.as_change(), tracking)

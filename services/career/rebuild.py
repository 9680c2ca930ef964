"""The career in ``shengji rebuild`` (``--only career``): the whole log projected again into
a scratch view in memory by the follower's own projection, compared with the stored view
(``--check``) or put in its place in one transaction (rows and position together;
docs/decisions.md D-career). Nothing is sent: the rating notices are the log's
(:mod:`services.career.notices`), never the view's."""

from __future__ import annotations

from typing import Any

from eventsourcing.persistence import Tracking

from services.career.projection import Career
from services.career.rows import Change, EntryRow, MatchRow, PartnerRow, TotalsRow
from services.career.view import TRACKED, CareerView, MemoryCareerView
from services.game import GameService
from services.readmodels.runner import Follower
from services.readmodels.scratch import ScratchRebuild


def follower(service: GameService, view: CareerView, **options: Any) -> Follower:
    """The follower that keeps ``view`` up to ``service``'s log."""
    return Follower(service, view, projection=Career(view, service), name="career", **options)


def as_change(view: CareerView) -> Change:
    """Every row of ``view``, as one change."""
    change = Change()
    for row in view.rows():
        if isinstance(row, MatchRow):
            change.matches[row.match_id] = row
        elif isinstance(row, EntryRow):
            change.entries[row.player_id, row.match_id] = row
        elif isinstance(row, TotalsRow):
            change.totals[row.player_id, row.family] = row
        elif isinstance(row, PartnerRow):
            change.partners[row.player_id, row.family, row.partner] = row
        else:
            change.released[row.tournament_id, row.round] = row
    return change


class CareerRebuild(ScratchRebuild):
    """The ``career`` projection of ``shengji rebuild`` (module docstring)."""

    name = "career"

    def __init__(self, service: GameService, stored: CareerView) -> None:
        self.scratch_view = MemoryCareerView()
        self.stored_view = stored
        super().__init__(
            stored, follower(service, stored), self.scratch_view, Career(self.scratch_view, service)
        )

    def empty_scratch(self) -> None:
        self.scratch_view.reset()

    def store(self) -> None:
        tracking = Tracking(TRACKED, self.scratch_view.position())
        self.stored_view.replace_all(as_change(self.scratch_view), tracking)

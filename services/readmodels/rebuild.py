"""The lists' read models in ``shengji rebuild`` (:mod:`services.projections`,
docs/operations.md "Rebuilding read models"): a
:class:`~services.readmodels.scratch.ScratchRebuild` of the lists' view with the lists'
projection."""

from __future__ import annotations

from eventsourcing.persistence import Tracking

from services.game import GameService
from services.readmodels.projection import Lists
from services.readmodels.rows import Change, MatchRow, SeatRow
from services.readmodels.runner import Follower
from services.readmodels.scratch import ScratchRebuild
from services.readmodels.tracked import UPSTREAM
from services.readmodels.view import ListsView, MemoryListsView


class ListsRebuild(ScratchRebuild):
    """The ``lists`` projection of ``shengji rebuild`` (module docstring)."""

    name = "lists"

    def __init__(self, service: GameService, stored: ListsView) -> None:
        self.scratch_view = MemoryListsView()
        self.stored_view = stored
        super().__init__(
            stored, Follower(service, stored), self.scratch_view, Lists(self.scratch_view, service)
        )

    def empty_scratch(self) -> None:
        self.scratch_view.reset()

    def store(self) -> None:
        change = Change()
        for row in self.scratch_view.rows():
            if isinstance(row, MatchRow):
                change.matches[row.match_id] = row
            elif isinstance(row, SeatRow):
                change.seats[row.account_id, row.match_id] = row
            else:
                change.tournaments[row.tournament_id] = row
        self.stored_view.replace_all(change, Tracking(UPSTREAM, self.scratch_view.position()))

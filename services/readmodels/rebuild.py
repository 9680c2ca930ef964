"""The lists' read models in ``shengji rebuild`` (:mod:`services.projections`,
docs/operations.md "Rebuilding read models").

:class:`ListsRebuild` replays the whole log into a scratch view in memory (the same
projection the follower runs), then either compares it with the stored view
(``--check``: :meth:`~ListsRebuild.rebuilt` against :meth:`~ListsRebuild.live`) or puts it
in the stored view's place in one transaction (:meth:`~ListsRebuild.store`: rows and
position together, so a reader sees the old view or the new one, never half).
"""

from __future__ import annotations

from typing import Any

from eventsourcing.persistence import Tracking

from services.game import GameService
from services.readmodels.projection import Lists
from services.readmodels.rows import Change, MatchRow, SeatRow
from services.readmodels.runner import Follower
from services.readmodels.view import UPSTREAM, ListsView, MemoryListsView


class ListsRebuild:
    """The ``lists`` projection of ``shengji rebuild`` (module docstring)."""

    name = "lists"

    def __init__(self, service: GameService, stored: ListsView) -> None:
        self.service = service
        self.stored = stored
        # The stored view as far as the log goes now: the rebuild below reads as far.
        Follower(service, stored).catch_up()
        self.scratch = MemoryListsView()
        self.projection = Lists(self.scratch, service)

    def reset(self) -> None:
        self.scratch.reset()
        self.projection.forget()

    def apply(self, position: int, event: Any) -> None:
        self.projection.process_event(event, Tracking(UPSTREAM, position))

    def finish(self) -> None:
        return

    def rebuilt(self) -> dict[str, Any]:
        return self.scratch.contents()

    def live(self) -> dict[str, Any]:
        return self.stored.contents()

    def store(self) -> None:
        """The rebuilt rows and position replace the stored view's."""
        change = Change()
        for row in self.scratch.rows():
            if isinstance(row, MatchRow):
                change.matches[row.match_id] = row
            elif isinstance(row, SeatRow):
                change.seats[row.account_id, row.match_id] = row
            else:
                change.tournaments[row.tournament_id] = row
        self.stored.replace_all(change, Tracking(UPSTREAM, self.scratch.position()))

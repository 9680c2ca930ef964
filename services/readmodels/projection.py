"""The lists as an eventsourcing ``Projection`` of the game's notification log
(docs/decisions.md D-readmodels).

Each event of the log is given to :meth:`Lists.process_event` with its tracking record, in
log order; the projection folds it into the aggregate it belongs to (the aggregates' own
``apply``, ``event.mutate``) and hands the view the rows it changed:

* a match's events (and its rounds': whose turn, the deadline, the version) → its
  :class:`~services.readmodels.rows.MatchRow`;
* ``SeatClaimed`` and ``MatchLeft`` (an account's) → a :class:`SeatRow`;
* a tournament's events → its :class:`TournamentRow`;
* any other event → the position alone.

The folded aggregates are kept in a bounded cache. One that is not there (a restart, an
eviction) is loaded from the store *at the version its row shows* (the rows and the
position are written together, so that is the aggregate as of the position): the
projection never sees the store's later state. :meth:`Lists.forget` empties the cache
when the view's position moved under the runner (another runner, a rebuild).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any
from uuid import UUID

import msgspec
from eventsourcing.dispatch import singledispatchmethod
from eventsourcing.persistence import Tracking
from eventsourcing.projection import Projection

from domain.accounts.account import MatchLeft, SeatClaimed
from domain.game.match import Match
from domain.game.match_events import MatchCreated, MatchEvent, MatchImported
from domain.game.round import Round
from domain.game.round_events import RoundEvent, RoundStarted
from domain.tournament.events import TournamentCreated, TournamentEvent
from domain.tournament.tournament import Tournament
from services.accounts.my_matches import item as my_item
from services.game import GameService
from services.readmodels.rows import Change, MatchRow, SeatRow, TournamentRow
from services.readmodels.view import ListsView
from services.summaries import list_item as match_item
from services.tournaments.listing import list_item as tournament_item

CACHE = 4096
"""Folded aggregates kept (matches, rounds, tournaments)."""


class Lists(Projection[ListsView]):
    """Matches, players' seats and tournaments, as the lists show them (module docstring)."""

    name = "lists"

    def __init__(self, view: ListsView, service: GameService, cache: int = CACHE) -> None:
        super().__init__(view)
        self.service = service
        self.cache = cache
        self.folded: OrderedDict[UUID, Any] = OrderedDict()

    def forget(self) -> None:
        """Drop every folded aggregate (they are loaded again as the rows show them)."""
        self.folded.clear()

    # -- events --------------------------------------------------------------------------------

    @singledispatchmethod
    def process_event(self, domain_event: Any, tracking: Tracking) -> None:
        """An event no list shows: the position alone."""
        self.view.record(Change(), tracking)

    @process_event.register
    def match_created(self, event: MatchCreated, tracking: Tracking) -> None:
        match: Match = self._fold(event)
        self.view.record(self._match_change(match, tracking.notification_id, None), tracking)

    @process_event.register
    def match_changed(self, event: MatchEvent, tracking: Tracking) -> None:
        match: Match = self._fold(event)
        row = self.view.match_row(match.id)
        assert row is not None, f"match {match.id} has no row"
        imported = tracking.notification_id if isinstance(event, MatchImported) else None
        self.view.record(
            self._match_change(match, row.position, row.imported_position or imported, row),
            tracking,
        )

    @process_event.register
    def round_changed(self, event: RoundStarted | RoundEvent, tracking: Tracking) -> None:
        round_: Round = self._fold(event)
        row = self.view.match_row(round_.match_id)
        assert row is not None, f"match {round_.match_id} has no row"
        match = self._as_row_shows(row.match_id, row.match_version, self.service.get_match)
        self.view.record(
            self._match_change(match, row.position, row.imported_position, row, row.item),
            tracking,
        )

    @process_event.register
    def seat_claimed(self, event: SeatClaimed, tracking: Tracking) -> None:
        seat = SeatRow(
            account_id=event.originator_id,
            match_id=event.match_id,
            seat=event.seat,
            claimed=tracking.notification_id,
            left=None,
        )
        self.view.record(Change(seats={(seat.account_id, seat.match_id): seat}), tracking)

    @process_event.register
    def match_left(self, event: MatchLeft, tracking: Tracking) -> None:
        seat = self.view.seat_row(event.originator_id, event.match_id)
        assert seat is not None, f"account {event.originator_id} has no seat in {event.match_id}"
        seat = msgspec.structs.replace(seat, left=tracking.notification_id)
        self.view.record(Change(seats={(seat.account_id, seat.match_id): seat}), tracking)

    @process_event.register
    def tournament_changed(
        self, event: TournamentCreated | TournamentEvent, tracking: Tracking
    ) -> None:
        t: Tournament = self._fold(event)
        row = self.view.tournament_row(t.id)
        position = tracking.notification_id if row is None else row.position
        item = tournament_item(t)
        new = TournamentRow(
            tournament_id=t.id,
            position=position,
            status=t.status,
            version=t.version,
            item=msgspec.json.encode(item),
        )
        self.view.record(Change(tournaments={t.id: new}), tracking)

    # -- rows ----------------------------------------------------------------------------------

    def _match_change(
        self,
        match: Match,
        position: int,
        imported: int | None,
        old: MatchRow | None = None,
        item: bytes | None = None,
    ) -> Change:
        """The match's row; ``item``: its list item as it stands (a round's event leaves
        the match as it was)."""
        current = self._current_round(match, old)
        row = MatchRow(
            match_id=match.id,
            position=position,
            imported_position=imported,
            listed=not match.private,  # never listed (docs/decisions.md D-table-life)
            match_version=match.version,
            round_id=None if current is None else current.id,
            round_version=0 if current is None else current.version,
            item=msgspec.json.encode(match_item(match)) if item is None else item,
            mine=msgspec.json.encode(my_item(match, current, 0)),
        )
        return Change(matches={match.id: row})

    def _current_round(self, match: Match, old: MatchRow | None) -> Round | None:
        """The match's current round as of the position: folded here, or loaded as the
        row shows it; None while its ``RoundStarted`` is still to come (the same save)."""
        rid = match.current_round_id()
        if rid is None:
            return None
        if rid in self.folded:
            self.folded.move_to_end(rid)
            current: Round = self.folded[rid]
            return current
        if old is not None and old.round_id == rid:
            loaded: Round = self._as_row_shows(rid, old.round_version, self.service.get_round)
            return loaded
        return None

    # -- folding -------------------------------------------------------------------------------

    def _fold(self, event: Any) -> Any:
        """The event's aggregate with the event applied: the folded one, or loaded from
        the store up to the event's version."""
        aid: UUID = event.originator_id
        found = self.folded.get(aid)
        if isinstance(event, MatchCreated | RoundStarted | TournamentCreated):
            folded = event.mutate(None)
        elif found is not None and found.version == event.originator_version - 1:
            folded = event.mutate(found)
        else:
            folded = self._load(aid, event.originator_version)
        self._keep(aid, folded)
        return folded

    def _as_row_shows(self, aid: UUID, version: int, load: Any) -> Any:
        found = self.folded.get(aid)
        if found is not None and found.version == version:
            self.folded.move_to_end(aid)
            return found
        loaded = load(aid, version=version)
        self._keep(aid, loaded)
        return loaded

    def _load(self, aid: UUID, version: int) -> Any:
        return self.service.repository.get(aid, version=version)

    def _keep(self, aid: UUID, aggregate: Any) -> None:
        self.folded[aid] = aggregate
        self.folded.move_to_end(aid)
        while len(self.folded) > self.cache:
            self.folded.popitem(last=False)

"""The lists as they were built before the read models, by scanning the log and loading
every aggregate in the request: the oracle the read models' answers are held to."""

from __future__ import annotations

from uuid import UUID

from eventsourcing.utils import get_topic

from domain.game.match_events import MatchCreated, MatchImported
from domain.tournament.events import TournamentCreated
from domain.tournament.tournament import Tournament
from services.game import GameService
from services.summaries import MatchList, MatchListItem, Origin, list_item
from services.tournaments.listing import TournamentList, TournamentListItem
from services.tournaments.listing import list_item as tournament_item

_CREATED = get_topic(MatchCreated)
_IMPORTED = get_topic(MatchImported)
_TOURNAMENT_CREATED = get_topic(TournamentCreated)


def scan_matches(
    service: GameService, *, after: int = 0, limit: int = 50, origin: Origin | None = None
) -> MatchList:
    topic = _IMPORTED if origin == "imported" else _CREATED
    items: list[MatchListItem] = []
    cursor = after
    while True:
        found = service.recorder.select_notifications(
            cursor, limit + 1, topics=[topic], inclusive_of_start=False
        )
        for n in found:
            match = service.get_match(UUID(str(n.originator_id)))
            if match.private or (origin == "played" and match.imported is not None):
                cursor = n.id
                continue
            if len(items) == limit:
                return MatchList(items=items, next=cursor, more=True)
            items.append(list_item(match))
            cursor = n.id
        if len(found) <= limit:
            return MatchList(items=items, next=cursor, more=False)


def scan_tournaments(
    service: GameService, *, after: int = 0, limit: int = 50, status: str | None = None
) -> TournamentList:
    items: list[TournamentListItem] = []
    cursor = after
    while True:
        found = service.recorder.select_notifications(
            cursor, limit + 1, topics=[_TOURNAMENT_CREATED], inclusive_of_start=False
        )
        for n in found:
            t: object = service.repository.get(UUID(str(n.originator_id)))
            if not isinstance(t, Tournament) or (status is not None and t.status != status):
                cursor = n.id
                continue
            if len(items) == limit:
                return TournamentList(items=items, next=cursor, more=True)
            items.append(tournament_item(t))
            cursor = n.id
        if len(found) <= limit:
            return TournamentList(items=items, next=cursor, more=False)

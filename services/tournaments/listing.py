"""Finding tournaments (docs/tournaments.md): :func:`list_item` is a tournament as
``GET /v1/tournaments`` lists it (the list is read from the read models,
:mod:`services.readmodels.lists`); :func:`open_tournaments` is the tournament clerk's
scan of the log for tournaments created since its last one."""

from __future__ import annotations

from typing import Annotated
from uuid import UUID

import msgspec
from eventsourcing.utils import get_topic
from msgspec import Meta

from domain.tournament.events import TournamentCreated
from domain.tournament.tournament import Tournament
from services import field_docs
from services.game import GameService

SCAN_PAGE = 100
"""Notifications the clerk's scan reads per query."""
STATUSES = ("registration", "ready", "in_play", "finished")
_CREATED = get_topic(TournamentCreated)


class TournamentListItem(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """One tournament of the list."""

    tournament_id: Annotated[str, field_docs.TOURNAMENT_ID]
    name: Annotated[str, field_docs.NAME]
    format: Annotated[str, field_docs.FORMAT]
    status: Annotated[str, Meta(description="`registration`, `ready`, `in_play` or `finished`.")]
    created_at: Annotated[str, field_docs.CREATED_AT]
    teams: Annotated[int, field_docs.TEAMS]
    total_rounds: Annotated[int, field_docs.TOTAL_ROUNDS]
    rounds_scheduled: Annotated[int, Meta(description="Rounds scheduled so far.")]


class TournamentList(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """A page of tournaments, oldest first."""

    items: Annotated[list[TournamentListItem], field_docs.ITEMS]
    next: Annotated[
        int,
        Meta(description="Pass as `after` for the next page (a position in the store's log)."),
    ]
    more: Annotated[bool, field_docs.MORE]


def list_item(t: Tournament) -> TournamentListItem:
    """The tournament as ``GET /v1/tournaments`` lists it."""
    return TournamentListItem(
        tournament_id=str(t.id),
        name=t.name,
        format=t.format,
        status=t.status,
        created_at=t.created_on.isoformat(),
        teams=len(t.teams),
        total_rounds=t.total_rounds,
        rounds_scheduled=len(t.rounds),
    )


def open_tournaments(service: GameService, after: int) -> tuple[list[UUID], int]:
    """The tournaments created after ``after`` (ids) and the new cursor (the clerk's scan)."""
    ids: list[UUID] = []
    cursor = after
    top = service.recorder.max_notification_id() or 0
    while cursor < top:
        found = service.recorder.select_notifications(
            cursor, SCAN_PAGE, stop=top, topics=[_CREATED], inclusive_of_start=False
        )
        for n in found:
            ids.append(UUID(str(n.originator_id)))
            cursor = n.id
        if len(found) < SCAN_PAGE:
            return ids, top  # read to the end: the next scan starts there (D-pgcost)
    return ids, cursor

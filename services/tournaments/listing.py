"""Finding tournaments (docs/tournaments.md): ``GET /v1/tournaments`` pages through the
tournaments in creation order, reading the store's notification log filtered by the
``TournamentCreated`` topic (the notification id is the cursor), as
:func:`services.summaries.list_matches` does for matches; ``status`` keeps only the
tournaments in that state now."""

from __future__ import annotations

from typing import Annotated
from uuid import UUID

import msgspec
from eventsourcing.utils import get_topic
from msgspec import Meta

from domain.rules.errors import InvalidInputError
from domain.tournament.events import TournamentCreated
from domain.tournament.tournament import Tournament
from services import field_docs
from services.game import GameService

MAX_PAGE = 100
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


def list_tournaments(
    service: GameService, *, after: int = 0, limit: int = 50, status: str | None = None
) -> TournamentList:
    """Tournaments created after log position ``after``, oldest first, at most ``limit``."""
    if type(limit) is not int or not 1 <= limit <= MAX_PAGE:
        raise InvalidInputError(f"limit must be 1..{MAX_PAGE}, got {limit!r}")
    if type(after) is not int or after < 0:
        raise InvalidInputError(f"after is a position >= 0, got {after!r}")
    if status is not None and status not in STATUSES:
        raise InvalidInputError(f"status is one of {', '.join(STATUSES)}, got {status!r}")
    items: list[TournamentListItem] = []
    cursor = after
    while True:
        found = service.recorder.select_notifications(
            cursor, limit + 1, topics=[_CREATED], inclusive_of_start=False
        )
        for n in found:
            t: object = service.repository.get(
                UUID(str(n.originator_id)), deepcopy_from_cache=False
            )
            if not isinstance(t, Tournament) or (status is not None and t.status != status):
                cursor = n.id
                continue
            if len(items) == limit:
                return TournamentList(items=items, next=cursor, more=True)
            items.append(list_item(t))
            cursor = n.id
        if len(found) <= limit:
            return TournamentList(items=items, next=cursor, more=False)


def open_tournaments(service: GameService, after: int) -> tuple[list[UUID], int]:
    """The tournaments created after ``after`` (ids) and the new cursor (the clerk's scan)."""
    ids: list[UUID] = []
    cursor = after
    while True:
        found = service.recorder.select_notifications(
            cursor, MAX_PAGE, topics=[_CREATED], inclusive_of_start=False
        )
        for n in found:
            ids.append(UUID(str(n.originator_id)))
            cursor = n.id
        if len(found) < MAX_PAGE:
            return ids, cursor

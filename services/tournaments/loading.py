"""Loading a tournament from the game's store (404 ``no tournament``), as of a version."""

from __future__ import annotations

from uuid import UUID

from domain.tournament.tournament import Tournament
from services.game import GameService
from services.loading import load


def get_tournament(
    service: GameService, tournament_id: UUID, version: int | None = None
) -> Tournament:
    """The tournament (as of ``version``)."""
    return load(service, tournament_id, Tournament, "tournament", version)

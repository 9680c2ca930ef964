"""The deal seeds and pacing of a tournament table (R35, R36), for ``GameService``.

A match created for a tournament records its tournament and tournament round in
``MatchCreated``. When such a match deals (a new round, or a redeal, R19 / 暴动), its seed
is not drawn at random: it is derived from the tournament round's secret
(:func:`domain.tournament.duplicate.deal_seed`), so every table of the round plays the
same cards. In a duplicate event of boards the round's dealer, level and trump come from
the secret too (:func:`domain.tournament.duplicate.board`, docs/decisions.md D-boards).
The secret stays inside the event store (``RoundScheduled.secret`` is a
secret field) until the tournament round completes and reveals it.

Pacing: a table whose four seats are bots has no one to wait for while cards arrive, so
its draw is unpaced (``interval_ms`` 0: the deal is complete at once); the declaring and
window times stay as configured, and bots pass as soon as they may (four passes end the
drawing, R17). Tables with people keep the service's pacing.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError

from domain.bots import PLAYERS
from domain.game.match import Match
from domain.game.round_events import Pacing
from domain.rules.board import Board
from domain.tournament.duplicate import board, deal_seed
from domain.tournament.tournament import Tournament
from services.errors import NotFoundError


def table_seed(repository: Any, match: Match, deal: int, deal_no: int) -> bytes:
    """R36: the seed of ``match``'s deal ``deal`` (its ``deal_no``-th dealing)."""
    tournament = _tournament(repository, match)
    state = tournament.round_state(match.tournament_round)
    return deal_seed(bytes.fromhex(state.secret), deal, deal_no)


def table_board(repository: Any, match: Match, deal: int) -> Board | None:
    """R36: the board ``match`` plays as its deal ``deal`` in a duplicate event of boards
    (docs/decisions.md D-boards); None for other matches."""
    if match.tournament_id is None:
        return None
    tournament = _tournament(repository, match)
    if not tournament.boards:
        return None
    state = tournament.round_state(match.tournament_round)
    return board(bytes.fromhex(state.secret), deal)


def _tournament(repository: Any, match: Match) -> Tournament:
    tournament_id: UUID | None = match.tournament_id
    assert tournament_id is not None
    try:
        tournament = repository.get(tournament_id)
    except AggregateNotFoundError:
        raise NotFoundError(f"no tournament {tournament_id} for match {match.id}") from None
    if not isinstance(tournament, Tournament):
        raise NotFoundError(f"no tournament {tournament_id} for match {match.id}")
    return tournament


def table_pacing(match: Match, pacing: Pacing) -> Pacing:
    """An unpaced draw for a tournament table of four bots, else ``pacing``."""
    if match.tournament_id is not None and all(
        info is not None and info.kind in PLAYERS for info in match.seats
    ):
        return Pacing(0, pacing.declare_ms, pacing.window_ms)
    return pacing

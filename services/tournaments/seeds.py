"""The deal seeds and pacing of a tournament table (R35, R36), for the dealer.

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

from dataclasses import dataclass
from uuid import UUID

from domain.bots import PLAYERS
from domain.game.match import Match
from domain.game.round import Round
from domain.game.round_events import Pacing
from domain.rules.board import Board
from domain.tournament.duplicate import board, deal_seed
from domain.tournament.events import RoundState
from domain.tournament.tournament import Tournament
from services.dealer import Dealing, FreshDeals, Loader


@dataclass(frozen=True, slots=True)
class TableDeals:
    """Every match's deals (:class:`services.dealer.DealSource`): a tournament table's
    from its tournament round's secret (R36), every other match's fresh (R35)."""

    fresh: FreshDeals

    def dealing(self, loader: Loader, match: Match, round_: Round) -> Dealing:
        if match.tournament_id is None:
            return self.fresh.dealing(loader, match, round_)
        state = _round_state(loader, match)
        seed = deal_seed(bytes.fromhex(state.secret), round_.number, round_.deal_no + 1)
        # R36: seat 0 draws first at every table; a board from its dealer (R16)
        first_seat = 0 if round_.board is None else None
        return Dealing(seed, table_pacing(match, self.fresh.pacing), first_seat)

    def board(self, loader: Loader, match: Match, number: int) -> Board | None:
        """R36: the board ``match`` plays as its deal ``number`` in a duplicate event of
        boards (docs/decisions.md D-boards); None for other matches."""
        if match.tournament_id is None:
            return None
        tournament = loader.get(match.tournament_id, Tournament, "tournament")
        if not tournament.boards:
            return None
        state = tournament.round_state(match.tournament_round)
        return board(bytes.fromhex(state.secret), number)


def _round_state(loader: Loader, match: Match) -> RoundState:
    tournament_id: UUID | None = match.tournament_id
    assert tournament_id is not None
    tournament = loader.get(tournament_id, Tournament, "tournament")
    return tournament.round_state(match.tournament_round)


def table_pacing(match: Match, pacing: Pacing) -> Pacing:
    """An unpaced draw for a tournament table of four bots, else ``pacing``."""
    if match.tournament_id is not None and all(
        info is not None and info.kind in PLAYERS for info in match.seats
    ):
        return Pacing(0, pacing.declare_ms, pacing.window_ms)
    return pacing

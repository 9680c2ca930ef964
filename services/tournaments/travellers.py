"""Travellers: a board's results at every table that played it, as a duplicate director
hands them out (docs/tournaments.md, "Travellers"), and the index of a round's boards.

A traveller names, per table, the attackers and the defenders with their seats, the
dealer, the level and the trump played, the attackers' points (R29), the result (the
outcome and the levels gained, R30), and each side's matchpoints and percentage in the
board's field (:mod:`domain.tournament.comparison`).

**Hidden until the round completes** (R36), through the one rule
(:func:`services.embargo.results_released`), for every reader — the seats of the round's
own tables too: 409 ``round-in-play`` before, as the comparison answers."""

from __future__ import annotations

from typing import Annotated

import msgspec
from msgspec import Meta

from domain.rules.cards import RANKS, SUITS
from domain.rules.errors import IllegalMoveError
from domain.tournament.comparison import DealField, DealPlay, compare
from domain.tournament.duplicate import seat_teams
from domain.tournament.events import RoundState
from domain.tournament.tournament import Tournament
from services import field_docs
from services.embargo import results_released
from services.errors import NotFoundError
from services.game import GameService
from services.tournaments.comparison import deal_plays
from services.view_types import BoardView, board_view


class _View(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    pass


class TravellerLine(_View, frozen=True, kw_only=True):
    """One table's play of the board."""

    table: Annotated[int, Meta(description="From 1.")]
    deal_no: Annotated[int, Meta(description="The dealing played: 1, then 2, … after a redeal.")]
    attackers: Annotated[int, Meta(description="The attacking team's number (R6).")]
    attackers_name: Annotated[str, field_docs.NAME]
    attacking_seats: Annotated[str, Meta(description="The attackers' seats: `0/2` or `1/3`.")]
    attacking_players: Annotated[list[str], Meta(description="Who sat there, seat order.")]
    defenders: Annotated[int, Meta(description="The defending (dealer's) team's number.")]
    defenders_name: Annotated[str, field_docs.NAME]
    defending_seats: Annotated[str, Meta(description="The defenders' seats: `1/3` or `0/2`.")]
    defending_players: Annotated[list[str], Meta(description="Who sat there, seat order.")]
    dealer: Annotated[int, Meta(description="The dealer's seat (R6).")]
    level_rank: Annotated[str, Meta(description="The level rank played (R5).")]
    trump: Annotated[
        str | None, Meta(description="The trump suit (S H C D); null: no-trump (R9) or unknown.")
    ]
    points: Annotated[int, Meta(description="The attackers' points (R29).")]
    outcome: Annotated[str, Meta(description="The deal's outcome (R30).")]
    levels_gained: Annotated[int, Meta(description="Levels the winning side went up (R30).")]
    team_up: Annotated[int, Meta(description="The team that went up: its number.")]
    attackers_matchpoints: Annotated[int, Meta(description="2 per table of the field beaten.")]
    defenders_matchpoints: Annotated[int, Meta(description="The rest of the field's top.")]
    top: Annotated[int, Meta(description="The field's top: 2 × (tables − 1).")]
    attackers_percent: Annotated[float | None, Meta(description="Of the top; null when 0.")]
    defenders_percent: Annotated[float | None, Meta(description="Of the top; null when 0.")]


class Traveller(_View, frozen=True, kw_only=True):
    """A board's results at every table of the round that played it (R36)."""

    tournament_id: Annotated[str, field_docs.TOURNAMENT_ID]
    name: Annotated[str, field_docs.NAME]
    round: Annotated[int, Meta(description="The round's number.")]
    board: Annotated[int, Meta(description="The board: the deal (match round) 1, 2, …")]
    played_board: Annotated[
        BoardView | None,
        Meta(description="Its dealer, level and trump (a boards event); null on seeds."),
    ]
    average: Annotated[float | None, Meta(description="The attackers' average points.")]
    lines: Annotated[list[TravellerLine], Meta(description="By table.")]


class RoundBoard(_View, frozen=True, kw_only=True):
    """A board of the round, in the index."""

    board: Annotated[int, Meta(description="The deal (match round) 1, 2, …")]
    played_board: Annotated[BoardView | None, Meta(description="As the traveller's.")]
    tables: Annotated[int, Meta(description="The tables that played it.")]
    average: Annotated[float, Meta(description="The attackers' average points.")]


class BoardIndex(_View, frozen=True, kw_only=True):
    """A completed round's boards, each with its traveller."""

    tournament_id: Annotated[str, field_docs.TOURNAMENT_ID]
    name: Annotated[str, field_docs.NAME]
    round: Annotated[int, Meta(description="The round's number.")]
    boards: Annotated[list[RoundBoard], Meta(description="In board order.")]


def released_round(t: Tournament, number: int) -> RoundState:
    """Round ``number`` once it has completed; 409 ``round-in-play`` before (R36), to
    every reader (:func:`services.embargo.results_released`)."""
    state = t.round_state(number)
    if not results_released(t, number):
        raise IllegalMoveError(
            f"round {number} is in play: its boards' results are shown once every table is done",
            rule="R36",
            code="round-in-play",
        )
    return state


def _pct(mp: int, top: int) -> float | None:
    return None if top == 0 else round(100 * mp / top, 2)


def _plays(game: GameService, t: Tournament, state: RoundState, board: int) -> list[TravellerLine]:
    lines: list[tuple[DealPlay, TravellerLine]] = []
    for table in state.tables:
        try:
            match = game.get_match(table.match_id)
        except NotFoundError:
            continue
        seats = seat_teams(table.table, table.first, table.second)
        lineup = [t.lineup(state.number, seats[s]).players[s // 2] for s in range(4)]
        for recorded in match.results:
            if recorded.number != board:
                continue
            parity = (recorded.dealer + 1) % 2  # R6: the dealer's opponents attack
            dealt = game.get_round(recorded.round_id)
            play = DealPlay(
                table=table.table,
                deal=recorded.number,
                deal_no=dealt.deal_no,
                attacking_seats=parity,
                attackers=seats[parity],
                defenders=seats[1 - parity],
                points=recorded.attackers_total,
                board=dealt.board,
            )
            level = dealt.level if dealt.board is None else dealt.board.level
            trump = dealt.bidding.trump if dealt.board is None else dealt.board.trump
            lines.append(
                (
                    play,
                    TravellerLine(
                        table=table.table + 1,
                        deal_no=dealt.deal_no,
                        attackers=play.attackers,
                        attackers_name=t.teams[play.attackers].name,
                        attacking_seats=f"{parity}/{parity + 2}",
                        attacking_players=[lineup[parity], lineup[parity + 2]],
                        defenders=play.defenders,
                        defenders_name=t.teams[play.defenders].name,
                        defending_seats=f"{1 - parity}/{3 - parity}",
                        defending_players=[lineup[1 - parity], lineup[3 - parity]],
                        dealer=recorded.dealer,
                        level_rank=RANKS[level],
                        trump=None if trump is None else SUITS[trump],
                        points=recorded.attackers_total,
                        outcome=recorded.outcome,
                        levels_gained=recorded.levels_gained,
                        team_up=seats[recorded.team_up],  # a seat parity (R30)
                        attackers_matchpoints=0,
                        defenders_matchpoints=0,
                        top=0,
                        attackers_percent=None,
                        defenders_percent=None,
                    ),
                )
            )
    scored = {
        s.table: (s.matchpoints, s.top) for f in compare(p for p, _ in lines) for s in f.scores
    }
    out = []
    for play, line in lines:
        mp, top = scored[play.table]
        out.append(
            msgspec.structs.replace(
                line,
                attackers_matchpoints=mp,
                defenders_matchpoints=top - mp,
                top=top,
                attackers_percent=_pct(mp, top),
                defenders_percent=_pct(top - mp, top),
            )
        )
    return sorted(out, key=lambda line: line.table)


def traveller(game: GameService, t: Tournament, number: int, board: int) -> Traveller:
    """Board ``board`` of round ``number`` (blocking; 409 before the round completes, 404
    for a board no table played)."""
    state = released_round(t, number)
    lines = _plays(game, t, state, board)
    if not lines:
        raise NotFoundError(f"no table of round {number} played board {board}")
    boards = [f for f in _fields(game, state) if f.deal == board]
    return Traveller(
        tournament_id=str(t.id),
        name=t.name,
        round=number,
        board=board,
        played_board=board_view(boards[0].board) if boards else None,
        average=round(sum(line.points for line in lines) / len(lines), 2),
        lines=lines,
    )


def _fields(game: GameService, state: RoundState) -> list[DealField]:
    return compare(deal_plays(game, state))


def board_index(game: GameService, t: Tournament, number: int) -> BoardIndex:
    """Round ``number``'s boards (blocking; 409 before the round completes, R36)."""
    state = released_round(t, number)
    by_board: dict[int, list[DealField]] = {}
    for f in _fields(game, state):
        by_board.setdefault(f.deal, []).append(f)
    entries = []
    for deal, fields in sorted(by_board.items()):
        scores = [s for f in fields for s in f.scores]
        entries.append(
            RoundBoard(
                board=deal,
                played_board=board_view(fields[0].board),
                tables=len(scores),
                average=round(sum(s.points for s in scores) / len(scores), 2),
            )
        )
    return BoardIndex(tournament_id=str(t.id), name=t.name, round=number, boards=entries)

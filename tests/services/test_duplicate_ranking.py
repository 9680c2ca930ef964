"""The duplicate ranking of a boards event and its travellers (docs/tournaments.md, "The
duplicate ranking", "Travellers") against a hand-computed table: four teams, two tables,
two rounds of two boards, the attackers' points fixed per table.

Table 1 seats its first team at 0/2, table 2 at 1/3. Board 1: seat 0 deals (attackers
1/3); board 2: seat 3 deals (attackers 0/2). Every field has two tables: top 2.

Round 1 (0 v 1, 2 v 3)::

    board 1: table 1 attackers 1 take 60, table 2 attackers 2 take 85
             → 2 gets 2, 3 gets 0 (defending), 1 gets 0, 0 gets 2 (defending)
    board 2: table 1 attackers 0 take 40, table 2 attackers 3 take 40 → 1 each
    round 1: 0: 3/4, 1: 1/4, 2: 3/4, 3: 1/4

Round 2 (0 v 2, 1 v 3)::

    board 1: table 1 attackers 2 take 100, table 2 attackers 1 take 20
             → 2 gets 2, 0 gets 0, 1 gets 0, 3 gets 2
    board 2: table 1 attackers 0 take 30, table 2 attackers 3 take 30 → 1 each
    round 2: 0: 1/4, 1: 1/4, 2: 3/4, 3: 3/4

Totals of 8: 2 → 6 (75 %), 0 → 4 (50 %), 3 → 4 (50 %), 1 → 2 (25 %): 0 and 3 tie on
percentage and matchpoints and share rank 2 (``2=``); 1 is fourth."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast
from uuid import UUID, uuid5

import pytest

from domain.rules.board import Board
from domain.rules.errors import IllegalMoveError
from domain.tournament.duplicate_ranking import rank_teams
from domain.tournament.events import RoundState, TableEntry, TeamEntry
from services.game import GameService
from services.tournaments.ranking import duplicate_ranking, rank_text
from services.tournaments.travellers import board_index, traveller

BOARDS = (Board(1, 0, 5, 1), Board(2, 3, 11, None))  # seat 0 deals 7♥; seat 3 deals K no-trump
PAIRS = {1: ((0, 1), (2, 3)), 2: ((0, 2), (1, 3))}
POINTS = {  # (round, table) → the attackers' points on board 1 and board 2
    (1, 0): (60, 40),
    (1, 1): (85, 40),
    (2, 0): (100, 30),
    (2, 1): (20, 30),
}


@dataclass
class Recorded:
    number: int
    round_id: UUID
    dealer: int
    attackers_total: int
    outcome: str = "attackers_up"
    levels_gained: int = 1
    team_up: int = 1


@dataclass
class Played:
    deal_no: int
    board: Board


@dataclass
class Lineup:
    players: tuple[str, str]


@dataclass
class Event:
    """The tournament as the ranking and the travellers read it."""

    revealed: bool = True
    id: UUID = field(default_factory=lambda: UUID(int=7))
    name: str = "Thursday pairs"
    boards: bool = True
    withdrawn: frozenset[int] = frozenset()
    teams: list[TeamEntry] = field(
        default_factory=lambda: [
            TeamEntry(f"T{n}", (f"{n}a", f"{n}b"), ("human",) * 2) for n in range(4)
        ]
    )
    rounds: list[RoundState] = field(default_factory=list)

    def __post_init__(self) -> None:
        for n, pairs in PAIRS.items():
            tables = tuple(
                TableEntry(i, a, b, i % 2, uuid5(UUID(int=n), f"table {i}"))
                for i, (a, b) in enumerate(pairs)
            )
            revealed = self.revealed or n == 1
            self.rounds.append(RoundState(n, "", "", tables, None, revealed=revealed))

    def round_state(self, number: int) -> RoundState:
        if not 1 <= number <= len(self.rounds):
            raise IllegalMoveError(f"round {number}", code="round-not-scheduled")
        return self.rounds[number - 1]

    def lineup(self, number: int, team: int) -> Lineup:
        return Lineup(self.teams[team].players)


class Tables:
    """Every table's match: each board's result (R29) and the board its round played."""

    def __init__(self, event: Event) -> None:
        self.matches: dict[UUID, list[Recorded]] = {}
        for state in event.rounds:
            for t in state.tables:
                self.matches[t.match_id] = [
                    Recorded(b.number, uuid5(t.match_id, str(b.number)), b.dealer, points)
                    for b, points in zip(BOARDS, POINTS[state.number, t.table], strict=True)
                ]
        self.rounds = {
            r.round_id: Played(1, BOARDS[r.number - 1])
            for results in self.matches.values()
            for r in results
        }

    def get_match(self, match_id: UUID) -> Any:
        return type("M", (), {"results": self.matches[match_id]})

    def get_round(self, round_id: UUID) -> Played:
        return self.rounds[round_id]


def ranked(event: Event) -> list[tuple[str, int, int, float | None, list[int]]]:
    view = duplicate_ranking(cast("GameService", Tables(event)), cast("Any", event))
    assert view is not None
    return [
        (
            rank_text(line),
            line.team,
            line.matchpoints,
            line.percent,
            [r.matchpoints for r in line.rounds],
        )
        for line in view.lines
    ]


def test_the_ranking_over_two_rounds_equals_the_hand_computed_table() -> None:
    assert ranked(Event()) == [
        ("1", 2, 6, 75.0, [3, 3]),
        ("2=", 0, 4, 50.0, [3, 1]),
        ("2=", 3, 4, 50.0, [1, 3]),
        ("4", 1, 2, 25.0, [1, 1]),
    ]


def test_r36_a_round_in_play_does_not_count_yet() -> None:
    """Round 2 in play: the ranking is round 1's alone (its rounds list says so)."""
    event = Event(revealed=False)
    view = duplicate_ranking(cast("GameService", Tables(event)), cast("Any", event))
    assert view is not None and view.rounds == [1]
    assert ranked(event) == [
        ("1=", 0, 3, 75.0, [3]),
        ("1=", 2, 3, 75.0, [3]),
        ("3=", 1, 1, 25.0, [1]),
        ("3=", 3, 1, 25.0, [1]),
    ]


def test_the_tie_rule_same_percentage_more_matchpoints_first_no_top_last() -> None:
    lines = rank_teams({1: {0: (3, 6), 1: (4, 8), 2: (0, 0), 3: (5, 8)}, 2: {0: (1, 2)}})
    assert [(x.rank, x.tied, x.team, x.percent) for x in lines] == [
        (1, False, 3, 62.5),
        (2, True, 0, 50.0),
        (2, True, 1, 50.0),
        (4, False, 2, None),
    ]
    split = rank_teams({1: {0: (3, 6), 1: (4, 8)}})
    assert [(x.rank, x.team, x.matchpoints) for x in split] == [(1, 1, 4), (2, 0, 3)]


def test_a_traveller_agrees_with_the_records() -> None:
    event = Event()
    game = cast("GameService", Tables(event))
    v = traveller(game, cast("Any", event), 1, 1)
    assert v.played_board is not None and v.played_board.dealer == 0
    rows = [
        (
            line.table,
            line.attackers,
            line.attacking_seats,
            line.defenders,
            line.points,
            line.attackers_matchpoints,
            line.defenders_matchpoints,
            line.attackers_percent,
        )
        for line in v.lines
    ]
    assert rows == [(1, 1, "1/3", 0, 60, 0, 2, 0.0), (2, 2, "1/3", 3, 85, 2, 0, 100.0)]
    assert v.lines[0].attacking_players == ["1a", "1b"] and v.lines[0].trump == "H"
    assert v.lines[0].level_rank == "7" and v.average == 72.5
    tie = traveller(game, cast("Any", event), 1, 2)
    assert [(x.attackers, x.points, x.attackers_matchpoints) for x in tie.lines] == [
        (0, 40, 1),
        (3, 40, 1),
    ]
    assert tie.lines[0].trump is None  # no-trump
    index = board_index(game, cast("Any", event), 2)
    assert [(b.board, b.tables, b.average) for b in index.boards] == [(1, 2, 60.0), (2, 2, 30.0)]


def test_r36_a_traveller_of_a_round_in_play_is_refused() -> None:
    event = Event(revealed=False)
    game = cast("GameService", Tables(event))
    for read in (
        lambda: traveller(game, cast("Any", event), 2, 1),
        lambda: board_index(game, cast("Any", event), 2),
    ):
        with pytest.raises(IllegalMoveError) as refused:
            read()
        assert refused.value.code == "round-in-play"

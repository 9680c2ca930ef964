"""The comparison view of a duplicate event of boards (R29, R36; docs/tournaments.md,
"Boards") read off the tables' matches, against a hand-computed example: four tables, two
boards, the attackers' points fixed per table."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast
from uuid import UUID, uuid5

from domain.rules.board import Board
from domain.tournament.events import RoundState, TableEntry, TeamEntry
from services.game import GameService
from services.tournaments.comparison import comparison_view

BOARDS = (Board(1, 0, 5, 1), Board(2, 3, 11, None))  # seat 0 deals 7♥; seat 3 deals K no-trump
POINTS = {  # table → the attackers' points on board 1 and board 2 (R29)
    0: (60, 120),
    1: (85, 40),
    2: (60, 40),
    3: (130, 40),
}


@dataclass
class Recorded:
    number: int
    round_id: UUID
    dealer: int
    attackers_total: int


@dataclass
class Played:
    deal_no: int
    board: Board


class Tables:
    """The four tables' matches as the comparison reads them: each deal's result (R29)
    and the board its round played, redealt once (deal_no 2) on board 2."""

    def __init__(self, tables: tuple[TableEntry, ...]) -> None:
        self.matches = {
            t.match_id: [
                Recorded(b.number, uuid5(t.match_id, str(b.number)), b.dealer, POINTS[t.table][i])
                for i, b in enumerate(BOARDS)
            ]
            for t in tables
        }
        self.rounds = {
            r.round_id: Played(r.number, BOARDS[r.number - 1])
            for results in self.matches.values()
            for r in results
        }

    def get_match(self, match_id: UUID) -> Any:
        return type("M", (), {"results": self.matches[match_id]})

    def get_round(self, round_id: UUID) -> Played:
        return self.rounds[round_id]


class Event:
    def __init__(self) -> None:
        self.tables = tuple(
            TableEntry(i, 2 * i, 2 * i + 1, i % 2, uuid5(UUID(int=0), f"table {i}"))
            for i in range(4)
        )
        self.state = RoundState(1, "", "", self.tables, None, revealed=True)
        self.teams = [TeamEntry(f"T{n}", ("a", "b"), ("human", "human")) for n in range(8)]

    def round_state(self, number: int) -> RoundState:
        assert number == 1
        return self.state


def test_r36_the_boards_comparison_by_hand() -> None:
    event = Event()
    view = comparison_view(cast("GameService", Tables(event.tables)), cast("Any", event), 1)
    one, two = view.fields
    assert (one.deal, one.deal_no, one.attacking_seats) == (1, 1, 1)
    assert (two.deal, two.deal_no, two.attacking_seats) == (2, 2, 0)
    assert one.board is not None and (one.board.dealer, one.board.level_rank) == (0, "7")
    assert one.board.trump == "H"
    assert two.board is not None and (two.board.level_rank, two.board.trump) == ("K", None)
    # board 1: 60 85 60 130 → average 83.75, median 72.5, matchpoints 1 4 1 6 of 6
    assert (one.average, one.median) == (83.75, 72.5)
    assert [(s.table, s.attackers, s.defenders, s.points) for s in one.scores] == [
        (1, 1, 0, 60),  # table 1: team 0 at seats 0/2, team 1 attacks from 1/3
        (2, 2, 3, 85),  # table 2: team 2 at seats 1/3 attacks
        (3, 5, 4, 60),
        (4, 6, 7, 130),
    ]
    assert [s.matchpoints for s in one.scores] == [1, 4, 1, 6]
    assert [s.vs_median for s in one.scores] == [-12.5, 12.5, -12.5, 57.5]
    # board 2: 120 40 40 40 → average 60, median 40, matchpoints 6 2 2 2
    assert (two.average, two.median) == (60.0, 40.0)
    assert [(s.attackers, s.matchpoints, s.vs_average) for s in two.scores] == [
        (0, 6, 60.0),
        (3, 2, -20.0),
        (4, 2, -20.0),
        (7, 2, -20.0),
    ]
    # each team: its attack and its defence, of 12; best first
    assert [(m.team, m.matchpoints, m.top, m.percent) for m in view.teams] == [
        (0, 11, 12, 91.67),
        (6, 10, 12, 83.33),
        (2, 8, 12, 66.67),
        (4, 7, 12, 58.33),
        (5, 5, 12, 41.67),
        (3, 4, 12, 33.33),
        (7, 2, 12, 16.67),
        (1, 1, 12, 8.33),
    ]

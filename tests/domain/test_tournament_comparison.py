"""Comparing the same deal across tables (R36, R29) against a hand-computed example."""

from __future__ import annotations

import pytest

from domain.rules.board import Board
from domain.tournament.comparison import DealPlay, compare, team_matchpoints
from domain.tournament.duplicate import seat_teams


def play(table: int, deal: int, seats: int, points: int, deal_no: int = 1) -> DealPlay:
    # four tables: teams 0v1, 2v3, 4v5, 6v7; the attackers sit at ``seats``
    first, second = 2 * table, 2 * table + 1
    attackers = first if seats == table % 2 else second
    defenders = second if attackers == first else first
    return DealPlay(table, deal, deal_no, seats, attackers, defenders, points)


PLAYS = [
    # deal 1: seat for seat the same hands; tables 0, 1, 2 attack from 1/3, table 3 from 0/2
    play(0, 1, 1, 40),
    play(1, 1, 1, 80),
    play(2, 1, 1, 80),
    play(3, 1, 0, 120),
    # deal 2: drawn from seat 0 too (every deal of a tournament table), so again the seats
    # tell the hands: tables 0 and 2 attack from 0/2, table 1 from 1/3; table 3 redealt
    # (its own field)
    play(0, 2, 0, 100),
    play(1, 2, 1, 60),
    play(2, 2, 0, 20),
    play(3, 2, 1, 200, deal_no=2),
]


def test_r36_fields_group_the_tables_whose_attackers_held_the_same_cards() -> None:
    fields = compare(PLAYS)
    keys = [(f.deal, f.deal_no, f.attacking_seats, [s.table for s in f.scores]) for f in fields]
    assert keys == [
        (1, 1, 0, [3]),
        (1, 1, 1, [0, 1, 2]),
        (2, 1, 0, [0, 2]),
        (2, 1, 1, [1]),
        (2, 2, 1, [3]),
    ]


@pytest.mark.parametrize(
    ("field", "average", "median", "matchpoints", "vs_average"),
    [
        # by hand: 40, 80, 80 → average 66.67, median 80; 40 beats none (0), each 80
        # beats 40 (2) and ties the other 80 (1): 3; top 2 × 2 = 4
        (1, 200 / 3, 80.0, [0, 3, 3], [40 - 200 / 3, 80 - 200 / 3, 80 - 200 / 3]),
        # 100, 20 → average 60, median 60; 100 beats 20 (2), 20 none; top 2 × 1 = 2
        (2, 60.0, 60.0, [2, 0], [40.0, -40.0]),
        # table 1 attacked deal 2 from 1/3 alone: compared with nothing
        (3, 60.0, 60.0, [0], [0.0]),
        # a field of one: compared with nothing
        (0, 120.0, 120.0, [0], [0.0]),
    ],
)
def test_r29_r36_a_field_against_its_average_median_and_matchpoints(
    field: int, average: float, median: float, matchpoints: list[int], vs_average: list[float]
) -> None:
    f = compare(PLAYS)[field]
    assert f.average == pytest.approx(average) and f.median == median
    assert [s.matchpoints for s in f.scores] == matchpoints
    assert [s.vs_average for s in f.scores] == pytest.approx(vs_average)


def test_r36_a_team_s_matchpoints_add_its_attacks_and_defences() -> None:
    totals = team_matchpoints(compare(PLAYS))
    # table 0 (teams 0 v 1): deal 1 team 1 attacked (seats 1/3 on an even table) and
    # scored 0 of 4, team 0 defended: 4; deal 2 team 0 attacked from 0/2 beside table 2:
    # 2 of 2, team 1: 0
    assert totals[0] == (4 + 2, 6) and totals[1] == (0 + 0, 6)
    # table 1 (teams 2 v 3; odd, so team 2 sits at 1/3): deal 1 team 2 attacked, 3 of 4,
    # team 3 defended: 1; deal 2 alone: a top of 0
    assert totals[2] == (3, 4) and totals[3] == (1, 4)
    # table 3 played alone in both its fields: a top of 0
    assert totals[6] == (0, 0) and totals[7] == (0, 0)
    assert sum(got for got, _ in totals.values()) == sum(top for _, top in totals.values()) // 2


# -- boards (docs/decisions.md D-boards) ------------------------------------------------------

# Four tables (teams 0v1, 2v3, 4v5, 6v7; a table's first team at seats 0/2 when even, 1/3
# when odd) play two boards: board 1 dealt by seat 0 (seats 1/3 attack), board 2 by seat 3
# (seats 0/2 attack), redealt once at every table (deal_no 2).
BOARD_1 = Board(1, 0, 5, 1)  # level 7, hearts
BOARD_2 = Board(2, 3, 11, None)  # level K, no-trump


def board_play(table: int, b: Board, points: int, deal_no: int = 1) -> DealPlay:
    teams = seat_teams(table, 2 * table, 2 * table + 1)
    seats = (b.dealer + 1) % 2  # R6: the dealer's opponents attack
    return DealPlay(table, b.number, deal_no, seats, teams[seats], teams[1 - seats], points, b)


BOARD_PLAYS = [
    # board 1: attackers (seats 1/3) are teams 1, 2, 5, 6
    board_play(0, BOARD_1, 60),
    board_play(1, BOARD_1, 85),
    board_play(2, BOARD_1, 60),
    board_play(3, BOARD_1, 130),
    # board 2: attackers (seats 0/2) are teams 0, 3, 4, 7
    board_play(0, BOARD_2, 120, deal_no=2),
    board_play(1, BOARD_2, 40, deal_no=2),
    board_play(2, BOARD_2, 40, deal_no=2),
    board_play(3, BOARD_2, 40, deal_no=2),
]


def test_r36_a_board_s_field_is_every_table_that_played_it() -> None:
    fields = compare(BOARD_PLAYS)
    assert [(f.deal, f.deal_no, f.attacking_seats, f.board) for f in fields] == [
        (1, 1, 1, BOARD_1),
        (2, 2, 0, BOARD_2),  # a later deal keeps its attacking seats: the board's
    ]
    assert all([s.table for s in f.scores] == [0, 1, 2, 3] for f in fields)


@pytest.mark.parametrize(
    ("field", "average", "median", "vs_average", "vs_median", "attackers", "defenders"),
    [
        # board 1, by hand: 60 85 60 130 → average 335 / 4 = 83.75; median (60 + 85) / 2 =
        # 72.5; matchpoints (2 a table beaten, 1 a tie): 60 ties one 60 → 1; 85 beats two
        # 60s → 4; 130 beats all three → 6; the defenders the rest of the top 6
        (
            0, 83.75, 72.5, [-23.75, 1.25, -23.75, 46.25], [-12.5, 12.5, -12.5, 57.5],
            [1, 4, 1, 6], [5, 2, 5, 0],
        ),
        # board 2: 120 40 40 40 → average 60, median 40; 120 beats three → 6, each 40 ties
        # two → 2
        (
            1, 60.0, 40.0, [60.0, -20.0, -20.0, -20.0], [80.0, 0.0, 0.0, 0.0],
            [6, 2, 2, 2], [0, 4, 4, 4],
        ),
    ],
)  # fmt: skip
def test_r29_r36_a_board_against_its_field_by_hand(
    field: int,
    average: float,
    median: float,
    vs_average: list[float],
    vs_median: list[float],
    attackers: list[int],
    defenders: list[int],
) -> None:
    f = compare(BOARD_PLAYS)[field]
    assert (f.average, f.median) == (average, median)
    assert [s.vs_average for s in f.scores] == vs_average
    assert [s.vs_median for s in f.scores] == vs_median
    assert [s.matchpoints for s in f.scores] == attackers
    assert [s.top - s.matchpoints for s in f.scores] == defenders


def test_r36_team_totals_over_the_boards_by_hand() -> None:
    # team: board 1 + board 2 (A attacking, D defending), of 6 + 6
    assert team_matchpoints(compare(BOARD_PLAYS)) == {
        0: (5 + 6, 12),  # D 5, A 6
        1: (1 + 0, 12),  # A 1, D 0
        2: (4 + 4, 12),  # A 4, D 4
        3: (2 + 2, 12),  # D 2, A 2
        4: (5 + 2, 12),  # D 5, A 2
        5: (1 + 4, 12),  # A 1, D 4
        6: (6 + 4, 12),  # A 6, D 4
        7: (0 + 2, 12),  # D 0, A 2
    }

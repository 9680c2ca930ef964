"""Comparing the same deal across tables (R36, R29) against a hand-computed example."""

from __future__ import annotations

import pytest

from domain.tournament.comparison import DealPlay, compare, team_matchpoints


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
    # deal 2: the same hands for every table's attackers; table 3 redealt (its own field)
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
        (2, 1, None, [0, 1, 2]),
        (2, 2, None, [3]),
    ]


@pytest.mark.parametrize(
    ("field", "average", "median", "matchpoints", "vs_average"),
    [
        # by hand: 40, 80, 80 → average 66.67, median 80; 40 beats none (0), each 80
        # beats 40 (2) and ties the other 80 (1): 3; top 2 × 2 = 4
        (1, 200 / 3, 80.0, [0, 3, 3], [40 - 200 / 3, 80 - 200 / 3, 80 - 200 / 3]),
        # 100, 60, 20 → average 60, median 60; 100 beats both (4), 60 one (2), 20 none
        (2, 60.0, 60.0, [4, 2, 0], [40.0, 0.0, -40.0]),
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
    # scored 0 of 4, team 0 defended: 4; deal 2 team 0 attacked: 4 of 4, team 1: 0
    assert totals[0] == (4 + 4, 8) and totals[1] == (0 + 0, 8)
    # table 3 played alone in both its fields: a top of 0
    assert totals[6] == (0, 0) and totals[7] == (0, 0)
    assert sum(got for got, _ in totals.values()) == sum(top for _, top in totals.values()) // 2

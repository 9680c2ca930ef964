"""Standings and every tiebreak (docs/tournaments.md): match points, levels gained (R30),
attackers' point differential on the same deals (R29, R36), head-to-head, seeding."""

from __future__ import annotations

import pytest

from domain.tournament.standings import TableResult, standings


def res(
    first: int,
    second: int,
    winner: int | None,
    levels: tuple[int, int] = (0, 0),
    points: tuple[int, int] = (0, 0),
) -> TableResult:
    return TableResult(first, second, winner, levels, points)


def order(teams: int, results: list[TableResult], byes: tuple[int, ...] = ()) -> list[int]:
    return [s.team for s in standings(teams, results, byes)]


@pytest.mark.parametrize(
    ("case", "teams", "results", "byes", "expected"),
    [
        ("a win is 2 match points, a loss 0", 2, [res(1, 0, 1)], (), [1, 0]),
        ("a draw is 1 each: seeding decides", 2, [res(1, 0, None)], (), [0, 1]),
        ("a bye counts as a win", 3, [res(0, 1, None)], (2,), [2, 0, 1]),
        (
            "1. match points before levels",
            4,
            [res(0, 1, 1, levels=(0, 1)), res(2, 3, 2, levels=(5, 0))],
            (),
            [2, 1, 0, 3],
        ),
        (
            "2. levels gained break a tie on match points (R30)",
            4,
            [res(0, 1, 0, levels=(1, 0)), res(2, 3, 3, levels=(0, 3))],
            (),
            [3, 0, 1, 2],
        ),
        (
            "3. point differential on the same deals breaks a tie on levels (R29, R36)",
            4,
            [
                res(0, 1, 0, levels=(1, 0), points=(40, 60)),
                res(2, 3, 3, levels=(0, 1), points=(70, 30)),
            ],
            (),
            [0, 3, 2, 1],
        ),
        (
            "4. head-to-head breaks a tie left by 1-3",
            4,
            [
                res(0, 1, 1),
                res(2, 3, 3),
                res(0, 2, 0),
                res(1, 3, 3),
                res(1, 2, 1),
                res(3, 0, 0),
            ],
            (),
            # 0, 1 and 3 have 4 match points; 0 beat 3, 3 beat 1, 1 beat 0: a 3-way
            # circle (head-to-head 2 each) → seeding; 2 lost all
            [0, 1, 3, 2],
        ),
        (
            "4. head-to-head between two tied teams: 3 beat 2",
            4,
            [res(2, 3, 3), res(0, 2, 2), res(1, 3, 1), res(0, 1, None)],
            (),
            [1, 3, 2, 0],
        ),
        (
            "4. head-to-head in a three-way tie (a bye among them): 0 lost to 2",
            3,
            [res(0, 2, 2), res(1, 2, 1)],
            (0,),
            # all three have 2 match points; head-to-head 1: 2, 2: 2, 0: 0 → 1, 2 by seeding
            [1, 2, 0],
        ),
        (
            "5. registration order (seeding) last",
            4,
            [res(3, 2, None), res(1, 0, None)],
            (),
            [0, 1, 2, 3],
        ),
    ],
)
def test_ranking(
    case: str,
    teams: int,
    results: list[TableResult],
    byes: tuple[int, ...],
    expected: list[int],
) -> None:
    assert order(teams, results, byes) == expected, case


def test_head_to_head_orders_two_tied_teams_that_met() -> None:
    # 2 and 3 tie on match points, levels and differential; 3 beat 2 → 3 first
    results = [res(2, 3, 3), res(0, 2, 2), res(1, 3, 1), res(0, 1, None)]
    lines = standings(4, results)
    tied = [s for s in lines if s.team in (2, 3)]
    assert [s.team for s in tied] == [3, 2]
    assert [s.head_to_head for s in tied] == [2, 0]


def test_a_line_adds_up() -> None:
    results = [
        res(0, 1, 0, levels=(2, 0), points=(45, 30)),
        res(2, 0, None, levels=(1, 1), points=(80, 85)),
    ]
    line = next(s for s in standings(3, results, (0,)) if s.team == 0)
    assert (line.played, line.wins, line.draws, line.losses, line.byes) == (2, 1, 1, 0, 1)
    assert (line.match_points, line.levels_gained) == (2 + 1 + 2, 3)
    assert (line.points_for, line.points_against, line.point_differential) == (130, 110, 20)
    assert line.opponents == [1, 2] and line.rank == 1

"""Pairing (R36 tournaments): the circle-method round-robin and Swiss pairing without
rematches while it can, with byes to the lowest-ranked team that has had none."""

from __future__ import annotations

from collections import Counter
from itertools import combinations

import pytest

from domain.rules.errors import InvalidInputError
from domain.tournament.pairing import Pairing, round_robin, round_robin_rounds, swiss


def met(*pairs: tuple[int, int]) -> set[frozenset[int]]:
    return {frozenset(p) for p in pairs}


# -- round-robin ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("teams", "number", "expected"),
    [
        (2, 1, Pairing(((0, 1),))),
        (4, 1, Pairing(((0, 3), (2, 1)))),
        (4, 2, Pairing(((2, 0), (3, 1)))),
        (4, 3, Pairing(((0, 1), (3, 2)))),
        (5, 1, Pairing(((4, 1), (2, 3)), bye=0)),
        (5, 5, Pairing(((0, 1), (3, 4)), bye=2)),
    ],
)
def test_round_robin_rounds_by_the_circle_method(
    teams: int, number: int, expected: Pairing
) -> None:
    assert round_robin(teams, number) == expected


@pytest.mark.parametrize("teams", range(2, 13))
def test_round_robin_meets_every_team_once(teams: int) -> None:
    rounds = [round_robin(teams, n) for n in range(1, round_robin_rounds(teams) + 1)]
    assert len(rounds) == (teams if teams % 2 else teams - 1)
    meetings = Counter(frozenset(t) for p in rounds for t in p.tables)
    assert set(meetings) == {frozenset(c) for c in combinations(range(teams), 2)}
    assert set(meetings.values()) == {1}
    for p in rounds:  # every team plays once a round, or sits out (odd count)
        seated = [t for table in p.tables for t in table] + ([p.bye] if p.bye is not None else [])
        assert sorted(seated) == list(range(teams))
    byes = [p.bye for p in rounds if p.bye is not None]
    assert sorted(byes) == (list(range(teams)) if teams % 2 else [])


@pytest.mark.parametrize(("teams", "number"), [(1, 1), (65, 1), (4, 0), (4, 4), (5, 6)])
def test_round_robin_refuses_impossible_rounds(teams: int, number: int) -> None:
    with pytest.raises(InvalidInputError):
        round_robin(teams, number)


# -- Swiss ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ranking", "played", "byes", "expected"),
    [
        # round 1 folds the seeding: top half against bottom half
        (range(8), set(), set(), Pairing(((0, 4), (1, 5), (2, 6), (3, 7)))),
        (range(5), set(), set(), Pairing(((0, 2), (1, 3)), bye=4)),
    ],
)
def test_swiss_first_round_folds_the_seeding(
    ranking: range, played: set[frozenset[int]], byes: set[int], expected: Pairing
) -> None:
    assert swiss(list(ranking), played, byes, first_round=True) == expected


@pytest.mark.parametrize(
    ("ranking", "played", "byes", "expected"),
    [
        # by standing: the best against the next best
        ([3, 1, 0, 2], set(), set(), Pairing(((3, 1), (0, 2)))),
        # no rematch: 0 met 1, so 0 plays the next best it has not met
        ([0, 1, 2, 3], met((0, 1)), set(), Pairing(((0, 2), (1, 3)))),
        # backtracking: 0-1 leaves 2-3 (a rematch), so 0-2 is tried (met), then 0-3
        ([0, 1, 2, 3], met((2, 3), (0, 2)), set(), Pairing(((0, 3), (1, 2)))),
        # no rematch-free pairing exists at all: rematches, by standing
        (
            [0, 1, 2, 3],
            met((0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)),
            set(),
            Pairing(((0, 1), (2, 3))),
        ),
        # the bye goes to the lowest-ranked team without one
        ([0, 1, 2, 3, 4], set(), set(), Pairing(((0, 1), (2, 3)), bye=4)),
        ([0, 1, 2, 3, 4], set(), {4}, Pairing(((0, 1), (2, 4)), bye=3)),
        ([0, 1, 2, 3, 4], set(), {4, 3}, Pairing(((0, 1), (3, 4)), bye=2)),
        # ... unless that leaves the rest unpairable without a rematch: the next lowest
        ([0, 1, 2], met((0, 1)), set(), Pairing(((0, 2),), bye=1)),
        # every team had a bye: the lowest-ranked again
        ([0, 1, 2], set(), {0, 1, 2}, Pairing(((0, 1),), bye=2)),
    ],
)
def test_swiss_pairs_by_standing_without_rematches(
    ranking: list[int], played: set[frozenset[int]], byes: set[int], expected: Pairing
) -> None:
    assert swiss(ranking, played, byes) == expected


def test_swiss_eight_teams_three_rounds_never_rematch() -> None:
    played: set[frozenset[int]] = set()
    ranking = list(range(8))
    for number in (1, 2, 3):
        p = swiss(ranking, played, set(), first_round=number == 1)
        pairs = {frozenset(t) for t in p.tables}
        assert not pairs & played
        played |= pairs
        ranking = [*ranking[1:], ranking[0]]  # any new standing
    assert len(played) == 12


@pytest.mark.parametrize("ranking", [[0], [0, 0, 1], list(range(65))])
def test_swiss_refuses_bad_rankings(ranking: list[int]) -> None:
    with pytest.raises(InvalidInputError):
        swiss(ranking, set(), set())

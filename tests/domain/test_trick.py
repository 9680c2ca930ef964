"""Winning a trick (R24, R11) and its points (R26)."""

from __future__ import annotations

from collections import Counter

import pytest

from domain.rules.shapes import decompose
from domain.rules.trick import decisive_key, trick_points, trick_winner
from tests.helpers import cards, ctx

# id, level, trump, the four plays in play order ("|"), index of the winning play
# Level 2, trump H unless noted.
TRICK_ROWS = [
    # singles
    ("R24-higher-single-in-suit", "2", "H", "9S | KS | 3S | AS", 3),
    ("R24-leader-keeps-when-not-beaten", "2", "H", "AS | KS | 3S | QS", 0),
    ("R10-other-side-suits-never-win", "2", "H", "9S | AD | AC | 3S", 0),
    ("R24-trump-beats-side-lead", "2", "H", "AS | 3H | 4S | 5S", 1),
    ("R24-over-trump-BJ", "2", "H", "AS | 3H | SJ | BJ", 3),
    ("R8-offsuit-level-over-trump-K", "2", "H", "AS | 3H | 2C | KH", 2),
    ("R8-trump-level-over-offsuit-level", "2", "H", "AS | 2C | 2H | 2D", 2),
    ("R24-under-trump-loses", "2", "H", "AS | SJ | 3H | 4S", 1),
    ("R24-side-card-after-trump-loses", "2", "H", "9S | 3H | AS | 4S", 1),
    ("R25-trump-lead-higher-trump", "2", "H", "9H | 3H | AH | 4S", 2),
    ("R25-trump-lead-side-A-loses", "2", "H", "3H | AS | AD | AC", 0),
    # R11: equal order, the first played wins
    ("R11-two-identical-AS-first-wins", "2", "H", "AS | AS | 3S | 4S", 0),
    ("R11-two-identical-AS-follower-first-wins", "2", "H", "3S | AS | AS | 4S", 1),
    ("R11-offsuit-level-trumps-tie-first-wins", "5", "H", "3S | 5C | 5D | 4S", 1),
    ("R11-offsuit-level-lead-ties", "5", "H", "5S | 5C | 5D | 4H", 0),
    ("R11-NT-level-cards-tie", "7", "NT", "7S | 7H | 7C | 7D", 0),
    ("R9-NT-level-card-trumps-side-A", "7", "NT", "AS | 7D | KS | QS", 1),
    ("R9-NT-SJ-over-level", "7", "NT", "AS | 7D | SJ | 7C", 2),
    # pairs
    ("R24-higher-pair-wins", "2", "H", "9S 9S | KS KS | 3S 3S | QS QS", 1),
    ("R24-split-cards-do-not-beat-pair", "2", "H", "9S 9S | KS AS | 3S 4S | 5S 6S", 0),
    ("R24-two-unmatched-trumps-do-not-beat-pair", "2", "H", "9S 9S | 3H 4H | BJ SJ | 3S 4S", 0),
    ("R24-trump-pair-beats-side-pair", "2", "H", "AS AS | 3H 3H | 4S 5S | 6D 7D", 1),
    ("R24-over-trump-pair", "2", "H", "AS AS | 3H 3H | 9H 9H | SJ SJ", 3),
    ("R13-offsuit-level-different-suits-not-a-pair", "5", "H", "9S 9S | 5C 5D | 3S 4S | 6S 7S", 0),
    ("R11-offsuit-level-pairs-tie", "5", "H", "5S 5S | 5C 5C | 5D 5D | 3H 3H", 0),
    ("R24-half-trump-half-side-no-cover", "2", "H", "9S 9S | 3H 3S | 4S 5S | 6S 7S", 0),
    # tractors
    (
        "R24-tractor-covered-by-higher-tractor",
        "2",
        "H",
        "9S 9S 10S 10S | JS JS QS QS | 3S 4S 5S 6S | 7S 7S 8S 8S",
        1,
    ),
    (
        "R24-two-pairs-do-not-cover-tractor",
        "2",
        "H",
        "9S 9S 10S 10S | JS JS AS AS | 3S 4S 5S 6S | 7S 8S 3D 4D",
        0,
    ),
    (
        "R24-trump-tractor-covers-side-tractor",
        "2",
        "H",
        "9S 9S 10S 10S | 3H 3H 4H 4H | 3S 4S 5S 6S | 8D 8D 9D 9D",
        1,
    ),
    (
        "R24-trump-pairs-do-not-cover-tractor",
        "2",
        "H",
        "9S 9S 10S 10S | 3H 3H 6H 6H | 4S 5S 6S 7S | 8D 8D 9D 9D",
        0,
    ),
    (
        "R24-over-trump-tractor",
        "2",
        "H",
        "9S 9S 10S 10S | 3H 3H 4H 4H | SJ SJ BJ BJ | 6S 7S 8S JS",
        2,
    ),
    (
        "R24-lower-trump-tractor-after-higher",
        "2",
        "H",
        "9S 9S 10S 10S | SJ SJ BJ BJ | 3H 3H 4H 4H | 6S 7S 8S JS",
        1,
    ),
    (
        "R14-trump-tractor-across-offsuit-level",
        "5",
        "H",
        "3H 3H 4H 4H | AH AH 5S 5S | 6H 6H 9H 9H | 3S 4S 6S 7S",
        1,
    ),
    (
        "R14-equal-order-pairs-no-tractor",
        "5",
        "H",
        "3H 3H 4H 4H | 5S 5S 5C 5C | 6H 6H 9H 9H | 3S 4S 6S 7S",
        0,
    ),
    (
        "R14-NT-level-SJ-tractor-over",
        "7",
        "NT",
        "2S 2S 3S 3S | 7C 7C SJ SJ | 4S 4S 5S 5S | 3D 4D 5D 6D",
        1,
    ),
    (
        "R24-longer-tractor-covers-by-its-top-window",
        "2",
        "H",
        "3S 3S 4S 4S 5S 5S | 6H 6H 7H 7H 8H 8H | 9H 9H 10H 10H JH JH | 3D 4D 5D 6D 7D 8D",
        2,
    ),
    # throws: the whole structure in trump; a pair may stand in for two singles (seed 001)
    (
        "R24-trump-singles-do-not-cover-pair-in-throw",
        "2",
        "H",
        "AS KS KS | 3H 4H 5H | 3D 4D 5D | 3C 4C 5C",
        0,
    ),
    (
        "R24-trump-pair-and-single-cover-throw",
        "2",
        "H",
        "AS KS KS | 3H 3H 5H | 3D 4D 5D | 3C 4C 5C",
        1,
    ),
    ("R24-pair-stands-in-for-two-singles", "2", "H", "AS KS | 3H 3H | 3D 4D | 3C 4C", 1),
    (
        "R24-more-pairs-than-lead-wins",
        "2",
        "H",
        "AS AS KS QS | 3H 3H 4H 4H | 3D 4D 5D 6D | 3C 4C 5C 6C",
        1,
    ),
    (
        "R24-singles-throw-decided-by-highest-card",
        "2",
        "H",
        "AS KS QS | 3H 3H 4H | 9H 9H 6H | 3C 4C 5C",
        2,
    ),
    (
        "R24-decisive-component-pair-not-highest-card",
        "2",
        "H",
        "AS AS KS | 3H 3H BJ | 4H 4H 2D | 3C 4C 5C",
        2,
    ),
    (
        "R24-over-trump-throw-by-pair",
        "2",
        "H",
        "AS AS KS | 3H 3H 7H | 9H 9H 4H | 3C 4C 5C",
        2,
    ),
    (
        "R24-trump-throw-tractor-covered",
        "2",
        "H",
        "QS QS KS KS AS | 3H 3H 4H 4H 6H | 3C 4C 5C 6C 7C | 3D 4D 5D 6D 7D",
        1,
    ),
    (
        "R24-trump-throw-tractor-not-covered-by-pairs",
        "2",
        "H",
        "QS QS KS KS AS | 3H 3H 6H 6H 4H | 3C 4C 5C 6C 7C | 3D 4D 5D 6D 7D",
        0,
    ),
    ("R24-mixed-follow-never-wins", "2", "H", "AS KS | 3H 3S | SJ 4D | 5S 6S", 0),
    ("R24-same-suit-lower-throw-loses", "2", "H", "AS KS | QS JS | 3S 4S | 5S 6S", 0),
]


def _plays(text: str) -> list[list[int]]:
    return [cards(p) for p in text.split("|")]


@pytest.mark.parametrize(
    ("level", "trump", "plays", "winner"),
    [r[1:] for r in TRICK_ROWS],
    ids=[r[0] for r in TRICK_ROWS],
)
def test_trick_winner(level: str, trump: str, plays: str, winner: int) -> None:
    context = ctx(level, trump)
    trick = _plays(plays)
    assert len({len(p) for p in trick}) == 1, "every play has as many cards as the lead (R23)"
    assert max(Counter(c for p in trick for c in p).values()) <= 2, "two decks (R3)"
    assert trick_winner(context, trick) == winner
    assert trick_winner(context, trick, decompose(context, trick[0])) == winner


@pytest.mark.parametrize(
    ("level", "trump", "plays", "winner"),
    [r[1:] for r in TRICK_ROWS],
    ids=[r[0] for r in TRICK_ROWS],
)
def test_r24_winner_covers_the_lead(level: str, trump: str, plays: str, winner: int) -> None:
    context = ctx(level, trump)
    trick = _plays(plays)
    lead = decompose(context, trick[0])
    assert decisive_key(context, lead, trick[0]) == lead.largest.top
    win = decompose(context, trick[winner])
    assert win.category in (lead.category, 4)
    assert win.total_pairs >= lead.total_pairs


# R26: the points of every card in the trick
POINT_ROWS = [
    ("R26-no-points", "AS | 3S | 4S | QS", 0),
    ("R26-five", "5S | 3S | 4S | QS", 5),
    ("R26-ten-and-king", "10S | KS | 4S | QS", 20),
    ("R26-every-play-counts", "5S 5S | KH KH | 10D 10D | 5C 10C", 65),
    ("R26-jokers-are-no-points", "SJ SJ | BJ BJ | 2H 2H | 3H 3H", 0),
]


@pytest.mark.parametrize(
    ("plays", "points"), [r[1:] for r in POINT_ROWS], ids=[r[0] for r in POINT_ROWS]
)
def test_r26_trick_points(plays: str, points: int) -> None:
    assert trick_points(_plays(plays)) == points

"""The leads a hand offers as data (R12–R14, R22): every single, pair and tractor, in card
notation, one row per fact (the examples of RULES R14 among them)."""

from __future__ import annotations

import pytest

from domain.rules.cards import RANKS, SUITS, card_names, parse_cards
from domain.rules.context import TrumpContext, trump_context
from domain.rules.leads import lead_options
from domain.rules.shapes import ShapeKind, decompose

# rule, level rank, trump suit (None: no-trump), hand, tractors it holds
TRACTORS = [
    ("R14", "6", "S", "5C 5C 7C 7C", ["5C 5C 7C 7C"]),  # the level rank 6 is skipped
    ("R14", "5", "H", "AH AH 5S 5S", ["AH AH 5S 5S"]),  # trump A + off-suit level pair
    ("R14", "5", "H", "5S 5S 5H 5H", ["5S 5S 5H 5H"]),
    ("R14", "5", "H", "5H 5H SJ SJ", ["5H 5H SJ SJ"]),
    ("R14", "5", "H", "SJ SJ BJ BJ", ["SJ SJ BJ BJ"]),
    ("R14", "5", "H", "5S 5S 5C 5C", []),  # equal order is not a tractor
    ("R14", "2", "S", "4H 4H 6H 6H", []),  # 5H missing
    ("R14", "2", "S", "3D 3D 4C 4C", []),  # two suits
    ("R13", "2", "S", "SJ BJ", []),
    (
        "R14: the runs inside a longer run too",
        "2",
        "S",
        "3H 3H 4H 4H 5H 5H",
        ["3H 3H 4H 4H", "4H 4H 5H 5H", "3H 3H 4H 4H 5H 5H"],
    ),
    (
        "R14: two off-suit level pairs share a position: one tractor with each",
        "5",
        "H",
        "AH AH 5S 5S 5C 5C 5H 5H",
        [
            "AH AH 5S 5S",
            "AH AH 5C 5C",
            "5S 5S 5H 5H",
            "5C 5C 5H 5H",
            "AH AH 5S 5S 5H 5H",
            "AH AH 5C 5C 5H 5H",
        ],
    ),
    ("R9: no-trump, level pair then SJ", "5", None, "5D 5D SJ SJ", ["5D 5D SJ SJ"]),
]


def _ctx(level: str, trump: str | None) -> TrumpContext:
    return trump_context(RANKS.index(level), None if trump is None else SUITS.index(trump))


@pytest.mark.parametrize(("rule", "level", "trump", "hand", "tractors"), TRACTORS)
def test_tractors_held(
    rule: str, level: str, trump: str | None, hand: str, tractors: list[str]
) -> None:
    ctx = _ctx(level, trump)
    found = lead_options(ctx, parse_cards(hand)).tractors
    assert sorted(" ".join(card_names(t)) for t in found) == sorted(tractors), rule
    for t in found:  # each is a tractor by the rules engine's own reading (R14)
        assert decompose(ctx, t).kind is ShapeKind.TRACTOR, rule


# rule, hand, singles, pairs (level 2, spades trump)
SINGLES_AND_PAIRS = [
    ("R12", "AS", ["AS"], []),
    ("R12 R13", "AS AS", ["AS"], ["AS AS"]),
    ("R13: SJ and BJ are not a pair", "SJ BJ", ["SJ", "BJ"], []),
    ("R13: off-suit level cards of two suits are not a pair", "2H 2C", ["2H", "2C"], []),
    ("R12 R13", "3D 3D 4D KC", ["3D", "4D", "KC"], ["3D 3D"]),
]


@pytest.mark.parametrize(("rule", "hand", "singles", "pairs"), SINGLES_AND_PAIRS)
def test_singles_and_pairs_held(rule: str, hand: str, singles: list[str], pairs: list[str]) -> None:
    ctx = _ctx("2", "S")
    found = lead_options(ctx, parse_cards(hand))
    assert sorted(" ".join(card_names(c)) for c in found.singles) == sorted(singles), rule
    assert [" ".join(card_names(c)) for c in found.pairs] == pairs, rule
    for c in found.singles:
        assert decompose(ctx, c).kind is ShapeKind.SINGLE
    for c in found.pairs:
        assert decompose(ctx, c).kind is ShapeKind.PAIR

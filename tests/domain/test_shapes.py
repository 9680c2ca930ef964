"""Combinations (牌型): single R12, pair R13, tractor 拖拉机 R14, throw 甩牌 R15."""

from __future__ import annotations

import pytest

from domain.rules.cards import format_cards
from domain.rules.context import TRUMP, TrumpContext
from domain.rules.errors import InvalidInputError
from domain.rules.shapes import ShapeKind, decompose
from tests.helpers import cards, ctx

S, P, T, W, M = (
    ShapeKind.SINGLE,
    ShapeKind.PAIR,
    ShapeKind.TRACTOR,
    ShapeKind.THROW,
    ShapeKind.MIXED,
)

# id, level, trump, cards, kind, components largest first ("|" separated; "" for mixed)
SHAPE_ROWS = [
    # R12 / R13
    ("R12-single", "5", "H", "AS", S, "AS"),
    ("R12-single-joker", "5", "H", "BJ", S, "BJ"),
    ("R13-pair", "5", "H", "AS AS", P, "AS AS"),
    ("R13-pair-SJ", "5", "H", "SJ SJ", P, "SJ SJ"),
    ("R13-pair-BJ", "5", "H", "BJ BJ", P, "BJ BJ"),
    ("R13-pair-offsuit-level", "5", "H", "5S 5S", P, "5S 5S"),
    ("R13-SJ-BJ-not-a-pair", "5", "H", "SJ BJ", W, "BJ | SJ"),
    ("R13-offsuit-level-different-suits-not-a-pair", "5", "H", "5S 5C", W, "5C | 5S"),
    ("R13-NT-level-different-suits-not-a-pair", "7", "NT", "7H 7D", W, "7D | 7H"),
    ("R13-two-ranks-not-a-pair", "5", "H", "AS KS", W, "AS | KS"),
    ("R13-two-categories-mixed", "5", "H", "AS AH", M, ""),
    # R14 tractors
    ("R14-level6-gap-5C5C7C7C", "6", "S", "5C 5C 7C 7C", T, "5C 5C 7C 7C"),
    ("R14-level6-trump-C-5C5C7C7C", "6", "C", "5C 5C 7C 7C", T, "5C 5C 7C 7C"),
    ("R14-level2-4H4H6H6H-not", "2", "S", "4H 4H 6H 6H", W, "6H 6H | 4H 4H"),
    ("R14-side-adjacent", "2", "S", "9D 9D 10D 10D", T, "9D 9D 10D 10D"),
    ("R14-three-pairs", "2", "S", "JH JH QH QH KH KH", T, "JH JH QH QH KH KH"),
    ("R14-trumpA-offsuit-level", "5", "H", "AH AH 5S 5S", T, "AH AH 5S 5S"),
    ("R14-offsuit-level-trump-level", "5", "H", "5S 5S 5H 5H", T, "5S 5S 5H 5H"),
    ("R14-trump-level-SJ", "5", "H", "5H 5H SJ SJ", T, "5H 5H SJ SJ"),
    ("R14-SJ-BJ", "5", "H", "SJ SJ BJ BJ", T, "SJ SJ BJ BJ"),
    (
        "R14-whole-trump-chain",
        "5",
        "H",
        "AH AH 5S 5S 5H 5H SJ SJ BJ BJ",
        T,
        "AH AH 5S 5S 5H 5H SJ SJ BJ BJ",
    ),
    ("R14-5C-pair-also-offsuit-level", "5", "H", "AH AH 5C 5C", T, "AH AH 5C 5C"),
    ("R14-5S5S-5C5C-equal-order-not", "5", "H", "5S 5S 5C 5C", W, "5S 5S | 5C 5C"),
    ("R14-3D3D-4C4C-two-suits-mixed", "5", "H", "3D 3D 4C 4C", M, ""),
    ("R14-trump-K-A-across-level-Q", "Q", "D", "KD KD AD AD", T, "KD KD AD AD"),
    ("R14-trump-A-not-next-to-trump-level", "5", "H", "AH AH 5H 5H", W, "5H 5H | AH AH"),
    ("R14-side-A-not-next-to-offsuit-level", "5", "H", "AS AS 5S 5S", M, ""),
    ("R14-levelA-trumpK-offsuitA", "A", "S", "KS KS AH AH", T, "KS KS AH AH"),
    ("R14-level2-trumpA-offsuit2-trump2", "2", "C", "AC AC 2D 2D 2C 2C", T, "AC AC 2D 2D 2C 2C"),
    ("R14-side-QK-levelA-side-top", "A", "S", "QH QH KH KH", T, "QH QH KH KH"),
    ("R14-pair-and-single-not", "5", "H", "9S 9S 10S", W, "9S 9S | 10S"),
    # R9 no-trump tractors: level pair + SJ pair (+ BJ pair)
    ("R14-NT-level-SJ", "7", "NT", "7S 7S SJ SJ", T, "7S 7S SJ SJ"),
    ("R14-NT-level-SJ-BJ", "7", None, "7D 7D SJ SJ BJ BJ", T, "7D 7D SJ SJ BJ BJ"),
    ("R14-NT-two-level-pairs-equal-not", "7", "NT", "7S 7S 7H 7H", W, "7S 7S | 7H 7H"),
    ("R14-NT-level-BJ-gap-not", "7", "NT", "7C 7C BJ BJ", W, "BJ BJ | 7C 7C"),
    ("R14-NT-side-across-level", "7", "NT", "6S 6S 8S 8S", T, "6S 6S 8S 8S"),
    ("R14-NT-side-A-not-into-trump", "A", "NT", "KS KS AS AS", M, ""),
    # R15 throws: longest tractors first (equal length: the higher), then pairs, then singles
    (
        "R15-throw-order",
        "2",
        "H",
        "AS KS KS QS QS 9S 9S 7S 6S 6S 5S 5S 4S 4S",
        W,
        "4S 4S 5S 5S 6S 6S | QS QS KS KS | 9S 9S | AS | 7S",
    ),
    (
        "R15-equal-tractors-higher-first",
        "2",
        "H",
        "3S 3S 4S 4S 8S 8S 9S 9S",
        W,
        "8S 8S 9S 9S | 3S 3S 4S 4S",
    ),
    ("R15-pairs-high-to-low", "2", "H", "3D 3D KD KD 8D 8D", W, "KD KD | 8D 8D | 3D 3D"),
    ("R15-singles-high-to-low", "2", "H", "3D KD 8D", W, "KD | 8D | 3D"),
    ("R15-trump-throw", "5", "H", "BJ SJ SJ 2H", W, "SJ SJ | BJ | 2H"),
    (
        "R15-shared-offsuit-level-position",
        "5",
        "H",
        "AH AH 5S 5S 5C 5C 5H 5H",
        W,
        "AH AH 5S 5S 5H 5H | 5C 5C",
    ),
]


@pytest.mark.parametrize(
    ("level", "trump", "text", "kind", "components"),
    [r[1:] for r in SHAPE_ROWS],
    ids=[r[0] for r in SHAPE_ROWS],
)
def test_decompose(
    level: str, trump: str | None, text: str, kind: ShapeKind, components: str
) -> None:
    context = ctx(level, trump)
    shape = decompose(context, cards(text))
    assert shape.kind is kind
    assert shape.size == len(cards(text))
    expected = [format_cards(cards(c)) for c in components.split("|")] if components else []
    got = [format_cards(c.cards) for c in shape.components]
    # between two pairs of equal order (R11) the order of components is not specified
    assert got == expected or (
        _has_equal_order_pairs(context, text) and sorted(got) == sorted(expected)
    )
    if kind is M:
        assert shape.category is None
        return
    assert shape.category == context.category[cards(text)[0]]
    for comp in shape.components:
        # width 0 single, 1 pair, n tractor of n pairs; top = order of the highest card
        assert len(comp.cards) == max(1, 2 * comp.width)
        assert comp.top == max(context.order[c] for c in comp.cards)


def _has_equal_order_pairs(context: TrumpContext, text: str) -> bool:
    """Two different pairs of one order (R11): which one a tractor takes is not specified."""
    kinds = cards(text)
    pairs = {k for k in kinds if kinds.count(k) == 2}
    orders = [context.order[k] for k in pairs]
    return len(orders) != len(set(orders))


def test_r15_equal_order_pairs_nt_tractor_takes_one_level_pair() -> None:
    context = ctx("7", "NT")
    shape = decompose(context, cards("7S 7S 7H 7H SJ SJ"))
    assert shape.kind is W
    assert [(c.width, c.top) for c in shape.components] == [(2, 1), (1, 0)]
    tractor, pair = (format_cards(c.cards) for c in shape.components)
    assert tractor.endswith("SJ SJ")
    assert {tractor[:5], pair} == {"7S 7S", "7H 7H"}


@pytest.mark.parametrize(
    ("level", "trump", "text", "category"),
    [
        ("5", "H", "5S 5S 5H 5H", TRUMP),
        ("5", "H", "7S 7S", 0),
        ("7", "NT", "7S", TRUMP),
        ("7", "NT", "AD KD", 3),
    ],
    ids=["R7-trump-tractor", "R7-side-pair", "R9-NT-level-single", "R7-side-throw"],
)
def test_shape_category(level: str, trump: str | None, text: str, category: int) -> None:
    assert decompose(ctx(level, trump), cards(text)).category == category


def test_r15_throw_summary() -> None:
    shape = decompose(ctx("2", "H"), cards("AS KS KS QS QS 9S 9S 7S 6S 6S 5S 5S 4S 4S"))
    assert shape.tractor_lengths == (3, 2)
    assert shape.total_pairs == 6
    assert [(c.width, c.top) for c in shape.components] == [
        (3, 3),
        (2, 10),
        (1, 6),
        (0, 11),
        (0, 4),
    ]
    assert shape.largest == shape.components[0]


@pytest.mark.parametrize("text", ["AS AS AS", "SJ BJ SJ SJ"], ids=["R3-three-AS", "R3-three-SJ"])
def test_r3_more_than_two_copies_is_invalid(text: str) -> None:
    with pytest.raises(InvalidInputError):
        decompose(ctx("5", "H"), cards(text))


def test_r12_no_cards_is_invalid() -> None:
    with pytest.raises(InvalidInputError):
        decompose(ctx("5", "H"), [])

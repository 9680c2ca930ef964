"""Trump context: categories (R5, R7), orders (R8–R11) and tractor adjacency (R14 chains)."""

from __future__ import annotations

import itertools

import pytest

from domain.rules.cards import NUM_KINDS, format_cards, parse_card
from domain.rules.context import CATEGORY_NAMES, TRUMP, trump_context
from tests.helpers import cards, ctx

CAT = {"S": 0, "H": 1, "C": 2, "D": 3, "T": TRUMP}


# --- R5 / R7: category of each kind --------------------------------------------------------

CATEGORY_ROWS = [
    # level, trump, card, category (T = trump)
    ("R7-jokers-always-trump-SJ", "2", "S", "SJ", "T"),
    ("R7-jokers-always-trump-BJ", "2", "S", "BJ", "T"),
    ("R7-trump-suit-card", "2", "S", "AS", "T"),
    ("R7-trump-suit-level-card", "2", "S", "2S", "T"),
    ("R5-offsuit-level-card-is-trump", "2", "S", "2H", "T"),
    ("R5-offsuit-level-card-is-trump-D", "2", "S", "2D", "T"),
    ("R7-side-suit-H", "2", "S", "AH", "H"),
    ("R7-side-suit-D", "2", "S", "3D", "D"),
    ("R5-level5-5S-trump", "5", "H", "5S", "T"),
    ("R5-level5-5C-trump", "5", "H", "5C", "T"),
    ("R7-level5-7H-trump", "5", "H", "7H", "T"),
    ("R7-level5-7S-spades", "5", "H", "7S", "S"),
    ("R7-level5-4C-clubs", "5", "H", "4C", "C"),
    ("R9-NT-level-card-trump", "A", "NT", "AS", "T"),
    ("R9-NT-level-card-trump-D", "A", "NT", "AD", "T"),
    ("R9-NT-KS-spades", "A", "NT", "KS", "S"),
    ("R9-NT-2H-hearts", "A", "NT", "2H", "H"),
    ("R9-NT-SJ-trump", "A", "NT", "SJ", "T"),
    ("R7-level10-10C-trump", "10", "D", "10C", "T"),
    ("R7-level10-JD-trump", "10", "D", "JD", "T"),
    ("R7-level10-JC-clubs", "10", "D", "JC", "C"),
]


@pytest.mark.parametrize(
    ("level", "trump", "card", "category"),
    [r[1:] for r in CATEGORY_ROWS],
    ids=[r[0] for r in CATEGORY_ROWS],
)
def test_r7_category(level: str, trump: str, card: str, category: str) -> None:
    context = ctx(level, trump)
    kind = parse_card(card)
    assert context.category[kind] == CAT[category]
    assert context.is_trump(kind) is (category == "T")


@pytest.mark.parametrize("level", range(13), ids=[f"R7-trump-count-level{i}" for i in range(13)])
@pytest.mark.parametrize("trump", [0, 1, 2, 3, None], ids=["S", "H", "C", "D", "NT"])
def test_r7_number_of_trump_kinds(level: int, trump: int | None) -> None:
    context = trump_context(level, trump)
    n_trump = sum(1 for k in range(NUM_KINDS) if context.category[k] == TRUMP)
    # suit of 13 (12 + its level card) + 3 off-suit level cards + 2 jokers; NT: 4 + 2 (R9)
    assert n_trump == (18 if trump is not None else 6)
    for suit in range(4):
        if suit != trump:
            assert sum(1 for k in range(NUM_KINDS) if context.category[k] == suit) == 12


# --- R8 / R9 / R10: order, high to low, positions separated by "|" -------------------------

ORDER_ROWS = [
    (
        "R8-level5-trump-H",
        "5",
        "H",
        "T",
        "BJ | SJ | 5H | 5S 5C 5D | AH | KH | QH | JH | 10H | 9H | 8H | 7H | 6H | 4H | 3H | 2H",
    ),
    (
        "R8-level2-trump-S",
        "2",
        "S",
        "T",
        "BJ | SJ | 2S | 2H 2C 2D | AS | KS | QS | JS | 10S | 9S | 8S | 7S | 6S | 5S | 4S | 3S",
    ),
    (
        "R8-levelA-trump-D",
        "A",
        "D",
        "T",
        "BJ | SJ | AD | AS AH AC | KD | QD | JD | 10D | 9D | 8D | 7D | 6D | 5D | 4D | 3D | 2D",
    ),
    ("R9-NT-level7", "7", "NT", "T", "BJ | SJ | 7S 7H 7C 7D"),
    ("R9-NT-level2", "2", None, "T", "BJ | SJ | 2S 2H 2C 2D"),
    (
        "R10-side-S-level5",
        "5",
        "H",
        "S",
        "AS | KS | QS | JS | 10S | 9S | 8S | 7S | 6S | 4S | 3S | 2S",
    ),
    (
        "R10-side-C-level2",
        "2",
        "S",
        "C",
        "AC | KC | QC | JC | 10C | 9C | 8C | 7C | 6C | 5C | 4C | 3C",
    ),
    (
        "R10-side-H-levelA",
        "A",
        "D",
        "H",
        "KH | QH | JH | 10H | 9H | 8H | 7H | 6H | 5H | 4H | 3H | 2H",
    ),
    (
        "R10-side-D-NT-level10",
        "10",
        "NT",
        "D",
        "AD | KD | QD | JD | 9D | 8D | 7D | 6D | 5D | 4D | 3D | 2D",
    ),
]


@pytest.mark.parametrize(
    ("level", "trump", "category", "high_to_low"),
    [r[1:] for r in ORDER_ROWS],
    ids=[r[0] for r in ORDER_ROWS],
)
def test_order_chain(level: str, trump: str | None, category: str, high_to_low: str) -> None:
    context = ctx(level, trump)
    positions = [cards(p) for p in high_to_low.split("|")]
    chain = context.chains[CAT[category]]
    assert [format_cards(p) for p in reversed(chain)] == [format_cards(p) for p in positions]
    top = len(positions) - 1
    for i, pos in enumerate(positions):
        for kind in pos:
            assert context.category[kind] == CAT[category]
            assert context.order[kind] == top - i


BEATS_ROWS = [
    # level, trump, higher, lower
    ("R8-BJ-over-SJ", "5", "H", "BJ", "SJ"),
    ("R8-SJ-over-trump-level", "5", "H", "SJ", "5H"),
    ("R8-trump-level-over-offsuit-level", "5", "H", "5H", "5S"),
    ("R8-offsuit-level-over-trump-A", "5", "H", "5D", "AH"),
    ("R8-trump-A-over-trump-K", "5", "H", "AH", "KH"),
    ("R8-trump-6-over-4-level-skipped", "5", "H", "6H", "4H"),
    ("R8-trump-2-over-any-side", "5", "H", "2H", "AS"),
    ("R8-offsuit-level-over-trump-A-level2", "2", "S", "2C", "AS"),
    ("R9-NT-SJ-over-level", "7", "NT", "SJ", "7D"),
    ("R9-NT-level-over-side-A", "7", "NT", "7C", "AC"),
    ("R10-side-A-over-K", "5", "H", "AS", "KS"),
    ("R10-side-6-over-4-level5", "5", "H", "6C", "4C"),
    ("R10-side-3-over-2", "5", "H", "3D", "2D"),
    ("R10-levelA-side-K-top", "A", "D", "KS", "QS"),
]


@pytest.mark.parametrize(
    ("level", "trump", "higher", "lower"),
    [r[1:] for r in BEATS_ROWS],
    ids=[r[0] for r in BEATS_ROWS],
)
def test_beats(level: str, trump: str | None, higher: str, lower: str) -> None:
    context = ctx(level, trump)
    h, lo = parse_card(higher), parse_card(lower)
    assert context.sort_key(h) > context.sort_key(lo)
    if context.category[h] == context.category[lo]:
        assert context.beats(h, lo)
        assert not context.beats(lo, h)
    else:  # a trump card against a side card: different categories, beats() is only in-category
        assert context.category[h] == TRUMP


NEVER_BEAT_ROWS = [
    # level, trump, a, b: neither beats the other
    ("R10-different-side-suits-AS-2H", "5", "H", "AS", "2D"),
    ("R10-different-side-suits-AC-AD", "5", "H", "AC", "AD"),
    ("R11-offsuit-level-cards-equal-5S-5C", "5", "H", "5S", "5C"),
    ("R11-offsuit-level-cards-equal-5C-5D", "5", "H", "5C", "5D"),
    ("R11-NT-level-cards-equal-7S-7H", "7", "NT", "7S", "7H"),
    ("R11-NT-level-cards-equal-7C-7D", "7", None, "7C", "7D"),
    ("R11-two-copies-AS", "5", "H", "AS", "AS"),
    ("R11-two-copies-BJ", "5", "H", "BJ", "BJ"),
]


@pytest.mark.parametrize(
    ("level", "trump", "a", "b"),
    [r[1:] for r in NEVER_BEAT_ROWS],
    ids=[r[0] for r in NEVER_BEAT_ROWS],
)
def test_neither_beats(level: str, trump: str | None, a: str, b: str) -> None:
    context = ctx(level, trump)
    x, y = parse_card(a), parse_card(b)
    assert not context.beats(x, y)
    assert not context.beats(y, x)


@pytest.mark.parametrize(
    ("level", "trump", "a", "b"),
    [r[1:] for r in NEVER_BEAT_ROWS if r[0].startswith("R11")],
    ids=[r[0] for r in NEVER_BEAT_ROWS if r[0].startswith("R11")],
)
def test_r11_equal_order(level: str, trump: str | None, a: str, b: str) -> None:
    context = ctx(level, trump)
    x, y = parse_card(a), parse_card(b)
    assert context.category[x] == context.category[y]
    assert context.order[x] == context.order[y]


# --- R14 adjacency: successor along each chain ----------------------------------------------

SUCCESSOR_ROWS = [
    # level, trump, card, the kinds one position above ("" = top of its chain)
    ("R14-trump-across-level-4H-6H", "5", "H", "4H", "6H"),
    ("R14-trump-A-to-offsuit-level", "5", "H", "AH", "5S 5C 5D"),
    ("R14-offsuit-level-5S-to-trump-level", "5", "H", "5S", "5H"),
    ("R14-offsuit-level-5D-to-trump-level", "5", "H", "5D", "5H"),
    ("R14-trump-level-to-SJ", "5", "H", "5H", "SJ"),
    ("R14-SJ-to-BJ", "5", "H", "SJ", "BJ"),
    ("R14-BJ-top", "5", "H", "BJ", ""),
    ("R14-trump-2-bottom-up", "5", "H", "2H", "3H"),
    ("R14-side-across-level-4S-6S", "5", "H", "4S", "6S"),
    ("R14-side-K-to-A", "5", "H", "KC", "AC"),
    ("R14-side-A-top", "5", "H", "AD", ""),
    ("R14-levelA-side-K-top", "A", "S", "KH", ""),
    ("R14-levelA-trump-K-to-offsuit-A", "A", "S", "KS", "AH AC AD"),
    ("R14-level2-trump-A-to-offsuit-2", "2", "C", "AC", "2S 2H 2D"),
    ("R14-level2-side-3-bottom", "2", "C", "3D", "4D"),
    ("R14-levelK-trump-Q-to-A", "K", "D", "QD", "AD"),
    ("R14-levelK-trump-A-to-offsuit-K", "K", "D", "AD", "KS KH KC"),
    ("R14-NT-level-to-SJ", "7", "NT", "7H", "SJ"),
    ("R14-NT-SJ-to-BJ", "7", "NT", "SJ", "BJ"),
    ("R14-NT-side-across-level", "7", "NT", "6S", "8S"),
    ("R14-NT-side-A-top", "7", "NT", "AS", ""),
]


@pytest.mark.parametrize(
    ("level", "trump", "card", "above"),
    [r[1:] for r in SUCCESSOR_ROWS],
    ids=[r[0] for r in SUCCESSOR_ROWS],
)
def test_r14_successor(level: str, trump: str | None, card: str, above: str) -> None:
    context = ctx(level, trump)
    kind = parse_card(card)
    assert format_cards(context.successor(kind)) == above
    for nxt in context.successor(kind):
        assert context.adjacent(kind, nxt)
        assert not context.adjacent(nxt, kind)


ADJACENT_ROWS = [
    # level, trump, low, high, adjacent?
    ("R14-level6-5C-7C", "6", "H", "5C", "7C", True),
    ("R14-level2-4H-6H-gap", "2", "S", "4H", "6H", False),
    ("R14-trump-A-offsuit-level", "5", "H", "AH", "5C", True),
    ("R14-offsuit-level-trump-level", "5", "H", "5C", "5H", True),
    ("R14-equal-order-not-adjacent", "5", "H", "5S", "5C", False),
    ("R14-trump-A-not-adjacent-to-trump-level", "5", "H", "AH", "5H", False),
    ("R14-two-suits-3D-4C", "5", "H", "3D", "4C", False),
    ("R14-side-A-not-into-trump", "5", "H", "AS", "5S", False),
    ("R14-SJ-BJ", "5", "H", "SJ", "BJ", True),
    ("R14-NT-level-SJ", "7", "NT", "7D", "SJ", True),
    ("R14-NT-side-6-8", "7", "NT", "6D", "8D", True),
]


@pytest.mark.parametrize(
    ("level", "trump", "low", "high", "adjacent"),
    [r[1:] for r in ADJACENT_ROWS],
    ids=[r[0] for r in ADJACENT_ROWS],
)
def test_r14_adjacent(level: str, trump: str | None, low: str, high: str, adjacent: bool) -> None:
    assert ctx(level, trump).adjacent(parse_card(low), parse_card(high)) is adjacent


@pytest.mark.parametrize("level", range(13), ids=[f"R14-level{i}" for i in range(13)])
@pytest.mark.parametrize("trump", [0, 1, 2, 3, None], ids=["S", "H", "C", "D", "NT"])
def test_r14_chain_orders_are_consecutive(level: int, trump: int | None) -> None:
    context = trump_context(level, trump)
    for kind in range(NUM_KINDS):
        chain = context.chains[context.category[kind]]
        assert kind in chain[context.order[kind]]
    for cat in {context.category[k] for k in range(NUM_KINDS)}:
        chain = context.chains[cat]
        for low, high in itertools.pairwise(chain):
            for a in low:
                assert context.successor(a) == high
                for b in high:
                    assert context.adjacent(a, b)
        assert context.successor(chain[-1][0]) == ()


def test_r7_every_chain_lists_only_its_own_category() -> None:
    """Regression (fixed in 277a47f): chains[trump suit] used to repeat the trump suit's cards."""
    for level in range(13):
        for trump in (0, 1, 2, 3, None):
            context = trump_context(level, trump)
            for cat, chain in enumerate(context.chains):
                for position in chain:
                    for kind in position:
                        assert context.category[kind] == cat, (
                            context.describe(),
                            CATEGORY_NAMES[cat],
                            format_cards([kind]),
                        )
            if trump is not None:
                assert context.chains[trump] == ()


# --- construction --------------------------------------------------------------------------


def test_r5_context_is_cached_and_described() -> None:
    assert ctx("5", "H") is trump_context(3, 1)
    assert ctx("5", "H").describe() == "level 5, trump H"
    assert ctx("A", "NT").describe() == "level A, no-trump"


@pytest.mark.parametrize(
    ("level", "trump"),
    [(-1, None), (13, 0), (0, 4), (0, -1)],
    ids=["R5-level-below-2", "R5-level-above-A", "R7-suit-4", "R7-suit-negative"],
)
def test_r5_out_of_range_context(level: int, trump: int | None) -> None:
    with pytest.raises(ValueError):
        trump_context(level, trump)

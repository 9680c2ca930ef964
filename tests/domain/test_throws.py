"""Throws (甩牌): validity against the other three hands and the forced play (R22, R11)."""

from __future__ import annotations

from collections import Counter

import pytest

from domain.rules.cards import format_cards
from domain.rules.shapes import decompose
from domain.rules.throws import check_throw
from tests.helpers import cards, ctx

# id, level, trump, throw, the other three hands ("|"), forced ("" = valid), beaten ("|")
# Level 2, trump H unless noted: spades are a side suit whose top is AS.
THROW_ROWS = [
    # valid throws
    ("R22-valid-top-singles", "2", "H", "AS KS", "QS 3S | 9D | 4C", "", ""),
    ("R22-valid-pair-and-single", "2", "H", "AS AS KS", "QS QS 3S | 10S | JD", "", ""),
    (
        "R22-valid-tractor-and-single",
        "2",
        "H",
        "QS QS KS KS AS",
        "JS JS 10S 10S | 9S 9S | 3S",
        "",
        "",
    ),
    ("R22-valid-trump-is-another-category", "2", "H", "KS QS", "BJ BJ 3H | 2S 2S | AH", "", ""),
    ("R22-valid-other-suits-ignored", "2", "H", "KS QS", "AD AD | AC | KC KC", "", ""),
    ("R22-valid-single-not-beaten-by-lower-pair", "2", "H", "AS 8S 8S", "7S 7S | 6S | 5S", "", ""),
    # R11: equal order never beats
    ("R11-other-copy-of-AS-does-not-beat", "2", "H", "AS KS KS", "AS QS QS | | ", "", ""),
    ("R11-offsuit-level-pair-ties", "5", "H", "5S 5S 5C", "5D 5D | AH AH | ", "", ""),
    ("R11-offsuit-level-single-ties", "5", "H", "5S 5S 5C", "5D | 5C | ", "", ""),
    ("R11-NT-level-cards-tie", "7", "NT", "7S 7S 7H", "7D 7D | 7C | 7H", "", ""),
    # singles
    ("R22-single-beaten-lowest-single", "2", "H", "KS QS", "AS | | ", "QS", "KS | QS"),
    ("R22-single-between-beats-lower-only", "2", "H", "AS QS 3S", "KS | | ", "3S", "QS | 3S"),
    ("R22-single-beaten-by-card-inside-a-pair", "2", "H", "AS 9S", "10S 10S | | ", "9S", "9S"),
    ("R22-single-beaten-by-partner-too", "2", "H", "KS QS", " | AS | ", "QS", "KS | QS"),
    ("R22-trump-single-beaten-by-joker", "2", "H", "SJ SJ AH", "BJ | | ", "AH", "AH"),
    ("R22-trump-single-beaten-by-trump-level", "5", "H", "5S 5S 5C", "5H | | ", "5C", "5C"),
    # pairs
    ("R22-pair-beaten", "2", "H", "QS QS AS", "KS KS | | ", "QS QS", "QS QS"),
    ("R22-pair-beaten-in-third-hand", "2", "H", "QS QS AS", "3S | 4S | KS KS", "QS QS", "QS QS"),
    (
        "R22-pair-beaten-by-pair-inside-tractor",
        "2",
        "H",
        "QS QS AS",
        "JS JS KS KS | | ",
        "QS QS",
        "QS QS",
    ),
    (
        "R22-pairs-before-singles",
        "2",
        "H",
        "QS QS JS 9S AS",
        "KS KS | | ",
        "QS QS",
        "QS QS | JS | 9S",
    ),
    (
        "R22-lowest-pair-forced",
        "2",
        "H",
        "AS AS 9S 9S 4S 4S",
        "10S 10S | | ",
        "4S 4S",
        "9S 9S | 4S 4S",
    ),
    (
        "R22-lowest-of-all-beaten-pairs",
        "2",
        "H",
        "KS KS 9S 9S",
        "AS AS | | ",
        "9S 9S",
        "KS KS | 9S 9S",
    ),
    ("R22-only-lowest-pair-beaten", "2", "H", "KS KS 4S 4S", "6S 6S | | ", "4S 4S", "4S 4S"),
    (
        "R22-trump-pair-beaten-by-trump-level-pair",
        "2",
        "H",
        "SJ SJ 2S 2S",
        "2H 2H | | ",
        "2S 2S",
        "2S 2S",
    ),
    ("R22-two-singles-are-no-pair", "2", "H", "QS QS AS", "KS | KS | ", "", ""),
    # tractors
    (
        "R22-tractor-beaten",
        "2",
        "H",
        "AS 9S 9S 10S 10S",
        "JS JS QS QS | | ",
        "9S 9S 10S 10S",
        "9S 9S 10S 10S",
    ),
    (
        "R22-tractor-beaten-by-longer-tractor",
        "2",
        "H",
        "AS 9S 9S 10S 10S",
        "JS JS QS QS KS KS | | ",
        "9S 9S 10S 10S",
        "9S 9S 10S 10S",
    ),
    (
        "R22-tractor-not-beaten-by-two-pairs",
        "2",
        "H",
        "AS 9S 9S 10S 10S",
        "JS JS KS KS | | ",
        "",
        "",
    ),
    (
        "R22-tractor-beats-before-pair",
        "2",
        "H",
        "8S 8S 9S 9S 3S 3S",
        "JS JS QS QS | | ",
        "8S 8S 9S 9S",
        "8S 8S 9S 9S | 3S 3S",
    ),
    (
        "R22-lowest-tractor-of-that-length",
        "2",
        "H",
        "3S 3S 4S 4S QS QS KS KS AS",
        "6S 6S 7S 7S | | ",
        "3S 3S 4S 4S",
        "3S 3S 4S 4S",
    ),
    (
        "R22-both-tractors-beaten-lowest-forced",
        "2",
        "H",
        "3S 3S 4S 4S 9S 9S 10S 10S",
        "JS JS QS QS | | ",
        "3S 3S 4S 4S",
        "9S 9S 10S 10S | 3S 3S 4S 4S",
    ),
    (
        "R22-short-tractor-beaten-long-one-not",
        "2",
        "H",
        "3S 3S 4S 4S 5S 5S 9S 9S 10S 10S",
        "JS JS QS QS | | ",
        "9S 9S 10S 10S",
        "9S 9S 10S 10S",
    ),
    (
        "R22-longest-tractor-kind-first",
        "2",
        "H",
        "3S 3S 4S 4S 5S 5S 9S 9S 10S 10S",
        "6S 6S 7S 7S 8S 8S | | ",
        "3S 3S 4S 4S 5S 5S",
        "3S 3S 4S 4S 5S 5S",
    ),
    (
        "R22-longest-kind-first-across-hands",
        "2",
        "H",
        "3S 3S 4S 4S 5S 5S 9S 9S 10S 10S",
        "JS JS QS QS | 6S 6S 7S 7S 8S 8S | ",
        "3S 3S 4S 4S 5S 5S",
        "3S 3S 4S 4S 5S 5S | 9S 9S 10S 10S",
    ),
    (
        "R22-trump-tractor-beaten-across-level",
        "5",
        "H",
        "3H 3H 4H 4H SJ",
        "AH AH 5C 5C | | ",
        "3H 3H 4H 4H",
        "3H 3H 4H 4H",
    ),
    (
        "R11-equal-order-pairs-are-no-tractor",
        "5",
        "H",
        "KH KH AH AH 2H",
        "5S 5S 5C 5C | | ",
        "2H",
        "2H",
    ),
]


@pytest.mark.parametrize(
    ("level", "trump", "throw", "others", "forced", "beaten"),
    [r[1:] for r in THROW_ROWS],
    ids=[r[0] for r in THROW_ROWS],
)
def test_check_throw(
    level: str, trump: str, throw: str, others: str, forced: str, beaten: str
) -> None:
    context = ctx(level, trump)
    shape = decompose(context, cards(throw))
    hands = [cards(h) for h in others.split("|")]
    assert len(hands) == 3
    assert max(Counter(cards(f"{throw} {others.replace('|', ' ')}")).values()) <= 2, "R3"
    verdict = check_throw(context, shape, hands)
    if not forced:
        assert verdict.valid
        assert verdict.forced is None
        assert verdict.beaten == ()
        return
    assert not verdict.valid
    assert verdict.forced is not None
    assert format_cards(verdict.forced) == format_cards(cards(forced))
    assert [format_cards(c.cards) for c in verdict.beaten] == [
        format_cards(cards(b)) for b in beaten.split("|")
    ]
    # the forced play is one component of the throw (R22)
    assert any(c.cards == verdict.forced for c in shape.components)


@pytest.mark.parametrize(
    ("level", "trump", "lead", "others"),
    [
        ("2", "H", "KS", "AS | | "),
        ("2", "H", "KS KS", "AS AS | | "),
        ("2", "H", "9S 9S 10S 10S", "JS JS QS QS | | "),
        ("2", "H", "AH AD", "BJ | | "),
    ],
    ids=["R22-single-is-no-throw", "R22-pair-is-no-throw", "R22-tractor-is-no-throw", "R15-mixed"],
)
def test_r22_only_throws_are_checked(level: str, trump: str, lead: str, others: str) -> None:
    context = ctx(level, trump)
    verdict = check_throw(
        context, decompose(context, cards(lead)), [cards(h) for h in others.split("|")]
    )
    assert verdict.valid
    assert verdict.forced is None

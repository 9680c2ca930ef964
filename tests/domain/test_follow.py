"""Following a lead: suit (R23.1), shape (R23.2), trump leads (R25)."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from domain.rules.errors import InvalidInputError
from domain.rules.follow import check_follow, legal_plays, random_follow
from domain.rules.shapes import decompose
from tests.helpers import cards, ctx

# id, level, trump, lead, hand, play, legal, rule named in the detail ("" when legal)
# Level 2, trump H unless noted: S, C, D are side suits; 2S 2C 2D are trump.
FOLLOW_ROWS = [
    # R23: as many cards as the lead
    ("R23-too-many-cards", "2", "H", "AS", "3S 4S KD", "3S 4S", False, "R23"),
    ("R23-too-few-cards", "2", "H", "AS AS", "3S 4S KD", "3S", False, "R23"),
    # R23.1: follow suit; short → play them all; free cards afterwards
    ("R23.1-must-follow-suit", "2", "H", "AS", "3S KD 4C", "KD", False, "R23.1"),
    ("R23.1-follows-suit", "2", "H", "AS", "3S KD 4C", "3S", True, ""),
    ("R23.1-trump-not-allowed-while-holding-suit", "2", "H", "AS", "3S 3H", "3H", False, "R23.1"),
    ("R23.1-void-free-discard", "2", "H", "AS", "KD 4C 3H", "KD", True, ""),
    ("R23.1-void-may-trump", "2", "H", "AS", "KD 4C 3H", "3H", True, ""),
    ("R23.1-void-offsuit-level-is-trump", "2", "H", "AS", "2S KD", "2S", True, ""),
    ("R23.1-level-card-is-not-its-suit", "2", "H", "AS", "2S KD", "KD", True, ""),
    ("R23.1-short-plays-all-then-discard", "2", "H", "AS AS", "3S KD 4C 5C", "3S KD", True, ""),
    ("R23.1-short-must-play-all", "2", "H", "AS AS", "3S KD 4C 5C", "KD 4C", False, "R23.1"),
    ("R23.1-short-exactly-as-many", "2", "H", "AS AS", "3S 4S 8D", "3S 4S", True, ""),
    (
        "R23.1-short-tractor-then-free-trump",
        "2",
        "H",
        "QS QS JS JS",
        "3S 4S KD 4C 5H",
        "3S 4S KD 5H",
        True,
        "",
    ),
    (
        "R23.1-short-tractor-missing-one",
        "2",
        "H",
        "QS QS JS JS",
        "3S 4S KD 4C 5H",
        "3S KD 4C 5H",
        False,
        "R23.1",
    ),
    (
        "R23.1-holding-more-only-suit",
        "2",
        "H",
        "QS QS JS JS",
        "3S 4S 7S 9S KD",
        "3S 4S 7S KD",
        False,
        "R23.1",
    ),
    # R23.2: pairs for a pair lead
    ("R23.2-pair-held-must-pair", "2", "H", "AS AS", "3S 3S 8S KD", "3S 8S", False, "R23.2"),
    ("R23.2-pair-held-plays-pair", "2", "H", "AS AS", "3S 3S 8S KD", "3S 3S", True, ""),
    ("R23.2-any-pair-will-do", "2", "H", "AS AS", "3S 3S 8S 8S", "8S 8S", True, ""),
    ("R23.2-no-pair-held-any-two", "2", "H", "AS AS", "3S 8S 9S", "8S 9S", True, ""),
    (
        "R23.2-pair-lead-short-of-suit-no-pair-owed",
        "2",
        "H",
        "AS AS",
        "3S 3D 3D",
        "3S 3D",
        True,
        "",
    ),
    (
        "R23.2-offsuit-level-cards-are-no-pair",
        "5",
        "H",
        "SJ SJ",
        "5S 5C 3H KD",
        "5S 3H",
        True,
        "",
    ),
    # R23.2: tractor lead → tractor if held, else pairs, then singles
    (
        "R23.2-tractor-held-plays-tractor",
        "2",
        "H",
        "9S 9S 10S 10S",
        "5S 5S 6S 6S JS JS 8S KD",
        "5S 5S 6S 6S",
        True,
        "",
    ),
    (
        "R23.2-tractor-held-two-pairs-not-enough",
        "2",
        "H",
        "9S 9S 10S 10S",
        "5S 5S 6S 6S JS JS 8S KD",
        "5S 5S JS JS",
        False,
        "R23.2",
    ),
    (
        "R23.2-tractor-held-one-pair-not-enough",
        "2",
        "H",
        "9S 9S 10S 10S",
        "5S 5S 6S 6S JS JS 8S KD",
        "5S 5S 8S JS",
        False,
        "R23.2",
    ),
    (
        "R23.2-no-tractor-two-pairs",
        "2",
        "H",
        "9S 9S 10S 10S",
        "5S 5S 8S 8S JS 3S KD",
        "5S 5S 8S 8S",
        True,
        "",
    ),
    (
        "R23.2-no-tractor-pairs-owed",
        "2",
        "H",
        "9S 9S 10S 10S",
        "5S 5S 8S 8S JS 3S KD",
        "5S 5S JS 3S",
        False,
        "R23.2",
    ),
    (
        "R23.2-one-pair-then-singles",
        "2",
        "H",
        "9S 9S 10S 10S",
        "5S 5S 8S JS 3S KD",
        "5S 5S 8S JS",
        True,
        "",
    ),
    (
        "R23.2-one-pair-owed",
        "2",
        "H",
        "9S 9S 10S 10S",
        "5S 5S 8S JS 3S KD",
        "8S JS 3S 5S",
        False,
        "R23.2",
    ),
    (
        "R23.2-no-pairs-any-singles",
        "2",
        "H",
        "9S 9S 10S 10S",
        "5S 8S JS 3S QS KD",
        "5S 8S JS 3S",
        True,
        "",
    ),
    (
        "R23.2-tractor3-short-tractor-counts-as-pairs",
        "2",
        "H",
        "8S 8S 9S 9S 10S 10S",
        "3S 3S 4S 4S QS QS KS 6D",
        "3S 3S 4S 4S QS QS",
        True,
        "",
    ),
    (
        "R23.2-tractor3-three-pairs-owed",
        "2",
        "H",
        "8S 8S 9S 9S 10S 10S",
        "3S 3S 4S 4S QS QS KS 6D",
        "3S 3S 4S 4S QS KS",
        False,
        "R23.2",
    ),
    (
        "R23.2-trump-tractor-equal-order-pairs-are-no-tractor",
        "5",
        "H",
        "3H 3H 4H 4H",
        "AH AH 5S 5S 5C 5C 6H KD",
        "5S 5S 5C 5C",
        False,
        "R23.2",
    ),
    (
        "R23.2-trump-tractor-across-offsuit-level",
        "5",
        "H",
        "3H 3H 4H 4H",
        "AH AH 5S 5S 5C 5C 6H KD",
        "AH AH 5C 5C",
        True,
        "",
    ),
    # R23.2: throws matched component by component
    ("R23.2-throw-pair-owed", "2", "H", "AS KS KS", "3S 3S 4S 9S QD", "3S 4S 9S", False, "R23.2"),
    ("R23.2-throw-pair-played", "2", "H", "AS KS KS", "3S 3S 4S 9S QD", "3S 3S 9S", True, ""),
    (
        "R23.2-throw-tractor-owed",
        "2",
        "H",
        "AS QS QS KS KS",
        "3S 3S 4S 4S 9S 9S JS",
        "3S 3S 9S 9S 4S",
        False,
        "R23.2",
    ),
    (
        "R23.2-throw-tractor-played",
        "2",
        "H",
        "AS QS QS KS KS",
        "3S 3S 4S 4S 9S 9S JS",
        "3S 3S 4S 4S 9S",
        True,
        "",
    ),
    (
        "R23.2-throw-two-pairs-owed",
        "2",
        "H",
        "AS AS QS QS",
        "3S 3S 9S 9S 4S JS",
        "3S 3S 4S JS",
        False,
        "R23.2",
    ),
    (
        "R23.2-throw-two-pairs-played",
        "2",
        "H",
        "AS AS QS QS",
        "3S 3S 9S 9S 4S JS",
        "3S 3S 9S 9S",
        True,
        "",
    ),
    (
        "R23.2-throw-two-tractors-share-offsuit-level",
        "5",
        "H",
        "3H 3H 4H 4H 7H 7H 8H 8H",
        "AH AH 5S 5S 5C 5C 5H 5H 2H KD",
        "AH AH 5S 5S 5C 5C 5H 5H",
        True,
        "",
    ),
    (
        "R23.2-throw-second-tractor-owed",
        "5",
        "H",
        "3H 3H 4H 4H 7H 7H 8H 8H",
        "AH AH 5S 5S 5C 5C 5H 5H 2H KD",
        "AH AH 5S 5S 5C 5C 5H 2H",
        False,
        "R23.2",
    ),
    # R25: trump lead followed with trump while any is held
    ("R25-trump-lead-side-card", "2", "H", "KH", "3H SJ AS KD", "AS", False, "R25"),
    ("R25-trump-lead-joker-follows", "2", "H", "KH", "3H SJ AS KD", "SJ", True, ""),
    ("R25-trump-lead-trump-suit-follows", "2", "H", "KH", "3H SJ AS KD", "3H", True, ""),
    ("R25-offsuit-level-card-must-follow", "2", "H", "AH", "2S 9S", "9S", False, "R25"),
    ("R25-offsuit-level-card-follows", "2", "H", "AH", "2S 9S", "2S", True, ""),
    ("R25-void-in-trump-discards", "2", "H", "AH", "9S KD", "KD", True, ""),
    ("R25-short-in-trump-all-then-free", "2", "H", "SJ SJ", "2C 9S KD", "2C KD", True, ""),
    ("R25-short-in-trump-missing", "2", "H", "SJ SJ", "2C 9S KD", "9S KD", False, "R25"),
    ("R25-trump-pair-owed", "2", "H", "SJ SJ", "3H 3H 4H AS", "3H 4H", False, "R23.2"),
    ("R25-NT-level-card-is-trump", "7", "NT", "SJ", "7D AD", "AD", False, "R25"),
    ("R25-NT-level-card-follows", "7", "NT", "SJ", "7D AD", "7D", True, ""),
]


# one row per distinct (context, lead, hand), named after its first fact
RANDOM_ROWS = {r[1:5]: f"{r[0]}-random" for r in reversed(FOLLOW_ROWS)}


@pytest.mark.parametrize(
    ("level", "trump", "lead", "hand", "play", "legal", "rule"),
    [r[1:] for r in FOLLOW_ROWS],
    ids=[r[0] for r in FOLLOW_ROWS],
)
def test_check_follow(
    level: str, trump: str, lead: str, hand: str, play: str, legal: bool, rule: str
) -> None:
    context = ctx(level, trump)
    assert max(Counter(cards(f"{lead} {hand}")).values()) <= 2, "two decks (R3)"
    verdict = check_follow(context, decompose(context, cards(lead)), cards(hand), cards(play))
    assert verdict.legal is legal, verdict.detail
    if legal:
        assert verdict.rule is None and verdict.detail is None
    else:
        assert verdict.rule == "R23"
        assert verdict.detail is not None
        assert verdict.detail.startswith(("R23", "R25")), verdict.detail
        assert rule in verdict.detail


@pytest.mark.parametrize(
    ("level", "trump", "lead", "hand", "play", "legal"),
    [r[1:7] for r in FOLLOW_ROWS if len(cards(r[5])) == len(cards(r[3]))],
    ids=[r[0] for r in FOLLOW_ROWS if len(cards(r[5])) == len(cards(r[3]))],
)
def test_legal_plays_agree_with_check_follow(
    level: str, trump: str, lead: str, hand: str, play: str, legal: bool
) -> None:
    context = ctx(level, trump)
    shape = decompose(context, cards(lead))
    plays = {tuple(sorted(p)) for p in legal_plays(context, shape, cards(hand))}
    assert plays, "a legal play always exists (R23)"
    for p in plays:
        assert check_follow(context, shape, cards(hand), p).legal, p
    assert (tuple(sorted(cards(play))) in plays) is legal


@pytest.mark.parametrize(
    ("level", "trump", "lead", "hand"),
    list(RANDOM_ROWS),
    ids=list(RANDOM_ROWS.values()),
)
def test_random_follow_is_legal(level: str, trump: str, lead: str, hand: str) -> None:
    context = ctx(level, trump)
    shape = decompose(context, cards(lead))
    rng = random.Random(f"{level}{trump}{lead}{hand}")
    for _ in range(25):
        play = random_follow(context, shape, cards(hand), rng)
        assert len(play) == shape.size
        assert check_follow(context, shape, cards(hand), play).legal, play


def test_r23_play_not_in_hand_is_invalid_input() -> None:
    context = ctx("2", "H")
    with pytest.raises(InvalidInputError):
        check_follow(context, decompose(context, cards("AS")), cards("3S 4S"), cards("KS"))


def test_r15_mixed_lead_is_not_a_lead() -> None:
    context = ctx("2", "H")
    with pytest.raises(InvalidInputError):
        check_follow(context, decompose(context, cards("AS AD")), cards("3S 4S"), cards("3S 4S"))


@pytest.mark.parametrize(
    ("level", "trump", "lead", "hand"),
    [
        ("2", "H", "SJ", "2C 2S 2C"),
        ("2", "H", "AS", "9D 2C 2S 2C"),
        ("7", "NT", "SJ", "7C 7S 7C"),
        ("2", "H", "SJ BJ", "2C 2S 2C"),
    ],
    ids=[
        "R11-R23-trump-lead-offsuit-level-once",
        "R11-R23.1-void-discards-once",
        "R11-R9-NT-level-cards-once",
        "R11-R15-throw-of-singles-once",
    ],
)
def test_legal_plays_yields_each_play_once(level: str, trump: str, lead: str, hand: str) -> None:
    """Regression (fixed in 277a47f): equal-order kinds (R11) not adjacent gave repeats."""
    context = ctx(level, trump)
    plays = [
        tuple(sorted(p)) for p in legal_plays(context, decompose(context, cards(lead)), cards(hand))
    ]
    assert len(plays) == len(set(plays)), plays

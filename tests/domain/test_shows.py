"""Shows (亮主) and the weak-hand redeal (暴动): RULES R17, R20, R26, §10."""

from __future__ import annotations

import pytest

from domain.rules.cards import HEARTS, RANKS, parse_cards
from domain.rules.errors import IllegalMoveError, InvalidInputError
from domain.rules.overcall import beats, is_self_reinforcement
from domain.rules.ruleset import RuleSet
from domain.rules.shows import (
    Show,
    Strength,
    check_redeal_request,
    matching_joker,
    may_request_redeal,
    parse_show,
    possible_declarations,
    possible_shows,
)

STD = RuleSet()
JOKER = RuleSet(declare_with_joker=True)
S, H, C, D = 0, 1, 2, 3
L2, L5, L10, LA = RANKS.index("2"), RANKS.index("5"), RANKS.index("10"), RANKS.index("A")
SINGLE, PAIR, SJP, BJP = Strength.SINGLE, Strength.LEVEL_PAIR, Strength.SJ_PAIR, Strength.BJ_PAIR


def show(cards: str, level: int = L2, rules: RuleSet = STD, seat: int = 0) -> Show:
    return parse_show(seat, parse_cards(cards), level, rules)


VALID = [
    pytest.param(STD, L5, "5H", H, SINGLE, id="R17-single-level-card"),
    pytest.param(STD, L5, "5H 5H", H, PAIR, id="R17-pair-of-identical-level-cards"),
    pytest.param(STD, L10, "10D", D, SINGLE, id="R17-level-10"),
    pytest.param(STD, LA, "AS AS", S, PAIR, id="R17-level-A-pair"),
    pytest.param(STD, L2, "SJ SJ", None, SJP, id="R20-SJ-pair-no-trump"),
    pytest.param(STD, L2, "BJ BJ", None, BJP, id="R20-BJ-pair-no-trump"),
    pytest.param(JOKER, L2, "2H BJ", H, SINGLE, id="R17-joker-variant-red-with-BJ"),
    pytest.param(JOKER, L2, "BJ 2D", D, SINGLE, id="R17-joker-variant-order-free"),
    pytest.param(JOKER, L2, "2S SJ", S, SINGLE, id="R17-joker-variant-black-with-SJ"),
    pytest.param(JOKER, L2, "2C 2C SJ", C, PAIR, id="R17-joker-variant-pair-plus-joker"),
    pytest.param(JOKER, L2, "SJ SJ", None, SJP, id="R20-joker-variant-SJ-pair"),
    pytest.param(JOKER, L2, "BJ BJ", None, BJP, id="R20-joker-variant-BJ-pair"),
]


@pytest.mark.parametrize(("rules", "level", "cards", "trump", "strength"), VALID)
def test_valid_shows(
    rules: RuleSet, level: int, cards: str, trump: int | None, strength: Strength
) -> None:
    got = show(cards, level, rules, seat=2)
    assert (got.seat, got.trump, got.strength) == (2, trump, strength)
    assert got.cards == tuple(sorted(parse_cards(cards)))


INVALID = [
    pytest.param(STD, L2, "7H", "not-a-level-card", "R17", id="R17-not-a-level-card"),
    pytest.param(STD, L2, "7H 7H", "not-a-level-card", "R17", id="R17-pair-of-non-level"),
    pytest.param(STD, L5, "2H", "not-a-level-card", "R17", id="R5-level-is-the-rank"),
    pytest.param(STD, L2, "SJ", "jokers-cannot-declare", "R17", id="R17-joker-alone"),
    pytest.param(STD, L2, "BJ", "jokers-cannot-declare", "R17", id="R17-big-joker-alone"),
    pytest.param(STD, L2, "SJ BJ", "not-a-show", "R20", id="R13-SJ-BJ-not-a-pair"),
    pytest.param(STD, L2, "2H 2S", "not-a-show", "R17", id="R13-off-suit-level-cards"),
    pytest.param(STD, L2, "2H 2H 2H", "not-a-show", "R17", id="R17-three-level-cards"),
    pytest.param(STD, L2, "", "not-a-show", "R17", id="R17-no-cards"),
    pytest.param(STD, L2, "2H BJ", "not-a-show", "R17", id="R17-standard-no-joker-added"),
    pytest.param(JOKER, L2, "2H", "no-joker-of-matching-colour", "R17", id="R17-joker-missing"),
    pytest.param(JOKER, L2, "2H SJ", "no-joker-of-matching-colour", "R17", id="R17-red-needs-BJ"),
    pytest.param(JOKER, L2, "2S BJ", "no-joker-of-matching-colour", "R17", id="R17-black-needs-SJ"),
    pytest.param(
        JOKER, L2, "2H 2H", "no-joker-of-matching-colour", "R17", id="R20-variant-pair-needs-joker"
    ),
    pytest.param(JOKER, L2, "2H BJ BJ", "not-a-show", "R17", id="R17-variant-one-joker-only"),
]


@pytest.mark.parametrize(("rules", "level", "cards", "code", "rule"), INVALID)
def test_invalid_shows(rules: RuleSet, level: int, cards: str, code: str, rule: str) -> None:
    with pytest.raises(IllegalMoveError) as err:
        show(cards, level, rules)
    assert err.value.code == code
    assert err.value.rule == rule


def test_error_detail_names_the_cards_in_r4_notation() -> None:
    """R4: details name the offending cards as 7H, 10D…"""
    with pytest.raises(IllegalMoveError, match="7H"):
        show("2H 7H")
    with pytest.raises(IllegalMoveError, match="2H SJ"):
        show("2H SJ", rules=JOKER)


@pytest.mark.parametrize(
    ("seat", "cards", "level"),
    [
        pytest.param(4, [HEARTS * 13], L2, id="R1-seat-out-of-range"),
        pytest.param(0, [54], L2, id="R3-not-a-kind"),
        pytest.param(0, [HEARTS * 13], 13, id="R5-level-out-of-range"),
    ],
)
def test_invalid_input(seat: int, cards: list[int], level: int) -> None:
    with pytest.raises(InvalidInputError):
        parse_show(seat, cards, level, STD)


def test_strength_order_and_lock() -> None:
    """R20: single < level pair < SJ pair < BJ pair; R17: a level pair locks (定主)."""
    order = [show("2S"), show("2H 2H"), show("SJ SJ"), show("BJ BJ")]
    for i, low in enumerate(order):
        for j, high in enumerate(order):
            assert beats(high, low) is (j > i)
    assert [s.locks for s in order] == [False, True, True, True]
    assert [s.is_joker_pair for s in order] == [False, False, True, True]
    # suits never matter: a pair of another suit does not beat a pair
    assert not beats(show("2S 2S"), show("2H 2H"))
    # joker variant: the joker adds no strength
    assert not beats(show("2S 2S SJ", rules=JOKER), show("2H 2H BJ", rules=JOKER))


@pytest.mark.parametrize(
    ("new", "old", "expected"),
    [
        pytest.param("2H 2H", "2H", True, id="R20-self-overcall-自保"),
        pytest.param("2S 2S", "2H", True, id="R20-self-overcall-自反"),
        pytest.param("SJ SJ", "2H", False, id="R20-self-overcall-joker-pair-is-not"),
        pytest.param("2S 2S", "2H 2H", False, id="R17-self-overcall-pair-stays-locked"),
    ],
)
def test_is_self_reinforcement(new: str, old: str, expected: bool) -> None:
    assert is_self_reinforcement(show(new), show(old)) is expected
    assert not is_self_reinforcement(show(new, seat=1), show(old))


def test_matching_joker() -> None:
    """R17 variant: BJ (red) for hearts and diamonds, SJ (black) for spades and clubs."""
    assert [matching_joker(s) for s in (S, H, C, D)] == parse_cards("SJ BJ SJ BJ")


def test_str_names_cards_strength_and_trump() -> None:
    assert str(show("2H 2H")) == "2H 2H (level_pair, hearts trump)"
    assert str(show("BJ BJ")) == "BJ BJ (bj_pair, no-trump)"


POSSIBLE = [
    pytest.param(
        STD,
        "2H 2H 2S SJ SJ 5C",
        ["2S", "2H", "2H 2H"],
        ["2S", "2H", "2H 2H", "SJ SJ"],
        id="R17-R20-standard",
    ),
    pytest.param(
        JOKER,
        "2H 2H 2S BJ 7C",
        ["2H BJ", "2H 2H BJ"],
        ["2H BJ", "2H 2H BJ"],
        id="R17-variant-needs-matching-joker",
    ),
    pytest.param(
        JOKER,
        "2S 2D SJ BJ BJ",
        ["2S SJ", "2D BJ"],
        ["2S SJ", "2D BJ", "BJ BJ"],
        id="R17-variant-both-colours",
    ),
    pytest.param(STD, "BJ BJ SJ 3H 3H", [], ["BJ BJ"], id="R17-jokers-alone-never-declare"),
    pytest.param(STD, "", [], [], id="R17-empty-hand"),
]


@pytest.mark.parametrize(("rules", "hand", "declarations", "shows"), POSSIBLE)
def test_possible_declarations_and_shows(
    rules: RuleSet, hand: str, declarations: list[str], shows: list[str]
) -> None:
    cards = parse_cards(hand)
    want_d = [tuple(sorted(parse_cards(s))) for s in declarations]
    want_s = [tuple(sorted(parse_cards(s))) for s in shows]
    assert [s.cards for s in possible_declarations(cards, L2, rules, seat=3)] == want_d
    got = possible_shows(cards, L2, rules, seat=3)
    assert [s.cards for s in got] == want_s
    assert all(s.seat == 3 for s in got)
    assert got == [parse_show(3, s.cards, L2, rules) for s in got]


WEAK = [
    pytest.param(15, "2S 3S 4S 6H 7H 8H 9C JC QC AD", True, id="§10-no-points"),
    pytest.param(15, "10S 2H 3H", True, id="§10-10-points-under-15"),
    pytest.param(15, "5S 10S 2H", False, id="§10-15-points-is-not-under-15"),
    pytest.param(15, "KS KH 5D", False, id="§10-25-points"),
    pytest.param(15, "BJ BJ SJ SJ 2H 2H AS AS", True, id="§10-R26-jokers-and-trumps-ignored"),
    pytest.param(30, "KS KH 5D", True, id="§10-threshold-30"),
    pytest.param(None, "2S 3S", False, id="§10-variant-off"),
]


@pytest.mark.parametrize(("n", "hand", "allowed"), WEAK)
def test_weak_hand_redeal_threshold(n: int | None, hand: str, allowed: bool) -> None:
    rules = RuleSet(weak_hand_redeal=n)
    cards = parse_cards(hand)
    assert may_request_redeal(cards, rules) is allowed
    if allowed:
        check_redeal_request(cards, rules)
    else:
        with pytest.raises(IllegalMoveError) as err:
            check_redeal_request(cards, rules)
        assert err.value.rule == "§10"
        want = "weak-hand-redeal-off" if n is None else "weak-hand-too-strong"
        assert err.value.code == want

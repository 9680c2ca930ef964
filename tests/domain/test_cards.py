"""Cards and notation: the two decks (R3), R4 notation round trip and errors, points (R26)."""

from __future__ import annotations

from collections import Counter

import pytest

from domain.rules.cards import (
    BJ,
    DECK_SIZE,
    NUM_KINDS,
    POINTS,
    SJ,
    card_name,
    format_cards,
    full_deck,
    parse_card,
    parse_cards,
    points_of,
    rank_of,
    suit_of,
)
from domain.rules.errors import InvalidCardError, InvalidInputError
from tests.helpers import cards

RANK_NAMES = ("2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A")
ALL_NAMES = [r + s for s in "SHCD" for r in RANK_NAMES] + ["SJ", "BJ"]


# --- R3: two full decks with jokers ------------------------------------------------------


def test_r3_deck_has_108_cards() -> None:
    assert len(full_deck()) == DECK_SIZE == 108


def test_r3_every_kind_exactly_twice() -> None:
    counts = Counter(full_deck())
    assert set(counts) == set(range(NUM_KINDS))
    assert set(counts.values()) == {2}


@pytest.mark.parametrize(
    ("suit", "expected"),
    [("S", 26), ("H", 26), ("C", 26), ("D", 26)],
    ids=["R3-spades-26", "R3-hearts-26", "R3-clubs-26", "R3-diamonds-26"],
)
def test_r3_each_suit_has_13_ranks_twice(suit: str, expected: int) -> None:
    in_suit = [c for c in full_deck() if card_name(c).endswith(suit) and c < SJ]
    assert len(in_suit) == expected


def test_r3_two_small_and_two_big_jokers() -> None:
    deck = full_deck()
    assert deck.count(SJ) == 2
    assert deck.count(BJ) == 2
    assert suit_of(SJ) is None and rank_of(BJ) is None


# --- R4: notation --------------------------------------------------------------------------


@pytest.mark.parametrize("name", ALL_NAMES, ids=[f"R4-roundtrip-{n}" for n in ALL_NAMES])
def test_r4_parse_print_round_trip(name: str) -> None:
    kind = parse_card(name)
    assert 0 <= kind < NUM_KINDS
    assert card_name(kind) == name
    assert format_cards([kind]) == name


def test_r4_all_54_names_are_distinct_kinds() -> None:
    assert sorted(parse_card(n) for n in ALL_NAMES) == list(range(NUM_KINDS))


@pytest.mark.parametrize(
    ("text", "kinds"),
    [
        ("10H", [parse_card("10H")]),
        ("5C 5C 7C 7C", [parse_card("5C")] * 2 + [parse_card("7C")] * 2),
        ("AS SJ BJ", [parse_card("AS"), SJ, BJ]),
        ("2S AD", [0, 3 * 13 + 12]),
    ],
    ids=["R4-ten-of-hearts", "R4-order-kept", "R4-jokers", "R4-kind-numbering"],
)
def test_r4_parse_cards_keeps_order(text: str, kinds: list[int]) -> None:
    assert parse_cards(text) == kinds
    assert format_cards(parse_cards(text)) == text


def test_r4_whole_deck_round_trip() -> None:
    deck = full_deck()
    assert parse_cards(format_cards(deck)) == deck


def test_r4_parse_cards_accepts_token_sequence() -> None:
    assert parse_cards(["10H", "AS"]) == cards("10H AS")


BAD_TOKENS = ["11H", "1S", "XJ", "", "10X", "AHH", "10", "S", "JJ"]


@pytest.mark.parametrize("token", BAD_TOKENS, ids=[f"R4-bad-{t or 'empty'}" for t in BAD_TOKENS])
def test_r4_bad_token_raises_naming_it(token: str) -> None:
    with pytest.raises(InvalidCardError) as info:
        parse_card(token)
    assert info.value.token == token
    assert repr(token) in str(info.value)
    assert info.value.code == "invalid-card"
    assert info.value.rule == "R4"


@pytest.mark.parametrize(
    "token", [t for t in BAD_TOKENS if t], ids=[f"R4-bad-in-list-{t}" for t in BAD_TOKENS if t]
)
def test_r4_bad_token_inside_a_list_is_named(token: str) -> None:
    with pytest.raises(InvalidCardError) as info:
        parse_cards(f"AS {token} KS")
    assert info.value.token == token


def test_r4_empty_token_in_a_sequence_is_named() -> None:
    with pytest.raises(InvalidCardError) as info:
        parse_cards(["AS", ""])
    assert info.value.token == ""


def test_r4_invalid_card_is_invalid_input_not_illegal_move() -> None:
    with pytest.raises(InvalidInputError):
        parse_card("11H")
    with pytest.raises(ValueError):
        parse_card("1S")


# --- R26: points ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("card", "points"),
    [
        ("5S", 5),
        ("5H", 5),
        ("5C", 5),
        ("5D", 5),
        ("10S", 10),
        ("10D", 10),
        ("KH", 10),
        ("KC", 10),
        ("AS", 0),
        ("QH", 0),
        ("JD", 0),
        ("9C", 0),
        ("4S", 0),
        ("2D", 0),
        ("SJ", 0),
        ("BJ", 0),
    ],
    ids=lambda v: f"R26-{v}" if isinstance(v, str) else str(v),
)
def test_r26_card_points(card: str, points: int) -> None:
    assert POINTS[parse_card(card)] == points


def test_r26_points_total_200() -> None:
    assert points_of(full_deck()) == 200


def test_r26_one_deck_holds_100() -> None:
    assert sum(POINTS) == 100


@pytest.mark.parametrize(
    ("text", "points"),
    [("5C 5C 7C 7C", 10), ("KS 10H 5D", 25), ("SJ BJ AS", 0), ("10C KC 10C KC", 40)],
    ids=["R26-fives", "R26-mixed", "R26-no-points", "R26-tens-and-kings"],
)
def test_r26_points_of_a_play(text: str, points: int) -> None:
    assert points_of(cards(text)) == points

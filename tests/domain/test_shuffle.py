"""R35 seeded shuffle, R16 deal, R19 bottom's third card (vectors also in docs/shuffle.md)."""

from __future__ import annotations

import hashlib
from collections import Counter

import pytest

from domain.rules.cards import BJ, SJ, format_cards, full_deck, parse_card, parse_cards
from domain.rules.errors import InvalidInputError
from domain.rules.shuffle import (
    ByteStream,
    Deal,
    bottom_third_card,
    commitment,
    deal,
    seed_from_hex,
    seed_to_hex,
    shuffle_deck,
    uniform_below,
)

SHENGJI = hashlib.sha256(b"shengji").digest()

# (seed, commitment, first 12 cards) — the same table is in docs/shuffle.md.
VECTORS = [
    pytest.param(
        bytes(32),
        "66687aadf862bd776c8fc18b8e9f8e20089714856ee233b3902a591d0d5f2925",
        "2D KS 5H 6D 4D AH 3C 9H 6S 6C SJ 9C",
        id="R35-zero-seed",
    ),
    pytest.param(
        bytes(range(32)),
        "630dcd2966c4336691125448bbb25b4ff412a49c732db2c8abc1b8581bd710dd",
        "QC JC KD 6H 5C 3C 6D 3H 2S 7S KD AD",
        id="R35-range-seed",
    ),
    pytest.param(
        SHENGJI,
        "bb56d55bc3d00ac5ad1599f0f97464c4e745a33d84179e6ef5bbc9725c091469",
        "KD 2H AC 5C 7C QC 2H 8H JS 7D QS QD",
        id="R35-sha256-shengji-seed",
    ),
]


def _seed(i: int) -> bytes:
    return hashlib.sha256(i.to_bytes(4, "big")).digest()


@pytest.mark.parametrize(("seed", "commit", "first12"), VECTORS)
def test_r35_vectors(seed: bytes, commit: str, first12: str) -> None:
    assert commitment(seed) == commit
    assert format_cards(shuffle_deck(seed)[:12]) == first12


def test_r35_commitment_is_sha256_of_seed() -> None:
    assert commitment(SHENGJI) == hashlib.sha256(SHENGJI).hexdigest()


def test_r35_deterministic_and_seed_sensitive() -> None:
    assert shuffle_deck(SHENGJI) == shuffle_deck(bytes(SHENGJI))
    assert shuffle_deck(bytearray(SHENGJI)) == shuffle_deck(SHENGJI)  # type: ignore[arg-type]
    assert shuffle_deck(bytes(32)) != shuffle_deck(bytes(31) + b"\x01")


@pytest.mark.parametrize("i", range(20), ids=lambda i: f"R3-R35-permutation-{i}")
def test_r3_r35_shuffle_is_a_permutation_of_108_cards(i: int) -> None:
    deck = shuffle_deck(_seed(i))
    assert len(deck) == 108
    assert sorted(deck) == full_deck()


@pytest.mark.parametrize(
    "seed",
    [
        pytest.param(b"", id="R35-empty"),
        pytest.param(bytes(31), id="R35-31-bytes"),
        pytest.param(bytes(33), id="R35-33-bytes"),
        pytest.param("00" * 32, id="R35-str-not-bytes"),
        pytest.param(None, id="R35-none"),
    ],
)
def test_r35_seed_must_be_32_bytes(seed: object) -> None:
    with pytest.raises(InvalidInputError):
        shuffle_deck(seed)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError):
        commitment(seed)  # type: ignore[arg-type]


def test_r35_byte_stream_is_sha256_of_seed_and_counter() -> None:
    stream = ByteStream(SHENGJI)
    words = [stream.next_u32() for _ in range(9)]
    block0 = hashlib.sha256(SHENGJI + (0).to_bytes(8, "big")).digest()
    block1 = hashlib.sha256(SHENGJI + (1).to_bytes(8, "big")).digest()
    assert words[:8] == [int.from_bytes(block0[k : k + 4], "big") for k in range(0, 32, 4)]
    assert words[8] == int.from_bytes(block1[:4], "big")


class _Words:
    def __init__(self, *words: int) -> None:
        self.words = list(words)

    def next_u32(self) -> int:
        return self.words.pop(0)


@pytest.mark.parametrize(
    ("bound", "words", "expected", "left"),
    [
        pytest.param(108, (5,), 5, 0, id="R35-accept"),
        pytest.param(108, (2**32 - 1, 2**32 - 2, 215), 215 % 108, 0, id="R35-reject-twice"),
        # limit = 2**32 - 2**32 % 108; the first rejected word is exactly the limit.
        pytest.param(108, (2**32 - 2**32 % 108, 7, 9), 7, 1, id="R35-reject-at-limit"),
        pytest.param(108, (2**32 - 2**32 % 108 - 1, 9), (2**32 - 2**32 % 108 - 1) % 108, 1,
                     id="R35-accept-below-limit"),
        pytest.param(2, (2**32 - 1,), 1, 0, id="R35-power-of-two-never-rejects"),
    ],
)  # fmt: skip
def test_r35_uniform_below_rejection(
    bound: int, words: tuple[int, ...], expected: int, left: int
) -> None:
    source = _Words(*words)
    assert uniform_below(source, bound) == expected
    assert len(source.words) == left


def test_r35_seed_hex_round_trip() -> None:
    text = seed_to_hex(SHENGJI)
    assert text == SHENGJI.hex()
    assert seed_from_hex(text) == SHENGJI
    assert seed_from_hex(text.upper()) == SHENGJI


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("00" * 31, id="R35-too-short"),
        pytest.param("00" * 33, id="R35-too-long"),
        pytest.param("zz" * 32, id="R35-not-hex"),
        pytest.param("0x" + "00" * 31, id="R35-prefix"),
        pytest.param(b"00" * 32, id="R35-bytes-not-str"),
    ],
)
def test_r35_seed_from_hex_rejects(text: object) -> None:
    with pytest.raises(InvalidInputError):
        seed_from_hex(text)  # type: ignore[arg-type]


def test_r35_seed_to_hex_rejects_wrong_length() -> None:
    with pytest.raises(InvalidInputError):
        seed_to_hex(bytes(16))


# -- R16 deal ---------------------------------------------------------------------------


@pytest.mark.parametrize("first_seat", range(4), ids=lambda s: f"R16-first-seat-{s}")
def test_r16_deal_order(first_seat: int) -> None:
    deck = shuffle_deck(SHENGJI)
    d = deal(deck, first_seat)
    assert [len(h) for h in d.hands] == [25, 25, 25, 25]
    assert d.bottom == tuple(deck[100:])
    assert len(d.draws) == 100
    for k, (seat, card) in enumerate(d.draws):
        assert seat == (first_seat + k) % 4
        assert card == deck[k]
    for seat in range(4):
        offset = (seat - first_seat) % 4
        assert d.hands[seat] == tuple(deck[offset:100:4])
    assert sorted([*d.bottom, *(c for h in d.hands for c in h)]) == full_deck()


def test_r16_deal_from_kind_order_deck() -> None:
    # The unshuffled deck 2S 2S 3S 3S 4S 4S …: seat 1 deals, so seat 1 draws first.
    d = deal(full_deck(), 1)
    assert format_cards(d.hands[1][:3]) == "2S 4S 6S"
    assert format_cards(d.hands[2][:3]) == "2S 4S 6S"
    assert format_cards(d.hands[3][:3]) == "3S 5S 7S"
    assert format_cards(d.hands[0][:3]) == "3S 5S 7S"
    assert format_cards(d.bottom) == "KD KD AD AD SJ SJ BJ BJ"


def test_r16_hand_after_is_a_prefix_for_the_paced_deal() -> None:
    d = deal(shuffle_deck(SHENGJI), 2)
    assert d.hand_after(2, 0) == ()
    assert d.hand_after(2, 1) == d.hands[2][:1]
    assert d.hand_after(3, 1) == ()
    assert d.hand_after(1, 7) == d.hands[1][:1]
    for seat in range(4):
        assert d.hand_after(seat, 100) == d.hands[seat]
        for drawn in range(0, 101, 9):
            assert d.hands[seat][: len(d.hand_after(seat, drawn))] == d.hand_after(seat, drawn)
    with pytest.raises(InvalidInputError):
        d.hand_after(4, 0)
    with pytest.raises(InvalidInputError):
        d.hand_after(0, 101)


@pytest.mark.parametrize(
    ("deck", "first_seat"),
    [
        pytest.param(full_deck()[:-1], 0, id="R3-107-cards"),
        pytest.param([*full_deck()[:-1], 0], 0, id="R3-three-copies"),
        pytest.param([*full_deck()[:-1], 54], 0, id="R3-not-a-kind"),
        pytest.param(full_deck(), 4, id="R16-seat-out-of-range"),
        pytest.param(full_deck(), -1, id="R16-negative-seat"),
    ],
)
def test_r16_deal_rejects(deck: list[int], first_seat: int) -> None:
    with pytest.raises(InvalidInputError):
        deal(deck, first_seat)


def test_r16_deal_is_frozen() -> None:
    d = deal(full_deck(), 0)
    assert isinstance(d, Deal)
    with pytest.raises(AttributeError):
        d.bottom = ()  # type: ignore[misc]


# -- R19 bottom's third card ------------------------------------------------------------


@pytest.mark.parametrize(
    ("bottom", "third"),
    [
        pytest.param("3S 4H 7C 8D 9D 10D JD QD", "7C", id="R19-suit-card"),
        pytest.param("3S 4H SJ 8D 9D 10D JD QD", "SJ", id="R19-joker-no-trump"),
    ],
)
def test_r19_bottom_third_card_counts_from_the_top(bottom: str, third: str) -> None:
    assert bottom_third_card(parse_cards(bottom)) == parse_card(third)


def test_r19_bottom_third_card_of_a_deal() -> None:
    deck = shuffle_deck(SHENGJI)
    assert bottom_third_card(deal(deck, 0).bottom) == deck[102]


def test_r19_bottom_third_card_needs_eight_cards() -> None:
    with pytest.raises(InvalidInputError):
        bottom_third_card(parse_cards("3S 4H 7C"))


# -- R35 fairness: chi-square uniformity ------------------------------------------------

N_SEEDS = 2000
KINDS = (parse_card("2S"), parse_card("AH"), parse_card("10C"), SJ, BJ)

# 0.999 quantiles of the chi-square distribution (scipy.stats.chi2.ppf(0.999, df)).
CHI2_999_DF4 = 18.467
CHI2_999_DF8 = 26.124
CHI2_999_DF53 = 90.573


def _chi_square(observed: list[int], expected: list[float]) -> float:
    return sum((o - e) ** 2 / e for o, e in zip(observed, expected, strict=True))


@pytest.fixture(scope="module")
def decks() -> list[list[int]]:
    return [shuffle_deck(_seed(i)) for i in range(N_SEEDS)]


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: f"R16-R35-destination-{format_cards([k])}")
def test_r16_r35_card_lands_in_each_hand_and_bottom_uniformly(
    decks: list[list[int]], kind: int
) -> None:
    # Destinations of both copies: seats 0..3 (dealer 0) or the bottom; 25:25:25:25:8.
    observed = [0] * 5
    for deck in decks:
        for pos, card in enumerate(deck):
            if card == kind:
                observed[pos % 4 if pos < 100 else 4] += 1
    total = 2 * N_SEEDS
    expected = [total * n / 108 for n in (25, 25, 25, 25, 8)]
    assert _chi_square(observed, expected) < CHI2_999_DF4


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: f"R35-position-{format_cards([k])}")
def test_r35_card_position_buckets_uniform(decks: list[list[int]], kind: int) -> None:
    # Nine buckets of 12 deck positions each.
    observed = [0] * 9
    for deck in decks:
        for pos, card in enumerate(deck):
            if card == kind:
                observed[pos // 12] += 1
    expected = [2 * N_SEEDS / 9] * 9
    assert _chi_square(observed, expected) < CHI2_999_DF8


def test_r35_first_card_kind_uniform(decks: list[list[int]]) -> None:
    counts = Counter(deck[0] for deck in decks)
    observed = [counts[k] for k in range(54)]
    expected = [N_SEEDS / 54] * 54
    assert _chi_square(observed, expected) < CHI2_999_DF53

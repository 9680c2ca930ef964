"""Seeded shuffle (RULES R35) and the deal (R16).

The deck order of a round is a pure function of a 32-byte seed, so anyone holding the
revealed seed can recompute the deal and check it against the published commitment
(R35). The algorithm is specified byte for byte in docs/shuffle.md:

* byte stream: SHA-256(seed || counter as 8-byte big-endian), counter 0, 1, 2, …,
  the 32-byte blocks concatenated;
* Fisher–Yates over ``full_deck()`` (kind order, each kind twice) for i = 107 … 1,
  j uniform in [0, i] by rejection sampling on big-endian uint32 words.

This module draws no randomness of its own: services draw the seed (docs/decisions.md F5).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Protocol

from domain.rules.cards import DECK_SIZE, NUM_KINDS, Card, full_deck
from domain.rules.errors import InvalidInputError
from domain.values import Value

SEED_BYTES: Final = 32
"""A seed is 256 bits (docs/decisions.md F5: drawn with ``secrets`` by services)."""

SEATS: Final = 4
HAND_SIZE: Final = 25
BOTTOM_SIZE: Final = 8
DRAWN: Final = SEATS * HAND_SIZE  # 100 cards drawn before the bottom (R16)

_TWO32: Final = 1 << 32


def _check_seed(seed: object) -> bytes:
    if not isinstance(seed, bytes | bytearray | memoryview):
        raise InvalidInputError(
            f"seed must be {SEED_BYTES} bytes, got {type(seed).__name__} (R35)", rule="R35"
        )
    raw = bytes(seed)
    if len(raw) != SEED_BYTES:
        raise InvalidInputError(
            f"seed must be exactly {SEED_BYTES} bytes, got {len(raw)} (R35)", rule="R35"
        )
    return raw


class ByteStream:
    """SHA-256(seed || counter_be64) blocks, read four bytes at a time (R35)."""

    __slots__ = ("_buf", "_counter", "_pos", "_seed")

    def __init__(self, seed: bytes) -> None:
        self._seed = seed
        self._counter = 0
        self._buf = b""
        self._pos = 0

    def next_u32(self) -> int:
        # 32-byte blocks hold exactly eight words: a word never straddles two blocks.
        if self._pos >= len(self._buf):
            self._buf = hashlib.sha256(self._seed + self._counter.to_bytes(8, "big")).digest()
            self._counter += 1
            self._pos = 0
        word = int.from_bytes(self._buf[self._pos : self._pos + 4], "big")
        self._pos += 4
        return word


def shuffle_deck(seed: bytes) -> list[Card]:
    """The 108-card deck order for ``seed`` (R35); position 0 is drawn first (R16)."""
    stream = ByteStream(_check_seed(seed))
    deck = full_deck()
    for i in range(DECK_SIZE - 1, 0, -1):
        j = uniform_below(stream, i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    return deck


class WordSource(Protocol):
    def next_u32(self) -> int: ...


def uniform_below(stream: WordSource, bound: int) -> int:
    """j uniform in [0, bound): big-endian uint32 words, rejecting u >= 2**32 - 2**32 % bound."""
    limit = _TWO32 - (_TWO32 % bound)
    u = stream.next_u32()
    while u >= limit:  # rejection keeps j exactly uniform
        u = stream.next_u32()
    return u % bound


def commitment(seed: bytes) -> str:
    """The published commitment (R35): SHA-256 of the seed, lowercase hex."""
    return hashlib.sha256(_check_seed(seed)).hexdigest()


def seed_to_hex(seed: bytes) -> str:
    """The seed as 64 lowercase hex digits (how it is revealed, R35)."""
    return _check_seed(seed).hex()


def seed_from_hex(text: str) -> bytes:
    """Parse 64 hex digits (either case) into a seed; InvalidInputError otherwise."""
    if not isinstance(text, str):
        raise InvalidInputError(f"seed must be a hex string, got {type(text).__name__}", rule="R35")
    digits = text.strip()
    if len(digits) != 2 * SEED_BYTES or not all(c in "0123456789abcdefABCDEF" for c in digits):
        raise InvalidInputError(
            f"seed must be exactly {2 * SEED_BYTES} hex digits, got {text!r}", rule="R35"
        )
    return bytes.fromhex(digits)


@dataclass(frozen=True, slots=True)
class Deal(Value):
    """The result of R16: four hands of 25, the bottom of 8, and every draw in order."""

    hands: tuple[tuple[Card, ...], ...]
    """hands[seat]: the seat's 25 cards in the order drawn."""
    bottom: tuple[Card, ...]
    """The last 8 deck cards, in deck order (bottom[0] nearest the top of the deck)."""
    draws: tuple[tuple[int, Card], ...]
    """(seat, card) for each of the 100 draws, in draw order."""

    def hand_after(self, seat: int, drawn: int) -> tuple[Card, ...]:
        """Seat's hand once the first ``drawn`` cards (0..100) have been drawn (paced deal)."""
        if not 0 <= seat < SEATS:
            raise InvalidInputError(f"seat must be 0..3, got {seat}", rule="R1")
        if not 0 <= drawn <= DRAWN:
            raise InvalidInputError(f"drawn must be 0..{DRAWN}, got {drawn}", rule="R16")
        if drawn == DRAWN:  # every card drawn: the hand in the order drawn, as dealt
            return self.hands[seat]
        return tuple(card for s, card in self.draws[:drawn] if s == seat)


def deal(deck: Sequence[Card], first_seat: int) -> Deal:
    """R16: draw one card at a time from position 0, seat by seat from ``first_seat``.

    ``first_seat`` is the dealer (round 1: seat 0); seats follow play order s → s+1 mod 4
    (R1). After 100 draws (25 each) the remaining 8 cards are the bottom, in deck order.
    """
    if type(first_seat) is not int or not 0 <= first_seat < SEATS:
        raise InvalidInputError(f"first seat must be 0..3, got {first_seat!r}", rule="R16")
    cards = tuple(deck)
    if len(cards) != DECK_SIZE:
        raise InvalidInputError(f"a deck has {DECK_SIZE} cards, got {len(cards)}", rule="R3")
    counts = [0] * NUM_KINDS
    for c in cards:
        if type(c) is not int or not 0 <= c < NUM_KINDS:
            raise InvalidInputError(f"not a card kind: {c!r}", rule="R3")
        counts[c] += 1
    if any(n != 2 for n in counts):
        raise InvalidInputError("a deck holds every card exactly twice", rule="R3")
    draws = tuple(((first_seat + k) % SEATS, cards[k]) for k in range(DRAWN))
    hands = tuple(tuple(card for s, card in draws if s == seat) for seat in range(SEATS))
    return Deal(hands=hands, bottom=cards[DRAWN:], draws=draws)


def bottom_third_card(bottom: Sequence[Card]) -> Card:
    """R19: the bottom's 3rd card counting from the top, i.e. ``bottom[2]``.

    "Top" is the first card in deck order: the bottom is the last 8 deck cards and the
    card nearest the drawn cards is its top. Its suit names trump; a joker means no-trump.
    """
    if len(bottom) != BOTTOM_SIZE:
        raise InvalidInputError(
            f"the bottom has {BOTTOM_SIZE} cards, got {len(bottom)}", rule="R19"
        )
    return bottom[2]

"""Cards and their notation (RULES R3, R4).

A card is a small int, its *kind*: ``suit * 13 + rank`` for the 52 suited cards (suit
0..3 = S H C D, rank 0..12 = 2 3 … 10 J Q K A), ``52`` for the small joker SJ (小王) and
``53`` for the big joker BJ (大王). Two decks are in play (R3): every kind exists exactly
twice and the two copies are interchangeable, so hands and plays are multisets of kinds,
kept as lists or tuples of ints.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from domain.rules.errors import InvalidCardError

SUITS = "SHCD"
SUIT_NAMES = ("spades", "hearts", "clubs", "diamonds")
RANKS = ("2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A")
SPADES, HEARTS, CLUBS, DIAMONDS = 0, 1, 2, 3
SJ = 52
BJ = 53
NUM_KINDS = 54
COPIES = 2
DECK_SIZE = NUM_KINDS * COPIES  # 108

Card = int


def make_card(rank: int, suit: int) -> Card:
    """The kind of the suited card of ``rank`` (0 = '2' … 12 = 'A') and ``suit`` (0..3)."""
    return suit * 13 + rank


def suit_of(card: Card) -> int | None:
    """Suit index 0..3, or None for a joker."""
    return None if card >= SJ else card // 13


def rank_of(card: Card) -> int | None:
    """Rank index 0..12, or None for a joker."""
    return None if card >= SJ else card % 13


def _points(card: Card) -> int:
    if card >= SJ:
        return 0
    rank = RANKS[card % 13]
    return 5 if rank == "5" else 10 if rank in ("10", "K") else 0


POINTS: tuple[int, ...] = tuple(_points(c) for c in range(NUM_KINDS))
"""R26: every 5 is worth 5, every 10 and K 10 — 200 points in the two decks."""

_NAMES: tuple[str, ...] = tuple([RANKS[c % 13] + SUITS[c // 13] for c in range(52)] + ["SJ", "BJ"])
_BY_NAME: dict[str, Card] = {name: kind for kind, name in enumerate(_NAMES)}


def parse_card(token: str) -> Card:
    """Parse one R4 token (``10H``, ``AS``, ``SJ``); raise InvalidCardError naming it."""
    kind = _BY_NAME.get(token.strip().upper()) if isinstance(token, str) else None
    if kind is None:
        raise InvalidCardError(str(token))
    return kind


def parse_cards(cards: str | Iterable[str]) -> list[Card]:
    """Parse ``"5C 5C 7C 7C"`` (or a sequence of tokens) into a list of kinds, in order."""
    tokens = cards.split() if isinstance(cards, str) else list(cards)
    return [parse_card(t) for t in tokens]


def card_name(card: Card) -> str:
    return _NAMES[card]


def format_cards(cards: Iterable[Card]) -> str:
    """The R4 notation of several cards, space separated, in the given order."""
    return " ".join(_NAMES[c] for c in cards)


def card_names(cards: Iterable[Card]) -> list[str]:
    return [_NAMES[c] for c in cards]


def full_deck() -> list[Card]:
    """The 108 cards of two decks, in kind order (each kind twice, R3)."""
    return [kind for kind in range(NUM_KINDS) for _ in range(COPIES)]


def count_kinds(cards: Iterable[Card]) -> list[int]:
    """A 54-long list of how many copies of each kind ``cards`` holds."""
    counts = [0] * NUM_KINDS
    for c in cards:
        counts[c] += 1
    return counts


def contains(hand: Sequence[Card], cards: Sequence[Card]) -> bool:
    """True when the multiset ``cards`` is contained in ``hand``."""
    if len(cards) == 1:
        return cards[0] in hand
    if len(cards) < 6:
        return all(hand.count(c) >= cards.count(c) for c in cards)
    counts = count_kinds(hand)
    for c in cards:
        counts[c] -= 1
        if counts[c] < 0:
            return False
    return True


def points_of(cards: Iterable[Card]) -> int:
    return sum(POINTS[c] for c in cards)


def parse_rank(token: str) -> int:
    """A level rank '2'..'10', 'J', 'Q', 'K', 'A' → rank index 0..12."""
    try:
        return RANKS.index(token.strip().upper())
    except (ValueError, AttributeError):
        raise InvalidCardError(str(token)) from None


def parse_suit(token: str | None) -> int | None:
    """'S' 'H' 'C' 'D' → 0..3; None (or 'NT') → no-trump (R9)."""
    if token is None:
        return None
    t = token.strip().upper()
    if t in ("NT", ""):
        return None
    if len(t) == 1 and t in SUITS:
        return SUITS.index(t)
    raise InvalidCardError(token)

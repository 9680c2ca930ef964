"""Trump context: each card's suit category and order for one round (RULES R5–R11).

For a round's level rank and trump suit (or no-trump, R9) every kind gets:

* a **category** (R7): ``TRUMP`` (4) for jokers, level cards and the trump suit, else its
  own suit index 0..3;
* an **order** inside that category: consecutive integers along the category's chain, so
  that two positions are adjacent for tractors (R14) exactly when their orders differ by
  one. Off-suit level cards share one position (R8, equal order; R11 ties).

The chains, low to high, are built by :func:`_chain` — the one place that defines
adjacency (R14):

* non-trump suit (R10): 2 3 … K A without the level rank;
* trump with a trump suit (R8): trump-suit 2 … A (level rank left out) → off-suit level
  cards (one shared position) → trump-suit level card → SJ → BJ;
* no-trump (R9): level cards of all four suits (one position) → SJ → BJ.

Contexts are immutable and cached: there are only 13 × 5 of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from domain.rules.cards import BJ, NUM_KINDS, RANKS, SJ, SUITS, Card, make_card
from domain.values import Value

TRUMP = 4
"""The trump suit category (R7); non-trump categories are the suit indexes 0..3."""

CATEGORY_NAMES = ("spades", "hearts", "clubs", "diamonds", "trump")


def _chain(level: int, trump: int | None, category: int) -> list[tuple[Card, ...]]:
    """Positions of ``category`` from low to high; each position lists its kinds."""
    if category == trump:
        return []  # the trump suit's cards all stand in the trump chain (R7)
    if category != TRUMP:
        return [(make_card(r, category),) for r in range(13) if r != level]
    chain: list[tuple[Card, ...]] = []
    if trump is not None:
        chain.extend((make_card(r, trump),) for r in range(13) if r != level)
        chain.append(tuple(make_card(level, s) for s in range(4) if s != trump))
        chain.append((make_card(level, trump),))
    else:
        chain.append(tuple(make_card(level, s) for s in range(4)))
    chain.append((SJ,))
    chain.append((BJ,))
    return chain


@dataclass(frozen=True, slots=True, eq=False)
class TrumpContext(Value):
    """Category and order of every kind for one (level, trump); see ``trump_context``."""

    level: int
    trump: int | None
    category: tuple[int, ...]
    """category[kind]: TRUMP or the suit index (R7)."""
    order: tuple[int, ...]
    """order[kind]: position in its category's chain; higher beats lower (R8–R10)."""
    chains: tuple[tuple[tuple[Card, ...], ...], ...]
    """chains[category][order]: the kinds standing at that position."""
    rank_key: tuple[int, ...]
    """A global strength key: category * 32 + order (for sorting hands)."""

    def is_trump(self, card: Card) -> bool:
        return self.category[card] == TRUMP

    def successor(self, card: Card) -> tuple[Card, ...]:
        """The kinds one position above ``card`` in its category (R14 adjacency); () at the top."""
        chain = self.chains[self.category[card]]
        nxt = self.order[card] + 1
        return chain[nxt] if nxt < len(chain) else ()

    def adjacent(self, low: Card, high: Card) -> bool:
        """True when ``high`` stands exactly one position above ``low`` in one category."""
        cat = self.category
        return cat[low] == cat[high] and self.order[high] == self.order[low] + 1

    def beats(self, a: Card, b: Card) -> bool:
        """Same category and strictly higher order (equal order ties, R11)."""
        return self.category[a] == self.category[b] and self.order[a] > self.order[b]

    def describe(self) -> str:
        trump = "no-trump" if self.trump is None else f"trump {SUITS[self.trump]}"
        return f"level {RANKS[self.level]}, {trump}"

    def sort_key(self, card: Card) -> int:
        return self.rank_key[card]


@cache
def trump_context(level: int, trump: int | None) -> TrumpContext:
    """The cached context for level rank index ``level`` (0 = '2') and trump suit (None = NT)."""
    if not 0 <= level <= 12:
        raise ValueError(f"level rank index out of range: {level}")
    if trump is not None and not 0 <= trump <= 3:
        raise ValueError(f"trump suit index out of range: {trump}")
    chains = tuple(tuple(_chain(level, trump, cat)) for cat in range(5))
    category = [0] * NUM_KINDS
    order = [0] * NUM_KINDS
    for cat, chain in enumerate(chains):
        for pos, kinds in enumerate(chain):
            for kind in kinds:
                category[kind] = cat
                order[kind] = pos
    rank_key = tuple(category[k] * 32 + order[k] for k in range(NUM_KINDS))
    return TrumpContext(level, trump, tuple(category), tuple(order), chains, rank_key)

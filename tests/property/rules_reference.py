"""An independent, straightforward reading of R8–R10 and R24 for the rules engine's property
tests (:mod:`tests.property.test_rules_properties`,
:mod:`tests.property.test_trick_properties`), and their Hypothesis strategies.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence

from hypothesis import strategies as st

from domain.rules.cards import BJ, SJ, Card
from domain.rules.context import TRUMP, TrumpContext
from domain.rules.shapes import Shape

TRUMPS: list[int | None] = [None, 0, 1, 2, 3]

levels = st.integers(min_value=0, max_value=12)
trumps = st.sampled_from(TRUMPS)
rngs = st.integers(min_value=0, max_value=2**32 - 1).map(random.Random)


# --- an independent reading of R8–R10 and R24 -------------------------------------------------


def strength(level: int, trump: int | None, card: Card) -> tuple[int, int]:
    """(category, value) straight from R7–R10: higher value beats within one category."""
    if card == BJ:
        return TRUMP, 100
    if card == SJ:
        return TRUMP, 99
    suit, rank = divmod(card, 13)
    if rank == level:
        return TRUMP, 98 if suit == trump else 97  # R8 / R9: off-suit level cards equal
    return (TRUMP if suit == trump else suit), rank


def _pair_positions(ctx: TrumpContext, play: Sequence[Card]) -> Counter[int]:
    """How many identical pairs (R13) stand at each order position."""
    return Counter(ctx.order[k] for k, n in Counter(play).items() if n == 2)


def _packs(positions: Counter[int], lengths: Sequence[int]) -> bool:
    """Disjoint tractors of ``lengths`` (R14: consecutive positions each holding a pair)."""
    if not lengths:
        return True
    length, rest = lengths[0], lengths[1:]
    for start in sorted(positions):
        window = range(start, start + length)
        if all(positions[p] > 0 for p in window):
            for p in window:
                positions[p] -= 1
            ok = _packs(positions, rest)
            for p in window:
                positions[p] += 1
            if ok:
                return True
    return False


def _decisive(ctx: TrumpContext, lead: Shape, play: Sequence[Card]) -> int | None:
    """R24: the play's highest component of the lead's largest kind; None if it does not cover."""
    width = lead.largest.width
    if width == 0:
        return max(ctx.order[c] for c in play)
    positions = _pair_positions(ctx, play)
    if sum(positions.values()) < lead.total_pairs:
        return None
    if not _packs(positions, sorted(lead.tractor_lengths, reverse=True)):
        return None
    tops = [s + width - 1 for s in positions if all(positions[s + i] for i in range(width))]
    return max(tops) if tops else None


def reference_winner(ctx: TrumpContext, plays: Sequence[Sequence[Card]], lead: Shape) -> int:
    """R24 read literally: covering plays only; trump beats non-trump; ties → earlier (R11)."""
    best, best_trump = 0, lead.category == TRUMP
    best_key = _decisive(ctx, lead, plays[0])
    assert best_key == lead.largest.top
    for i, play in enumerate(plays[1:], start=1):
        cats = {ctx.category[c] for c in play}
        if len(cats) != 1 or not cats <= {lead.category, TRUMP}:
            continue
        key = _decisive(ctx, lead, play)
        if key is None:
            continue
        is_trump = cats == {TRUMP}
        if (is_trump and not best_trump) or (is_trump == best_trump and key > best_key):
            best, best_trump, best_key = i, is_trump, key
    return best

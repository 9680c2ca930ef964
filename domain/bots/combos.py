"""Finding combinations in a hand (RULES R12–R15) for the players' leads.

Cheap helpers over one suit category at a time: the identical pairs a hand holds at
each position of the category's chain (R13), the maximal runs of such positions
(tractors, 拖拉机, R14), and one random lead of each kind for :class:`RandomPlayer`.
Every lead built here is of one suit category, so the engine accepts it (R22); a throw
(甩牌, R15) may still fail against the other hands, and the engine then forces a play.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from domain.rules.cards import Card
from domain.rules.context import TrumpContext
from domain.rules.follow import pair_kinds


def runs(kinds_at: Sequence[Sequence[Card]]) -> list[tuple[int, int]]:
    """(start, length) of every maximal run of >= 2 positions holding a pair (R14)."""
    found: list[tuple[int, int]] = []
    start = -1
    for pos, kinds in enumerate(kinds_at):
        if kinds:
            if start < 0:
                start = pos
        elif start >= 0:
            if pos - start >= 2:
                found.append((start, pos - start))
            start = -1
    if start >= 0 and len(kinds_at) - start >= 2:
        found.append((start, len(kinds_at) - start))
    return found


def run_cards(kinds_at: Sequence[Sequence[Card]], start: int, length: int) -> list[Card]:
    """The tractor of ``length`` pairs from position ``start`` (one kind per position)."""
    cards: list[Card] = []
    for pos in range(start, start + length):
        kind = kinds_at[pos][0]
        cards += (kind, kind)
    return cards


def random_lead(
    ctx: TrumpContext, hand: Sequence[Card], rng: random.Random, throw_chance: float = 0.05
) -> list[Card]:
    """A random lead: mostly a single, else a pair or tractor, occasionally a throw (R22).

    The category is that of a random card of the hand, so long suits are led more often.
    """
    pick = rng.choice(hand)
    roll = rng.random()
    if roll >= 0.5 + throw_chance:
        return [pick]
    category = ctx.category[pick]
    cat = ctx.category
    if roll < throw_chance:
        pool = [c for c in hand if cat[c] == category]
        if len(pool) >= 2:
            return rng.sample(pool, rng.randint(2, min(len(pool), 5)))
        return [pick]
    kinds_at = pair_kinds(ctx, category, hand)
    if roll < 0.2 + throw_chance:
        found = runs(kinds_at)
        if found:
            start, length = rng.choice(found)
            size = rng.randint(2, length)
            return run_cards(kinds_at, start + rng.randint(0, length - size), size)
    pairs = [k for ks in kinds_at for k in ks]
    if pairs:
        kind = rng.choice(pairs)
        return [kind, kind]
    return [pick]

"""Winning a trick and its points (RULES R24, R11, R26, R27).

A play can win only if it *covers* the lead's structure: every card in the led category
or, for a non-trump lead, every card trump; for each tractor of the lead a tractor at
least as long (disjoint); and at least as many identical pairs as the lead (more structure
is allowed: a pair may stand in for two singles, seed 001). Among covering plays a trump
play beats non-trump plays; otherwise the **decisive component** decides: the lead's
largest component (longest tractor, else pair, else single) against the follower's
highest component of that kind, by order. Equal order: the earlier play wins (R11).
Two unmatched trumps therefore never beat a pair, and trumping a throw needs the throw's
whole structure in trump.
"""

from __future__ import annotations

from collections.abc import Sequence

from domain.rules.cards import POINTS, Card
from domain.rules.context import TRUMP, TrumpContext
from domain.rules.shapes import Shape, best_window_top, can_pack, decompose, pair_profile


def decisive_key(ctx: TrumpContext, lead: Shape, play: Sequence[Card]) -> int:
    """Order of ``play``'s highest component of the lead's decisive kind; -1 if it does not cover.

    ``play`` must already be all of one category (the led one, or trump).
    """
    width = lead.components[0].width
    if width == 0 and not lead.total_pairs:
        order = ctx.order
        return max(order[c] for c in play)
    profile = pair_profile(ctx, ctx.category[play[0]], play)
    if sum(profile) < lead.total_pairs:
        return -1
    lengths = lead.tractor_lengths
    if lengths and not can_pack(profile, lengths):
        return -1
    return best_window_top(profile, max(width, 1))


def trick_winner(
    ctx: TrumpContext, plays: Sequence[Sequence[Card]], lead: Shape | None = None
) -> int:
    """Index into ``plays`` (play order, leader first) of the play that wins the trick."""
    if lead is None:
        lead = decompose(ctx, plays[0])
    cat = ctx.category
    lead_cat = lead.category
    best = 0
    best_trump = lead_cat == TRUMP
    best_key = lead.components[0].top
    for i in range(1, len(plays)):
        play = plays[i]
        c0 = cat[play[0]]
        if c0 not in (lead_cat, TRUMP):
            continue
        if any(cat[c] != c0 for c in play):
            continue
        key = decisive_key(ctx, lead, play)
        if key < 0:
            continue
        is_trump = c0 == TRUMP
        if (is_trump and not best_trump) or (is_trump == best_trump and key > best_key):
            best, best_trump, best_key = i, is_trump, key
    return best


def trick_points(plays: Sequence[Sequence[Card]]) -> int:
    """R26: the points of every card in the trick."""
    return sum(POINTS[c] for play in plays for c in play)

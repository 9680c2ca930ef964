"""Candidate plays for the heuristic player, built from the hand — never enumerated.

A follow must meet the obligation the hand owes the lead (RULES R23, R25,
:func:`domain.rules.follow.obligation`): all cards of the led category when short of
them, else the required tractors and pairs first. :func:`fill_play` builds the cheapest
such play under a card key (discard low, or feed a partner points); the other builders
find the lowest combination that beats a trick's current winner, in the led category or
in trump (毙牌, R24). The caller still checks every candidate with ``follow.meets``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from domain.bots.combos import runs
from domain.rules.cards import Card
from domain.rules.context import TRUMP, TrumpContext
from domain.rules.follow import Obligation, pair_kinds
from domain.rules.shapes import Shape, can_pack, pair_profile

CardKey = Callable[[Card], int]


def fill_play(
    ctx: TrumpContext, ob: Obligation, n: int, hand: Sequence[Card], key: CardKey
) -> list[Card] | None:
    """The ``n``-card follow meeting ``ob`` that is cheapest under ``key`` (R23)."""
    if ob.short:
        cat = ctx.category
        others = sorted((c for c in hand if cat[c] != ob.category), key=key)
        return [*ob.in_category, *others[: n - len(ob.in_category)]]
    pool = list(ob.in_category)
    chosen: list[Card] = []
    if ob.pairs:
        found = structure(ctx, ob.category, pool, tractors=ob.tractors, pairs=ob.pairs, key=key)
        if found is None:
            return None
        chosen = found
        for c in chosen:
            pool.remove(c)
    pool.sort(key=key)
    return chosen + pool[: n - len(chosen)]


def structure(
    ctx: TrumpContext,
    category: int,
    pool: Sequence[Card],
    *,
    tractors: Sequence[int],
    pairs: int,
    key: CardKey,
) -> list[Card] | None:
    """Tractors of ``tractors`` lengths placed lowest first, then the cheapest further pairs
    up to ``pairs`` pairs in all (R14, R23.2); None when ``pool`` cannot supply them."""
    kinds = pair_kinds(ctx, category, pool)
    counts = [len(k) for k in kinds]
    chosen: list[Card] = []
    for i, length in enumerate(tractors):
        rest = tractors[i + 1 :]
        placed = -1
        for s in range(len(counts) - length + 1):
            window = range(s, s + length)
            if all(counts[p] for p in window):
                for p in window:
                    counts[p] -= 1
                if not rest or can_pack(counts, rest):
                    placed = s
                    break
                for p in window:
                    counts[p] += 1
        if placed < 0:
            return None
        for p in range(placed, placed + length):
            kind = kinds[p].pop(0)
            chosen += (kind, kind)
    need = pairs - sum(tractors)
    if need > 0:
        left = sorted((k for ks in kinds for k in ks), key=key)
        if len(left) < need:
            return None
        for kind in left[:need]:
            chosen += (kind, kind)
    return chosen


def components_above(
    ctx: TrumpContext, category: int, pool: Sequence[Card], width: int, above: int
) -> list[tuple[int, list[Card]]]:
    """(top, cards) of each combination of ``width`` in ``pool`` ranking above ``above``,
    lowest first: singles (0), identical pairs (1), tractors of ``width`` pairs (R12–R14)."""
    order = ctx.order
    cat = ctx.category
    if width == 0:
        seen: set[Card] = set()
        found = []
        for c in pool:
            if cat[c] == category and order[c] > above and c not in seen:
                seen.add(c)
                found.append((order[c], [c]))
        found.sort(key=_first)
        return found
    kinds = pair_kinds(ctx, category, pool)
    if width == 1:
        return [(pos, [ks[0], ks[0]]) for pos, ks in enumerate(kinds) if ks and pos > above]
    result: list[tuple[int, list[Card]]] = []
    for start, length in runs(kinds):
        for s in range(start, start + length - width + 1):
            top = s + width - 1
            if top > above:
                cards: list[Card] = []
                for p in range(s, s + width):
                    cards += (kinds[p][0], kinds[p][0])
                result.append((top, cards))
    result.sort(key=_first)
    return result


def _first(item: tuple[int, list[Card]]) -> int:
    return item[0]


def trump_cover(
    ctx: TrumpContext, lead: Shape, trumps: Sequence[Card], key: CardKey
) -> list[Card] | None:
    """The cheapest all-trump play covering a plain throw's structure (R24), if any.

    It holds the throw's tractors and pairs in trump, then the cheapest trumps; whether
    it actually beats the trick's winner is for the trick to say.
    """
    n = lead.size
    if len(trumps) < n:
        return None
    profile = pair_profile(ctx, TRUMP, trumps)
    if sum(profile) < lead.total_pairs or not can_pack(profile, lead.tractor_lengths):
        return None
    chosen = structure(
        ctx, TRUMP, trumps, tractors=lead.tractor_lengths, pairs=lead.total_pairs, key=key
    )
    if chosen is None:
        return None
    pool = list(trumps)
    for c in chosen:
        pool.remove(c)
    pool.sort(key=key)
    return chosen + pool[: n - len(chosen)]

"""Following a lead (RULES R23, R25): the validator and the generators of legal plays.

Every player plays exactly as many cards as the lead. The obligations a hand owes a lead
are computed once (:func:`obligation`):

1. holding at most as many cards of the led category as the lead has, the player must
   play all of them (the rest is free: trump to kill, 毙牌, or discards); otherwise every
   card played must be of the led category (R23.1; R25 when trump was led);
2. within the category, shape as far as the hand allows (R23.2): the lead's tractors are
   matched largest first, each one that the hand can still supply must be played as a
   tractor of that length; and the play must hold as many identical pairs as
   ``min(pairs in the lead, pairs the hand holds in the category)`` — so a tractor is
   followed by pairs when no tractor is held, then by singles.

The same obligations drive :func:`check_follow` (the validator), :func:`legal_plays`
(every legal play, lazily, for hints) and :func:`random_follow` (one uniformly built legal
play, for bots): the generators' plays always pass the validator, and a legal play always
exists because a hand always holds enough cards.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from typing import NamedTuple

from domain.rules.cards import Card, contains, format_cards
from domain.rules.context import CATEGORY_NAMES, TrumpContext
from domain.rules.errors import InvalidInputError
from domain.rules.shapes import Shape, can_pack, greedy_tractor_match, pair_profile


class FollowVerdict(NamedTuple):
    legal: bool
    rule: str | None
    detail: str | None


LEGAL = FollowVerdict(True, None, None)


class Obligation(NamedTuple):
    """What a hand owes a lead (R23)."""

    category: int
    short: bool
    """True when the hand holds no more cards of the category than the lead: play them all."""
    in_category: tuple[Card, ...]
    tractors: tuple[int, ...]
    """Tractor lengths (pairs) the play must contain in the category."""
    pairs: int
    """Identical pairs the play must contain in the category."""


def obligation(ctx: TrumpContext, lead: Shape, hand: Sequence[Card]) -> Obligation:
    category = lead.category
    if category is None:
        raise InvalidInputError("a mixed set of cards is not a lead (R15)")
    cat = ctx.category
    in_cat = tuple([c for c in hand if cat[c] == category])
    if len(in_cat) <= lead.size:
        return Obligation(category, True, in_cat, (), 0)
    lead_pairs = lead.total_pairs
    if not lead_pairs:
        return Obligation(category, False, in_cat, (), 0)
    profile = pair_profile(ctx, category, in_cat)
    lengths = lead.tractor_lengths
    tractors = greedy_tractor_match(profile, lengths) if lengths else ()
    return Obligation(category, False, in_cat, tractors, min(lead_pairs, sum(profile)))


def follow_violation(ctx: TrumpContext, ob: Obligation, play: Sequence[Card], n: int) -> str | None:
    """Why ``play`` breaks obligation ``ob`` (a sentence), or None when it keeps it."""
    cat = ctx.category
    name = CATEGORY_NAMES[ob.category]
    played_in = sum(1 for c in play if cat[c] == ob.category)
    follow_rule = "R25, R23.1" if name == "trump" else "R23.1"
    if ob.short:
        if played_in < len(ob.in_category):
            return (
                f"{follow_rule}: must play every {name} card held "
                f"({format_cards(ob.in_category)}) before other cards; played {played_in} "
                f"of {len(ob.in_category)}"
            )
        return None
    if played_in < n:
        return (
            f"{follow_rule}: must follow with {n} {name} cards while holding "
            f"{len(ob.in_category)}; played only {played_in}"
        )
    if ob.pairs:
        profile = pair_profile(ctx, ob.category, play)
        if ob.tractors and not can_pack(profile, ob.tractors):
            want = " and ".join(f"a tractor of {t} pairs" for t in ob.tractors)
            return f"R23.2: must play {want} in {name}, as the hand holds one"
        if sum(profile) < ob.pairs:
            return (
                f"R23.2: must play {ob.pairs} pair(s) in {name} (the lead has them and the "
                f"hand holds them); played {sum(profile)}"
            )
    return None


def check_follow(
    ctx: TrumpContext, lead: Shape, hand: Sequence[Card], play: Sequence[Card]
) -> FollowVerdict:
    """Is ``play`` (taken from ``hand``) a legal answer to ``lead``? Which rule does it break?"""
    n = lead.size
    if len(play) != n:
        return FollowVerdict(False, "R23", f"R23: must play exactly {n} cards, as the lead did")
    if not contains(hand, play):
        raise InvalidInputError(f"{format_cards(play)} is not part of the hand")
    why = follow_violation(ctx, obligation(ctx, lead, hand), play, n)
    return LEGAL if why is None else FollowVerdict(False, "R23", why)


def meets(ctx: TrumpContext, ob: Obligation, play: Sequence[Card], n: int) -> bool:
    """Fast check of a play already known to come from the hand and to have n cards."""
    return follow_violation(ctx, ob, play, n) is None


def multiset_combinations(items: Sequence[Card], k: int) -> Iterator[tuple[Card, ...]]:
    """Distinct k-subsets of a multiset (``items`` sorted), each once."""
    n = len(items)
    if k == 0:
        yield ()
        return
    if k > n:
        return

    def rec(start: int, left: int, acc: list[Card]) -> Iterator[tuple[Card, ...]]:
        if left == 0:
            yield tuple(acc)
            return
        prev = -1
        for i in range(start, n - left + 1):
            if items[i] == prev:
                continue
            prev = items[i]
            acc.append(items[i])
            yield from rec(i + 1, left - 1, acc)
            acc.pop()

    yield from rec(0, k, [])


def legal_plays(ctx: TrumpContext, lead: Shape, hand: Sequence[Card]) -> Iterator[tuple[Card, ...]]:
    """Every distinct legal play of ``hand`` facing ``lead`` (lazily; there may be many)."""
    ob = obligation(ctx, lead, hand)
    n = lead.size
    rank_key = ctx.rank_key

    def key(card: Card) -> tuple[int, Card]:  # equal-order kinds (R11) stay adjacent
        return (rank_key[card], card)

    if ob.short:
        cat = ctx.category
        others = sorted((c for c in hand if cat[c] != ob.category), key=key)
        for extra in multiset_combinations(others, n - len(ob.in_category)):
            yield tuple(ob.in_category) + extra
        return
    pool = sorted(ob.in_category, key=key)
    for combo in multiset_combinations(pool, n):
        if meets(ctx, ob, combo, n):
            yield combo


def random_follow(
    ctx: TrumpContext, lead: Shape, hand: Sequence[Card], rng: random.Random
) -> list[Card]:
    """One legal play built at random: required tractors and pairs first, then free cards."""
    ob = obligation(ctx, lead, hand)
    n = lead.size
    if ob.short:
        cat = ctx.category
        others = [c for c in hand if cat[c] != ob.category]
        return [*ob.in_category, *rng.sample(others, n - len(ob.in_category))]
    pool = list(ob.in_category)
    if not ob.pairs:
        return rng.sample(pool, n)
    chosen = _random_structure(ctx, ob, pool, rng)
    for c in chosen:
        pool.remove(c)
    chosen += rng.sample(pool, n - len(chosen))
    return chosen


def pair_kinds(ctx: TrumpContext, category: int, cards: Sequence[Card]) -> list[list[Card]]:
    """kinds[pos]: the kinds of ``category`` held as an identical pair at each position."""
    kinds: list[list[Card]] = [[] for _ in ctx.chains[category]]
    seen = set()
    order = ctx.order
    cat = ctx.category
    for c in cards:
        if cat[c] != category:
            continue
        if c in seen:
            kinds[order[c]].append(c)
            seen.discard(c)
        else:
            seen.add(c)
    return kinds


def _random_structure(
    ctx: TrumpContext, ob: Obligation, pool: Sequence[Card], rng: random.Random
) -> list[Card]:
    """Random tractors of the required lengths, then random further pairs up to ob.pairs."""
    kinds = pair_kinds(ctx, ob.category, pool)
    counts = [len(k) for k in kinds]
    chosen: list[Card] = []
    for i, length in enumerate(ob.tractors):
        rest = ob.tractors[i + 1 :]
        starts = [
            s
            for s in range(len(counts) - length + 1)
            if all(counts[p] for p in range(s, s + length))
        ]
        rng.shuffle(starts)
        for s in starts:
            for p in range(s, s + length):
                counts[p] -= 1
            if not rest or can_pack(counts, rest):
                break
            for p in range(s, s + length):
                counts[p] += 1
        else:  # pragma: no cover - obligation() guaranteed a packing exists
            raise AssertionError("no tractor placement")
        for p in range(s, s + length):
            kind = kinds[p].pop(rng.randrange(len(kinds[p])))
            chosen += (kind, kind)
    need = ob.pairs - sum(ob.tractors)
    if need > 0:
        left = [k for ks in kinds for k in ks]
        for kind in rng.sample(left, need):
            chosen += (kind, kind)
    return chosen

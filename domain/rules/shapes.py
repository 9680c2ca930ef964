"""Combinations (牌型): single, pair, tractor, throw, mixed (RULES R12–R15).

A set of cards of one suit category is read through its **pair profile**: for each
position of the category's chain (see ``context``), how many identical pairs stand there
(R13; off-suit level cards share a position but only identical cards pair). Tractors (R14)
are runs of consecutive positions that each hold a pair, one pair taken per position.

``decompose`` splits cards into components the way R15 splits a throw: longest tractors
first (ties: the higher one), then pairs, then singles. A component is ``(width, top,
cards)``: width 0 = single, 1 = pair, n >= 2 = tractor of n pairs; ``top`` is the order of
its highest position, which is what components of one width are compared by.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from typing import NamedTuple

from domain.rules.cards import NUM_KINDS, Card, format_cards
from domain.rules.context import TrumpContext
from domain.rules.errors import InvalidInputError


class ShapeKind(StrEnum):
    SINGLE = "single"  # R12
    PAIR = "pair"  # R13
    TRACTOR = "tractor"  # R14
    THROW = "throw"  # R15
    MIXED = "mixed"  # several suit categories: never a lead


class Component(NamedTuple):
    width: int
    """0 single, 1 pair, n >= 2 tractor of n pairs."""
    top: int
    """Order of the component's highest position in its category."""
    cards: tuple[Card, ...]
    """The component's cards, low to high."""


class Shape(NamedTuple):
    kind: ShapeKind
    category: int | None
    """The suit category of all the cards, None when mixed."""
    components: tuple[Component, ...]
    """Largest first: tractors by length then height, then pairs, then singles (R15)."""
    size: int
    total_pairs: int
    """Pairs the shape holds, a tractor of n pairs counting n."""
    tractor_lengths: tuple[int, ...]
    """Lengths (in pairs) of the tractor components, longest first."""

    @property
    def largest(self) -> Component:
        return self.components[0]


def kind_counts(cards: Sequence[Card]) -> list[int]:
    """Copies of each kind in ``cards``; more than two copies is impossible input (R3)."""
    counts = [0] * NUM_KINDS
    for c in cards:
        counts[c] += 1
        if counts[c] > 2:
            raise InvalidInputError(
                f"{format_cards([c, c, c])}: only two copies of each card exist (R3)"
            )
    return counts


def pair_profile(ctx: TrumpContext, category: int, cards: Sequence[Card]) -> list[int]:
    """profile[pos] = number of identical pairs at that position among ``cards`` of ``category``."""
    profile = [0] * len(ctx.chains[category])
    seen = [False] * NUM_KINDS
    order = ctx.order
    cat = ctx.category
    for c in cards:
        if cat[c] != category:
            continue
        if seen[c]:
            profile[order[c]] += 1
            seen[c] = False
        else:
            seen[c] = True
    return profile


def best_window_top(profile: Sequence[int], length: int) -> int:
    """Top position of the highest run of ``length`` positions holding pairs; -1 if none."""
    run = 0
    best = -1
    for pos, n in enumerate(profile):
        if n:
            run += 1
            if run >= length:
                best = pos
        else:
            run = 0
    return best


def can_pack(profile: Sequence[int], lengths: Sequence[int]) -> bool:
    """Can disjoint tractors of the given lengths (in pairs) be cut from ``profile``?"""
    if not lengths:
        return True
    if len(lengths) == 1:
        return best_window_top(profile, lengths[0]) >= 0
    work = list(profile)
    return _pack(work, sorted(lengths, reverse=True), 0)


def _pack(work: list[int], lengths: list[int], i: int) -> bool:
    if i == len(lengths):
        return True
    length = lengths[i]
    for start in range(len(work) - length + 1):
        window = range(start, start + length)
        if all(work[p] for p in window):
            for p in window:
                work[p] -= 1
            ok = _pack(work, lengths, i + 1)
            for p in window:
                work[p] += 1
            if ok:
                return True
    return False


def greedy_tractor_match(profile: Sequence[int], lengths: Sequence[int]) -> tuple[int, ...]:
    """R23.2 "as far as they can, largest first": the lengths that fit one after another."""
    matched: list[int] = []
    for length in lengths:
        if can_pack(profile, [*matched, length]):
            matched.append(length)
    return tuple(matched)


def decompose(ctx: TrumpContext, cards: Sequence[Card]) -> Shape:
    """Classify ``cards`` and split them into components (R12–R15)."""
    n = len(cards)
    if n == 1:  # fast path: a single (R12)
        c = cards[0]
        return Shape(
            ShapeKind.SINGLE, ctx.category[c], (Component(0, ctx.order[c], (c,)),), 1, 0, ()
        )
    if n == 0:
        raise InvalidInputError("no cards given")
    cat = ctx.category
    category = cat[cards[0]]
    for c in cards:
        if cat[c] != category:
            return Shape(ShapeKind.MIXED, None, (), n, 0, ())
    if n == 2 and cards[0] == cards[1]:  # fast path: a pair (R13)
        c = cards[0]
        return Shape(ShapeKind.PAIR, category, (Component(1, ctx.order[c], (c, c)),), 2, 1, ())
    counts = kind_counts(cards)
    order = ctx.order
    chain = ctx.chains[category]
    # pairs_at[pos]: the kinds holding a pair at that position; singles: kinds held once.
    pairs_at: list[list[Card]] = [[] for _ in chain]
    singles: list[Card] = []
    for kind in sorted(set(cards), key=order.__getitem__):
        if counts[kind] == 2:
            pairs_at[order[kind]].append(kind)
        else:
            singles.append(kind)
    components: list[Component] = []
    while True:
        start, length = _longest_run(pairs_at)
        if length < 2:
            break
        taken: list[Card] = []
        for pos in range(start, start + length):
            kind = pairs_at[pos].pop(0)
            taken += (kind, kind)
        components.append(Component(length, start + length - 1, tuple(taken)))
    for pos in range(len(chain) - 1, -1, -1):
        for kind in pairs_at[pos]:
            components.append(Component(1, pos, (kind, kind)))
    for kind in reversed(singles):
        components.append(Component(0, order[kind], (kind,)))
    components.sort(key=lambda comp: (comp.width, comp.top), reverse=True)
    if len(components) > 1:
        shape_kind = ShapeKind.THROW
    else:
        shape_kind = _SINGLE_KINDS[min(components[0].width, 2)]
    return Shape(
        shape_kind,
        category,
        tuple(components),
        n,
        sum(comp.width for comp in components),
        tuple(comp.width for comp in components if comp.width >= 2),
    )


_SINGLE_KINDS = (ShapeKind.SINGLE, ShapeKind.PAIR, ShapeKind.TRACTOR)


def _longest_run(pairs_at: list[list[Card]]) -> tuple[int, int]:
    """(start, length) of the longest run of positions holding a pair; ties → the higher."""
    best_start, best_len = 0, 0
    run_start, run = 0, 0
    for pos, kinds in enumerate(pairs_at):
        if kinds:
            if run == 0:
                run_start = pos
            run += 1
            if run >= best_len:
                best_start, best_len = run_start, run
        else:
            run = 0
    return best_start, best_len

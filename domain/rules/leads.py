"""Every lead of one combination a hand can make (RULES R12–R14, R22): its singles, its
pairs and its tractors, so a client can offer them without knowing the rules. Throws
(R15) are any mix of these within one suit category; whether one stands is decided when it
is played (R22), or asked without playing (the action route's dry run).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import product
from typing import NamedTuple

from domain.rules.cards import Card
from domain.rules.context import TrumpContext
from domain.rules.shapes import kind_counts


class LeadOptions(NamedTuple):
    singles: list[tuple[Card, ...]]
    """One of each kind held (R12)."""
    pairs: list[tuple[Card, ...]]
    """Each kind held twice (R13)."""
    tractors: list[tuple[Card, ...]]
    """Every run of two or more consecutive pairs of one suit category (R14), low to high;
    the runs inside a longer run too."""


def lead_options(ctx: TrumpContext, hand: Sequence[Card]) -> LeadOptions:
    """The singles, pairs and tractors ``hand`` can lead, each low to high in its order."""
    counts = kind_counts(hand)
    kinds = sorted((k for k in range(len(counts)) if counts[k]), key=ctx.rank_key.__getitem__)
    singles: list[tuple[Card, ...]] = [(k,) for k in kinds]
    pairs: list[tuple[Card, ...]] = [(k, k) for k in kinds if counts[k] == 2]
    tractors: list[tuple[Card, ...]] = []
    for chain in ctx.chains:
        # R14: the pairs held at each position of the category's chain
        held = [[k for k in position if counts[k] == 2] for position in chain]
        for start in range(len(held)):
            end = start
            while end < len(held) and held[end]:
                end += 1
                if end - start >= 2:
                    for choice in product(*held[start:end]):
                        tractors.append(tuple(k for kind in choice for k in (kind, kind)))
    tractors.sort(key=lambda t: (len(t), [ctx.rank_key[c] for c in t]))
    return LeadOptions(singles, pairs, tractors)

"""Throws (甩牌): validity against the other hands and the forced play (RULES R22).

A throw is valid only if no other player holds, in its suit category, a combination of
the same kind that beats one of its components: a higher single, a higher pair, a tractor
as long and higher (equal order never beats, R11). When it fails, the leader must instead
play the failing component that is lowest: look at component kinds from the largest
(longest tractors, then pairs, then singles), take the first kind where some component
can be beaten, and play the lowest component of that kind.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from domain.rules.cards import Card
from domain.rules.context import TrumpContext
from domain.rules.shapes import Component, Shape, ShapeKind, best_window_top, pair_profile


class ThrowVerdict(NamedTuple):
    valid: bool
    forced: tuple[Card, ...] | None
    """The cards the leader must play instead when the throw fails (R22)."""
    beaten: tuple[Component, ...]
    """The components some other hand can beat."""


VALID_THROW = ThrowVerdict(True, None, ())


def _beats(ctx: TrumpContext, category: int, hand: Sequence[Card], comp: Component) -> bool:
    if comp.width == 0:
        order = ctx.order
        cat = ctx.category
        return any(cat[c] == category and order[c] > comp.top for c in hand)
    profile = pair_profile(ctx, category, hand)
    return best_window_top(profile, comp.width) > comp.top


def check_throw(
    ctx: TrumpContext, throw: Shape, other_hands: Sequence[Sequence[Card]]
) -> ThrowVerdict:
    """R22: is the throw valid against the other three hands; if not, the forced play."""
    if throw.kind is not ShapeKind.THROW or throw.category is None:
        return VALID_THROW
    category = throw.category
    beaten = tuple(
        comp
        for comp in throw.components
        if any(_beats(ctx, category, hand, comp) for hand in other_hands)
    )
    if not beaten:
        return VALID_THROW
    width = max(comp.width for comp in beaten)
    lowest = min((comp for comp in throw.components if comp.width == width), key=_top)
    return ThrowVerdict(False, lowest.cards, beaten)


def _top(comp: Component) -> int:
    return comp.top

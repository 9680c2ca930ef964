"""What a seat can infer from its view (RULES R33), computed once per decision.

Every card exists twice (R3). A copy is *unseen* when it is neither in this seat's hand,
nor played (earlier tricks or the trick in progress), nor in the bottom this seat buried
(R21). From the unseen copies follow the *boss* (大牌) tests the heuristic player leans
on: a single, pair or tractor that no unseen combination of the same kind can beat —
which is also exactly when a throw (甩牌) of such components is sure to stand (R22,
taking the union of the unseen cards, which is conservative).

The card keys order cards for the heuristic's choices: which to discard, which to give a
partner, which to bury (扣底, R21). Lower means "part with it first".
"""

from __future__ import annotations

from domain.players.view import SeatView
from domain.rules.cards import NUM_KINDS, POINTS, Card
from domain.rules.context import TRUMP
from domain.rules.shapes import Component, best_window_top


class Knowledge:
    """Unseen copies, per-category boss thresholds and card keys for one view."""

    __slots__ = ("_profiles", "counts", "ctx", "groups", "top_pair", "top_single", "unseen")

    def __init__(self, view: SeatView) -> None:
        ctx = self.ctx = view.ctx
        unseen = [2] * NUM_KINDS
        counts = [0] * NUM_KINDS
        groups: list[list[Card]] = [[], [], [], [], []]
        cat = ctx.category
        for c in sorted(view.hand, key=ctx.rank_key.__getitem__):
            counts[c] += 1
            unseen[c] -= 1
            groups[cat[c]].append(c)
        for c in view.played:
            unseen[c] -= 1
        for _, cards in view.trick:
            for c in cards:
                unseen[c] -= 1
        if view.bottom is not None:
            for c in view.bottom:
                unseen[c] -= 1
        order = ctx.order
        top_single = [-1] * 5
        top_pair = [-1] * 5
        for k in range(NUM_KINDS):
            u = unseen[k]
            if u > 0:
                kc = cat[k]
                o = order[k]
                top_single[kc] = max(top_single[kc], o)
                if u == 2 and o > top_pair[kc]:
                    top_pair[kc] = o
        self.unseen = unseen
        self.counts = counts
        self.groups = groups
        """groups[category]: this seat's cards of that category, low to high (R7)."""
        self.top_single = top_single
        """Highest order of an unseen card per category (-1: none)."""
        self.top_pair = top_pair
        """Highest order of an unseen identical pair per category (-1: none)."""
        self._profiles: dict[int, list[int]] = {}

    # -- boss tests (R22, R24) -------------------------------------------------------

    def single_boss(self, card: Card) -> bool:
        """No unseen card of its category is higher (equal order ties, R11)."""
        return self.ctx.order[card] >= self.top_single[self.ctx.category[card]]

    def component_boss(self, category: int, width: int, top: int) -> bool:
        """No unseen combination of ``width`` (0 single, 1 pair, n tractor) beats ``top``."""
        if width == 0:
            return top >= self.top_single[category]
        if width == 1 or self.top_pair[category] < 0:
            return top >= self.top_pair[category]
        return best_window_top(self._unseen_profile(category), width) <= top

    def components_boss(self, category: int, components: tuple[Component, ...]) -> bool:
        return all(self.component_boss(category, c.width, c.top) for c in components)

    def _unseen_profile(self, category: int) -> list[int]:
        profile = self._profiles.get(category)
        if profile is None:
            ctx = self.ctx
            profile = [0] * len(ctx.chains[category])
            for k in range(NUM_KINDS):
                if self.unseen[k] == 2 and ctx.category[k] == category:
                    profile[ctx.order[k]] += 1
            self._profiles[category] = profile
        return profile

    # -- card keys: lower = part with it first ---------------------------------------

    def discard_key(self, card: Card) -> int:
        """Discarding: low plain cards of short suits first; keep points, pairs, trumps."""
        category = self.ctx.category[card]
        key = self.ctx.order[card] * 4
        if POINTS[card]:
            key += 60 + POINTS[card] * 2
        if self.counts[card] == 2:
            key += 80
        if category == TRUMP:
            key += 400
        else:
            key += len(self.groups[category])
        return key

    def gift_key(self, card: Card) -> int:
        """Feeding a winning partner (送分): point cards first, plain before trump."""
        return self.discard_key(card) - POINTS[card] * 30

    def bury_key(self, card: Card) -> int:
        """Burying (扣底, R21): low plain non-point cards of short suits; never trumps."""
        category = self.ctx.category[card]
        if category == TRUMP:
            return 1000 + self.ctx.order[card]
        key = self.ctx.order[card] * 3 + POINTS[card] * 8 + len(self.groups[category]) * 3
        if self.counts[card] == 2:
            key += 40
        return key

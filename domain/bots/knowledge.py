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

from domain.bots.view import BotView
from domain.rules.cards import NUM_KINDS, POINTS, Card
from domain.rules.context import TRUMP
from domain.rules.shapes import Component, best_window_top


class Knowledge:
    """Unseen copies, per-category boss thresholds and card keys for one view."""

    __slots__ = (
        "_discard",
        "_profiles",
        "_tops",
        "counts",
        "ctx",
        "groups",
        "unseen",
    )

    def __init__(self, view: BotView) -> None:
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
        self.unseen = unseen
        self.counts = counts
        self.groups = groups
        """groups[category]: this seat's cards of that category, low to high (R7)."""
        self._tops: list[tuple[int, int] | None] = [None] * 5
        self._profiles: dict[int, list[int]] = {}
        self._discard: dict[Card, int] = {}

    # -- boss tests (R22, R24) -------------------------------------------------------

    def tops(self, category: int) -> tuple[int, int]:
        """(highest order of an unseen card, of an unseen identical pair) in ``category``;
        -1 when there is none."""
        found = self._tops[category]
        if found is None:
            found = self._tops[category] = _tops(self.ctx.chains[category], self.unseen)
        return found

    def single_boss(self, card: Card) -> bool:
        """No unseen card of its category is higher (equal order ties, R11)."""
        ctx = self.ctx
        return ctx.order[card] >= self.tops(ctx.category[card])[0]

    def component_boss(self, category: int, width: int, top: int) -> bool:
        """No unseen combination of ``width`` (0 single, 1 pair, n tractor) beats ``top``."""
        top_single, top_pair = self.tops(category)
        if width == 0:
            return top >= top_single
        if width == 1 or top_pair < 0:
            return top >= top_pair
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
        key = self._discard.get(card)
        if key is None:
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
            self._discard[card] = key
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


def _tops(chain: tuple[tuple[Card, ...], ...], unseen: list[int]) -> tuple[int, int]:
    """(highest position holding an unseen copy, highest holding an unseen pair); -1: none."""
    single = -1
    for pos in range(len(chain) - 1, -1, -1):
        for kind in chain[pos]:
            u = unseen[kind]
            if u:
                if single < 0:
                    single = pos
                if u == 2:
                    return single, pos
    return single, -1

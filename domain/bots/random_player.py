"""A random-legal player: the baseline bot and the benchmark's workload (RULES R17–R23).

Follows are built by :func:`domain.rules.follow.random_follow` (always legal, R23); leads
are a random single, pair or tractor of one suit category, or now and then a throw
(甩牌), which may fail — the engine then forces the lowest failing component (R22).
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from domain.bots.base import BURY_SIZE
from domain.bots.combos import random_lead
from domain.bots.view import BidView, BotView
from domain.rules.cards import Card
from domain.rules.follow import random_follow
from domain.rules.shows import Show


class RandomPlayer:
    """Uniform-ish random choices among legal ones; stateless."""

    name = "random"

    def __init__(
        self,
        declare_chance: float = 0.25,
        overcall_chance: float = 0.3,
        throw_chance: float = 0.05,
    ) -> None:
        self.declare_chance = declare_chance
        self.overcall_chance = overcall_chance
        self.throw_chance = throw_chance

    def declare(self, view: BidView, options: Sequence[Show], rng: random.Random) -> Show | None:
        """R17: with some chance, a random one of the shows offered."""
        if options and rng.random() < self.declare_chance:
            return rng.choice(options)
        return None

    def overcall(self, view: BidView, options: Sequence[Show], rng: random.Random) -> Show | None:
        """R20: with some chance, a random stronger show; else pass."""
        if options and rng.random() < self.overcall_chance:
            return rng.choice(options)
        return None

    def request_redeal(self, view: BidView, rng: random.Random) -> bool:
        """§10 暴动: a coin flip."""
        return rng.random() < 0.5

    def bury(self, view: BotView, rng: random.Random) -> Sequence[Card]:
        """R21: any 8 of the 33 cards."""
        return rng.sample(view.hand, BURY_SIZE)

    def play(self, view: BotView, rng: random.Random) -> Sequence[Card]:
        """R22 random lead, or R23 random legal follow."""
        if view.lead_shape is None:
            return random_lead(view.ctx, view.hand, rng, self.throw_chance)
        return random_follow(view.ctx, view.lead_shape, view.hand, rng)

"""The search bot (``strong``): determinized Monte Carlo over the rules engine (RULES R17–R30).

For each play (R22, R23) and each burial (R21) it lists a few sensible candidates
(:mod:`domain.bots.candidates`, the heuristic's choice first), samples worlds — deals
of the cards it cannot see that agree with everything public (:mod:`domain.bots.inference`:
cards played, voids shown by failed follows, missing pairs, shown declarations, R33) —
plays each candidate out in each world with the heuristic player at every seat
(:mod:`domain.bots.rollout`) and keeps the candidate whose rounds end best for its team:
levels gained less levels conceded (R30). Rollouts are spread by successive halving
(:mod:`domain.bots.search`). Declaring, overcalling (R17, R20) and the weak-hand redeal
(§10) are the heuristic player's.

It never reads another seat's cards: its only input is the view (R33), and the worlds are
drawn from an ``random.Random`` seeded from the caller's, so the same view and the same rng
state give the same move. The budget is a count of simulated plays (``budget``), never a
clock; a caller may add ``stop`` (a deadline) at the price of that determinism.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from domain.bots.candidates import bury_candidates, play_candidates
from domain.bots.heuristic import HeuristicPlayer
from domain.bots.inference import Hidden, hidden_of, sample_world
from domain.bots.knowledge import Knowledge
from domain.bots.rollout import play_out, rollout, score, utility
from domain.bots.search import successive_halving
from domain.bots.view import BidView, BotView
from domain.rules.cards import Card
from domain.rules.play import TrickPlay
from domain.rules.shows import Show

DEFAULT_BUDGET = 2800
"""Simulated plays per decision: about 200 ms on one core of the reference machine
(docs/bots.md); a rollout from the first trick costs about 75 plays."""
WORLD_COST = 8
"""A sampled world costs about as much as this many simulated plays."""

World = tuple[list[list[Card]], list[Card]]


class StrongPlayer:
    """Determinized Monte Carlo search over the heuristic player; stateless."""

    name = "strong"

    def __init__(self, budget: int = DEFAULT_BUDGET, stop: Callable[[], bool] | None = None):
        if budget < 1:
            raise ValueError(f"budget must be at least 1 simulated play, got {budget}")
        self.budget = budget
        self.stop = stop
        self._heuristic = HeuristicPlayer()

    # -- declaring (R17, R20) and the weak-hand redeal (§10): the heuristic's ----------

    def declare(self, view: BidView, options: Sequence[Show], rng: random.Random) -> Show | None:
        """R17: as the heuristic player (the longest suit)."""
        return self._heuristic.declare(view, options, rng)

    def overcall(self, view: BidView, options: Sequence[Show], rng: random.Random) -> Show | None:
        """R20: as the heuristic player (a clearly better trump)."""
        return self._heuristic.overcall(view, options, rng)

    def request_redeal(self, view: BidView, rng: random.Random) -> bool:
        """§10 暴动: as the heuristic player."""
        return self._heuristic.request_redeal(view, rng)

    # -- burying (R21) and playing (R22–R25): search --------------------------------------

    def bury(self, view: BotView, rng: random.Random) -> Sequence[Card]:
        """R21: the burial whose rounds end best, of the heuristic's and suit-emptying ones."""
        local = random.Random(rng.getrandbits(64))
        options = bury_candidates(view, local)
        if len(options) == 1:
            return options[0]
        hidden = hidden_of(view)
        dealer = view.dealer

        def value(world: World, i: int) -> float:
            hands = [list(h) for h in world[0]]
            for c in options[i]:
                hands[view.seat].remove(c)
            tp = TrickPlay(view.ctx, hands, dealer, view.attackers)  # R22: the dealer leads
            play_out(tp, view, local)
            return utility(score(tp, options[i], view.rules), view.seat, view.attackers)

        rollouts = self.budget // (4 * 25 + WORLD_COST)
        best = successive_halving(
            len(options), rollouts, lambda: sample_world(hidden, view, local), value, self.stop
        )
        return options[best]

    def play(self, view: BotView, rng: random.Random) -> Sequence[Card]:
        """R22 lead or R23 follow: the candidate whose rounds end best for this team."""
        local = random.Random(rng.getrandbits(64))
        first = self._heuristic.play(view, local)
        options = play_candidates(view, first, Knowledge(view))
        if len(options) == 1:
            return options[0]
        hidden = hidden_of(view)
        rollouts = self.budget // (_plays_left(view, hidden) + WORLD_COST)

        def value(world: World, i: int) -> float:
            return rollout(view, world[0], world[1], options[i], local)

        best = successive_halving(
            len(options), rollouts, lambda: sample_world(hidden, view, local), value, self.stop
        )
        return options[best]


def _plays_left(view: BotView, hidden: Hidden) -> int:
    """About how many plays a rollout from ``view`` makes (most plays are one card)."""
    cards = sum(hidden.sizes)
    return max(4, cards * 3 // 4)

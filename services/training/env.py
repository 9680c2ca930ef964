"""A PettingZoo AEC environment over the rules engine: four agents play one round (RULES R16–R30).

Each episode is one round of a match in progress (a later round, R18: the dealer is
fixed): a fresh seed is shuffled (R35) and dealt (R16), then declaring, overcalling and
burying (R17–R21) are left to a bot (``bidder``, the heuristic by default), and the four
agents ``seat_0`` … ``seat_3`` play every trick (R22–R25), each in turn (R1, the
trick's winner leads the next).

* **Observation** of an agent: ``{"observation": vector, "action_mask": mask}`` — the
  vector holds only what that seat may know (R33; :func:`services.training.moves.observe`),
  the mask marks the legal indices of its move list (all zeros when it is not its turn).
* **Action**: an index into the move list of the agent to play
  (:func:`services.training.moves.moves_for`); ``infos[agent]["moves"]`` names the moves
  in R4 notation. An index outside the mask raises ``ValueError``.
* **Reward**: at the end of the round, the level change of R30 from each agent's side —
  the team that goes up gets its levels, the other the negative (zero-sum); 0 before.

The environment is deterministic for a ``reset(seed=...)``.
"""

from __future__ import annotations

import random
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt
from gymnasium import spaces
from pettingzoo import AECEnv

from domain.bots import Player, make_player
from domain.bots.rollout import score
from domain.bots.table import bid_round
from domain.bots.view import PlayViews
from domain.rules.bidding import Bidding
from domain.rules.cards import Card, card_names
from domain.rules.context import trump_context
from domain.rules.play import TrickPlay
from domain.rules.ruleset import STANDARD, RuleSet
from domain.rules.shuffle import SEED_BYTES, deal, shuffle_deck
from services.training.moves import MAX_ACTIONS, OBS_SIZE, Move, moves_for, observe

AGENTS = tuple(f"seat_{seat}" for seat in range(4))
Observation = dict[str, npt.NDArray[Any]]


class ShengjiEnv(AECEnv):  # type: ignore[misc]  # pettingzoo ships no type hints
    """Four agents, one round per episode; see the module's docstring."""

    metadata: ClassVar[dict[str, Any]] = {
        "name": "shengji_v0",
        "render_modes": ["ansi"],
        "is_parallelizable": False,
    }

    def __init__(
        self, rules: RuleSet = STANDARD, bidder: str = "heuristic", render_mode: str | None = None
    ) -> None:
        super().__init__()
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode must be None or 'ansi', got {render_mode!r}")
        self.rules = rules
        self.render_mode = render_mode
        self._bidder: Player = make_player(bidder)
        self.possible_agents = list(AGENTS)
        self.agents: list[str] = []
        self._obs_space = spaces.Dict(
            {
                "observation": spaces.Box(0.0, 2.0, (OBS_SIZE,), np.float32),
                "action_mask": spaces.Box(0, 1, (MAX_ACTIONS,), np.int8),
            }
        )
        self._action_space = spaces.Discrete(MAX_ACTIONS)
        self._seeder = random.Random()
        self._rng = random.Random()
        self._moves: list[Move] = []
        self._played_by: list[list[Card]] = [[], [], [], []]
        self._tricks_seen = 0

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self._obs_space

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self._action_space

    # -- the episode ---------------------------------------------------------------------

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Deal a new round (R16) and let the bidder declare and bury (R17–R21)."""
        if seed is not None:
            self._seeder = random.Random(seed)
        while True:
            deal_seed = self._seeder.randbytes(SEED_BYTES)
            dealer = self._seeder.randrange(4)
            levels = (self._seeder.randrange(13), self._seeder.randrange(13))
            self._rng = random.Random(deal_seed)
            bidding = Bidding.later_round(self.rules, dealer, levels)
            dealt = deal(shuffle_deck(deal_seed), dealer)
            bid = bid_round(bidding, dealt, [self._bidder] * 4, self._rng)
            if bid is not None:  # a later round is redealt only by §10 暴动
                break
        done = bid.bidding
        assert done.dealer is not None
        ctx = trump_context(done.level, done.trump)
        self._play = TrickPlay(ctx, bid.hands, done.dealer, (done.dealer + 1) % 2)
        self._bottom = bid.bottom
        self._views = PlayViews(
            self._play,
            dealer=done.dealer,
            rules=self.rules,
            burier=bid.burier,
            bottom=bid.bottom,
            shows=done.shows,
        )
        self._played_by = [[], [], [], []]
        self._tricks_seen = 0
        self.agents = list(AGENTS)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self._next_turn()

    def _next_turn(self) -> None:
        seat = self._play.turn
        self.agent_selection = AGENTS[seat]
        self._moves = moves_for(self._views.view(seat), self._rng)
        for agent in self.agents:
            self.infos[agent] = {}
        self.infos[self.agent_selection] = {"moves": [card_names(m) for m in self._moves]}

    def observe(self, agent: str) -> Observation:
        seat = AGENTS.index(agent)
        play = self._play
        if play.tricks_done != self._tricks_seen:
            for leader, plays, _ in play.tricks[self._tricks_seen :]:
                for i, cards in enumerate(plays):
                    self._played_by[(leader + i) % 4].extend(cards)
            self._tricks_seen = play.tricks_done
        mask = np.zeros(MAX_ACTIONS, dtype=np.int8)
        if agent == self.agent_selection and not self.terminations[agent]:
            mask[: len(self._moves)] = 1
        return {
            "observation": observe(self._views.view(seat), self._played_by),
            "action_mask": mask,
        }

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if action is None or not 0 <= int(action) < len(self._moves):
            raise ValueError(f"{agent}: action {action!r} is not a legal index (the mask)")
        self._cumulative_rewards[agent] = 0.0
        play = self._play
        seat = play.turn
        play.apply(play.check(seat, self._moves[int(action)]))  # R22–R24
        self.rewards = dict.fromkeys(self.agents, 0.0)
        if play.finished:
            self._finish()
        else:
            self._next_turn()
        self._accumulate_rewards()

    def _finish(self) -> None:
        """R27–R30: score the round; each team gains or loses its level change."""
        play = self._play
        settlement = score(play, self._bottom, self.rules)
        defenders = (play.attackers + 1) % 2
        up = defenders if settlement.defenders_keep else play.attackers
        for seat, agent in enumerate(AGENTS):
            self.rewards[agent] = float(settlement.levels if seat % 2 == up else -settlement.levels)
            self.terminations[agent] = True
            self.infos[agent] = {"total": settlement.total, "band": settlement.band}
        self._moves = []
        self.agent_selection = AGENTS[play.turn]

    def render(self) -> str | None:
        """``ansi``: the seat to play, its hand and the trick in progress."""
        if self.render_mode != "ansi" or not self.agents:
            return None
        play = self._play
        trick = " | ".join(" ".join(card_names(p)) for p in play.trick)
        hand = " ".join(card_names(sorted(play.hands[play.turn], key=play.ctx.sort_key)))
        return f"{play.ctx.describe()}; seat {play.turn} to play [{hand}]; trick: {trick}"

    def close(self) -> None:
        """Nothing to release."""


def env(**kwargs: Any) -> ShengjiEnv:
    """The environment, PettingZoo style (``env()``); keyword arguments as ShengjiEnv."""
    return ShengjiEnv(**kwargs)

"""The PettingZoo training environment (services/training): PettingZoo's own API test,
what an agent observes (R33), legal masked moves (R22, R23) and rewards (R30)."""

from __future__ import annotations

import random

import numpy as np
import pytest
from pettingzoo.test import api_test

from domain.rules.cards import NUM_KINDS
from services.training.env import AGENTS, ShengjiEnv
from services.training.example import play_rounds
from services.training.moves import MAX_ACTIONS, OBS_SIZE


# PettingZoo recommends Box observations; masked environments observe a Dict
# {"observation", "action_mask"} (PettingZoo's own classic games do, and api_test exempts
# them by name): these two recommendations are warnings, every check is an assertion.
@pytest.mark.filterwarnings("ignore:Observation space for each agent probably should be")
@pytest.mark.filterwarnings("ignore:Observation is not a NumPy array")
def test_pettingzoo_api_test() -> None:
    api_test(ShengjiEnv(render_mode="ansi"), num_cycles=400)


def _run(seed: int) -> tuple[list[int], dict[str, float]]:
    """One episode of random masked actions: the actions and the final rewards."""
    env = ShengjiEnv()
    env.reset(seed=seed)
    rng = random.Random(seed)
    actions: list[int] = []
    rewards = dict.fromkeys(AGENTS, 0.0)
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, _ = env.last()
        rewards[agent] += reward
        if terminated or truncated:
            env.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        action = int(legal[rng.randrange(len(legal))])
        actions.append(action)
        env.step(action)
    return actions, rewards


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_rewards_are_the_level_change(seed: int) -> None:
    """R30: the team that goes up gets its levels, the other the negative; partners alike."""
    _, rewards = _run(seed)
    assert rewards["seat_0"] == rewards["seat_2"]
    assert rewards["seat_1"] == rewards["seat_3"]
    assert rewards["seat_0"] == -rewards["seat_1"]
    assert abs(rewards["seat_0"]) <= 6


def test_same_seed_same_episode() -> None:
    assert _run(7) == _run(7)


def test_observation_holds_only_what_the_seat_may_see() -> None:
    """R33: the hand part is the seat's own hand; the other hands appear nowhere; only the
    seat to play has legal indices in its mask."""
    env = ShengjiEnv()
    env.reset(seed=3)
    play = env._play  # the engine state, read here only to compare (tests may look)
    for seat, agent in enumerate(AGENTS):
        obs = env.observe(agent)
        vector, mask = obs["observation"], obs["action_mask"]
        assert vector.shape == (OBS_SIZE,) and mask.shape == (MAX_ACTIONS,)
        own = np.zeros(NUM_KINDS, dtype=np.float32)
        for c in play.hands[seat]:
            own[c] += 1
        assert np.array_equal(vector[:NUM_KINDS], own)
        assert vector[NUM_KINDS : NUM_KINDS * 9].sum() == 0  # nothing played yet
        assert (mask.sum() > 0) == (agent == env.agent_selection)


def test_moves_are_legal_and_named() -> None:
    """R22/R23: every index of the mask is a move the engine accepts; infos name them."""
    env = ShengjiEnv()
    env.reset(seed=5)
    for _ in range(40):
        agent = env.agent_selection
        moves = env.infos[agent]["moves"]
        legal = np.flatnonzero(env.observe(agent)["action_mask"])
        assert len(legal) == len(moves) > 0
        env.step(int(legal[-1]))  # the engine's check raises on an illegal move


def test_an_index_outside_the_mask_is_refused() -> None:
    env = ShengjiEnv()
    env.reset(seed=1)
    with pytest.raises(ValueError, match="not a legal index"):
        env.step(MAX_ACTIONS - 1)


def test_example_plays_whole_rounds() -> None:
    totals, steps = play_rounds(2, seed=0)
    assert steps > 2 * 25
    assert totals["seat_0"] == -totals["seat_1"]

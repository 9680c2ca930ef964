"""Random masked actions in the training environment: the loop a learner would run.

``python -m services.training.example --rounds 100`` plays 100 rounds (episodes), each
agent picking uniformly among the legal indices of its action mask, and prints the mean
reward per seat (R30 level changes; about 0 for four random agents) and steps per second.
Nothing is learnt; a learner would replace the random choice with its policy.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Sequence

import numpy as np

from services.training.env import AGENTS, ShengjiEnv


def play_rounds(rounds: int, seed: int) -> tuple[dict[str, float], int]:
    """Total reward per agent over ``rounds`` episodes, and the steps taken."""
    environment = ShengjiEnv()
    rng = random.Random(seed)
    totals = dict.fromkeys(AGENTS, 0.0)
    steps = 0
    for episode in range(rounds):
        environment.reset(seed=seed + episode)
        for agent in environment.agent_iter():
            obs, reward, terminated, truncated, _ = environment.last()
            totals[agent] += reward
            if terminated or truncated:
                action = None
            else:
                legal = np.flatnonzero(obs["action_mask"])
                action = int(legal[rng.randrange(len(legal))])
            environment.step(action)
            steps += 1
    environment.close()
    return totals, steps


def random_steps(steps: int, seed: int) -> int:
    """At least ``steps`` steps of random masked actions, whole episodes; the steps taken."""
    done = 0
    episode = 0
    while done < steps:
        _, n = play_rounds(1, seed + episode)
        done += n
        episode += 1
    return done


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="random masked actions in the Shengji env")
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    totals, steps = play_rounds(args.rounds, args.seed)
    elapsed = time.perf_counter() - start
    means = ", ".join(f"{a} {t / args.rounds:+.2f}" for a, t in totals.items())
    print(f"{args.rounds} rounds, {steps} steps, {steps / elapsed:.0f} steps/s")
    print(f"mean reward per round: {means}")


if __name__ == "__main__":
    main()

"""Calibrating the bots' anchors (docs/decisions.md D-ratings): ``python -m
services.ratings.calibrate`` plays short bots-only matches (one round each, the round
simulator's :func:`~services.simulator.simulate`) between teams of two bots of one kind,
every pair of kinds on both sides, and rates each kind from the model's start — not
anchored — as one player who sat both seats of its team. It prints each kind's measured
``mu`` and ``sigma``; ``model.ANCHORS`` is set from them."""

from __future__ import annotations

import argparse
import itertools
from collections.abc import Sequence

from domain.bots import Player, make_player
from domain.bots.strong import StrongPlayer
from services.ratings.model import MODEL, Rating, RatingModel
from services.simulator import simulate


def _player(kind: str, strong_budget: int | None) -> Player:
    if kind == "strong" and strong_budget is not None:
        return StrongPlayer(budget=strong_budget)
    return make_player(kind)


def winner(kinds: tuple[str, str], seed: int, strong_budget: int | None = None) -> int:
    """The team (0: seats 0, 2 of ``kinds[0]``; 1: seats 1, 3) that won a one-round match."""
    seats = [_player(kinds[s % 2], strong_budget) for s in range(4)]
    record = simulate(1, players=seats, seed=seed, keep_records=True).records[0]
    defenders = record.dealer % 2
    return defenders if record.settlement.defenders_keep else 1 - defenders


def calibrate(
    kinds: Sequence[str],
    matches: int,
    *,
    seed: int = 0,
    strong_budget: int | None = None,
    model: RatingModel = MODEL,
) -> dict[str, Rating]:
    """Each kind's rating after ``matches`` one-round matches, pairs of kinds in turn."""
    ratings = {k: model.start() for k in kinds}
    pairs = [p for p in itertools.permutations(kinds, 2)]
    for n in range(matches):
        a, b = pairs[n % len(pairs)]
        won = winner((a, b), seed + n, strong_budget)
        team0, team1 = model.rate(
            ((ratings[a], ratings[a]), (ratings[b], ratings[b])),
            won,
            anchored=((False, False), (False, False)),
        )
        for kind, team in ((a, team0), (b, team1)):
            ratings[kind] = Rating(
                (team[0].mu + team[1].mu) / 2, (team[0].sigma + team[1].sigma) / 2
            )
    return ratings


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--matches", type=int, default=60)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--strong-budget", type=int, default=None, help="the strong bot's search budget"
    )
    args = parser.parse_args(argv)
    found = calibrate(
        ("random", "heuristic", "strong"),
        args.matches,
        seed=args.seed,
        strong_budget=args.strong_budget,
    )
    for kind, r in found.items():
        print(f"{kind:<10} mu={r.mu:.2f} sigma={r.sigma:.2f} shown={r.shown}")


if __name__ == "__main__":
    main()

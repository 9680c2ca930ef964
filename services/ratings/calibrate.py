"""Calibrating the bots' anchors (docs/decisions.md D-ratings): ``python -m
services.ratings.calibrate`` plays short bots-only matches (one round each, the round
simulator's :func:`~services.simulator.simulate`) between teams of two bots of one kind and
rates each kind from the model's start — not anchored — as one player who sat both seats of
its team. It prints each kind's measured ``mu`` and ``sigma`` and each pairing's tally;
``model.ANCHORS`` is set from them.

* **Duplicate deals** (R35, R36): the pairs of kinds take turns, and each pair plays every
  deal twice, the same seed with the kinds' sides swapped, so the cards' luck cancels.
* **Bots do not drift**: the kinds are rated by :data:`CALIBRATION_MODEL`, the model in force
  without its skill drift (``tau`` 0), so every match is evidence about one fixed strength
  and ``sigma`` keeps shrinking with the matches.
* Deterministic: a seed, the kinds, the count and the strong bot's budget give the same
  figures (the bots' moves are seeded from the deal's seed).
* **The anchors** are fit to the tallies (:func:`fit`): the ``mu`` of each kind under
  which the model's own chance of winning explains the wins best, the heuristic bot
  pinned at a new player's ``mu``. The ratings rated in turn (above) order the kinds the
  same way but, an online estimate, close the gaps more slowly than the tallies show.
"""

from __future__ import annotations

import argparse
import itertools
import math
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Final

from domain.bots import Player, make_player
from domain.bots.strong import StrongPlayer
from services.ratings.model import MODEL, Rating, RatingModel
from services.simulator import simulate

CALIBRATION_MODEL: Final = replace(MODEL, tau=0.0)
"""The model in force without skill drift: a bot kind's strength does not change."""

KINDS: Final = ("random", "heuristic", "strong")


@dataclass(frozen=True, slots=True)
class Tally:
    """One pairing's one-round matches: ``first`` and ``second`` name the kinds."""

    first: str
    second: str
    first_won: int
    second_won: int

    @property
    def share(self) -> float:
        """The share of the matches the first kind won."""
        return self.first_won / max(1, self.first_won + self.second_won)

    @property
    def margin(self) -> float:
        """Half the width of the share's 95% confidence interval (normal approximation)."""
        n = self.first_won + self.second_won
        return 1.96 * math.sqrt(self.share * (1 - self.share) / n) if n else 1.0


@dataclass(frozen=True, slots=True)
class Calibration:
    """What a calibration measured: each kind's rating and each pairing's tally."""

    ratings: dict[str, Rating]
    tallies: list[Tally]


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
    model: RatingModel = CALIBRATION_MODEL,
    progress: Callable[[int, Calibration], None] | None = None,
) -> Calibration:
    """Each kind's rating after ``matches`` one-round matches: match ``n`` plays deal
    ``seed + n // 2`` between the pairs of kinds in turn, sides swapped when ``n`` is odd."""
    ratings = {k: model.start() for k in kinds}
    pairs = list(itertools.combinations(kinds, 2))
    won = {p: [0, 0] for p in pairs}
    for n in range(matches):
        deal = n // 2
        pair = pairs[deal % len(pairs)]
        a, b = pair if n % 2 == 0 else pair[::-1]
        team = winner((a, b), seed + deal, strong_budget)
        won[pair][pair.index((a, b)[team])] += 1
        team0, team1 = model.rate(
            ((ratings[a], ratings[a]), (ratings[b], ratings[b])),
            team,
            anchored=((False, False), (False, False)),
        )
        for kind, rated in ((a, team0), (b, team1)):
            ratings[kind] = Rating(
                (rated[0].mu + rated[1].mu) / 2, (rated[0].sigma + rated[1].sigma) / 2
            )
        if progress is not None:
            progress(n + 1, _calibration(ratings, won))
    return _calibration(ratings, won)


def _calibration(ratings: dict[str, Rating], won: dict[tuple[str, str], list[int]]) -> Calibration:
    tallies = [Tally(a, b, w[0], w[1]) for (a, b), w in won.items()]
    return Calibration(dict(ratings), tallies)


ANCHOR_SIGMA: Final = 1.0
"""The ``sigma`` of an anchor: a bot kind's strength is known, and fixed."""
PINNED: Final = ("heuristic", MODEL.mu)
"""The kind whose anchor is pinned, and where: the heuristic bot (the timeout bot, quick
play's default) at a new player's ``mu``; the others are placed from it."""


def win_chance(first: float, second: float, model: RatingModel = MODEL) -> float:
    """The chance that two players of ``mu`` ``first`` beat two of ``mu`` ``second``, each
    ``sigma`` :data:`ANCHOR_SIGMA`, as the model's Plackett-Luce updates see it: a team's
    strength is the sum of its players', and ``P = 1 / (1 + exp(-(Σa − Σb) / c))`` with
    ``c² = Σ over the two teams of (its variance + beta²)`` (openskill's ``c``)."""
    c = math.sqrt(2 * (2 * ANCHOR_SIGMA**2 + model.beta**2))
    return 1.0 / (1.0 + math.exp(-2 * (first - second) / c))


def fit(
    tallies: Sequence[Tally], model: RatingModel = MODEL, pinned: tuple[str, float] = PINNED
) -> dict[str, Rating]:
    """The anchors that explain the tallies best: each kind's ``mu`` (the pinned kind's
    fixed) maximising the likelihood of every pairing's wins under :func:`win_chance`.
    The chance depends on the differences only, and the likelihood is concave in each
    ``mu``: a golden-section search per kind, in turn, until nothing moves."""
    kinds = sorted({k for t in tallies for k in (t.first, t.second)} | {pinned[0]})
    mu = dict.fromkeys(kinds, pinned[1])

    def likelihood() -> float:
        total = 0.0
        for t in tallies:
            p = min(max(win_chance(mu[t.first], mu[t.second], model), 1e-12), 1 - 1e-12)
            total += t.first_won * math.log(p) + t.second_won * math.log(1 - p)
        return total

    free = [k for k in kinds if k != pinned[0]]
    for _ in range(40):
        moved = 0.0
        for kind in free:
            before = mu[kind]
            low, high = pinned[1] - 60.0, pinned[1] + 60.0
            for _ in range(60):
                x1 = high - (high - low) / GOLDEN
                x2 = low + (high - low) / GOLDEN
                mu[kind] = x1
                f1 = likelihood()
                mu[kind] = x2
                f2 = likelihood()
                if f1 < f2:
                    low = x1
                else:
                    high = x2
            mu[kind] = (low + high) / 2
            moved = max(moved, abs(mu[kind] - before))
        if moved < 1e-4:
            break
    return {k: Rating(round(mu[k], 2), ANCHOR_SIGMA) for k in kinds}


GOLDEN: Final = (1 + math.sqrt(5)) / 2


def describe(found: Calibration) -> list[str]:
    """The figures, a line each: every kind's rating, then every pairing's tally."""
    lines = [
        f"{kind:<10} mu={r.mu:.2f} sigma={r.sigma:.2f} shown={r.shown}"
        for kind, r in found.ratings.items()
    ]
    for t in found.tallies:
        lines.append(
            f"{t.first} vs {t.second}: {t.first_won}-{t.second_won}"
            f" share={t.share:.3f} ±{t.margin:.3f}"
        )
    anchors = fit(found.tallies)
    lines.append(
        "anchors fit to the tallies ("
        + ", ".join(f"{k} mu={r.mu:.2f} shown={r.shown}" for k, r in anchors.items())
        + ")"
    )
    return lines


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--matches", type=int, default=60)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--strong-budget", type=int, default=None, help="the strong bot's search budget"
    )
    parser.add_argument(
        "--every", type=int, default=0, help="print the figures so far every N matches"
    )
    args = parser.parse_args(argv)

    def progress(n: int, so_far: Calibration) -> None:
        if args.every and n % args.every == 0:
            print(f"after {n} matches: " + "; ".join(describe(so_far)), file=sys.stderr)

    found = calibrate(
        KINDS, args.matches, seed=args.seed, strong_budget=args.strong_budget, progress=progress
    )
    for line in describe(found):
        print(line)


if __name__ == "__main__":
    main()

"""The rating model: a skill rating per player and rule-set family, for a partnership game
(docs/decisions.md D-ratings).

The maths is the openskill library's Weng-Lin Plackett-Luce model, made for teams: a
rating is a normal belief (``mu``, ``sigma``) about a player's skill, a team's strength is
the sum of its players', and a finished match moves each player's belief by how surprising
the outcome was. What this module adds is the product's policy around it, each rule named
and versioned with the model (:data:`MODEL`), so that changing any of them is a rebuild of
the projection, not a migration:

* **What a match is worth.** A match of the same four participants (accounts and bot kinds)
  as earlier rated matches in the last :attr:`RatingModel.repeat_window` counts with the
  weight ``1 / (1 + n)`` (``n`` such earlier matches): the 2nd of the day half, the 3rd a
  third … — four friends may play all evening, but cannot farm a rating out of each other.
  A weight moves a rating that part of the way from its old belief to the updated one (mean
  and variance alike).
* **Leaving is losing.** A seat whose person left (a bot took it over) or was timed out to
  the end (its last :attr:`RatingModel.timed_out_plays` plays or more, in a row, made
  for it by the timeout bot) is rated as having lost, whatever their partner achieved.
* **Bots are anchors.** A bot kind has a fixed rating (:data:`ANCHORS`), measured from
  bots-only calibration matches (``python -m services.ratings.calibrate``), never updated by
  a match: "even with the strong bot" keeps its meaning.
* **Idle players grow uncertain**: ``sigma`` grows with the days since the player's last
  rated match in the family (variance ``+ idle_variance_per_day`` a day, up to the starting
  ``sigma``), as Glicko's rating deviation does.
* **Provisional** until :attr:`RatingModel.provisional_matches` rated matches in the family.
* **Shown** on a familiar scale: ``rating = 1500 + 60 · (mu − 25)`` and
  ``deviation = 60 · sigma`` (a new player: 1500 ± 500); boards rank by the conservative
  ``rating − 2 · deviation``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from datetime import timedelta
from functools import cache
from typing import Final

from openskill.models import PlackettLuce

from domain.rules.ruleset import PRESETS, RuleSet

FAMILIES: Final = ("standard", "tuolaji", "duijia")
"""The rule-set families rated apart: one per preset (RULES §10)."""


@dataclass(frozen=True, slots=True)
class Rating:
    """A belief about one player's skill in one family (openskill's ``mu`` and ``sigma``)."""

    mu: float
    sigma: float

    @property
    def shown(self) -> int:
        """The rating as players see it (1500 for a new player)."""
        return round(1500 + SCALE * (self.mu - MODEL.mu))

    @property
    def deviation(self) -> int:
        """How uncertain the rating is, on the shown scale (500 for a new player)."""
        return round(SCALE * self.sigma)

    @property
    def conservative(self) -> float:
        """What boards rank by: the shown rating less two deviations."""
        return 1500 + SCALE * (self.mu - MODEL.mu - 2 * self.sigma)


SCALE: Final = 60.0
"""Shown points per unit of ``mu``."""


@dataclass(frozen=True, slots=True)
class RatingModel:
    """The model and every parameter of the policy; ``name`` and ``version`` are stored
    with each rating, and a rebuild under another version recomputes them all."""

    name: str = "openskill-plackett-luce"
    version: int = 2
    """2: the bots' anchors measured (:data:`ANCHORS`, docs/decisions.md D-ratings);
    1: their first estimates."""
    mu: float = 25.0
    sigma: float = 25.0 / 3.0
    beta: float = 25.0 / 6.0
    tau: float = 25.0 / 300.0
    """Skill drift added to every player's variance at each match (openskill's tau)."""
    provisional_matches: int = 10
    idle_variance_per_day: float = 0.18
    """From a settled sigma of 2 back to the starting sigma in about a year."""
    repeat_window: timedelta = timedelta(days=7)
    timed_out_plays: int = 3
    """A seat whose last plays of the match, this many or more in a row, were all made for
    it by the timeout bot (``TurnTimedOut``) was "timed out to the end": rated as having
    lost, as a seat that left is."""

    def describe(self) -> dict[str, str | int | float]:
        """Every parameter, as the API and ``shengji rebuild ratings`` name the model."""
        out: dict[str, str | int | float] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            out[f.name] = value.total_seconds() if isinstance(value, timedelta) else value
        return out

    def start(self) -> Rating:
        """A player's rating before any rated match."""
        return Rating(self.mu, self.sigma)

    def idle(self, rating: Rating, days: float) -> Rating:
        """``rating`` after ``days`` without a rated match: the same mean, less sure."""
        if days <= 0:
            return rating
        variance = rating.sigma**2 + self.idle_variance_per_day * days
        return Rating(rating.mu, min(self.sigma, math.sqrt(variance)))

    def repeat_weight(self, earlier: int) -> float:
        """The weight of a match whose four participants played ``earlier`` rated matches
        together in the last ``repeat_window``."""
        return 1.0 / (1 + max(0, earlier))

    def rate(
        self,
        teams: tuple[Sequence[Rating], Sequence[Rating]],
        winner: int | None,
        *,
        anchored: tuple[Sequence[bool], Sequence[bool]],
        lost: tuple[Sequence[bool], Sequence[bool]] = ((False, False), (False, False)),
        weight: float = 1.0,
    ) -> tuple[list[Rating], list[Rating]]:
        """The two teams' ratings after a match ``winner`` won (0, 1; None: a draw).

        ``anchored`` marks bots (kept as they are); ``lost`` marks players rated as having
        lost whatever their team did (they left, or were timed out to the end)."""
        if winner not in (0, 1, None):
            raise ValueError(f"winner is 0, 1 or None, got {winner!r}")
        if not 0.0 < weight <= 1.0:
            raise ValueError(f"a match's weight is in (0, 1], got {weight!r}")
        model = _openskill(self)
        ranks = [1, 1] if winner is None else [1 + (winner != 0), 1 + (winner != 1)]
        updated = _update(model, teams, ranks)
        out: tuple[list[Rating], list[Rating]] = ([], [])
        for t in (0, 1):
            losing = (
                _update(model, teams, [2, 1] if t == 0 else [1, 2]) if any(lost[t]) else updated
            )
            for i, before in enumerate(teams[t]):
                if anchored[t][i]:
                    out[t].append(before)
                    continue
                after = losing[t][i] if lost[t][i] else updated[t][i]
                out[t].append(_part_way(before, after, weight))
        return out

    def expected(self, teams: tuple[Sequence[Rating], Sequence[Rating]]) -> float:
        """The chance that the first team wins."""
        model = _openskill(self)
        sides = [[model.rating(mu=r.mu, sigma=r.sigma) for r in team] for team in teams]
        return float(model.predict_win(sides)[0])


MODEL: Final = RatingModel()
"""The model in force (docs/decisions.md D-ratings)."""

ANCHORS: Final[Mapping[str, Rating]] = {
    "random": Rating(13.09, 1.0),
    "heuristic": Rating(25.0, 1.0),
    "strong": Rating(27.16, 1.0),
}
"""Each bot kind's fixed rating (``mu``, ``sigma``), measured from 3,000 bots-only
calibration matches (``python -m services.ratings.calibrate --matches 3000``: the anchors
fit to its tallies, the heuristic bot pinned at a new player's ``mu``; docs/decisions.md
D-ratings has the figures). Part of model version 2: changing them is a new version."""


def family(preset: str | None, rules: RuleSet) -> str | None:
    """The family a match is rated in: its preset's, or for a custom rule set the preset
    it differs from in one field at most (the match's length aside); None when no preset
    is that close, or when two are (an ambiguous custom set is not rated)."""
    if preset is not None and PRESETS.get(preset) == rules:
        return preset
    distances: dict[str, int] = {}
    for name, known in PRESETS.items():
        distances[name] = sum(
            getattr(rules, f.name) != getattr(known, f.name)
            for f in fields(RuleSet)
            if f.name != "match_end"
        )
    best = min(distances.values())
    closest = [name for name, d in distances.items() if d == best]
    return closest[0] if best <= 1 and len(closest) == 1 else None


@cache
def _openskill(model: RatingModel) -> PlackettLuce:
    return PlackettLuce(mu=model.mu, sigma=model.sigma, beta=model.beta, tau=model.tau)


def _update(
    model: PlackettLuce, teams: tuple[Sequence[Rating], Sequence[Rating]], ranks: list[int]
) -> list[list[Rating]]:
    sides = [[model.rating(mu=r.mu, sigma=r.sigma) for r in team] for team in teams]
    rated = model.rate(sides, ranks=[float(r) for r in ranks])
    return [[Rating(p.mu, p.sigma) for p in side] for side in rated]


def _part_way(before: Rating, after: Rating, weight: float) -> Rating:
    if weight >= 1.0:
        return after
    mu = before.mu + weight * (after.mu - before.mu)
    variance = before.sigma**2 + weight * (after.sigma**2 - before.sigma**2)
    return Rating(mu, math.sqrt(variance))

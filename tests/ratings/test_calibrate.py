"""Calibrating the anchors (docs/decisions.md D-ratings): bots-only one-round matches on
duplicate deals rate each bot kind from the start; a small fixed-seed run already puts the
random bot below the heuristic and the strong ones, by its rating and by its tallies."""

from __future__ import annotations

import pytest

from services.ratings.calibrate import KINDS, Tally, calibrate, fit, win_chance
from services.ratings.model import ANCHORS, MODEL


@pytest.mark.parametrize("seed", [0, 1])
def test_calibration_rates_the_random_bot_below_the_heuristic_and_the_strong(seed: int) -> None:
    found = calibrate(KINDS, 24, seed=seed, strong_budget=60)
    mu = {kind: r.mu for kind, r in found.ratings.items()}
    assert mu["random"] < mu["heuristic"] - 5
    assert mu["random"] < mu["strong"] - 5
    assert all(r.sigma < 25 / 3 for r in found.ratings.values())  # every kind was rated
    tallies = {(t.first, t.second): t for t in found.tallies}
    assert tallies["random", "heuristic"].share < 0.5
    assert tallies["random", "strong"].share < 0.5
    assert sum(t.first_won + t.second_won for t in found.tallies) == 24


def test_calibration_is_deterministic() -> None:
    first = calibrate(KINDS, 12, seed=3, strong_budget=60)
    assert calibrate(KINDS, 12, seed=3, strong_budget=60) == first


def test_the_anchors_order_the_bots_as_measured() -> None:
    """The anchors in force are ordered as the calibration measured the kinds."""
    assert ANCHORS["random"].mu < ANCHORS["heuristic"].mu < ANCHORS["strong"].mu
    assert ANCHORS["heuristic"].mu == MODEL.mu  # the pinned kind
    assert MODEL.version >= 2  # the measured anchors are a model version of their own


@pytest.mark.parametrize(
    ("tallies", "order"),
    [
        ([Tally("heuristic", "strong", 50, 50)], ["heuristic", "strong"]),
        ([Tally("heuristic", "strong", 30, 70)], ["heuristic", "strong"]),
        ([Tally("random", "heuristic", 3, 97)], ["random", "heuristic"]),
        (
            [
                Tally("random", "heuristic", 4, 296),
                Tally("random", "strong", 7, 293),
                Tally("heuristic", "strong", 96, 204),
            ],
            ["random", "heuristic", "strong"],
        ),
    ],
)
def test_anchors_fit_to_the_tallies_explain_them(tallies: list[Tally], order: list[str]) -> None:
    found = fit(tallies)
    assert found["heuristic"].mu == MODEL.mu  # pinned at a new player's mu
    mus = [found[k].mu for k in order]
    assert mus == sorted(mus)
    if len(tallies) == 1:  # one pairing: the fit's chance is the share measured
        t = tallies[0]
        assert win_chance(found[t.first].mu, found[t.second].mu) == pytest.approx(
            t.share, abs=0.002
        )

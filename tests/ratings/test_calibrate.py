"""Calibrating the anchors (docs/decisions.md D-ratings): bots-only one-round matches rate
each bot kind from the start; a few dozen already put the random bot below the others."""

from __future__ import annotations

from services.ratings.calibrate import calibrate


def test_calibration_rates_the_random_bot_below_the_heuristic_and_the_strong() -> None:
    found = calibrate(("random", "heuristic", "strong"), 24, strong_budget=60)
    assert found["random"].mu < found["heuristic"].mu
    assert found["random"].mu < found["strong"].mu
    assert all(r.sigma < 25 / 3 for r in found.values())  # every kind was rated

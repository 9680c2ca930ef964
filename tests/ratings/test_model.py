"""The rating model's policy, one row per fact (docs/decisions.md D-ratings)."""

from __future__ import annotations

import dataclasses

import pytest

from domain.rules.ruleset import PRESETS, RuleSet
from services.ratings.model import ANCHORS, MODEL, Rating, family

NEW = MODEL.start()
NOBODY = ((False, False), (False, False))


@pytest.mark.parametrize(
    ("preset", "change", "expected"),
    [
        ("standard", {}, "standard"),
        ("tuolaji", {}, "tuolaji"),
        ("duijia", {}, "duijia"),
        (None, {}, "standard"),  # the standard rules without the preset's name
        ("standard", {"throw_penalty_points": 10}, "standard"),  # one field off
        ("standard", {"match_end": PRESETS["duijia"].match_end}, "standard"),  # length aside
    ],
)
def test_a_match_is_rated_in_its_presets_family_or_the_one_a_field_away(
    preset: str | None, change: dict[str, object], expected: str | None
) -> None:
    base = PRESETS[preset] if preset else RuleSet()
    assert family(preset, dataclasses.replace(base, **change)) == expected  # type: ignore[arg-type]


def test_a_custom_rule_set_far_from_every_preset_is_not_rated() -> None:
    far = RuleSet(
        declare_with_joker=True,
        self_overcall=True,
        throw_penalty_points=10,
        level_cap=None,
        weak_hand_redeal=10,
    )
    assert family(None, far) is None


def test_the_winners_rise_and_the_losers_fall_by_the_same_amount_when_even() -> None:
    (a, b), (c, d) = MODEL.rate(((NEW, NEW), (NEW, NEW)), 0, anchored=NOBODY)
    assert a == b and c == d
    assert a.mu - NEW.mu == pytest.approx(NEW.mu - c.mu)
    assert a.mu > NEW.mu and a.sigma < NEW.sigma


def test_a_draw_between_equals_moves_no_mean() -> None:
    (a, _), (c, _) = MODEL.rate(((NEW, NEW), (NEW, NEW)), None, anchored=NOBODY)
    assert a.mu == pytest.approx(NEW.mu) and c.mu == pytest.approx(NEW.mu)


def test_a_bot_is_an_anchor_and_never_moves() -> None:
    strong = ANCHORS["strong"]
    _, (c, bot) = MODEL.rate(
        ((NEW, NEW), (NEW, strong)), 0, anchored=((False, False), (False, True))
    )
    assert bot == strong and c.mu < NEW.mu


def test_a_seat_that_left_loses_though_its_partner_won() -> None:
    (left, stayed), _ = MODEL.rate(
        ((NEW, NEW), (NEW, NEW)), 0, anchored=NOBODY, lost=((True, False), (False, False))
    )
    assert left.mu < NEW.mu < stayed.mu


@pytest.mark.parametrize(("earlier", "weight"), [(0, 1.0), (1, 0.5), (2, 1 / 3), (9, 0.1)])
def test_a_foursome_playing_again_counts_less_each_time(earlier: int, weight: float) -> None:
    assert MODEL.repeat_weight(earlier) == pytest.approx(weight)
    full = MODEL.rate(((NEW, NEW), (NEW, NEW)), 0, anchored=NOBODY)[0][0]
    part = MODEL.rate(((NEW, NEW), (NEW, NEW)), 0, anchored=NOBODY, weight=weight)[0][0]
    assert part.mu - NEW.mu == pytest.approx(weight * (full.mu - NEW.mu))


@pytest.mark.parametrize(
    ("sigma", "days", "grown"),
    [(2.0, 0, 2.0), (2.0, 100, (4 + 18) ** 0.5), (2.0, 365, MODEL.sigma), (8.0, 60, MODEL.sigma)],
)
def test_an_idle_players_rating_grows_uncertain_up_to_a_new_players(
    sigma: float, days: float, grown: float
) -> None:
    idle = MODEL.idle(Rating(30.0, sigma), days)
    assert idle.mu == 30.0 and idle.sigma == pytest.approx(grown)


def test_a_new_player_is_shown_1500_with_a_deviation_of_500() -> None:
    assert (NEW.shown, NEW.deviation, round(NEW.conservative)) == (1500, 500, 500)


def test_the_model_is_named_and_versioned_with_every_parameter() -> None:
    described = MODEL.describe()
    assert described["name"] == "openskill-plackett-luce" and described["version"] == 2
    assert set(described) >= {"mu", "sigma", "beta", "tau", "repeat_window"}


def test_a_team_that_is_stronger_is_expected_to_win() -> None:
    assert MODEL.expected(((NEW, NEW), (ANCHORS["random"], ANCHORS["random"]))) > 0.5

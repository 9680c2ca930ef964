"""R28–R32 and the §10 throw penalty: bottom bonus, totals, level table, dealer, levels."""

from __future__ import annotations

import pytest

from domain.rules.cards import SPADES, parse_cards
from domain.rules.context import trump_context
from domain.rules.errors import InvalidInputError
from domain.rules.ruleset import (
    FINISH_AT_A,
    BottomMultiplier,
    MatchEnd,
    MatchEndKind,
    RuleSet,
)
from domain.rules.scoring import (
    LevelChange,
    Outcome,
    Settlement,
    advance_level,
    apply_adjustments,
    attackers_total,
    band_of,
    bottom_bonus,
    bottom_multiplier,
    match_over,
    next_dealer,
    settle,
    throw_penalty,
)
from domain.rules.shapes import Shape, ShapeKind, decompose

LINEAR = RuleSet()
EXPONENTIAL = RuleSet(bottom_multiplier=BottomMultiplier.EXPONENTIAL)
UNCAPPED = RuleSet(level_cap=None)
ROUNDS_3 = RuleSet(match_end=MatchEnd(MatchEndKind.ROUNDS, 3))
TO_A = RuleSet(match_end=FINISH_AT_A)


def lead(cards: str) -> Shape:
    """The shape of a lead at level 2, trump S."""
    return decompose(trump_context(0, SPADES), parse_cards(cards))


# -- R28 multiplier ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cards", "kind", "linear", "exponential"),
    [
        pytest.param("AH", ShapeKind.SINGLE, 2, 2, id="R28-single"),
        pytest.param("BJ", ShapeKind.SINGLE, 2, 2, id="R28-single-trump"),
        pytest.param("AH AH", ShapeKind.PAIR, 4, 4, id="R28-pair"),
        pytest.param("5C 5C 6C 6C", ShapeKind.TRACTOR, 8, 8, id="R28-tractor-2"),
        pytest.param("5C 5C 6C 6C 7C 7C", ShapeKind.TRACTOR, 12, 16, id="R28-tractor-3"),
        pytest.param("5C 5C 6C 6C 7C 7C 8C 8C", ShapeKind.TRACTOR, 16, 32, id="R28-tractor-4"),
        pytest.param(
            "9D 9D 10D 10D JD JD QD QD KD KD", ShapeKind.TRACTOR, 20, 64, id="R28-tractor-5"
        ),
        pytest.param("AS AS 2H 2H", ShapeKind.TRACTOR, 8, 8, id="R28-R14-trump-A-level-pair"),
        pytest.param(
            "2H 2H 2S 2S SJ SJ BJ BJ", ShapeKind.TRACTOR, 16, 32, id="R28-R14-trump-chain-4"
        ),
        pytest.param("AH KH", ShapeKind.THROW, 2, 2, id="R28-R15-throw-singles"),
        pytest.param("AH KH KH", ShapeKind.THROW, 4, 4, id="R28-R15-throw-pair-not-sum"),
        pytest.param("AH AH KH KH 9H 9H", ShapeKind.THROW, 8, 8, id="R28-R15-throw-tractor-pair"),
        pytest.param(
            "3D 3D 4D 4D 5D 5D 9D 9D 10D 10D", ShapeKind.THROW, 12, 16,
            id="R28-R15-throw-largest-tractor-3",
        ),
        pytest.param("QC QC 9C 9C 4C", ShapeKind.THROW, 4, 4, id="R28-R15-throw-two-pairs"),
    ],
)  # fmt: skip
def test_r28_bottom_multiplier(cards: str, kind: ShapeKind, linear: int, exponential: int) -> None:
    shape = lead(cards)
    assert shape.kind is kind
    assert bottom_multiplier(shape, LINEAR) == linear
    assert bottom_multiplier(shape, EXPONENTIAL) == exponential


def test_r28_mixed_is_never_a_lead() -> None:
    with pytest.raises(InvalidInputError):
        bottom_multiplier(lead("AH AC"), LINEAR)


BOTTOM = "5S 10H KD KC 3S 4S 6S 7S"  # 35 points


@pytest.mark.parametrize(
    ("bottom", "last", "attackers_won", "rules", "bonus"),
    [
        pytest.param(BOTTOM, "AH", True, LINEAR, 70, id="R28-single-x2"),
        pytest.param(BOTTOM, "AH AH", True, LINEAR, 140, id="R28-pair-x4"),
        pytest.param(BOTTOM, "5C 5C 6C 6C 7C 7C", True, LINEAR, 420, id="R28-tractor-3-x12"),
        pytest.param(BOTTOM, "5C 5C 6C 6C 7C 7C", True, EXPONENTIAL, 560, id="R28-tractor-3-x16"),
        pytest.param(BOTTOM, "AH KH KH", True, LINEAR, 140, id="R28-throw-pair-x4"),
        pytest.param(BOTTOM, "AH AH", False, LINEAR, 0, id="R28-defenders-won-last"),
        pytest.param("3S 4S 6S 7S 8S 9S JS QS", "AH AH", True, LINEAR, 0, id="R28-no-points"),
        pytest.param("KS KS KH KH 10D 10D 5C 5C", "AH", True, LINEAR, 140, id="R28-70-points"),
    ],
)
def test_r28_bottom_bonus(
    bottom: str, last: str, attackers_won: bool, rules: RuleSet, bonus: int
) -> None:
    assert bottom_bonus(parse_cards(bottom), lead(last), attackers_won, rules) == bonus


def test_r28_bottom_must_be_eight_cards() -> None:
    with pytest.raises(InvalidInputError):
        bottom_bonus(parse_cards("5S 10H"), lead("AH"), True, LINEAR)


# -- R29 total and the §10 throw penalty ------------------------------------------------


@pytest.mark.parametrize(
    ("points", "defender", "cards", "delta"),
    [
        pytest.param(10, True, 3, 30, id="s10-R22-defender-fails-added"),
        pytest.param(10, False, 3, -30, id="s10-R22-attacker-fails-subtracted"),
        pytest.param(5, True, 6, 30, id="s10-R22-per-card"),
        pytest.param(0, True, 4, 0, id="s10-R22-default-no-penalty"),
        pytest.param(0, False, 4, 0, id="s10-R22-default-no-penalty-attacker"),
    ],
)
def test_s10_throw_penalty(points: int, defender: bool, cards: int, delta: int) -> None:
    rules = RuleSet(throw_penalty_points=points)
    assert throw_penalty(rules, cards, defender) == delta


@pytest.mark.parametrize("cards", [0, 1, -3])
def test_s10_throw_penalty_needs_a_throw(cards: int) -> None:
    with pytest.raises(InvalidInputError):
        throw_penalty(RuleSet(throw_penalty_points=10), cards, True)


@pytest.mark.parametrize(
    ("trick_points", "bonus", "adjustments", "total"),
    [
        pytest.param(60, 0, (), 60, id="R29-tricks-only"),
        pytest.param(60, 80, (), 140, id="R29-tricks-plus-bonus"),
        pytest.param(50, 0, (40,), 90, id="s10-defender-penalty-added"),
        pytest.param(50, 0, (-30,), 20, id="s10-attacker-penalty-subtracted"),
        pytest.param(0, 0, (-30,), 0, id="s10-floor-at-zero"),
        pytest.param(20, 0, (-30,), 0, id="s10-floor-partial"),
        pytest.param(10, 0, (-20, 30), 30, id="s10-floor-each-step"),
        pytest.param(10, 0, (30, -20), 20, id="s10-order-matters"),
        pytest.param(0, 40, (-30,), 10, id="s10-penalty-after-bonus"),
    ],
)
def test_r29_attackers_total(
    trick_points: int, bonus: int, adjustments: tuple[int, ...], total: int
) -> None:
    assert attackers_total(trick_points, bonus, adjustments) == total


def test_s10_apply_adjustments_floor() -> None:
    assert apply_adjustments(0, []) == 0
    assert apply_adjustments(15, [-5, -5, -5, -5, 20]) == 20
    with pytest.raises(InvalidInputError):
        apply_adjustments(-5, [])


@pytest.mark.parametrize(
    ("trick_points", "bonus"),
    [
        pytest.param(-5, 0, id="R29-negative-tricks"),
        pytest.param(205, 0, id="R26-over-200"),
        pytest.param(0, -10, id="R29-negative-bonus"),
    ],
)
def test_r29_attackers_total_rejects(trick_points: int, bonus: int) -> None:
    with pytest.raises(InvalidInputError):
        attackers_total(trick_points, bonus)


# -- R30 level table --------------------------------------------------------------------

DU = Outcome.DEFENDERS_UP
TO = Outcome.ATTACKERS_TAKE_OVER
UP = Outcome.ATTACKERS_TAKE_OVER_AND_UP


@pytest.mark.parametrize(
    ("total", "outcome", "capped", "uncapped", "band"),
    [
        pytest.param(0, DU, 3, 3, "0", id="R30-0-big-sweep"),
        pytest.param(5, DU, 2, 2, "5-35", id="R30-5"),
        pytest.param(35, DU, 2, 2, "5-35", id="R30-35"),
        pytest.param(40, DU, 1, 1, "40-75", id="R30-40"),
        pytest.param(75, DU, 1, 1, "40-75", id="R30-75"),
        pytest.param(80, TO, 0, 0, "80-115", id="R30-80-take-over"),
        pytest.param(115, TO, 0, 0, "80-115", id="R30-115"),
        pytest.param(120, UP, 1, 1, "120-155", id="R30-120"),
        pytest.param(155, UP, 1, 1, "120-155", id="R30-155"),
        pytest.param(160, UP, 2, 2, "160-195", id="R30-160"),
        pytest.param(195, UP, 2, 2, "160-195", id="R30-195"),
        pytest.param(200, UP, 3, 3, "200-235", id="R30-200"),
        pytest.param(240, UP, 4, 4, "240-275", id="R30-240"),
        pytest.param(280, UP, 5, 5, "280-315", id="R30-280"),
        pytest.param(315, UP, 5, 5, "280-315", id="R30-315"),
        pytest.param(320, UP, 6, 6, "320-355", id="R30-320-cap"),
        pytest.param(360, UP, 6, 7, "360-395", id="R30-360-capped"),
        pytest.param(400, UP, 6, 8, "400-435", id="R30-400-capped"),
        pytest.param(1000, UP, 6, 23, "1000-1035", id="R30-1000-capped"),
        pytest.param(3, DU, 2, 2, "5-35", id="R30-any-int-3"),
        pytest.param(79, DU, 1, 1, "40-75", id="R30-any-int-79"),
        pytest.param(119, TO, 0, 0, "80-115", id="R30-any-int-119"),
    ],
)
def test_r30_settle(total: int, outcome: Outcome, capped: int, uncapped: int, band: str) -> None:
    keep = total < 80
    assert settle(total, LINEAR) == Settlement(total, outcome, capped, keep, band)
    assert settle(total, UNCAPPED) == Settlement(total, outcome, uncapped, keep, band)
    assert band_of(total) == band


@pytest.mark.parametrize(
    ("total", "levels"),
    [
        pytest.param(0, 2, id="R30-cap-2-defenders-0"),
        pytest.param(5, 2, id="R30-cap-2-defenders-5"),
        pytest.param(40, 1, id="R30-cap-2-defenders-40"),
        pytest.param(80, 0, id="R30-cap-2-take-over"),
        pytest.param(160, 2, id="R30-cap-2-attackers-160"),
        pytest.param(240, 2, id="R30-cap-2-attackers-240"),
    ],
)
def test_r30_cap_applies_to_both_sides(total: int, levels: int) -> None:
    assert settle(total, RuleSet(level_cap=2)).levels == levels


def test_r30_outcome_is_a_str() -> None:
    assert settle(0, LINEAR).outcome == "defenders_up"
    assert settle(100, LINEAR).outcome == "attackers_take_over"
    assert settle(200, LINEAR).outcome == "attackers_take_over_and_up"


def test_r30_negative_total_is_invalid() -> None:
    with pytest.raises(InvalidInputError):
        settle(-5, LINEAR)


# -- R31 next dealer --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("dealer", "keep", "nxt"),
    [
        pytest.param(0, True, 2, id="R31-keep-partner-0"),
        pytest.param(1, True, 3, id="R31-keep-partner-1"),
        pytest.param(2, True, 0, id="R31-keep-partner-2"),
        pytest.param(3, True, 1, id="R31-keep-partner-3"),
        pytest.param(0, False, 1, id="R31-take-over-next-0"),
        pytest.param(1, False, 2, id="R31-take-over-next-1"),
        pytest.param(2, False, 3, id="R31-take-over-next-2"),
        pytest.param(3, False, 0, id="R31-take-over-next-3"),
    ],
)
def test_r31_next_dealer(dealer: int, keep: bool, nxt: int) -> None:
    assert next_dealer(dealer, keep) == nxt


def test_r31_next_dealer_follows_settle() -> None:
    assert next_dealer(1, settle(75, LINEAR).defenders_keep) == 3
    assert next_dealer(1, settle(80, LINEAR).defenders_keep) == 2


@pytest.mark.parametrize("dealer", [-1, 4])
def test_r31_bad_dealer(dealer: int) -> None:
    with pytest.raises(InvalidInputError):
        next_dealer(dealer, True)


# -- R32 levels and the end of the match ------------------------------------------------

K, A = 11, 12


@pytest.mark.parametrize(
    ("rules", "level", "steps", "defending", "change"),
    [
        pytest.param(LINEAR, 0, 3, True, LevelChange(3, 0, False), id="R32-wrap-2-plus-3"),
        pytest.param(LINEAR, 5, 0, False, LevelChange(5, 0, False), id="R32-wrap-take-over-0"),
        pytest.param(LINEAR, K, 1, True, LevelChange(A, 0, False), id="R32-wrap-K-to-A"),
        pytest.param(LINEAR, K, 2, True, LevelChange(0, 1, False), id="R32-wrap-K-past-A"),
        pytest.param(LINEAR, A, 1, True, LevelChange(0, 1, False), id="R32-wrap-A-past-A"),
        pytest.param(LINEAR, 10, 6, False, LevelChange(3, 1, False), id="R32-wrap-jump"),
        pytest.param(UNCAPPED, 0, 26, False, LevelChange(0, 2, False), id="R32-wrap-two-laps"),
        pytest.param(ROUNDS_3, K, 3, True, LevelChange(1, 1, False), id="R32-rounds-wraps"),
        pytest.param(TO_A, K, 2, True, LevelChange(A, 0, False), id="R32-A-stop-at-A"),
        pytest.param(TO_A, 10, 6, False, LevelChange(A, 0, False), id="R32-A-jump-stops"),
        pytest.param(TO_A, A, 1, True, LevelChange(A, 0, True), id="R32-A-defend-at-A-wins"),
        pytest.param(TO_A, A, 3, True, LevelChange(A, 0, True), id="R32-A-sweep-at-A-wins"),
        pytest.param(TO_A, A, 0, False, LevelChange(A, 0, False), id="R32-A-take-over-at-A"),
        pytest.param(TO_A, A, 2, False, LevelChange(A, 0, False), id="R32-A-attack-at-A"),
        pytest.param(TO_A, 4, 2, True, LevelChange(6, 0, False), id="R32-A-below-A"),
    ],
)
def test_r32_advance_level(
    rules: RuleSet, level: int, steps: int, defending: bool, change: LevelChange
) -> None:
    assert advance_level(level, steps, rules, defending=defending) == change


@pytest.mark.parametrize(
    ("level", "steps"),
    [
        pytest.param(-1, 1, id="R32-level-negative"),
        pytest.param(13, 1, id="R32-level-past-A"),
        pytest.param(0, -1, id="R32-steps-negative"),
    ],
)
def test_r32_advance_level_rejects(level: int, steps: int) -> None:
    with pytest.raises(InvalidInputError):
        advance_level(level, steps, LINEAR, defending=True)


@pytest.mark.parametrize(
    ("rules", "rounds", "won", "over"),
    [
        pytest.param(LINEAR, 0, False, False, id="R32-wrap-never-0"),
        pytest.param(LINEAR, 500, False, False, id="R32-wrap-never-500"),
        pytest.param(TO_A, 7, False, False, id="R32-A-not-yet"),
        pytest.param(TO_A, 7, True, True, id="R32-A-won"),
        pytest.param(ROUNDS_3, 2, False, False, id="R32-rounds-2-of-3"),
        pytest.param(ROUNDS_3, 3, False, True, id="R32-rounds-3-of-3"),
        pytest.param(ROUNDS_3, 4, False, True, id="R32-rounds-4-of-3"),
    ],
)
def test_r32_match_over(rules: RuleSet, rounds: int, won: bool, over: bool) -> None:
    assert match_over(rounds, rules, won=won) is over


def test_r32_match_over_rejects_negative_rounds() -> None:
    with pytest.raises(InvalidInputError):
        match_over(-1, ROUNDS_3)


def test_r30_r32_a_round_end_to_end() -> None:
    # Defenders at A (finish_at_A) hold the attackers to 75: they keep and win the match.
    s = settle(75, TO_A)
    change = advance_level(A, s.levels, TO_A, defending=s.defenders_keep)
    assert change.match_won
    assert match_over(9, TO_A, won=change.match_won)

"""Points, the bottom bonus, level changes and the match's end (RULES R26–R32, §10).

* R28 :func:`bottom_multiplier`, :func:`bottom_bonus` — the last trick's lead shape sets
  the multiplier of the buried points; a throw takes its largest component's.
* R29 :func:`attackers_total` — trick points + bottom bonus, then the §10 throw
  penalties (:func:`throw_penalty`) applied in order, never below 0.
* R30 :func:`settle` — the level table, with the §10 ``level_cap``.
* R31 :func:`next_dealer`.
* R32 :func:`advance_level`, :func:`match_over` — wrap, finish_at_A, rounds:N.

Decisions (penalty order, cap on both sides, stopping at A) are argued in
docs/rules-decisions.md.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from domain.rules.cards import NUM_KINDS, RANKS, Card, points_of
from domain.rules.errors import InvalidInputError
from domain.rules.ruleset import BottomMultiplier, MatchEndKind, RuleSet
from domain.rules.shapes import Shape, ShapeKind
from domain.values import Value

ACE: Final = len(RANKS) - 1  # rank index 12
NUM_LEVELS: Final = len(RANKS)  # 13
BOTTOM_SIZE: Final = 8
TOTAL_POINTS: Final = 200  # R26
TAKE_OVER: Final = 80  # R30/R31: the attackers take over from 80 points
BAND_WIDTH: Final = 40  # R30: each further 40 points, one more level


# -- R28 / R29: the bottom bonus and the attackers' total ------------------------------


def bottom_multiplier(last_lead: Shape, rules: RuleSet) -> int:
    """R28: single ×2, pair ×4, tractor of n pairs ×4·n (linear) or ×2^(n+1) (exponential).

    A throw takes the multiplier of its largest component (``components[0]``, R15 order),
    never a sum of its components' multipliers.
    """
    if last_lead.kind is ShapeKind.MIXED or not last_lead.components:
        raise InvalidInputError(
            "the last lead must be a single, pair, tractor or throw (R22)", rule="R28"
        )
    width = last_lead.components[0].width
    if width == 0:
        return 2
    if width == 1:
        return 4
    if rules.bottom_multiplier is BottomMultiplier.EXPONENTIAL:
        return 1 << (width + 1)
    return 4 * width


def bottom_bonus(
    bottom_cards: Sequence[Card], last_lead: Shape, attackers_won_last: bool, rules: RuleSet
) -> int:
    """R28: points of the 8 buried cards × the multiplier, if the attackers won the last trick."""
    if len(bottom_cards) != BOTTOM_SIZE:
        raise InvalidInputError(
            f"the bottom holds {BOTTOM_SIZE} cards, got {len(bottom_cards)} (R21)", rule="R28"
        )
    for c in bottom_cards:
        if type(c) is not int or not 0 <= c < NUM_KINDS:
            raise InvalidInputError(f"not a card kind: {c!r}", rule="R28")
    multiplier = bottom_multiplier(last_lead, rules)
    if not attackers_won_last:
        return 0
    return points_of(bottom_cards) * multiplier


def throw_penalty(rules: RuleSet, cards_in_failed_throw: int, thrower_is_defender: bool) -> int:
    """§10 ``throw_penalty_points``: signed adjustment of the attackers' total (R22).

    N points per card of the failed throw: added when a defender failed, subtracted when
    an attacker failed. 0 with the default N = 0.
    """
    if type(cards_in_failed_throw) is not int or cards_in_failed_throw < 2:
        raise InvalidInputError(
            f"a throw has at least 2 cards, got {cards_in_failed_throw!r} (R15)", rule="R22"
        )
    amount = rules.throw_penalty_points * cards_in_failed_throw
    return amount if thrower_is_defender else -amount


def apply_adjustments(total: int, adjustments: Iterable[int]) -> int:
    """Apply signed adjustments in order; after each the total is floored at 0 (§10)."""
    _check_non_negative("total", total)
    for delta in adjustments:
        if type(delta) is not int:
            raise InvalidInputError(f"adjustment must be an integer, got {delta!r}", rule="R29")
        total = max(0, total + delta)
    return total


def attackers_total(trick_points: int, bonus: int, adjustments: Iterable[int] = ()) -> int:
    """R29: trick points + bottom bonus, then the throw penalties in order (never below 0)."""
    _check_non_negative("trick points", trick_points)
    if trick_points > TOTAL_POINTS:
        raise InvalidInputError(
            f"trick points cannot exceed {TOTAL_POINTS} (R26), got {trick_points}", rule="R29"
        )
    _check_non_negative("bottom bonus", bonus)
    return apply_adjustments(trick_points + bonus, adjustments)


def _check_non_negative(what: str, value: int) -> None:
    if type(value) is not int or value < 0:
        raise InvalidInputError(f"{what} must be an integer >= 0, got {value!r}", rule="R29")


# -- R30 / R31: level change and next dealer -------------------------------------------


class Outcome(StrEnum):
    """R30: who goes up after a round."""

    DEFENDERS_UP = "defenders_up"  # T < 80
    ATTACKERS_TAKE_OVER = "attackers_take_over"  # 80 <= T < 120 (换庄)
    ATTACKERS_TAKE_OVER_AND_UP = "attackers_take_over_and_up"  # T >= 120


@dataclass(frozen=True, slots=True)
class Settlement(Value):
    """The R30 result for an attackers' total."""

    total: int
    """The attackers' total T (R29)."""
    outcome: Outcome
    levels: int
    """Levels gained by the team that goes up (defenders if they keep, else attackers)."""
    defenders_keep: bool
    """T < 80: the defenders keep the deal (R31)."""
    band: str
    """Stable label of T's R30 row: "0", "5-35", then 40-point bands "40-75", "80-115"…"""


def band_of(total: int) -> str:
    """The R30 band label of T: "0", "5-35", "40-75", "80-115", "120-155", … (never capped)."""
    if total == 0:
        return "0"
    if total < BAND_WIDTH:
        return "5-35"
    low = total // BAND_WIDTH * BAND_WIDTH
    return f"{low}-{low + BAND_WIDTH - 5}"


def settle(attacker_total: int, rules: RuleSet) -> Settlement:
    """R30: the level change for attackers' total T, capped by ``rules.level_cap``.

    0 → defenders +3; 5–35 → +2; 40–75 → +1; 80–115 → attackers take over, +0;
    120–155 → take over +1; each further 40 one more level. The cap applies to either
    side's gain (standard 6: T >= 320 → +6); ``level_cap=None`` → no cap.
    """
    if type(attacker_total) is not int or attacker_total < 0:
        raise InvalidInputError(
            f"attackers' total must be an integer >= 0, got {attacker_total!r}", rule="R30"
        )
    t = attacker_total
    if t < TAKE_OVER:
        levels = 3 if t == 0 else 2 if t < BAND_WIDTH else 1
        outcome = Outcome.DEFENDERS_UP
    else:
        levels = (t - TAKE_OVER) // BAND_WIDTH
        outcome = Outcome.ATTACKERS_TAKE_OVER_AND_UP if levels else Outcome.ATTACKERS_TAKE_OVER
    if rules.level_cap is not None:
        levels = min(levels, rules.level_cap)
    return Settlement(t, outcome, levels, t < TAKE_OVER, band_of(t))


def next_dealer(dealer: int, defenders_keep: bool) -> int:
    """R31: keep → the dealer's partner (dealer+2); take over → next player (dealer+1)."""
    if type(dealer) is not int or not 0 <= dealer <= 3:
        raise InvalidInputError(f"dealer seat must be 0..3, got {dealer!r}", rule="R31")
    return (dealer + (2 if defenders_keep else 1)) % 4


# -- R32: level progression and the match's end ----------------------------------------


@dataclass(frozen=True, slots=True)
class LevelChange:
    """A team's level after going up ``steps`` levels (R32)."""

    level: int
    """New level rank index, 0 = '2' … 12 = 'A'."""
    laps: int
    """Times the team went past A and wrapped round to 2 (wrap, rounds:N); else 0."""
    match_won: bool
    """finish_at_A: the team won a round while defending at A."""


def advance_level(level: int, steps: int, rules: RuleSet, *, defending: bool) -> LevelChange:
    """R32: move a team's level up ``steps`` (from :func:`settle`).

    ``defending`` says whether the team was the round's defenders (its level was the
    round's level). By ``match_end``:

    * wrap and rounds:N — past A wraps round to 2 (``laps`` counts the wraps); a jump
      may pass A without stopping;
    * finish_at_A — a team must play A: levels stop at A, and the match is won when a
      team defending at A keeps the deal (T < 80, so ``steps >= 1``). Attackers who take
      over while at A (or reach it) only become the defenders at A.
    """
    if type(level) is not int or not 0 <= level <= ACE:
        raise InvalidInputError(f"level must be a rank index 0..12, got {level!r}", rule="R32")
    if type(steps) is not int or steps < 0:
        raise InvalidInputError(f"steps must be an integer >= 0, got {steps!r}", rule="R32")
    if rules.match_end.kind is MatchEndKind.FINISH_AT_A:
        won = defending and level == ACE and steps >= 1
        return LevelChange(min(level + steps, ACE), 0, won)
    laps, new_level = divmod(level + steps, NUM_LEVELS)
    return LevelChange(new_level, laps, False)


def match_over(rounds_played: int, rules: RuleSet, *, won: bool = False) -> bool:
    """R32: has the match ended after ``rounds_played`` rounds?

    wrap → never by itself (the organiser's limit ends it); finish_at_A → when a team
    has won (``won``: some :class:`LevelChange` had ``match_won``); rounds:N → once N
    rounds are played.
    """
    if type(rounds_played) is not int or rounds_played < 0:
        raise InvalidInputError(
            f"rounds played must be an integer >= 0, got {rounds_played!r}", rule="R32"
        )
    end = rules.match_end
    if end.kind is MatchEndKind.FINISH_AT_A:
        return won
    if end.kind is MatchEndKind.ROUNDS:
        assert end.rounds is not None
        return rounds_played >= end.rounds
    return False

"""A played-out round's score as the fields of its ``RoundScored`` event (RULES R26–R31):
the attackers' trick points, the bottom's bonus (R28), the penalties of failed throws
(R22), the total, the level change (R29, R30) and the next dealer (R31)."""

from __future__ import annotations

from collections.abc import Sequence

from domain.rules.cards import POINTS, Card
from domain.rules.play import TrickPlay
from domain.rules.ruleset import RuleSet
from domain.rules.scoring import (
    attackers_total,
    bottom_bonus,
    bottom_multiplier,
    next_dealer,
    settle,
)


def round_score(
    play: TrickPlay,
    bottom: Sequence[Card],
    penalties: Sequence[int],
    rules: RuleSet,
    *,
    dealer: int,
    attackers: int,
) -> dict[str, object]:
    """The ``RoundScored`` fields of a round whose last trick is played, in the event's
    order (its seed and commitment aside); ``attackers`` is their seats' parity."""
    assert play.last_trick is not None and play.last_lead is not None
    attackers_won_last = play.last_trick[2] % 2 == attackers
    multiplier = bottom_multiplier(play.last_lead, rules)
    bonus = bottom_bonus(bottom, play.last_lead, attackers_won_last, rules)
    total = attackers_total(play.attacker_points, bonus, penalties)
    settlement = settle(total, rules)
    return {
        "trick_points": play.attacker_points,
        "bottom_cards": bottom,
        "bottom_points": sum(POINTS[c] for c in bottom),
        "multiplier": multiplier if attackers_won_last else 0,
        "bottom_bonus": bonus,
        "penalties": tuple(penalties),
        "attackers_total": total,
        "outcome": str(settlement.outcome),
        "levels_gained": settlement.levels,
        "band": settlement.band,
        "defenders_keep": settlement.defenders_keep,
        "dealer": dealer,
        "next_dealer": next_dealer(dealer, settlement.defenders_keep),
    }

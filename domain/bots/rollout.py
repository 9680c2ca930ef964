"""Playing a sampled world to the end of the round (RULES R22–R30), for the search bot.

A *world* is one full deal of the hidden cards (:mod:`domain.bots.inference`) put
together with everything public in a seat's view: the trick in progress, the tricks
done, the attackers' points. :func:`rollout` lets the heuristic player
(:mod:`domain.bots.heuristic`) play every seat from there — each from its own
redacted view of the world (R33) — and scores the round as the table does: trick points
(R27), the bottom bonus (R28), the total (R29) and the level change (R30).

Leads go through :meth:`TrickPlay.check` (a throw may fail against the world's hands,
R22); the heuristic's follows are legal by construction, so they are applied unchecked.
:func:`utility` turns the round into what the bot maximises: levels gained by its team
less levels gained by the other (R30), with the attackers' points as a small tie-break.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from domain.bots.heuristic import HeuristicPlayer
from domain.bots.view import BotView, PlayViews
from domain.rules.cards import POINTS, Card
from domain.rules.play import TrickPlay
from domain.rules.ruleset import RuleSet
from domain.rules.scoring import (
    BAND_WIDTH,
    Settlement,
    attackers_total,
    bottom_bonus,
    settle,
    throw_penalty,
)
from domain.rules.trick import trick_winner

POINTS_WEIGHT = 0.25
"""Utility of one band (40 points, R30) of the attackers' total, beside whole levels."""

_POLICY = HeuristicPlayer()


def world_play(view: BotView, hands: Sequence[Sequence[Card]]) -> TrickPlay:
    """The play phase as ``view`` sees it, with the world's ``hands`` (this seat's own)."""
    leader = view.trick[0][0] if view.trick else view.seat
    tp = TrickPlay(view.ctx, hands, leader, view.attackers)
    tp.trick = [cards for _, cards in view.trick]
    tp.lead_shape = view.lead_shape
    tp.turn = view.seat
    tp.tricks_done = len(view.tricks)
    tp.attacker_points = view.attacker_points
    tp.played = [*view.played, *(c for _, cards in view.trick for c in cards)]
    return tp


def play_out(tp: TrickPlay, view: BotView, rng: random.Random) -> None:
    """Every remaining play of ``tp`` by the heuristic player, each seat from its view."""
    ctx = tp.ctx
    views = PlayViews(tp, dealer=view.dealer, rules=view.rules, burier=-1, bottom=None)
    play = _POLICY.play
    while not tp.finished:
        seat = tp.turn
        cards = play(views.view(seat), rng)
        if not tp.trick:
            tp.apply(tp.check(seat, cards))  # R22: a throw may fail
            continue
        tp.apply_cards(seat, cards)
        trick = tp.trick
        if len(trick) == 4:
            winner = (tp.leader + trick_winner(ctx, trick, tp.lead_shape)) % 4
            tp.apply_trick_won(winner, sum(POINTS[c] for p in trick for c in p))


def score(tp: TrickPlay, bottom: Sequence[Card], rules: RuleSet) -> Settlement:
    """R27–R30 for a finished ``tp``: trick points, bottom bonus, penalties, the band."""
    assert tp.last_trick is not None and tp.last_lead is not None
    won_last = tp.last_trick[2] % 2 == tp.attackers
    bonus = bottom_bonus(bottom, tp.last_lead, won_last, rules)
    penalties = [
        throw_penalty(rules, len(cards), seat % 2 != tp.attackers)
        for seat, cards in tp.failed_throws
    ]
    return settle(attackers_total(tp.attacker_points, bonus, penalties), rules)


def utility(settlement: Settlement, seat: int, attackers: int) -> float:
    """Levels gained by ``seat``'s team less the other team's (R30), plus a tie-break in
    the attackers' points (:data:`POINTS_WEIGHT` per 40), from ``seat``'s side."""
    attacking = seat % 2 == attackers
    gain = settlement.levels
    if settlement.defenders_keep:
        gain = -gain
    points = settlement.total / BAND_WIDTH * POINTS_WEIGHT
    value = gain + points
    return value if attacking else -value


def rollout(
    view: BotView,
    hands: Sequence[Sequence[Card]],
    bottom: Sequence[Card],
    cards: Sequence[Card],
    rng: random.Random,
) -> float:
    """The utility for ``view.seat`` of playing ``cards`` now in this world."""
    tp = world_play(view, hands)
    tp.apply(tp.check(view.seat, cards))
    play_out(tp, view, rng)
    return utility(score(tp, bottom, view.rules), view.seat, view.attackers)

"""The public parts of a view that follow the play and the deal (RULES R16, R22–R27, R33):
the tricks with their points, the seat winning the trick in progress, the attacking team
and the paced deal's timing. Everything here is public once played (R33).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from domain.game.round import DRAWS, Round
from domain.rules.cards import Card, card_names
from domain.rules.play import TrickPlay
from domain.rules.trick import trick_points, trick_winner
from services.view_types import DealView, FailedThrow, PlayView, TrickView, WonTrick


def play_fields(play: TrickPlay) -> dict[str, Any]:
    """The tricks (R22–R24), their points (R26) and the attackers' points (R27)."""
    last = None
    if play.last_trick is not None:
        leader, plays, winner = play.last_trick
        last = TrickView(
            leader=leader,
            plays=plays_view(leader, plays),
            winner=winner,
            points=trick_points(plays),
        )
    winning = None
    if play.trick:
        winning = (play.leader + trick_winner(play.ctx, play.trick, play.lead_shape)) % 4
    return {
        "trick_leader": play.leader if play.trick else None,
        "trick": plays_view(play.leader, play.trick),
        "trick_winning": winning,
        "trick_points": trick_points(play.trick),
        "won_tricks": [
            WonTrick(
                number=n,
                leader=leader,
                winner=winner,
                points=trick_points(plays),
                attackers_won=winner % 2 == play.attackers,
            )
            for n, (leader, plays, winner) in enumerate(play.tricks, start=1)
        ],
        "last_trick": last,
        "tricks_done": play.tricks_done,
        "played": card_names(play.played),
        "attacker_points": play.attacker_points,
        "failed_throws": [
            FailedThrow(seat=s, attempted=card_names(c)) for s, c in play.failed_throws
        ],
    }


def plays_view(leader: int, plays: Sequence[Sequence[Card]]) -> list[PlayView]:
    return [PlayView(seat=(leader + i) % 4, cards=card_names(p)) for i, p in enumerate(plays)]


def deal_view(round_: Round, now: datetime) -> DealView | None:
    """The deal's start, pace and progress at ``now`` (R16), once the round is dealt."""
    dealt = round_.dealt
    if dealt is None:
        return None
    interval = round_.pacing.interval_ms
    return DealView(
        started_at=round_.started_at.isoformat(),
        interval_ms=interval,
        first_seat=dealt.draws[0][0],
        drawn=round_.drawn_at(now),
        total=DRAWS,
        ends_at=(round_.started_at + timedelta(milliseconds=interval * (DRAWS - 1))).isoformat(),
    )


def attacking_team(round_: Round) -> int | None:
    """The attackers (R6): the dealer's opponents; None while no dealer is known (R18)."""
    dealer = round_.bidding.dealer
    return None if dealer is None else (dealer + 1) % 2

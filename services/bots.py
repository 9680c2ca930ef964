"""Bots at a match's table: every pending bot move, played through the same command path
as a person's (``GameService.act``), one save per move.

A seat whose kind is a bot policy (:data:`domain.players.PLAYERS`: ``random``,
``heuristic``, ``strong``) is asked for its decision from a redacted view built from the aggregates
(:mod:`domain.players.view`, R33: its own hand, the standing show, the cards played, the
bottom only if it buried it): declare or pass during the deal (R17, R18), declare or
pass in the late declaring turn (R18), overcall or pass in the window (R20), the
weak-hand redeal (暴动, §10), bury (R21, 炒底 R20) and play (R22, R23). A passed deadline
(the end of the drawing, the overcall window) is claimed first, as a command would.

Decisions are deterministic: a bot's ``random.Random`` is seeded from the round, its
version and the seat, so the same state gives the same move. The ``strong`` bot searches
with its default budget of simulated plays (about 100 ms a decision on one core, 200 ms
at worst; docs/bots.md) and is given no deadline, so it stays deterministic too.
"""

from __future__ import annotations

import hashlib
import logging
import random
from dataclasses import dataclass
from datetime import datetime
from typing import Literal
from uuid import UUID

from domain.game.match import Match
from domain.game.round import DRAWS, Round, RoundPhase
from domain.players import PLAYERS, Player, make_player
from domain.players.view import BidView, SeatView, seat_view
from domain.rules.cards import Card
from domain.rules.context import trump_context
from domain.rules.errors import ShengjiError
from domain.rules.shuffle import HAND_SIZE
from services.errors import VersionConflictError
from services.game import GameService
from services.legal import claimed, may_ask_redeal

log = logging.getLogger(__name__)

Stopped = Literal["waiting", "limit", "conflict", "refused"]
DEFAULT_STEPS = 1000
"""Bot moves one call plays at most (a round is about 110 moves)."""


@dataclass(frozen=True, slots=True)
class BotMove:
    seat: int
    action: str
    cards: tuple[Card, ...] = ()


@dataclass(frozen=True, slots=True)
class BotRun:
    """What :func:`run_bots` did: moves made (deadline claims included) and why it
    stopped: ``waiting`` (for a person, or nobody can move), ``limit``, ``conflict``
    (another command changed the match first), ``refused`` (a bot's move was refused)."""

    steps: int
    version: int
    stopped: Stopped


def bot_seats(match: Match) -> dict[int, str]:
    """Seat → bot kind, for the seats bots hold."""
    return {
        seat: info.kind
        for seat, info in enumerate(match.seats)
        if info is not None and info.kind in PLAYERS
    }


def run_bots(service: GameService, match_id: UUID, max_steps: int = DEFAULT_STEPS) -> BotRun:
    """Play every pending bot move of the match, at most ``max_steps``."""
    steps = 0
    while True:
        match = service.get_match(match_id)
        round_ = service.current_round(match)
        version = match.sequence(0 if round_ is None else round_.version)
        if steps >= max_steps:
            return BotRun(steps, version, "limit")
        if match.finished or round_ is None or round_.dealt is None or not bot_seats(match):
            return BotRun(steps, version, "waiting")
        now = service.clock()
        try:
            if claimed(round_, now).pending_events:
                service.claim_deadlines(match_id)
                steps += 1
                continue
            move = next_move(match, round_, now)
            if move is None:
                return BotRun(steps, version, "waiting")
            service.act(match_id, move.seat, move.action, move.cards)
        except VersionConflictError:
            return BotRun(steps, version, "conflict")
        except ShengjiError as e:  # pragma: no cover - bots only make legal moves
            log.warning("a bot's move was refused: %s", e.detail)
            return BotRun(steps, version, "refused")
        steps += 1


def next_move(
    match: Match, round_: Round, now: datetime, bots: dict[int, str] | None = None
) -> BotMove | None:
    """The move a bot of ``match`` makes now in ``round_``, None when no bot is to move.
    ``bots`` (seat → kind) overrides the match's bot seats (a turn timeout's bot)."""
    bots = bot_seats(match) if bots is None else bots
    phase = round_.phase
    if phase is RoundPhase.DEALING:
        return _dealing_move(round_, bots, now)
    if phase is RoundPhase.PLAYING:
        assert round_.play is not None
        turn = round_.play.turn
        if turn not in bots:
            return None
        cards = _player(bots[turn]).play(_play_view(round_, turn), _rng(round_, turn))
        return BotMove(turn, "play", tuple(cards))
    if phase not in (RoundPhase.DECLARING, RoundPhase.OVERCALLING, RoundPhase.BURYING):
        return None
    seat = round_.to_act()
    if seat is None or seat not in bots:
        return None
    player, rng = _player(bots[seat]), _rng(round_, seat)
    if may_ask_redeal(round_, seat) and player.request_redeal(_bid_view(round_, seat, now), rng):
        return BotMove(seat, "redeal")  # §10 暴动
    if phase is RoundPhase.BURYING:
        return BotMove(seat, "bury", tuple(player.bury(_bury_view(round_, seat), rng)))
    view = _bid_view(round_, seat, now)
    options = round_.bidding.legal_shows(seat, view.hand)
    if phase is RoundPhase.OVERCALLING:
        show = player.overcall(view, options, rng) if options else None
        return BotMove(seat, "pass") if show is None else BotMove(seat, "overcall", show.cards)
    show = player.declare(view, options, rng) if options else None
    return BotMove(seat, "pass") if show is None else BotMove(seat, "declare", show.cards)


def _dealing_move(round_: Round, bots: dict[int, str], now: datetime) -> BotMove | None:
    """R17: a bot declares as its cards arrive if it chooses to; once every card is drawn
    it passes (four passes end the drawing, R16)."""
    drawn = round_.drawn_at(now)
    for seat in sorted(bots):
        if seat in round_.deal_passes:
            continue
        view = _bid_view(round_, seat, now)
        options = round_.bidding.legal_shows(seat, view.hand)
        if options:
            show = _player(bots[seat]).declare(view, options, _rng(round_, seat))
            if show is not None:
                return BotMove(seat, "declare", show.cards)
        if drawn >= DRAWS:
            return BotMove(seat, "pass")
    return None


def _player(kind: str) -> Player:
    return make_player(kind)


def _rng(round_: Round, seat: int) -> random.Random:
    digest = hashlib.sha256(f"{round_.id}:{round_.version}:{seat}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def _bid_view(round_: Round, seat: int, now: datetime) -> BidView:
    """R33: the seat's cards so far and the standing show (R17, R20)."""
    bidding = round_.bidding
    hand = round_.hand_at(seat, now)
    return BidView(
        seat,
        bidding.level_for(seat),
        hand,
        bidding.dealer,
        bidding.standing,
        max(0, HAND_SIZE - len(hand)) if round_.phase is RoundPhase.DEALING else 0,
        round_.rules,
    )


def _bury_view(round_: Round, seat: int) -> SeatView:
    """R21: the burier's hand with the 8 cards it takes (the bottom, or 炒底 R20)."""
    bidding = round_.bidding
    dealer = bidding.dealer if bidding.dealer is not None else seat
    ctx = trump_context(bidding.level, bidding.trump)
    hand = (*round_.hands[seat], *round_.bottom)
    return SeatView(seat, ctx, hand, dealer, (dealer + 1) % 2, (), None, (), 0, None, round_.rules)


def _play_view(round_: Round, seat: int) -> SeatView:
    """R33: the play-phase view; the bottom only for the seat that buried it (R21)."""
    play = round_.play
    assert play is not None
    dealer = round_.bidding.dealer
    assert dealer is not None
    bottom = round_.bottom if round_.buried_by == seat else None
    shows = round_.bidding.shows
    return seat_view(play, seat, dealer=dealer, rules=round_.rules, bottom=bottom, shows=shows)

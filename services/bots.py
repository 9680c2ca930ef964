"""Bots at a match's table: their decisions — each played by the bot driver through the
same command a person sends (:class:`services.round_commands.Act`), one save per move.

A seat whose kind is a bot policy (:data:`domain.bots.PLAYERS`: ``random``,
``heuristic``, ``strong``) is asked for its decision from a redacted view built from the
aggregates (:mod:`domain.bots.view`, R33: its own hand, the standing show, the cards
played, the bottom only if it buried it): declare or pass during the deal (R17, R18),
declare or pass in the late declaring turn (R18), overcall or pass in the window (R20),
the weak-hand redeal (暴动, §10), bury (R21, 炒底 R20) and play (R22, R23). A passed
deadline (the end of the drawing, the overcall window) is claimed first, as a command
would.

Who calls this: the bot driver (:mod:`services.bot_driver`), off the request path, one
move at a time (:func:`services.bot_driver.play_one`); :func:`services.bot_driver.run_bots`
plays a table on to where it waits, for tools and tests. No request handler moves a bot
(docs/decisions.md D-bot-driver).

Decisions are deterministic: a bot's ``random.Random`` is seeded from the round, its
version and the seat, so the same state gives the same move. The ``strong`` bot searches
with its default budget of simulated plays (about 100 ms a decision on one core, 200 ms
at worst; docs/bots.md); the driver adds a per-decision CPU budget (``stop``) that the
search meets only on an overloaded machine, where it answers with what it found so far.
"""

from __future__ import annotations

import hashlib
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from domain.bots import PLAYERS, Player, StrongPlayer, make_player
from domain.bots.view import BidView, BotView, seat_view
from domain.game.actions import Bury, Declare, Overcall, Pass, Play, Redeal, RoundAction
from domain.game.match import Match
from domain.game.round import DRAWS, Round, RoundPhase
from domain.rules.context import trump_context
from domain.rules.shuffle import HAND_SIZE
from services.legal import may_ask_redeal

Stop = Callable[[], bool]


@dataclass(frozen=True, slots=True)
class BotMove:
    seat: int
    action: RoundAction


def bot_seats(match: Match) -> dict[int, str]:
    """Seat → bot kind, for the seats bots hold."""
    return {
        seat: info.kind
        for seat, info in enumerate(match.seats)
        if info is not None and info.kind in PLAYERS
    }


def cpu_budget(seconds: float) -> Stop:
    """A decision's ``stop``: true once the calling thread has spent ``seconds`` of CPU
    since this call (its own CPU: a busy machine does not shorten it)."""
    deadline = time.thread_time() + seconds
    return lambda: time.thread_time() >= deadline


def bot_to_act(round_: Round, bots: dict[int, str]) -> bool:
    """Whether a bot may have a move in ``round_`` now (cheap: no decision is made)."""
    phase = round_.phase
    if phase is RoundPhase.DEALING:
        return any(seat not in round_.deal_passes for seat in bots)
    return round_.to_act() in bots


def next_move(
    match: Match,
    round_: Round,
    now: datetime,
    bots: dict[int, str] | None = None,
    *,
    stop: Stop | None = None,
) -> BotMove | None:
    """The move a bot of ``match`` makes now in ``round_``, None when no bot is to move.
    ``bots`` (seat → kind) overrides the match's bot seats (a turn timeout's bot);
    ``stop`` is the decision's budget (:func:`cpu_budget`)."""
    bots = bot_seats(match) if bots is None else bots
    phase = round_.phase
    if phase is RoundPhase.DEALING:
        return _dealing_move(round_, bots, now)
    if phase is RoundPhase.PLAYING:
        turn = round_.to_act()
        if turn is None or turn not in bots:
            return None
        cards = _player(bots[turn], stop).play(_play_view(round_, turn), _rng(round_, turn))
        return BotMove(turn, Play(tuple(cards)))
    if phase not in (RoundPhase.DECLARING, RoundPhase.OVERCALLING, RoundPhase.BURYING):
        return None
    seat = round_.to_act()
    if seat is None or seat not in bots:
        return None
    player, rng = _player(bots[seat], stop), _rng(round_, seat)
    if may_ask_redeal(round_, seat) and player.request_redeal(_bid_view(round_, seat, now), rng):
        return BotMove(seat, Redeal())  # §10 暴动
    if phase is RoundPhase.BURYING:
        return BotMove(seat, Bury(tuple(player.bury(_bury_view(round_, seat), rng))))
    view = _bid_view(round_, seat, now)
    options = round_.bidding.legal_shows(seat, view.hand)
    if phase is RoundPhase.OVERCALLING:
        show = player.overcall(view, options, rng) if options else None
        return BotMove(seat, Pass() if show is None else Overcall(show.cards))
    show = player.declare(view, options, rng) if options else None
    return BotMove(seat, Pass() if show is None else Declare(show.cards))


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
                return BotMove(seat, Declare(show.cards))
        if drawn >= DRAWS:
            return BotMove(seat, Pass())
    return None


def _player(kind: str, stop: Stop | None = None) -> Player:
    player = make_player(kind)
    if stop is not None and isinstance(player, StrongPlayer):
        player.stop = stop  # the search answers with its best so far once it is spent
    return player


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


def _bury_view(round_: Round, seat: int) -> BotView:
    """R21: the burier's hand with the 8 cards it takes (the bottom, or 炒底 R20)."""
    bidding = round_.bidding
    dealer = bidding.dealer if bidding.dealer is not None else seat
    ctx = trump_context(bidding.level, bidding.trump)
    hand = (*round_.hands[seat], *round_.bottom)
    return BotView(seat, ctx, hand, dealer, (dealer + 1) % 2, (), None, (), 0, None, round_.rules)


def _play_view(round_: Round, seat: int) -> BotView:
    """R33: the play-phase view; the bottom only for the seat that buried it (R21)."""
    play = round_.play
    assert play is not None
    dealer = round_.bidding.dealer
    assert dealer is not None
    bottom = round_.bottom if round_.buried_by == seat else None
    shows = round_.bidding.shows
    return seat_view(play, seat, dealer=dealer, rules=round_.rules, bottom=bottom, shows=shows)

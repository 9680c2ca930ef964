"""Situations of a ``Round`` found by searching deal seeds (``seed_bytes(n)``) for the property a
case needs, and the steps that bring a round there (the tests:
:mod:`tests.domain.test_round_aggregate`, :mod:`tests.domain.test_round_burying_and_play`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from uuid import UUID

from domain.game.round import Round, RoundPhase
from domain.game.round_events import Pacing, deal_for
from domain.rules.cards import POINTS, SJ, Card, count_kinds, make_card
from domain.rules.ruleset import RuleSet
from domain.rules.shuffle import Deal
from tests.conftest import T0, seed_bytes

MATCH = UUID(int=0x5E1)
STANDARD = RuleSet()
LEVEL_2 = 0  # rank index of '2', both teams' level in round 1 (R5)


# -- situations -----------------------------------------------------------------------------


def at(ms: int) -> datetime:
    return T0 + timedelta(milliseconds=ms)


def dealt(
    n: int,
    rules: RuleSet = STANDARD,
    *,
    number: int = 1,
    levels: tuple[int, int] = (LEVEL_2, LEVEL_2),
    dealer: int | None = None,
    pacing: Pacing | None = None,
) -> Round:
    """A round started and dealt from ``seed_bytes(n)`` at T0 (events still pending)."""
    r = Round.start(MATCH, number, rules, levels, dealer, T0)
    r.deal(seed_bytes(n), T0, pacing)
    return r


def phase(r: Round) -> RoundPhase:
    """The round's phase now (a call, so the type checker does not keep an old answer)."""
    return r.phase


def find(predicate: Callable[[Deal], bool], first_seat: int = 0, limit: int = 5000) -> int:
    """The first n whose deal from ``seed_bytes(n)`` has the property."""
    for n in range(limit):
        if predicate(deal_for(seed_bytes(n).hex(), first_seat)):
            return n
    raise AssertionError("no seed has that property; widen the search")


def levels_in(hand: Sequence[Card], level: int) -> list[Card]:
    return [c for c in hand if c < SJ and c % 13 == level]


def level_pairs(hand: Sequence[Card], level: int) -> list[Card]:
    counts = count_kinds(hand)
    return [make_card(level, s) for s in range(4) if counts[make_card(level, s)] == 2]


def points(cards: Sequence[Card]) -> int:
    return sum(POINTS[c] for c in cards)


def pass_until(r: Round, seat: int) -> None:
    """Everyone before ``seat`` passes in the window (R20)."""
    while r.to_act() != seat:
        speaker = r.to_act()
        assert speaker is not None
        r.pass_turn(speaker, T0)


def to_window(r: Round, seat: int, cards: Sequence[Card]) -> Round:
    """Round 1: ``seat`` declares ``cards``, all pass while drawing: the window opens."""
    r.declare(seat, tuple(cards), T0)
    for s in range(4):
        r.pass_turn(s, T0)
    return r


def to_playing(r: Round, seat: int, cards: Sequence[Card], bury: Sequence[Card] = ()) -> Round:
    """Round 1: ``seat`` declares, nobody overcalls, ``seat`` buries (default: 8 cards)."""
    to_window(r, seat, cards)
    pass_until(r, seat)
    for _ in range(4):
        speaker = r.to_act()
        assert speaker is not None
        r.pass_turn(speaker, T0)
    full = [*r.hands[seat], *r.bottom]
    r.bury(seat, tuple(bury) or tuple(full[:8]), T0)
    assert phase(r) is RoundPhase.PLAYING
    return r


def first_declarer(d: Deal, level: int = LEVEL_2) -> tuple[int, Card]:
    seat = next(s for s in range(4) if levels_in(d.hands[s], level))
    return seat, levels_in(d.hands[seat], level)[0]


def any_declarer(d: Deal) -> bool:
    return any(levels_in(h, LEVEL_2) for h in d.hands)

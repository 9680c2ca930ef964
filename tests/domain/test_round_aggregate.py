"""The ``Round`` aggregate: given events → when a command → then events (or an error).

"Given" is a history of events replayed into a fresh aggregate (``event.mutate``), so
every case also checks that replay rebuilds the live state. "Then" is the list of new
events, or an error code with nothing appended (version unchanged, nothing pending).
Situations are found by searching deal seeds (``seed_bytes(n)``) for the property a case
needs, never by writing hands; every seat's cards come from the seeded deal (R16, R35).
"""

from __future__ import annotations

import hashlib
from functools import cache, partial

import pytest

from domain.game import round_events as ev
from domain.game.round import Round, RoundPhase
from domain.game.round_events import Pacing, deal_for
from domain.rules.cards import SJ, Card, count_kinds, make_card, parse_cards, suit_of
from domain.rules.errors import IllegalMoveError, InvalidInputError
from domain.rules.ruleset import RuleSet
from domain.rules.shuffle import Deal
from tests.conftest import T0, given, kinds, rejects, seed_bytes, when
from tests.domain.round_situations import (
    LEVEL_2,
    MATCH,
    STANDARD,
    any_declarer,
    at,
    dealt,
    find,
    first_declarer,
    level_pairs,
    levels_in,
    pass_until,
    phase,
    to_window,
)

# -- start and deal (R16, R35) -------------------------------------------------------------


def test_a_round_starts_then_is_dealt_from_a_committed_seed() -> None:
    r = Round.start(MATCH, 1, STANDARD, (0, 0), None, T0)
    assert kinds(r.pending_events) == ["RoundStarted"]
    rejects(r, lambda: r.pass_turn(0, T0), "not-dealt")
    events = when(r, lambda: r.deal(seed_bytes(1), T0))
    assert kinds(events) == ["Dealt"]
    dealt_event = events[0]
    assert isinstance(dealt_event, ev.Dealt)
    assert dealt_event.commitment == hashlib.sha256(seed_bytes(1)).hexdigest()
    assert (dealt_event.deal_no, dealt_event.first_seat, dealt_event.dealer) == (1, 0, None)
    assert phase(r) is RoundPhase.DEALING and r.to_act() is None
    rejects(r, lambda: r.deal(seed_bytes(2), T0), "already-dealt")


def test_impossible_starts_seeds_and_seats_are_invalid_input() -> None:
    with pytest.raises(InvalidInputError):
        Round.start(MATCH, 1, STANDARD, (0, 0), 4, T0)
    r = Round.start(MATCH, 1, STANDARD, (0, 0), None, T0)
    r.collect_events()
    with pytest.raises(InvalidInputError):
        r.deal(b"short", T0)
    assert r.collect_events() == []
    r.deal(seed_bytes(0), T0)
    with pytest.raises(InvalidInputError):
        r.pass_turn(4, T0)


# -- declaring while the cards are drawn (R17, R18) -------------------------------------------


def test_round_one_the_first_declarer_deals_and_the_declaration_stands() -> None:
    n = find(lambda d: len([s for s in range(4) if levels_in(d.hands[s], LEVEL_2)]) >= 2)
    r = given(dealt(n))
    d = r.dealt
    assert d is not None
    first, second = [s for s in range(4) if levels_in(d.hands[s], LEVEL_2)][:2]
    card = levels_in(d.hands[first], LEVEL_2)[0]
    events = when(r, lambda: r.declare(first, (card,), T0))
    assert kinds(events) == ["TrumpDeclared"]
    declared = events[0]
    assert isinstance(declared, ev.TrumpDeclared)
    assert (declared.seat, declared.trump, declared.strength) == (first, suit_of(card), 1)
    assert r.bidding.dealer == first  # R18 抢报
    other = levels_in(d.hands[second], LEVEL_2)[0]
    rejects(r, lambda: r.declare(second, (other,), T0), "already-declared")


@cache
def _declare_table_n() -> int:
    return find(_declare_table_seed)


def _declare_table_seed(d: Deal) -> bool:
    hand = d.hands[0]
    return {make_card(0, 0), make_card(0, 1), make_card(12, 0)} <= set(hand) and (
        make_card(0, 3) not in hand and count_kinds(hand)[SJ] == 2
    )


@pytest.mark.parametrize(
    ("cards", "code"),
    [
        ("SJ", "jokers-cannot-declare"),
        ("SJ SJ", "jokers-cannot-declare"),
        ("AS", "not-a-level-card"),
        ("2S 2H", "not-a-show"),
        ("2S SJ", "not-a-show"),
        ("2D", "cards-not-in-hand"),
    ],
)
def test_round_one_declarations_the_rules_refuse(cards: str, code: str) -> None:
    # seat 0 holds 2S 2H AS SJ SJ and no 2D (level 2, R17)
    r = given(dealt(_declare_table_n()))
    rejects(r, lambda: r.declare(0, tuple(parse_cards(cards)), T0), code)


def test_a_declaration_needs_the_card_already_drawn_at_the_commands_time() -> None:
    pacing = Pacing(interval_ms=100, declare_ms=1_000)

    def late_level_card(d: Deal) -> bool:
        seat_cards = [(k, c) for k, (s, c) in enumerate(d.draws) if s == 1]
        first = next((k for k, c in seat_cards if c < SJ and c % 13 == LEVEL_2), None)
        return first is not None and first >= 20

    n = find(late_level_card)
    r = given(dealt(n, pacing=pacing))
    assert r.dealt is not None
    k, card = next(
        (k, c) for k, (s, c) in enumerate(r.dealt.draws) if s == 1 and levels_in((c,), LEVEL_2)
    )
    # draw k (0-based) reaches seat 1 at k * 100 ms: one ms earlier it is not in hand
    rejects(r, lambda: r.declare(1, (card,), at(k * 100 - 1)), "cards-not-in-hand")
    rejects(r, lambda: r.pass_turn(1, at(k * 100)), "still-dealing")
    assert kinds(when(r, lambda: r.declare(1, (card,), at(k * 100)))) == ["TrumpDeclared"]
    # the drawing's deadline (last card + declare_ms) is claimed by the next command
    deadline = 99 * 100 + 1_000
    assert kinds(when(r, lambda: r.pass_turn(1, at(deadline)))) == ["Passed"]
    events = when(r, lambda: r.pass_turn(1, at(deadline + 1)))
    assert kinds(events) == ["DrawingEnded", "Passed"]
    assert phase(r) is RoundPhase.OVERCALLING and r.to_act() == 2


def test_four_passes_end_the_drawing_and_round_one_opens_the_window() -> None:
    n = find(any_declarer)
    r = dealt(n)
    assert r.dealt is not None
    seat, card = first_declarer(r.dealt)
    r.declare(seat, (card,), T0)
    for s in range(3):
        r.pass_turn(s, T0)
    r = given(r)
    rejects(r, lambda: r.pass_turn(2, T0), "already-passed")
    events = when(r, lambda: r.pass_turn(3, T0))
    assert kinds(events) == ["Passed", "DrawingEnded"]
    ended = events[1]
    assert isinstance(ended, ev.DrawingEnded)
    assert (ended.next_phase, ended.fallback_card) == ("overcalling", None)
    assert phase(r) is RoundPhase.OVERCALLING and r.to_act() == seat
    assert [len(h) for h in r.hands] == [25, 25, 25, 25]
    rejects(r, lambda: r.declare((seat + 1) % 4, (card,), T0), "declaring-closed")


def test_round_one_with_nobody_declaring_is_redealt() -> None:
    r = dealt(0)
    for s in range(3):
        r.pass_turn(s, T0)
    r = given(r)
    events = when(r, lambda: r.pass_turn(3, T0))
    assert kinds(events) == ["Passed", "DrawingEnded"]
    assert isinstance(events[1], ev.DrawingEnded) and events[1].next_phase == "redeal"
    assert phase(r) is RoundPhase.REDEAL and r.to_act() is None  # R19
    rejects(r, lambda: r.pass_turn(0, T0), "overcall-window-closed")
    events = when(r, lambda: r.deal(seed_bytes(99), T0))
    assert kinds(events) == ["Dealt"]
    assert isinstance(events[0], ev.Dealt) and events[0].deal_no == 2
    assert phase(r) is RoundPhase.DEALING and r.bidding.standing is None
    assert r.bidding.dealer is None and r.hands == []


# -- the overcall window (R20) ----------------------------------------------------------------


def _overcall_seed(d: Deal) -> bool:
    """Seat a holds a level card, seat b != a a level pair, seat b+1 a level card."""
    singles = [s for s in range(4) if levels_in(d.hands[s], LEVEL_2)]
    pairs = [s for s in range(4) if level_pairs(d.hands[s], LEVEL_2)]
    return any(
        b != a and (b + 1) % 4 in singles and (b + 1) % 4 != a for a in singles for b in pairs
    )


def _overcall_cast(n: int) -> tuple[int, int, Card, tuple[Card, Card]]:
    """(a, b, a's level card, b's level pair) in the deal of ``_overcall_seed``."""
    d = deal_for(seed_bytes(n).hex(), 0)
    singles = [s for s in range(4) if levels_in(d.hands[s], LEVEL_2)]
    pairs = [s for s in range(4) if level_pairs(d.hands[s], LEVEL_2)]
    a, b = next(
        (a, b)
        for a in singles
        for b in pairs
        if b != a and (b + 1) % 4 in singles and (b + 1) % 4 != a
    )
    pair = level_pairs(d.hands[b], LEVEL_2)[0]
    return a, b, levels_in(d.hands[a], LEVEL_2)[0], (pair, pair)


def test_round_one_overcalls_move_the_deal_and_four_passes_close_the_window() -> None:
    n = find(_overcall_seed)
    d = deal_for(seed_bytes(n).hex(), 0)
    a, b, single, pair = _overcall_cast(n)
    r = given(to_window(dealt(n), a, (single,)))
    assert r.to_act() == a
    rejects(r, lambda: r.overcall(a, (single,), T0), "self-overcall-not-allowed")
    rejects(r, lambda: r.overcall((a + 1) % 4, (single,), T0), "not-your-turn-to-overcall")
    rejects(r, lambda: r.pass_turn((a + 1) % 4, T0), "not-your-turn-to-overcall")
    pass_until(r, b)
    events = when(r, lambda: r.overcall(b, pair, T0))
    assert kinds(events) == ["Overcalled"]
    assert isinstance(events[0], ev.Overcalled) and events[0].strength == 2
    assert r.bidding.dealer == b and r.to_act() == (b + 1) % 4  # 反主反打
    c = (b + 1) % 4
    weak = (levels_in(d.hands[c], LEVEL_2)[0],)
    rejects(r, lambda: r.overcall(c, weak, T0), "declaration-too-weak")
    for s in (c, (c + 1) % 4, (c + 2) % 4):
        assert kinds(when(r, partial(r.pass_turn, s, T0))) == ["Passed"]
    assert kinds(when(r, lambda: r.pass_turn(b, T0))) == ["Passed"]
    assert phase(r) is RoundPhase.BURYING and r.to_act() == b
    rejects(r, lambda: r.pass_turn(b, T0), "overcall-window-closed")
    rejects(r, lambda: r.overcall(c, weak, T0), "overcall-window-closed")


def test_self_overcall_lets_the_declarer_reinforce_a_single_into_a_pair() -> None:
    rules = RuleSet(self_overcall=True)
    n = find(lambda d: bool(level_pairs(d.hands[0], LEVEL_2)))
    r = dealt(n, rules)
    assert r.dealt is not None
    card = level_pairs(r.dealt.hands[0], LEVEL_2)[0]
    r = given(to_window(r, 0, (card,)))
    assert r.to_act() == 0
    events = when(r, lambda: r.overcall(0, (card, card), T0))  # 自保 (§10 self_overcall)
    assert kinds(events) == ["Overcalled"] and r.bidding.standing is not None
    assert (r.bidding.standing.seat, r.bidding.standing.strength) == (0, 2)
    pass_until(r, 0)
    rejects(r, lambda: r.overcall(0, (card, card), T0), "self-overcall-not-allowed")


def test_the_window_closes_at_its_deadline_claimed_by_a_later_command() -> None:
    n = find(any_declarer)
    pacing = Pacing(interval_ms=0, declare_ms=60_000, window_ms=1_000)
    r = dealt(n, pacing=pacing)
    assert r.dealt is not None
    seat, card = first_declarer(r.dealt)
    r = given(to_window(r, seat, (card,)))  # the window opened at T0
    full = tuple([*r.hands[seat], *r.bottom][:8])
    rejects(r, lambda: r.bury(seat, full, at(1_000)), "not-burying-now")  # still open
    events = when(r, lambda: r.bury(seat, full, at(1_001)))
    assert kinds(events) == ["WindowClosed", "BottomBuried"]
    assert phase(r) is RoundPhase.PLAYING


def test_a_pass_does_not_extend_the_window_an_overcall_restarts_it() -> None:
    n = find(_overcall_seed)
    a, b, single, pair = _overcall_cast(n)
    pacing = Pacing(interval_ms=0, declare_ms=60_000, window_ms=1_000)
    r = given(to_window(dealt(n, pacing=pacing), a, (single,)))  # the window opened at T0
    while r.to_act() != b:
        speaker = r.to_act()
        assert speaker is not None
        assert kinds(when(r, partial(r.pass_turn, speaker, at(900)))) == ["Passed"]
    assert kinds(when(r, lambda: r.overcall(b, pair, at(900)))) == ["Overcalled"]
    c = (b + 1) % 4
    assert kinds(when(r, lambda: r.pass_turn(c, at(1_900)))) == ["Passed"]  # 900 + 1000
    events = when(r, lambda: r.bury(b, tuple([*r.hands[b], *r.bottom][:8]), at(1_901)))
    assert kinds(events) == ["WindowClosed", "BottomBuried"]


def test_a_rejected_command_still_sees_the_passed_deadline() -> None:
    """The deadline's events stay pending after the refusal: a passed deadline takes
    effect whatever the command (GameService.act saves them on their own)."""
    n = find(any_declarer)
    r = dealt(n, pacing=Pacing(interval_ms=0, declare_ms=60_000, window_ms=1_000))
    assert r.dealt is not None
    seat, card = first_declarer(r.dealt)
    r = given(to_window(r, seat, (card,)))
    with pytest.raises(IllegalMoveError) as info:
        r.pass_turn(seat, at(1_001))
    assert info.value.code == "overcall-window-closed"
    assert kinds(r.pending_events) == ["WindowClosed"]

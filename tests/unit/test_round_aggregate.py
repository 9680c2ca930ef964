"""The ``Round`` aggregate: given events → when a command → then events (or an error).

"Given" is a history of events replayed into a fresh aggregate (``event.mutate``), so
every case also checks that replay rebuilds the live state. "Then" is the list of new
events, or an error code with nothing appended (version unchanged, nothing pending).
Situations are found by searching deal seeds (``seed_bytes(n)``) for the property a case
needs, never by writing hands; every seat's cards come from the seeded deal (R16, R35).
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from functools import cache, partial
from uuid import UUID

import pytest

from domain.game import round_events as ev
from domain.game.round import Round, RoundPhase
from domain.game.round_events import Pacing, deal_for
from domain.players.combos import random_lead
from domain.rules.cards import BJ, POINTS, SJ, Card, count_kinds, make_card, parse_cards, suit_of
from domain.rules.errors import IllegalMoveError, InvalidInputError
from domain.rules.follow import random_follow
from domain.rules.ruleset import NoDeclaration, RuleSet
from domain.rules.scoring import bottom_multiplier, next_dealer, settle
from domain.rules.shows import matching_joker, possible_declarations
from domain.rules.shuffle import Deal
from tests.conftest import T0, given, kinds, rejects, seed_bytes, when

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


# -- burying (R21) and 炒底 (R20, later rounds) ------------------------------------------------


def test_burying_takes_the_bottom_and_buries_eight() -> None:
    n = find(any_declarer)
    r = dealt(n)
    assert r.dealt is not None
    seat, card = first_declarer(r.dealt)
    to_window(r, seat, (card,))
    pass_until(r, seat)
    rejects(r, lambda: r.bury(seat, tuple(r.hands[seat][:8]), T0), "not-burying-now")
    for _ in range(4):
        speaker = r.to_act()
        assert speaker is not None
        r.pass_turn(speaker, T0)
    r = given(r)
    full = [*r.hands[seat], *r.bottom]
    missing = next(c for c in range(54) if c not in full)
    other = (seat + 1) % 4
    rejects(r, lambda: r.bury(other, tuple(full[:8]), T0), "not-your-turn-to-bury")
    rejects(r, lambda: r.bury(seat, tuple(full[:7]), T0), "bury-eight")
    rejects(r, lambda: r.bury(seat, (*full[:7], missing), T0), "cards-not-in-hand")
    rejects(r, lambda: r.play_cards(seat, (full[0],), T0), "not-playing-yet")
    buried = tuple(full[-8:])
    events = when(r, lambda: r.bury(seat, buried, T0))
    assert kinds(events) == ["BottomBuried"]
    assert isinstance(events[0], ev.BottomBuried) and events[0].cards == buried
    assert phase(r) is RoundPhase.PLAYING and r.to_act() == seat  # the dealer leads (R22)
    assert r.bottom == buried and sorted(r.hands[seat]) == sorted(full[:-8])
    assert r.buried_by == seat


def _chao_di_seed(d: Deal) -> bool:
    """Level 3 (index 1), dealer 2: seat 1 holds a single 3, seat 3 a pair of 3s."""
    return bool(levels_in(d.hands[1], 1)) and bool(level_pairs(d.hands[3], 1))


def test_later_rounds_dealer_buries_first_and_each_overcaller_reburies() -> None:
    rules = RuleSet(weak_hand_redeal=50)
    n = find(_chao_di_seed, first_seat=2)
    r = dealt(n, rules, number=2, levels=(1, 0), dealer=2)
    assert r.dealt is not None and r.level == 1
    r.declare(1, (levels_in(r.dealt.hands[1], 1)[0],), T0)
    assert r.bidding.dealer == 2  # later rounds: declaring chooses trump only (R18)
    for s in range(3):
        r.pass_turn(s, T0)
    r = given(r)
    events = when(r, lambda: r.pass_turn(3, T0))
    assert isinstance(events[1], ev.DrawingEnded) and events[1].next_phase == "burying"
    assert phase(r) is RoundPhase.BURYING and r.to_act() == 2
    first = tuple([*r.hands[2], *r.bottom][:8])
    assert kinds(when(r, lambda: r.bury(2, first, T0))) == ["BottomBuried"]
    assert phase(r) is RoundPhase.OVERCALLING and r.to_act() == 2
    weak = next(s for s in range(4) if points(r.dealt_hand(s)) < 50)
    rejects(r, lambda: r.request_redeal(weak, T0), "redeal-request-closed")  # after a bury
    pass_until(r, 3)
    pair = (level_pairs(r.hands[3], 1)[0],) * 2
    events = when(r, lambda: r.overcall(3, pair, T0))
    assert kinds(events) == ["Overcalled"]
    assert phase(r) is RoundPhase.BURYING and r.to_act() == 3 and r.bidding.dealer == 2
    assert not r.bidding.bury_takes_bottom
    taken = [*r.hands[3], *r.bottom]  # the overcaller takes the 8 buried cards (炒底)
    assert sorted(r.bottom) == sorted(first)
    again = tuple(taken[-8:])
    assert kinds(when(r, lambda: r.bury(3, again, T0))) == ["BottomBuried"]
    assert r.bottom == again and sorted(r.hands[3]) == sorted(taken[:-8])
    assert phase(r) is RoundPhase.OVERCALLING and r.to_act() == 0
    for s in (0, 1, 2, 3):
        assert kinds(when(r, partial(r.pass_turn, s, T0))) == ["Passed"]
    assert phase(r) is RoundPhase.PLAYING and r.to_act() == 2  # the dealer still leads
    assert r.bidding.trump == pair[0] // 13 and r.buried_by == 3


def test_later_rounds_with_nobody_declaring_take_trump_from_the_bottom() -> None:
    r = dealt(0, number=2, levels=(4, 2), dealer=1)
    for s in range(3):
        r.pass_turn(s, T0)
    r = given(r)
    assert r.dealt is not None
    events = when(r, lambda: r.pass_turn(3, T0))
    ended = events[1]
    assert isinstance(ended, ev.DrawingEnded)
    assert (ended.next_phase, ended.fallback_card) == ("burying", r.dealt.bottom[2])  # R19
    assert r.bidding.trump == suit_of(r.dealt.bottom[2]) and r.to_act() == 1
    full = [*r.hands[1], *r.bottom]
    assert kinds(when(r, lambda: r.bury(1, tuple(full[:8]), T0))) == ["BottomBuried"]
    assert phase(r) is RoundPhase.PLAYING  # no window: nothing stands to be overcalled


def test_later_rounds_with_nobody_declaring_redeal_in_the_redeal_variant() -> None:
    rules = RuleSet(no_declaration=NoDeclaration.REDEAL)
    r = dealt(0, rules, number=3, levels=(4, 2), dealer=1)
    for s in range(3):
        r.pass_turn(s, T0)
    r = given(r)
    events = when(r, lambda: r.pass_turn(3, T0))
    assert isinstance(events[1], ev.DrawingEnded) and events[1].next_phase == "redeal"
    assert phase(r) is RoundPhase.REDEAL
    dealt_again = when(r, lambda: r.deal(seed_bytes(7), T0))
    assert isinstance(dealt_again[0], ev.Dealt) and dealt_again[0].first_seat == 1


# -- variant declare_with_joker (R17, R18) ------------------------------------------------------

JOKER = RuleSet(declare_with_joker=True)


def test_declaring_with_joker_needs_the_matching_colour_joker() -> None:
    def holds_level_and_joker(d: Deal) -> bool:
        hand = d.hands[0]
        return any(matching_joker(suit_of(c) or 0) in hand for c in levels_in(hand, LEVEL_2))

    r = given(dealt(find(holds_level_and_joker), JOKER))
    assert r.dealt is not None
    hand = r.dealt.hands[0]
    card = next(c for c in levels_in(hand, LEVEL_2) if matching_joker(c // 13) in hand)
    rejects(r, lambda: r.declare(0, (card,), T0), "no-joker-of-matching-colour")
    wrong = SJ if matching_joker(card // 13) == BJ else BJ
    rejects(r, lambda: r.declare(0, (card, wrong), T0), "no-joker-of-matching-colour")
    events = when(r, lambda: r.declare(0, (card, matching_joker(card // 13)), T0))
    assert kinds(events) == ["TrumpDeclared"] and r.bidding.dealer == 0


LEVEL_7 = 5  # team {1,3}'s level in the late-declaring cases


def _late_declaring_seed(d: Deal) -> bool:
    """Dealer 0 at level 2: neither 0 nor 2 can declare with a joker; seat 1 can at its
    own team's level 7 (a late declarer's team defends at its own level, R18)."""
    can = [bool(possible_declarations(d.hands[s], LEVEL_2, JOKER)) for s in (0, 2)]
    return not any(can) and bool(possible_declarations(d.hands[1], LEVEL_7, JOKER))


def test_with_joker_the_other_team_declares_late_and_takes_the_deal() -> None:
    n = find(_late_declaring_seed)
    r = given(dealt(n, JOKER, number=2, levels=(LEVEL_2, LEVEL_7), dealer=0))
    assert r.dealt is not None
    show = possible_declarations(r.dealt.hands[1], LEVEL_7, JOKER)[0]
    rejects(r, lambda: r.declare(1, show.cards, T0), "not-eligible-to-declare")
    for s in range(3):
        r.pass_turn(s, T0)
    r = given(r)
    events = when(r, lambda: r.pass_turn(3, T0))
    assert isinstance(events[1], ev.DrawingEnded) and events[1].next_phase == "declaring"
    assert phase(r) is RoundPhase.DECLARING and r.to_act() == 1
    rejects(r, lambda: r.declare(3, show.cards, T0), "not-your-turn-to-declare")
    rejects(r, lambda: r.pass_turn(3, T0), "not-your-turn-to-declare")
    assert kinds(when(r, lambda: r.declare(1, show.cards, T0))) == ["TrumpDeclared"]
    assert phase(r) is RoundPhase.BURYING and r.to_act() == 1 and r.bidding.dealer == 1
    assert r.level == LEVEL_7 and r.bidding.trump == show.trump


def test_with_joker_two_late_passes_fall_back_to_the_bottom() -> None:
    n = find(_late_declaring_seed)
    r = dealt(n, JOKER, number=2, levels=(LEVEL_2, LEVEL_7), dealer=0)
    for s in range(4):
        r.pass_turn(s, T0)
    r = given(r)
    assert kinds(when(r, lambda: r.pass_turn(1, T0))) == ["Passed"]
    assert r.to_act() == 3
    assert kinds(when(r, lambda: r.pass_turn(3, T0))) == ["Passed"]
    assert phase(r) is RoundPhase.BURYING and r.to_act() == 0 and r.bidding.fallback


# -- weak-hand redeal (暴动, §10) ---------------------------------------------------------------

WEAK = RuleSet(weak_hand_redeal=30)


def _weak_seed(d: Deal) -> bool:
    weak = [s for s in range(4) if points(d.hands[s]) < 30]
    return bool(weak) and len(weak) < 4 and any_declarer(d)


def test_a_weak_hand_asks_for_a_redeal_after_the_deal_and_before_burying() -> None:
    n = find(_weak_seed)
    r = dealt(n, WEAK)
    assert r.dealt is not None
    weak = next(s for s in range(4) if points(r.dealt.hands[s]) < 30)
    strong = next(s for s in range(4) if points(r.dealt.hands[s]) >= 30)
    rejects(r, lambda: r.request_redeal(weak, T0), "redeal-request-closed")  # still drawing
    seat, card = first_declarer(r.dealt)
    r = given(to_window(r, seat, (card,)))
    rejects(r, lambda: r.request_redeal(strong, T0), "weak-hand-too-strong")
    events = when(r, lambda: r.request_redeal(weak, T0))
    assert kinds(events) == ["Redealt"]
    redealt = events[0]
    assert isinstance(redealt, ev.Redealt) and (redealt.reason, redealt.seat) == ("weak_hand", weak)
    assert phase(r) is RoundPhase.REDEAL
    events = when(r, lambda: r.deal(seed_bytes(n + 1), T0))
    assert isinstance(events[0], ev.Dealt) and events[0].deal_no == 2
    assert events[0].first_seat == 0  # round 1 is drawn from seat 0 again (R16, R18 抢报)
    assert phase(r) is RoundPhase.DEALING and r.bidding.standing is None


def test_without_the_variant_there_is_no_weak_hand_redeal() -> None:
    n = find(any_declarer)
    r = dealt(n)
    assert r.dealt is not None
    seat, card = first_declarer(r.dealt)
    r = given(to_window(r, seat, (card,)))
    rejects(r, lambda: r.request_redeal(seat, T0), "weak-hand-redeal-off")


# -- playing (R22–R25) --------------------------------------------------------------------------


def _playing(n: int, rules: RuleSet = STANDARD, bury: Sequence[Card] = ()) -> Round:
    r = dealt(n, rules)
    assert r.dealt is not None
    seat, card = first_declarer(r.dealt)
    return given(to_playing(r, seat, (card,), bury))


def test_plays_the_rules_refuse() -> None:
    r = _playing(find(any_declarer))
    play = r.play
    assert play is not None
    leader, hand = play.turn, play.hands[play.turn]
    cat = play.ctx.category
    rejects(r, lambda: r.play_cards((leader + 1) % 4, (hand[0],), T0), "not-your-turn")
    rejects(r, lambda: r.play_cards(leader, (), T0), "empty-play")
    missing = next(c for c in range(54) if c not in hand)
    rejects(r, lambda: r.play_cards(leader, (missing,), T0), "cards-not-in-hand")
    mixed = next((a, b) for a in hand for b in hand if cat[a] != cat[b])
    rejects(r, lambda: r.play_cards(leader, mixed, T0), "mixed-lead")
    follower = (leader + 1) % 4
    lead = next(
        c
        for c in hand
        if any(cat[x] == cat[c] for x in play.hands[follower])
        and any(cat[x] != cat[c] for x in play.hands[follower])
    )
    assert kinds(when(r, lambda: r.play_cards(leader, (lead,), T0))) == ["CardPlayed"]
    off = next(x for x in play.hands[follower] if cat[x] != cat[lead])
    rejects(r, lambda: r.play_cards(follower, (off,), T0), "illegal-follow")


def test_a_failed_throw_records_the_attempt_then_plays_the_forced_part() -> None:
    rules = RuleSet(throw_penalty_points=10)

    def failing_throw(r: Round) -> tuple[Card, ...] | None:
        play = r.play
        assert play is not None
        hand = sorted(set(play.hands[play.turn]), key=play.ctx.rank_key.__getitem__)
        for category in range(4):  # the plain suits
            low = [c for c in hand if play.ctx.category[c] == category][:2]
            if len(low) == 2 and play.check(play.turn, low).attempted is not None:
                return tuple(low)
        return None

    for n in range(200):
        if not any_declarer(deal_for(seed_bytes(n).hex(), 0)):
            continue
        r = _playing(n, rules)
        throw = failing_throw(r)
        if throw is not None:
            break
    else:
        raise AssertionError("no seed gives a failing throw")
    assert r.play is not None
    leader = r.play.turn
    events = when(r, lambda: r.play_cards(leader, throw, T0))
    assert kinds(events) == ["ThrowFailed", "CardPlayed"]
    failed, played = events
    assert isinstance(failed, ev.ThrowFailed) and isinstance(played, ev.CardPlayed)
    assert failed.attempted == throw and played.cards == failed.forced
    assert len(failed.forced) == 1 and failed.forced[0] in throw
    assert failed.penalty == 20  # a defender failed: + 10 per card (§10)
    assert r.penalties == [20] and r.play.failed_throws == [(leader, throw)]


def _random_play(r: Round, rng: random.Random) -> tuple[int, tuple[Card, ...]]:
    play = r.play
    assert play is not None
    hand = play.hands[play.turn]
    if play.lead_shape is None:
        return play.turn, tuple(random_lead(play.ctx, hand, rng, 0.0))
    return play.turn, tuple(random_follow(play.ctx, play.lead_shape, hand, rng))


def test_the_last_trick_scores_the_round_with_the_bottom_bonus() -> None:
    n = find(any_declarer)
    d = deal_for(seed_bytes(n).hex(), 0)
    seat, _ = first_declarer(d)
    bury = sorted([*d.hands[seat], *d.bottom], key=lambda c: -POINTS[c])[:8]  # points
    for attempt in range(100):
        r = _playing(n, bury=bury)
        rng = random.Random(attempt)
        play = r.play
        assert play is not None
        while not (
            len(play.trick) == 3 and sum(map(len, play.hands)) == len(play.hands[play.turn])
        ):
            r.play_cards(*_random_play(r, rng), T0)
        last = _random_play(r, rng)
        outcome = play.check(*last)
        if outcome.winner is not None and outcome.winner % 2 == r.attackers:
            break
    else:
        raise AssertionError("the attackers never won the last trick")
    r = given(r)
    events = when(r, lambda: r.play_cards(*last, T0))
    assert kinds(events) == ["CardPlayed", "TrickWon", "RoundScored"]
    won, scored = events[1], events[2]
    assert isinstance(won, ev.TrickWon) and isinstance(scored, ev.RoundScored)
    assert won.winner % 2 == r.attackers
    assert r.play is not None and r.play.last_lead is not None
    multiplier = bottom_multiplier(r.play.last_lead, STANDARD)
    assert scored.bottom_cards == tuple(bury) and scored.bottom_points == points(bury) > 0
    assert (scored.multiplier, scored.bottom_bonus) == (multiplier, points(bury) * multiplier)
    assert scored.attackers_total == scored.trick_points + scored.bottom_bonus  # R29
    settlement = settle(scored.attackers_total, STANDARD)
    assert (scored.levels_gained, scored.defenders_keep, scored.band) == (
        settlement.levels,
        settlement.defenders_keep,
        settlement.band,
    )
    assert scored.next_dealer == next_dealer(seat, settlement.defenders_keep)  # R31
    assert scored.seed == seed_bytes(n).hex()  # R35: revealed at the end
    assert phase(r) is RoundPhase.SCORED and r.result == scored
    rejects(r, lambda: r.play_cards(won.winner, (0,), T0), "round-over")
    rejects(r, lambda: r.request_redeal(0, T0), "redeal-request-closed")

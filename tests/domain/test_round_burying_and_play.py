"""The ``Round`` aggregate after the deal: burying (R21) and 炒底 (R20, later rounds), the
``declare_with_joker`` and weak-hand redeal (暴动, §10) variants, and playing (R22–R25) to
the score (given events → when a command → then events, as in
:mod:`tests.domain.test_round_aggregate`).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from functools import partial

from domain.bots.combos import random_lead
from domain.game import round_events as ev
from domain.game.round import Round, RoundPhase
from domain.game.round_events import deal_for
from domain.rules.cards import BJ, POINTS, SJ, Card, suit_of
from domain.rules.follow import random_follow
from domain.rules.ruleset import NoDeclaration, RuleSet
from domain.rules.scoring import bottom_multiplier, next_dealer, settle
from domain.rules.shows import matching_joker, possible_declarations
from domain.rules.shuffle import Deal
from tests.conftest import T0, given, kinds, rejects, seed_bytes, when
from tests.domain.round_situations import (
    LEVEL_2,
    STANDARD,
    any_declarer,
    dealt,
    find,
    first_declarer,
    level_pairs,
    levels_in,
    pass_until,
    phase,
    points,
    to_playing,
    to_window,
)

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

"""The search bot (domain/bots/strong): legal (R21–R23), deterministic, and blind to
what its seat may not see (R33).

The budgets here are tiny (a few dozen simulated plays): these tests are about
correctness, never strength — strength is measured by ``make bench-bots``.
"""

from __future__ import annotations

import copy
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.bots import BotView, HeuristicPlayer, Player, RandomPlayer, StrongPlayer
from domain.bots.inference import hidden_of, sample_world
from domain.bots.search import successive_halving
from domain.bots.table import RoundRecord, play_round
from domain.bots.view import PlayViews
from domain.rules.bidding import Bidding
from domain.rules.cards import NUM_KINDS, count_kinds, parse_cards
from domain.rules.context import trump_context
from domain.rules.play import TrickPlay
from domain.rules.ruleset import STANDARD
from domain.rules.shapes import decompose
from domain.rules.shows import Show, Strength
from domain.rules.shuffle import deal, shuffle_deck
from tests.api.rest import new_service
from tests.commands import claim_deadlines, create_match, run_bots, take_seat
from tests.conftest import examples

SMALL = 400
"""Simulated plays per decision in these tests: a few rollouts (about 5 at the first
trick, dozens near the end), enough to exercise the search, far from the default."""
HEURISTIC = HeuristicPlayer()


def _round(seed: int, players: list[Player]) -> RoundRecord:
    """A later round (R18) of the given seed; play_round checks every play (R22, R23)."""
    rng = random.Random(seed)
    dealer = rng.randrange(4)
    bidding = Bidding.later_round(STANDARD, dealer, (rng.randrange(13), rng.randrange(13)))
    seed_bytes = rng.randbytes(32)
    record = play_round(bidding, deal(shuffle_deck(seed_bytes), dealer), players, rng)
    assert record is not None
    return record


# -- legality and determinism -----------------------------------------------------------


@pytest.mark.parametrize(
    ("seed", "others"),
    [(s, "heuristic") for s in range(2)] + [(s, "random") for s in range(2, 4)],
)
def test_every_decision_is_legal(seed: int, others: str) -> None:
    """R21 (8 own cards buried), R22/R23 (every play checked by the engine's TrickPlay)."""
    strong = StrongPlayer(SMALL)
    other: Player = HEURISTIC if others == "heuristic" else RandomPlayer(throw_chance=0.3)
    record = _round(seed, [strong, other, strong, other])
    assert len(record.bottom) == 8
    assert sum(count_kinds(record.played)) + 8 == 108


@pytest.mark.parametrize("seed", [11])
def test_same_seed_same_round(seed: int) -> None:
    """Deterministic for a seed: the same deal and rng give the same round, move by move."""
    players: list[Player] = [StrongPlayer(SMALL), HEURISTIC, StrongPlayer(SMALL), HEURISTIC]
    first = _round(seed, players)
    second = _round(seed, players)
    assert first.played == second.played
    assert first.bottom == second.bottom
    assert first.total == second.total


# -- no peeking (R33) -------------------------------------------------------------------


def _midround(seed: int, plays: int) -> tuple[TrickPlay, int]:
    """A play phase after ``plays`` heuristic plays; the seat to play next."""
    rng = random.Random(seed)
    ctx = trump_context(rng.randrange(13), rng.choice([None, 0, 1, 2, 3]))
    dealt = deal(shuffle_deck(rng.randbytes(32)), 0)
    dealer = rng.randrange(4)
    tp = TrickPlay(ctx, [list(h) for h in dealt.hands], dealer, (dealer + 1) % 2)
    views = PlayViews(tp, dealer=dealer, rules=STANDARD, burier=-1, bottom=None)
    for _ in range(plays):
        if tp.finished or len(tp.hands[tp.turn]) <= 1:
            break
        seat = tp.turn
        tp.play(seat, HEURISTIC.play(views.view(seat), rng))
    return tp, tp.turn


def _swap_hidden(tp: TrickPlay, me: int, rng: random.Random) -> TrickPlay:
    """Another deal of the same public state: cards of the same category swapped between
    two other seats (voids and sizes unchanged; ``me``'s hand and every play the same)."""
    other = copy.deepcopy(tp)
    a, b = rng.sample([s for s in range(4) if s != me], 2)
    cat = tp.ctx.category
    for _ in range(6):
        if not other.hands[a] or not other.hands[b]:
            break
        x = rng.choice(other.hands[a])
        same = [y for y in other.hands[b] if cat[y] == cat[x] and y != x]
        if same:
            y = rng.choice(same)
            other.hands[a].remove(x)
            other.hands[b].remove(y)
            other.hands[a].append(y)
            other.hands[b].append(x)
    return other


@settings(max_examples=examples(10), deadline=None)
@given(seed=st.integers(0, 10_000), plays=st.integers(0, 60))
def test_decision_ignores_other_hands(seed: int, plays: int) -> None:
    """R33: whatever the hidden hands of the other seats, the same view and the same rng
    give the same play — the bot's only input is its seat's view."""
    tp, me = _midround(seed, plays)
    other = _swap_hidden(tp, me, random.Random(seed))
    dealer = tp.tricks[0][0] if tp.tricks else tp.leader
    view = PlayViews(tp, dealer=dealer, rules=STANDARD, burier=-1, bottom=None).view(me)
    twin = PlayViews(other, dealer=dealer, rules=STANDARD, burier=-1, bottom=None).view(me)
    assert view == twin  # the swap changed nothing this seat may see
    strong = StrongPlayer(SMALL)
    assert strong.play(view, random.Random(seed)) == strong.play(twin, random.Random(seed))


@settings(max_examples=examples(15), deadline=None)
@given(seed=st.integers(0, 10_000), plays=st.integers(1, 80))
def test_sampled_worlds_agree_with_public_info(seed: int, plays: int) -> None:
    """Sampled worlds keep this seat's hand, give every other seat its hand size, hold only
    unseen cards (R3, R33), and never give a card of a category to a seat that showed a
    void in it (R23.1)."""
    tp, me = _midround(seed, plays)
    dealer = tp.tricks[0][0] if tp.tricks else tp.leader
    view = PlayViews(tp, dealer=dealer, rules=STANDARD, burier=-1, bottom=None).view(me)
    hidden = hidden_of(view)
    hands, bottom = sample_world(hidden, view, random.Random(seed))
    assert sorted(hands[me]) == sorted(view.hand)
    for s in range(4):
        assert len(hands[s]) == len(tp.hands[s])
    assert len(bottom) == 8
    counts = count_kinds([c for h in hands for c in h] + bottom + list(tp.played))
    assert counts == [2] * NUM_KINDS
    for s in range(4):
        for c in hands[s]:
            if s != me and hidden.void[s] >> tp.ctx.category[c] & 1:
                pytest.fail(f"seat {s} is void in category {tp.ctx.category[c]}")


def test_void_is_read_from_a_failed_follow() -> None:
    """R23.1: seat 1 played a heart on a spade lead, so it holds no spades now."""
    ctx = trump_context(0, 1)  # level 2, hearts trump
    lead, follow = parse_cards("AS"), parse_cards("5C")
    view = BotView(
        2, ctx, tuple(parse_cards("3D 4D")), 0, 1, ((0, tuple(lead)), (1, tuple(follow))),
        decompose(ctx, lead), (), 0, None, STANDARD,
    )  # fmt: skip
    hidden = hidden_of(view)
    assert hidden.void[1] == 1 << 0  # spades
    assert hidden.void[0] == hidden.void[3] == 0


# -- the search ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("values", "chosen"),
    [
        ((0.0, 0.0, 0.0), 0),  # ties keep the default (the heuristic's choice)
        ((0.0, 1.0, 0.0), 1),  # a clearly better challenger wins
        ((0.5, 0.4, 0.3, 0.2, 0.1), 0),
        ((0.0, 0.2, 0.3, 2.0, 0.1), 3),
    ],
)
def test_successive_halving(values: tuple[float, ...], chosen: int) -> None:
    rng = random.Random(0)

    def value(world: float, i: int) -> float:
        return values[i] + world  # common noise per world, as common random numbers give

    got = successive_halving(len(values), 40, lambda: rng.gauss(0, 1), value)
    assert got == chosen


def test_one_candidate_needs_no_search() -> None:
    assert successive_halving(1, 10, lambda: pytest.fail("no world"), lambda w, i: 0.0) == 0


def test_a_strong_seat_plays_through_the_service() -> None:
    """services/bots: a seat of kind ``strong`` moves through the command path, from its
    redacted view (R33), like any bot: declaring, burying and playing (R17–R23)."""
    service = new_service()
    match_id = create_match(service, STANDARD, name="strong")
    kinds = ("strong", "heuristic", "strong", "heuristic")
    for seat, kind in enumerate(kinds):
        take_seat(service, match_id, seat, f"p{seat}", kind)
    clock = service.clock
    plays = 0
    for _ in range(50):
        clock.advance(seconds=100)  # type: ignore[attr-defined]  # the tests' FakeClock
        claim_deadlines(service, match_id)
        run = run_bots(service, match_id, 30)
        assert run.stopped in ("waiting", "limit")
        round_ = service.current_round(service.get_match(match_id))
        if round_ is not None and round_.play is not None:
            plays = len(round_.play.played)
            if plays >= 8:
                break
    assert plays >= 8


@pytest.mark.parametrize(
    ("shower", "dealer", "kept"),
    [
        (1, 0, True),  # R17: seat 1 declared with 2H and never buried: it still holds it
        (0, 0, False),  # R21: the dealer may have buried what it showed
    ],
)
def test_shown_cards_stay_with_their_seat(shower: int, dealer: int, kept: bool) -> None:
    ctx = trump_context(0, 1)  # level 2, hearts trump
    two_h = parse_cards("2H")[0]
    show = Show(shower, (two_h,), 1, Strength.SINGLE)
    hand = [c for c in deal(shuffle_deck(bytes(32)), 0).hands[2] if c != two_h][:24]
    view = BotView(
        2, ctx, (*hand, two_h), dealer, (dealer + 1) % 2, (), None, (), 0, None, STANDARD, (),
        (show,),
    )  # fmt: skip
    hidden = hidden_of(view)
    assert hidden.holds[shower] == ((two_h,) if kept else ())
    if kept:
        for seed in range(5):
            hands, _ = sample_world(hidden, view, random.Random(seed))
            assert two_h in hands[shower]


def test_a_deadline_cuts_the_search_short() -> None:
    """``stop`` (a caller's deadline) ends the search after the first world: still legal."""
    calls: list[int] = []

    def stop() -> bool:
        calls.append(1)
        return True

    strong = StrongPlayer(100_000, stop=stop)
    record = _round(21, [strong, HEURISTIC, strong, HEURISTIC])
    assert record.plays > 0 and calls

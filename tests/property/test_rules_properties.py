"""Property tests of the rules engine: whole random rounds and the invariants R3–R27 imply.

Two drivers share one checked round simulator (:func:`play_random_round`): Hypothesis
(random level, trump and shuffle, shrinkable) and a plain seeded loop of thousands of
rounds. Every trick is checked against an independent, straightforward reading of R24
(:func:`tests.property.rules_reference.reference_winner`), every follow against R23.1
counted by hand. Also here: decompose (R12–R15) and the order (R8–R11, R14); the trick's
properties (R22–R25) are in :mod:`tests.property.test_trick_properties`.
"""

from __future__ import annotations

import itertools
import random
from collections import Counter
from collections.abc import Sequence
from typing import NamedTuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.rules.cards import NUM_KINDS, POINTS, Card, format_cards, full_deck
from domain.rules.context import TrumpContext, trump_context
from domain.rules.follow import check_follow, random_follow
from domain.rules.play import TrickPlay
from domain.rules.shapes import ShapeKind, decompose
from domain.rules.throws import check_throw
from domain.rules.trick import trick_winner
from tests.conftest import examples
from tests.property.rules_reference import (
    TRUMPS,
    _pair_positions,
    levels,
    reference_winner,
    rngs,
    strength,
    trumps,
)

# --- the checked random round --------------------------------------------------------------


def random_lead(ctx: TrumpContext, hand: Sequence[Card], rng: random.Random) -> list[Card]:
    """A single, a pair or tractor, or a throw attempt (possibly failing) of one category."""
    cat = rng.choice(sorted({ctx.category[c] for c in hand}))
    in_cat = sorted((c for c in hand if ctx.category[c] == cat), key=ctx.sort_key)
    roll = rng.random()
    structured = [comp for comp in decompose(ctx, in_cat).components if comp.width >= 1]
    if len(in_cat) == 1 or roll < 0.35:
        return [rng.choice(in_cat)]
    if roll < 0.7 and structured:
        return list(rng.choice(structured).cards)
    if roll < 0.75:
        return in_cat
    return rng.sample(in_cat, rng.randint(2, min(len(in_cat), 8)))


class RoundStats(NamedTuple):
    tricks: int
    failed_throws: int


def play_random_round(level: int, trump: int | None, rng: random.Random) -> RoundStats:
    """Deal (R16), play every trick with random leads and random_follow; check invariants."""
    ctx = trump_context(level, trump)
    deck = full_deck()
    rng.shuffle(deck)
    dealer = rng.randrange(4)
    hands: list[list[Card]] = [[] for _ in range(4)]
    for k in range(100):
        hands[(dealer + k) % 4].append(deck[k])
    bottom = deck[100:]
    game = TrickPlay(ctx, hands, leader=dealer, attackers=(dealer + 1) % 2)
    played_by = [0, 0, 0, 0]
    trick_points_total = 0
    attacker_points = 0
    while not game.finished:
        leader = game.turn
        attempt = random_lead(ctx, game.hands[leader], rng)
        others = [game.hands[s] for s in range(4) if s != leader]
        outcome = game.play(leader, attempt)
        if outcome.attempted is None:
            assert outcome.cards == tuple(attempt)
        else:  # R22: a failed throw plays one of its components
            throw = check_throw(ctx, decompose(ctx, attempt), others)
            assert not throw.valid and throw.forced == outcome.cards
            assert Counter(outcome.cards) <= Counter(attempt)
        lead = decompose(ctx, outcome.cards)
        assert lead.kind is not ShapeKind.MIXED
        plays = [list(outcome.cards)]
        played_by[leader] += len(outcome.cards)
        for _ in range(3):
            seat = game.turn
            hand = list(game.hands[seat])
            play = random_follow(ctx, lead, hand, rng)
            verdict = check_follow(ctx, lead, hand, play)
            assert verdict.legal, (ctx.describe(), format_cards(hand), format_cards(play), verdict)
            # R23.1 / R25 counted by hand: as many led-category cards as possible
            held = sum(1 for c in hand if ctx.category[c] == lead.category)
            shown = sum(1 for c in play if ctx.category[c] == lead.category)
            assert len(play) == lead.size and shown == min(held, lead.size)
            outcome = game.play(seat, play)
            plays.append(list(outcome.cards))
            played_by[seat] += len(play)
        assert outcome.trick_complete and outcome.winner is not None
        index = trick_winner(ctx, plays, lead)
        assert index == reference_winner(ctx, plays, lead), [format_cards(p) for p in plays]
        assert outcome.winner == (leader + index) % 4 == game.turn  # R22: winner leads
        points = sum(POINTS[c] for p in plays for c in p)
        assert outcome.points == points
        trick_points_total += points
        if outcome.winner % 2 == game.attackers:
            attacker_points += points
    # R3: every card is somewhere, exactly once
    assert all(not h for h in game.hands)
    assert Counter(game.played) + Counter(bottom) == Counter(full_deck())
    assert played_by == [25, 25, 25, 25]
    # R26 / R27
    assert trick_points_total + sum(POINTS[c] for c in bottom) == 200
    assert game.attacker_points == attacker_points
    return RoundStats(game.tricks_done, len(game.failed_throws))


@settings(max_examples=examples(150), deadline=None)
@given(level=levels, trump=trumps, rng=rngs)
def test_random_rounds_conserve_cards_and_points(
    level: int, trump: int | None, rng: random.Random
) -> None:
    """R3, R16, R22–R27 over a whole random round."""
    stats = play_random_round(level, trump, rng)
    assert 1 <= stats.tricks <= 25


@pytest.mark.slow
def test_thousands_of_rounds() -> None:
    """The same invariants over 2000 seeded rounds (perft-style volume, not shrinkable)."""
    tricks = failed = 0
    for seed in range(2000):
        rng = random.Random(seed)
        stats = play_random_round(rng.randrange(13), rng.choice(TRUMPS), rng)
        tricks += stats.tricks
        failed += stats.failed_throws
    assert failed > 0, "the simulator should exercise failed throws (R22)"
    assert tricks > 2000


# --- decompose (R12–R15) -------------------------------------------------------------------


@st.composite
def one_category(draw: st.DrawFn) -> tuple[TrumpContext, list[Card]]:
    """A context and a random non-empty multiset (≤ 2 copies) of one suit category."""
    ctx = trump_context(draw(levels), draw(trumps))
    cat = draw(st.sampled_from(sorted(set(ctx.category))))
    kinds = [k for k in range(NUM_KINDS) if ctx.category[k] == cat]
    counts = draw(st.lists(st.sampled_from([0, 0, 1, 2]), min_size=len(kinds), max_size=len(kinds)))
    chosen = [k for k, n in zip(kinds, counts, strict=True) for _ in range(n)] or [kinds[0]]
    return ctx, list(draw(st.permutations(chosen)))


def _longest_pair_run(ctx: TrumpContext, cards: Sequence[Card]) -> int:
    positions = sorted(_pair_positions(ctx, cards))
    best = run = 0
    for i, pos in enumerate(positions):
        run = run + 1 if i and pos == positions[i - 1] + 1 else 1
        best = max(best, run)
    return best


@settings(max_examples=examples(300), deadline=None)
@given(one_category())
def test_decompose_returns_exactly_its_input(sample: tuple[TrumpContext, list[Card]]) -> None:
    """R15: the components partition the cards; each is a single, pair or tractor (R12–R14)."""
    ctx, cards = sample
    shape = decompose(ctx, cards)
    assert shape.size == len(cards)
    assert shape.category == ctx.category[cards[0]]
    assert Counter(c for comp in shape.components for c in comp.cards) == Counter(cards)
    for comp in shape.components:
        assert comp.top == max(ctx.order[c] for c in comp.cards)
        if comp.width == 0:
            assert len(comp.cards) == 1
            continue
        pairs = [comp.cards[i : i + 2] for i in range(0, len(comp.cards), 2)]
        assert len(pairs) == comp.width and all(a == b for a, b in pairs)
        orders = [ctx.order[a] for a, _ in pairs]
        assert orders == list(range(orders[0], orders[0] + comp.width))
    keys = [(c.width, c.top) for c in shape.components]
    assert keys == sorted(keys, reverse=True)
    # no identical pair is split (R13) and the largest component is the longest run (R15)
    n_pairs = sum(1 for n in Counter(cards).values() if n == 2)
    assert shape.total_pairs == n_pairs
    run = _longest_pair_run(ctx, cards)
    assert shape.largest.width == (run if run >= 2 else min(run, 1))
    expected = (
        ShapeKind.THROW
        if len(shape.components) > 1
        else (ShapeKind.SINGLE, ShapeKind.PAIR, ShapeKind.TRACTOR)[min(shape.largest.width, 2)]
    )
    assert shape.kind is expected


@settings(max_examples=examples(200), deadline=None)
@given(level=levels, trump=trumps, rng=rngs, size=st.integers(min_value=1, max_value=12))
def test_decompose_mixed_iff_several_categories(
    level: int, trump: int | None, rng: random.Random, size: int
) -> None:
    ctx = trump_context(level, trump)
    cards = rng.sample(full_deck(), size)
    shape = decompose(ctx, cards)
    several = len({ctx.category[c] for c in cards}) > 1
    assert (shape.kind is ShapeKind.MIXED) is several
    if several:
        assert shape.category is None and shape.components == ()


# --- order (R8–R11, R14) -------------------------------------------------------------------


@pytest.mark.parametrize("level", range(13), ids=[f"R8-R10-level{i}" for i in range(13)])
def test_order_matches_rules_exhaustively(level: int) -> None:
    """beats / adjacent agree with R8–R10 read directly, for every pair of kinds."""
    for trump in TRUMPS:
        ctx = trump_context(level, trump)
        values: dict[int, list[int]] = {}
        for k in range(NUM_KINDS):
            cat, value = strength(level, trump, k)
            assert ctx.category[k] == cat
            values.setdefault(cat, []).append(value)
        ladders = {cat: sorted(set(v)) for cat, v in values.items()}
        for a, b in itertools.product(range(NUM_KINDS), repeat=2):
            (ca, va), (cb, vb) = strength(level, trump, a), strength(level, trump, b)
            same = ca == cb
            assert ctx.beats(a, b) is (same and va > vb)
            ladder = ladders[ca]
            next_up = same and ladder.index(vb) == ladder.index(va) + 1
            assert ctx.adjacent(a, b) is next_up


@settings(max_examples=examples(300), deadline=None)
@given(
    level=levels,
    trump=trumps,
    triple=st.lists(st.integers(0, NUM_KINDS - 1), min_size=3, max_size=3),
)
def test_beats_is_a_strict_order(level: int, trump: int | None, triple: list[int]) -> None:
    """R11: irreflexive, asymmetric, transitive; equal order ⇔ neither beats within a category."""
    ctx = trump_context(level, trump)
    a, b, c = triple
    assert not ctx.beats(a, a)
    assert not (ctx.beats(a, b) and ctx.beats(b, a))
    if ctx.beats(a, b) and ctx.beats(b, c):
        assert ctx.beats(a, c)
    if ctx.category[a] == ctx.category[b]:
        tie = not ctx.beats(a, b) and not ctx.beats(b, a)
        assert tie is (ctx.order[a] == ctx.order[b])
        assert ctx.beats(a, b) is (ctx.sort_key(a) > ctx.sort_key(b))
    # the chain is the order: a's position lists a, and successor is one position up
    assert a in ctx.chains[ctx.category[a]][ctx.order[a]]
    for up in ctx.successor(a):
        assert ctx.beats(up, a) and ctx.adjacent(a, up)

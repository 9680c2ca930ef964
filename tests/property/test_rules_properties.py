"""Property tests of the rules engine: whole random rounds and the invariants R3–R27 imply.

Two drivers share one checked round simulator (:func:`play_random_round`): Hypothesis
(random level, trump and shuffle, shrinkable) and a plain seeded loop of thousands of
rounds. Every trick is checked against an independent, straightforward reading of R24
(:func:`reference_winner`), every follow against R23.1 counted by hand.
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

from domain.rules.cards import BJ, NUM_KINDS, POINTS, SJ, Card, format_cards, full_deck
from domain.rules.context import TRUMP, TrumpContext, trump_context
from domain.rules.follow import check_follow, legal_plays, random_follow
from domain.rules.play import TrickPlay
from domain.rules.shapes import Shape, ShapeKind, decompose
from domain.rules.throws import check_throw
from domain.rules.trick import trick_winner

TRUMPS: list[int | None] = [None, 0, 1, 2, 3]

levels = st.integers(min_value=0, max_value=12)
trumps = st.sampled_from(TRUMPS)
rngs = st.integers(min_value=0, max_value=2**32 - 1).map(random.Random)


# --- an independent reading of R8–R10 and R24 -------------------------------------------------


def strength(level: int, trump: int | None, card: Card) -> tuple[int, int]:
    """(category, value) straight from R7–R10: higher value beats within one category."""
    if card == BJ:
        return TRUMP, 100
    if card == SJ:
        return TRUMP, 99
    suit, rank = divmod(card, 13)
    if rank == level:
        return TRUMP, 98 if suit == trump else 97  # R8 / R9: off-suit level cards equal
    return (TRUMP if suit == trump else suit), rank


def _pair_positions(ctx: TrumpContext, play: Sequence[Card]) -> Counter[int]:
    """How many identical pairs (R13) stand at each order position."""
    return Counter(ctx.order[k] for k, n in Counter(play).items() if n == 2)


def _packs(positions: Counter[int], lengths: Sequence[int]) -> bool:
    """Disjoint tractors of ``lengths`` (R14: consecutive positions each holding a pair)."""
    if not lengths:
        return True
    length, rest = lengths[0], lengths[1:]
    for start in sorted(positions):
        window = range(start, start + length)
        if all(positions[p] > 0 for p in window):
            for p in window:
                positions[p] -= 1
            ok = _packs(positions, rest)
            for p in window:
                positions[p] += 1
            if ok:
                return True
    return False


def _decisive(ctx: TrumpContext, lead: Shape, play: Sequence[Card]) -> int | None:
    """R24: the play's highest component of the lead's largest kind; None if it does not cover."""
    width = lead.largest.width
    if width == 0:
        return max(ctx.order[c] for c in play)
    positions = _pair_positions(ctx, play)
    if sum(positions.values()) < lead.total_pairs:
        return None
    if not _packs(positions, sorted(lead.tractor_lengths, reverse=True)):
        return None
    tops = [s + width - 1 for s in positions if all(positions[s + i] for i in range(width))]
    return max(tops) if tops else None


def reference_winner(ctx: TrumpContext, plays: Sequence[Sequence[Card]], lead: Shape) -> int:
    """R24 read literally: covering plays only; trump beats non-trump; ties → earlier (R11)."""
    best, best_trump = 0, lead.category == TRUMP
    best_key = _decisive(ctx, lead, plays[0])
    assert best_key == lead.largest.top
    for i, play in enumerate(plays[1:], start=1):
        cats = {ctx.category[c] for c in play}
        if len(cats) != 1 or not cats <= {lead.category, TRUMP}:
            continue
        key = _decisive(ctx, lead, play)
        if key is None:
            continue
        is_trump = cats == {TRUMP}
        if (is_trump and not best_trump) or (is_trump == best_trump and key > best_key):
            best, best_trump, best_key = i, is_trump, key
    return best


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


@settings(max_examples=150, deadline=None)
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


@settings(max_examples=300, deadline=None)
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


@settings(max_examples=200, deadline=None)
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


@settings(max_examples=300, deadline=None)
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


# --- following (R23, R25) on small hands, exhaustively -------------------------------------


@st.composite
def a_lead(
    draw: st.DrawFn, kinds: Sequence[str] = ("single", "pair", "tractor", "throw")
) -> tuple[TrumpContext, list[Card]]:
    """A context and a lead of one category: single, pair, tractor or throw (≤ 8 cards)."""
    ctx = trump_context(draw(levels), draw(trumps))
    chain = ctx.chains[draw(st.sampled_from(sorted(set(ctx.category))))]
    kind = draw(st.sampled_from(kinds))
    if kind in ("single", "pair"):
        card = draw(st.sampled_from([k for position in chain for k in position]))
        return ctx, [card] * (1 if kind == "single" else 2)
    lead: list[Card] = []
    if kind == "tractor" or draw(st.booleans()):
        width = draw(st.integers(min_value=2, max_value=3))
        start = draw(st.integers(min_value=0, max_value=len(chain) - width))
        pairs = [draw(st.sampled_from(chain[p])) for p in range(start, start + width)]
        lead = [k for k in pairs for _ in range(2)]
        if kind == "tractor":
            return ctx, lead
    kinds_left = [k for position in chain for k in position if k not in lead]
    picked = draw(st.lists(st.sampled_from(kinds_left), unique=True, min_size=2, max_size=4))
    for k in picked:
        lead += [k] * draw(st.sampled_from([1, 2]))
    return ctx, lead[:8]


def _draw_cards(draw: st.DrawFn, pool: Counter[Card], size: int) -> list[Card]:
    """``size`` cards from ``pool`` (kind → copies left), often as identical pairs."""
    kinds = sorted(k for k in pool if pool[k] > 0)
    size = min(size, sum(pool[k] for k in kinds))
    out: list[Card] = []
    while len(out) < size:
        kind = draw(st.sampled_from(kinds))
        room = pool[kind] - out.count(kind)
        if room <= 0:
            kinds.remove(kind)
            continue
        want = 2 if room >= 2 and len(out) + 2 <= size and draw(st.booleans()) else 1
        out += [kind] * want
    return out


@st.composite
def lead_and_hand(draw: st.DrawFn) -> tuple[TrumpContext, list[Card], list[Card]]:
    """A lead and a small hand (≤ 10 cards, at least as many as the lead) from the rest."""
    ctx, lead = draw(a_lead())
    rest = Counter(full_deck()) - Counter(lead)
    cat = ctx.category[lead[0]]
    inside = Counter({k: n for k, n in rest.items() if ctx.category[k] == cat})
    outside = Counter({k: n for k, n in rest.items() if ctx.category[k] != cat})
    hand = _draw_cards(draw, inside, draw(st.integers(min_value=0, max_value=8)))
    n_out = draw(st.integers(min_value=max(0, len(lead) - len(hand)), max_value=10 - len(hand)))
    return ctx, lead, hand + _draw_cards(draw, outside, n_out)


@settings(max_examples=300, deadline=None)
@given(lead_and_hand(), rngs)
def test_follow_generators_agree_with_validator(
    sample: tuple[TrumpContext, list[Card], list[Card]], rng: random.Random
) -> None:
    """legal_plays = every n-card subset check_follow accepts; random_follow is one of them."""
    ctx, lead_cards, hand = sample
    lead = decompose(ctx, lead_cards)
    n = lead.size
    every = {tuple(sorted(p)) for p in itertools.combinations(hand, n)}
    accepted = {p for p in every if check_follow(ctx, lead, hand, p).legal}
    generated = [tuple(sorted(p)) for p in legal_plays(ctx, lead, hand)]
    assert generated, "a legal play always exists"
    assert len(generated) == len(set(generated)), "each distinct play once"
    assert set(generated) == accepted
    held = sum(1 for c in hand if ctx.category[c] == lead.category)
    for p in accepted:  # R23.1 / R25 by hand
        assert sum(1 for c in p if ctx.category[c] == lead.category) == min(held, n)
    for p in every - accepted:
        verdict = check_follow(ctx, lead, hand, p)
        assert verdict.rule == "R23" and verdict.detail is not None
        assert verdict.detail.startswith(("R23", "R25"))
    for _ in range(5):
        assert tuple(sorted(random_follow(ctx, lead, hand, rng))) in accepted
    if lead.kind in (ShapeKind.PAIR, ShapeKind.TRACTOR):
        _check_pair_and_tractor_obligation(ctx, lead, hand, every, accepted)


def _check_pair_and_tractor_obligation(
    ctx: TrumpContext,
    lead: Shape,
    hand: Sequence[Card],
    every: set[tuple[Card, ...]],
    accepted: set[tuple[Card, ...]],
) -> None:
    """R23.2 by brute force: a tractor if any R23.1 play holds one, else the most pairs."""
    cat = lead.category
    n = lead.size
    held = sum(1 for c in hand if ctx.category[c] == cat)
    suited = [p for p in every if sum(1 for c in p if ctx.category[c] == cat) == min(held, n)]

    def in_cat(p: Sequence[Card]) -> list[Card]:
        return [c for c in p if ctx.category[c] == cat]

    def pairs(p: Sequence[Card]) -> int:
        return min(sum(_pair_positions(ctx, in_cat(p)).values()), lead.total_pairs)

    def tractor(p: Sequence[Card]) -> bool:
        return _packs(_pair_positions(ctx, in_cat(p)), [lead.largest.width])

    required = set(suited)
    if lead.kind is ShapeKind.TRACTOR and any(tractor(p) for p in suited):
        required = {p for p in required if tractor(p)}
    most = max(pairs(p) for p in required)
    required = {p for p in required if pairs(p) == most}
    assert required == accepted, (ctx.describe(), format_cards(hand))


# --- throws (R22) against random other hands ----------------------------------------------


def reference_throw(ctx: TrumpContext, throw: Shape, hands: Sequence[Sequence[Card]]) -> list[int]:
    """R22 read literally: indexes of the components some other hand beats with a higher
    single, a higher identical pair, or a tractor as long and higher, in the same category."""
    beaten = []
    for i, comp in enumerate(throw.components):
        for hand in hands:
            in_cat = [c for c in hand if ctx.category[c] == throw.category]
            if comp.width == 0:
                hit = any(ctx.order[c] > comp.top for c in in_cat)
            else:
                positions = _pair_positions(ctx, in_cat)
                hit = any(
                    s + comp.width - 1 > comp.top
                    and all(positions[s + j] for j in range(comp.width))
                    for s in list(positions)
                )
            if hit:
                beaten.append(i)
                break
    return beaten


@st.composite
def throw_and_hands(draw: st.DrawFn) -> tuple[TrumpContext, list[Card], list[list[Card]]]:
    ctx, throw = draw(a_lead(kinds=("throw",)))
    left = Counter(full_deck()) - Counter(throw)
    cat = ctx.category[throw[0]]
    hands = []
    for _ in range(3):
        inside = Counter({k: n for k, n in left.items() if ctx.category[k] == cat})
        hand = _draw_cards(draw, inside, draw(st.integers(min_value=0, max_value=6)))
        hand += _draw_cards(draw, left - inside, draw(st.integers(min_value=0, max_value=3)))
        left -= Counter(hand)
        hands.append(hand)
    return ctx, throw, hands


@settings(max_examples=300, deadline=None)
@given(throw_and_hands())
def test_check_throw_matches_r22(
    sample: tuple[TrumpContext, list[Card], list[list[Card]]],
) -> None:
    ctx, cards, hands = sample
    throw = decompose(ctx, cards)
    verdict = check_throw(ctx, throw, hands)
    if throw.kind is not ShapeKind.THROW:
        assert verdict.valid
        return
    beaten = reference_throw(ctx, throw, hands)
    assert verdict.beaten == tuple(throw.components[i] for i in beaten)
    assert verdict.valid is (not beaten)
    if beaten:
        # the first beatable kind from the largest, and its lowest component
        width = max(throw.components[i].width for i in beaten)
        top = min(c.top for c in throw.components if c.width == width)
        assert verdict.forced is not None
        forced = decompose(ctx, verdict.forced)
        assert len(forced.components) == 1
        assert (forced.largest.width, forced.largest.top) == (width, top)
        assert verdict.forced in [c.cards for c in throw.components]


# --- trick winner (R24) on random tricks ----------------------------------------------------


@st.composite
def random_trick(draw: st.DrawFn) -> tuple[TrumpContext, list[list[Card]]]:
    """Four equal-size plays (≤ 2 copies of each card in all): a lead, then followers of the
    led category, of trump or of anything, often pair-rich so that covering is exercised."""
    ctx, lead = draw(a_lead())
    left = Counter(full_deck()) - Counter(lead)
    plays = [lead]
    for _ in range(3):
        cat = draw(st.sampled_from([ctx.category[lead[0]], TRUMP, TRUMP, None]))
        pool = Counter({k: n for k, n in left.items() if cat in (None, ctx.category[k])})
        play = _draw_cards(draw, pool, len(lead))
        play += _draw_cards(draw, left - pool, len(lead) - len(play))
        left -= Counter(play)
        plays.append(play)
    return ctx, plays


@settings(max_examples=300, deadline=None)
@given(random_trick())
def test_trick_winner_covers_lead_and_matches_r24(
    sample: tuple[TrumpContext, list[list[Card]]],
) -> None:
    ctx, plays = sample
    lead = decompose(ctx, plays[0])
    winner = trick_winner(ctx, plays)
    assert winner == reference_winner(ctx, plays, lead), [format_cards(p) for p in plays]
    if winner:
        # R24: the winner covers the lead's structure, in the led category or all trump
        win = plays[winner]
        cats = {ctx.category[c] for c in win}
        assert len(cats) == 1 and cats <= {lead.category, TRUMP}
        assert _decisive(ctx, lead, win) is not None
    # discards never matter: a non-covering follower may discard anything else instead
    discard = _pure_discard(ctx, lead)
    for i in range(1, 4):
        if i != winner and _cannot_win(ctx, lead, plays[i]):
            swapped = [*plays]
            swapped[i] = discard
            assert trick_winner(ctx, swapped) == winner


def _cannot_win(ctx: TrumpContext, lead: Shape, play: Sequence[Card]) -> bool:
    """True when ``play`` cannot win: mixed, off-category and not trump, or not covering."""
    cats = {ctx.category[c] for c in play}
    return (
        len(cats) != 1 or not cats <= {lead.category, TRUMP} or _decisive(ctx, lead, play) is None
    )


def _pure_discard(ctx: TrumpContext, lead: Shape) -> list[Card]:
    """``lead.size`` single cards of a side suit that is neither led nor trump."""
    suit = next(s for s in range(4) if s not in (lead.category, ctx.trump))
    return [k for position in ctx.chains[suit] for k in position][: lead.size]

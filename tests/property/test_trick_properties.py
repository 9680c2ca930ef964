"""Property tests of the rules engine at the trick (R22–R25): the follow generators agree with
the validator on small hands (exhaustively), throws are checked against random other
hands, and the trick winner against an independent reading of R24
(:func:`tests.property.rules_reference.reference_winner`).
"""

from __future__ import annotations

import itertools
import random
from collections import Counter
from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from domain.rules.cards import Card, format_cards, full_deck
from domain.rules.context import TRUMP, TrumpContext, trump_context
from domain.rules.follow import check_follow, legal_plays, random_follow
from domain.rules.shapes import Shape, ShapeKind, decompose
from domain.rules.throws import check_throw
from domain.rules.trick import trick_winner
from tests.conftest import examples
from tests.property.rules_reference import (
    _decisive,
    _packs,
    _pair_positions,
    levels,
    reference_winner,
    rngs,
    trumps,
)

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


@settings(max_examples=examples(300), deadline=None)
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


@settings(max_examples=examples(300), deadline=None)
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


@settings(max_examples=examples(300), deadline=None)
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

"""What a seat may infer about the hidden cards, and worlds sampled from it (RULES R33).

The search bot (:mod:`domain.bots.strong`) plays out sampled *worlds* — full deals of
the cards it cannot see — and every world must agree with everything public. From a
:class:`~domain.bots.view.BotView` alone (never another seat's cards) it gathers:

* the **unseen** copies: the 108 cards (R3) less its own hand, every card played (R33),
  and the bottom if it buried it (R21); these go to the other three hands and, when it
  did not bury, to the bottom (8 cards);
* each seat's **hand size**: 25 less what that seat has played (R16);
* **voids**: a seat that played fewer cards of the led category than the lead held no
  more of it (R23.1, R25), so it holds none now;
* **no pairs**: a seat that followed in the led category with fewer identical pairs than
  the lead held no further pair there (R23.2);
* **shown cards**: a declaration or overcall shows level cards or jokers (R17, R20); a
  seat that never buried keeps them until it plays them.

:func:`sample_world` deals the unseen cards at random under these constraints (the most
constrained cards first, each to a seat with room, weighted by the room left); the
bottom, when unseen, leans towards what buriers bury: low plain cards, rarely points or
trumps (R21). The sampling is not exactly uniform over consistent deals; it is cheap.
"""

from __future__ import annotations

import random
from typing import NamedTuple

from domain.bots.view import BotView
from domain.rules.cards import NUM_KINDS, POINTS, Card
from domain.rules.context import TRUMP
from domain.rules.shapes import decompose, pair_profile
from domain.rules.shuffle import BOTTOM_SIZE, HAND_SIZE

ATTEMPTS = 24
"""Constrained deals tried before the constraints other than hand sizes are dropped."""


class Hidden(NamedTuple):
    """The public constraints on the cards ``seat`` cannot see."""

    seat: int
    unseen: tuple[Card, ...]
    """Every copy the seat cannot see, each kind as often as it is unseen."""
    sizes: tuple[int, int, int, int]
    """Cards each seat holds now (this seat's own included)."""
    bottom_size: int
    """8 when the bottom is hidden from this seat (it did not bury it, R21), else 0."""
    void: tuple[int, int, int, int]
    """Per seat, a bit mask of the categories (R7) it holds none of."""
    pairless: tuple[int, int, int, int]
    """Per seat, a bit mask of the categories where it holds no identical pair (R13)."""
    holds: tuple[tuple[Card, ...], ...]
    """Per seat, the shown cards it must still hold (R17, R20)."""


def hidden_of(view: BotView) -> Hidden:
    """Gather the constraints from ``view`` only (R33)."""
    ctx = view.ctx
    cat = ctx.category
    unseen = [2] * NUM_KINDS
    for c in view.hand:
        unseen[c] -= 1
    played_by = [0, 0, 0, 0]
    cards_of: list[list[Card]] = [[], [], [], []]
    void = [0, 0, 0, 0]
    pairless = [0, 0, 0, 0]
    tricks = [
        (leader, tuple((leader + i) % 4 for i in range(len(plays))), plays)
        for leader, plays in view.tricks
    ]
    if view.trick:
        tricks.append(
            (view.trick[0][0], tuple(s for s, _ in view.trick), tuple(p for _, p in view.trick))
        )
    for _, seats, plays in tricks:
        lead = decompose(ctx, plays[0])
        category = lead.category
        for seat, cards in zip(seats, plays, strict=True):
            played_by[seat] += len(cards)
            cards_of[seat].extend(cards)
            for c in cards:
                unseen[c] -= 1
            if seat == seats[0] or category is None:
                continue
            inside = [c for c in cards if cat[c] == category]
            if len(inside) < lead.size:
                void[seat] |= 1 << category  # R23.1: it played every card of the category
            elif lead.total_pairs and sum(pair_profile(ctx, category, inside)) < lead.total_pairs:
                pairless[seat] |= 1 << category  # R23.2: it had no further pair
    if view.bottom is not None:
        for c in view.bottom:
            unseen[c] -= 1
    me = view.seat
    sizes = tuple(len(view.hand) if s == me else HAND_SIZE - played_by[s] for s in range(4))
    holds: list[tuple[Card, ...]] = [(), (), (), ()]
    buriers = {me, view.dealer} | {show.seat for show in view.shows[1:]}
    for show in view.shows[:1]:
        s = show.seat
        if s in buriers:
            continue  # a dealer or an overcaller may have buried its shown cards (R20, R21)
        kept = list(show.cards)
        for c in cards_of[s]:
            if c in kept:
                kept.remove(c)
        holds[s] = tuple(kept)
    pool = tuple(k for k in range(NUM_KINDS) for _ in range(max(0, unseen[k])))
    bottom_size = 0 if view.bottom is not None else BOTTOM_SIZE
    if len(view.hand) > HAND_SIZE:  # burying: the other hands are full, the bottom is ours
        bottom_size = 0
    return Hidden(
        me,
        pool,
        (sizes[0], sizes[1], sizes[2], sizes[3]),
        bottom_size,
        (void[0], void[1], void[2], void[3]),
        (pairless[0], pairless[1], pairless[2], pairless[3]),
        tuple(holds),
    )


def sample_world(
    hidden: Hidden, view: BotView, rng: random.Random
) -> tuple[list[list[Card]], list[Card]]:
    """Four hands (this seat's own as it is) and a bottom consistent with ``hidden``
    (the bottom this seat buried, if it did; empty while it is burying)."""
    for attempt in range(ATTEMPTS + 1):
        world = _try_deal(hidden, view, rng, strict=attempt < ATTEMPTS)
        if world is not None:
            return world
    raise AssertionError("a relaxed deal always succeeds")  # pragma: no cover


def _bury_weight(view: BotView, card: Card) -> float:
    """How likely a burier is to bury ``card`` (R21): low plain cards, not points or trump."""
    ctx = view.ctx
    if ctx.category[card] == TRUMP:
        return 0.1
    if POINTS[card]:
        return 0.3
    return 3.0 if ctx.order[card] < 6 else 1.0


def _try_deal(
    hidden: Hidden, view: BotView, rng: random.Random, *, strict: bool
) -> tuple[list[list[Card]], list[Card]] | None:
    """One deal: the shown cards to their seats, then card by card, the most constrained
    first, to a holder with room (the bottom is holder 4, weighted by what buriers bury)
    that leaves the rest dealable (Hall's condition over the categories, R7)."""
    me = hidden.seat
    holders = [s for s in range(4) if s != me]
    hands: list[list[Card]] = [[], [], [], [], []]  # seats 0..3, then the bottom
    room = [0 if s == me else hidden.sizes[s] for s in range(4)] + [hidden.bottom_size]
    if hidden.bottom_size:
        holders.append(4)
    pool = list(hidden.unseen)
    if strict:
        for s in holders[:3]:
            for c in hidden.holds[s]:
                if c in pool and room[s] > 0:
                    pool.remove(c)
                    hands[s].append(c)
                    room[s] -= 1
    cat = view.ctx.category
    void = [*(hidden.void if strict else (0, 0, 0, 0)), 0]
    pairless = [*(hidden.pairless if strict else (0, 0, 0, 0)), 0]
    # eligible[category]: the holders that may take a card of it
    eligible = [[h for h in holders if not void[h] >> k & 1] for k in range(5)]
    left = [0] * 5
    for c in pool:
        left[cat[c]] += 1
    rng.shuffle(pool)
    pool.sort(key=lambda c: len(eligible[cat[c]]))
    subsets = _constrained_subsets(eligible, left)
    for card in pool:
        k = cat[card]
        left[k] -= 1
        options = [
            h for h in eligible[k] if room[h] and not (pairless[h] >> k & 1 and card in hands[h])
        ]
        weights = [room[h] * (_bury_weight(view, card) if h == 4 else 1.0) for h in options]
        while options:
            i = _pick(weights, rng)
            h = options[i]
            room[h] -= 1
            if _dealable(subsets, eligible, left, room):
                break
            room[h] += 1
            del options[i], weights[i]
        else:
            return None
        hands[h].append(card)
    hands[me] = list(view.hand)
    sampled = hands.pop()
    bottom = sampled if hidden.bottom_size else list(view.bottom or ())
    return hands, bottom


def _pick(weights: list[float], rng: random.Random) -> int:
    x = rng.random() * sum(weights)
    for i, w in enumerate(weights):
        x -= w
        if x < 0:
            return i
    return len(weights) - 1


def _constrained_subsets(eligible: list[list[int]], left: list[int]) -> list[int]:
    """Bit masks of the sets of categories whose Hall condition can bind: those with
    cards left, whose categories do not all accept every holder."""
    everyone = max((len(e) for e in eligible), default=0)
    cats = [k for k in range(5) if left[k] and len(eligible[k]) < everyone]
    masks = []
    for bits in range(1, 1 << len(cats)):
        masks.append(sum(1 << cats[j] for j in range(len(cats)) if bits >> j & 1))
    return masks


def _dealable(
    subsets: list[int], eligible: list[list[int]], left: list[int], room: list[int]
) -> bool:
    """Hall's condition: every set of categories fits in the room of its holders."""
    for mask in subsets:
        need = 0
        who = 0
        for k in range(5):
            if mask >> k & 1:
                need += left[k]
                for h in eligible[k]:
                    who |= 1 << h
        if need > sum(room[h] for h in range(5) if who >> h & 1):
            return False
    return True

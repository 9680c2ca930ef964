"""A seat's legal-move list and its observation vector, for the training environment.

**Moves** (RULES R22, R23). The action is an index into the list of the seat to play:

* leading: every distinct single, every identical pair, every tractor (each window of
  each run of pairs, R14) — leads that always stand; throws (甩牌, R15) are left out;
* following: every distinct legal play (``follow.legal_plays``, R23) when there are at
  most :data:`MAX_ACTIONS`; otherwise :data:`MAX_ACTIONS` distinct legal plays built at
  random (``follow.random_follow``, seeded by the environment), the heuristic bot's
  choice first.

**Observation** (R33: only what the seat may know), a float vector of :data:`OBS_SIZE`,
counts of copies (0, 1, 2) per card kind (R3) unless said:

====================  ======  ===================================================
part                  size    what
====================  ======  ===================================================
hand                  54      the seat's own cards
played, by seat       4 × 54  cards each seat played in completed tricks, this seat
                              first then its next players (R1)
trick, by seat        4 × 54  the trick in progress, same seat order
bottom                54      the buried cards, only for the seat that buried (R21)
level                 13      one-hot level rank (R5)
trump                 5       one-hot trump suit S H C D, or no-trump (R7, R9)
dealer                4       one-hot dealer, relative to this seat
attacking             1       1 when this seat's team attacks (R6)
points                1       attackers' points so far / 200 (R27)
====================  ======  ===================================================
"""

from __future__ import annotations

import random
from itertools import islice

import numpy as np
import numpy.typing as npt

from domain.bots.combos import runs
from domain.bots.heuristic import HeuristicPlayer
from domain.bots.view import BotView
from domain.rules.cards import NUM_KINDS, Card
from domain.rules.context import TRUMP, TrumpContext
from domain.rules.follow import legal_plays, pair_kinds, random_follow
from domain.rules.scoring import TOTAL_POINTS

MAX_ACTIONS = 128
"""The fixed size of the action space; a mask marks the legal indices."""
OBS_SIZE = NUM_KINDS * 10 + 13 + 5 + 4 + 1 + 1
"""Length of the observation vector."""

Move = tuple[Card, ...]
_HEURISTIC = HeuristicPlayer()


def lead_moves(ctx: TrumpContext, hand: tuple[Card, ...]) -> list[Move]:
    """R22: singles, pairs and tractors of the hand, low to high in each category."""
    moves: list[Move] = []
    key = ctx.rank_key
    for c in sorted(set(hand), key=lambda c: (key[c], c)):
        moves.append((c,))
    for category in range(5):
        kinds = pair_kinds(ctx, category, hand)
        for pos in kinds:
            for k in pos:
                moves.append((k, k))
        for start, length in runs(kinds):
            for size in range(2, length + 1):
                for s in range(start, start + length - size + 1):
                    moves.append(tuple(k for p in range(s, s + size) for k in (kinds[p][0],) * 2))
    return moves[:MAX_ACTIONS]


def follow_moves(view: BotView, rng: random.Random) -> list[Move]:
    """R23: the legal follows, or :data:`MAX_ACTIONS` of them drawn at random."""
    ctx, lead, hand = view.ctx, view.lead_shape, view.hand
    assert lead is not None
    first = list(islice(legal_plays(ctx, lead, hand), MAX_ACTIONS + 1))
    if len(first) <= MAX_ACTIONS:
        return first
    chosen = [tuple(_HEURISTIC.play(view, rng))]
    seen = {tuple(sorted(chosen[0]))}
    for _ in range(MAX_ACTIONS * 4):
        play = tuple(random_follow(ctx, lead, hand, rng))
        key = tuple(sorted(play))
        if key not in seen:
            seen.add(key)
            chosen.append(play)
            if len(chosen) == MAX_ACTIONS:
                break
    return chosen


def moves_for(view: BotView, rng: random.Random) -> list[Move]:
    """The move list of the seat to play (never empty: a hand can always play, R23)."""
    if view.lead_shape is None:
        return lead_moves(view.ctx, view.hand)
    return follow_moves(view, rng)


def observe(view: BotView, played_by: list[list[Card]]) -> npt.NDArray[np.float32]:
    """The observation vector of ``view`` (see the module's table); ``played_by[s]``:
    the cards seat ``s`` played in completed tricks (public, R33)."""
    obs = np.zeros(OBS_SIZE, dtype=np.float32)
    me = view.seat
    for c in view.hand:
        obs[c] += 1
    for rel in range(4):
        base = NUM_KINDS * (1 + rel)
        for c in played_by[(me + rel) % 4]:
            obs[base + c] += 1
    for seat, cards in view.trick:
        base = NUM_KINDS * (5 + (seat - me) % 4)
        for c in cards:
            obs[base + c] += 1
    if view.bottom is not None:
        for c in view.bottom:
            obs[NUM_KINDS * 9 + c] += 1
    at = NUM_KINDS * 10
    obs[at + view.ctx.level] = 1
    at += 13
    obs[at + (TRUMP if view.ctx.trump is None else view.ctx.trump)] = 1
    at += 5
    obs[at + (view.dealer - me) % 4] = 1
    at += 4
    obs[at] = 1.0 if view.attacking else 0.0
    obs[at + 1] = view.attacker_points / TOTAL_POINTS
    return obs

"""The few plays and burials the search bot weighs (RULES R21–R25).

Enumerating every legal play is hopeless (a void hand facing a throw has thousands), so
the search looks at a short list of sensible ones, the heuristic player's own choice
first (:mod:`domain.bots.heuristic`):

* **leads** (R22): in each category the highest and the lowest single, the highest and
  lowest pair, the highest tractor (R14), and point cards; throws only as the heuristic
  makes them (every component a boss, so they cannot fail);
* **follows** (R23): every distinct single when the lead is a single; for longer leads
  the cheapest play under several card keys (discard low, feed points, keep pairs) and
  the lowest plays beating the trick's winner, in the led category or in trump (毙牌);
* **burials** (R21): the heuristic's 8 cards, and burials that empty one or two short
  plain suits (a void lets the dealer's team trump that suit later).

Every follow is checked with ``follow.meets``; duplicates are dropped.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from domain.bots.base import BURY_SIZE
from domain.bots.combos import run_cards, runs
from domain.bots.heuristic import HeuristicPlayer
from domain.bots.knowledge import Knowledge
from domain.bots.tactics import components_above, fill_play, trump_cover
from domain.bots.view import BotView
from domain.rules.cards import POINTS, Card
from domain.rules.context import TRUMP
from domain.rules.follow import meets, obligation, pair_kinds

MAX_CANDIDATES = 10
"""Plays weighed at most per decision (the heuristic's first)."""


def _add(found: list[tuple[Card, ...]], seen: set[tuple[Card, ...]], cards: Sequence[Card]) -> None:
    key = tuple(sorted(cards))
    if key and key not in seen:
        seen.add(key)
        found.append(tuple(cards))


def play_candidates(
    view: BotView, first: Sequence[Card], kn: Knowledge | None = None
) -> list[tuple[Card, ...]]:
    """Distinct plays to weigh for ``view``, ``first`` (the heuristic's) first."""
    kn = kn or Knowledge(view)
    found: list[tuple[Card, ...]] = []
    seen: set[tuple[Card, ...]] = set()
    _add(found, seen, first)
    if view.lead_shape is None:
        _leads(view, kn, found, seen)
    else:
        _follows(view, kn, found, seen)
    return found[:MAX_CANDIDATES]


def _leads(
    view: BotView, kn: Knowledge, found: list[tuple[Card, ...]], seen: set[tuple[Card, ...]]
) -> None:
    """R22: singles, pairs and tractors of each category held."""
    ctx = view.ctx
    for category in (TRUMP, 0, 1, 2, 3):
        cards = kn.groups[category]  # low to high
        if not cards:
            continue
        kinds = pair_kinds(ctx, category, cards)
        for start, length in runs(kinds)[-1:]:
            _add(found, seen, run_cards(kinds, start, length))
        pairs = [ks[0] for ks in kinds if ks]
        if pairs:
            _add(found, seen, (pairs[-1], pairs[-1]))
    for category in (0, 1, 2, 3, TRUMP):
        cards = kn.groups[category]
        if cards:
            _add(found, seen, (cards[-1],))
            _add(found, seen, (min(cards, key=kn.discard_key),))
    for category in (0, 1, 2, 3):
        points = [c for c in kn.groups[category] if POINTS[c]]
        if points:
            _add(found, seen, (points[0],))


def _follows(
    view: BotView, kn: Knowledge, found: list[tuple[Card, ...]], seen: set[tuple[Card, ...]]
) -> None:
    """R23: the distinct legal singles, or cheapest plays under several keys and the
    lowest winning plays."""
    ctx = view.ctx
    lead = view.lead_shape
    assert lead is not None and lead.category is not None
    hand = view.hand
    n = lead.size
    ob = obligation(ctx, lead, hand)
    if n == 1:
        pool = ob.in_category or hand
        singles = sorted(set(pool), key=kn.discard_key)
        if len(singles) > MAX_CANDIDATES - 1:
            # keep the cheapest, the dearest and the point cards of each category
            keep = singles[:3] + [c for c in singles if POINTS[c]][:3] + singles[-3:]
            singles = sorted(set(keep), key=kn.discard_key)
        for c in singles:
            _add(found, seen, (c,))
        return
    keys: tuple[Callable[[Card], int], ...] = (
        kn.discard_key,
        kn.gift_key,
        lambda c: -kn.discard_key(c),
    )
    for key in keys:
        play = fill_play(ctx, ob, n, hand, key)
        if play is not None and meets(ctx, ob, play, n):
            _add(found, seen, play)
    width = lead.components[0].width
    if len(lead.components) == 1:
        if ob.in_category and not ob.short:
            for _, cards in components_above(ctx, lead.category, ob.in_category, width, -1)[-2:]:
                play = _complete(view, kn, cards, n)
                if play is not None and meets(ctx, ob, play, n):
                    _add(found, seen, play)
        elif not ob.in_category and lead.category != TRUMP:
            options = components_above(ctx, TRUMP, kn.groups[TRUMP], width, -1)
            for _, cards in options[:1] + options[-1:]:
                play = _complete(view, kn, cards, n)
                if play is not None and meets(ctx, ob, play, n):
                    _add(found, seen, play)
    elif not ob.in_category and lead.category != TRUMP:
        cover = trump_cover(ctx, lead, kn.groups[TRUMP], kn.discard_key)
        if cover is not None and meets(ctx, ob, cover, n):
            _add(found, seen, cover)


def _complete(view: BotView, kn: Knowledge, core: Sequence[Card], n: int) -> list[Card] | None:
    """``core`` plus the cheapest other cards of its category, ``n`` in all."""
    category = view.ctx.category[core[0]]
    rest = list(kn.groups[category])
    for c in core:
        rest.remove(c)
    rest.sort(key=kn.discard_key)
    play = [*core, *rest[: n - len(core)]]
    return play if len(play) == n else None


def bury_candidates(view: BotView, rng: random.Random) -> list[tuple[Card, ...]]:
    """Distinct burials (R21) to weigh: the heuristic's first, then suit-emptying ones."""
    kn = Knowledge(view)
    first = tuple(HeuristicPlayer().bury(view, rng))
    found: list[tuple[Card, ...]] = []
    seen: set[tuple[Card, ...]] = set()
    _add(found, seen, first)
    plain = sorted((s for s in range(4) if kn.groups[s]), key=lambda s: len(kn.groups[s]))
    by_key = sorted(view.hand, key=kn.bury_key)
    options: list[list[int]] = [[s] for s in plain]
    options += [[a, b] for i, a in enumerate(plain) for b in plain[i + 1 :]]
    for suits in options:
        core = [c for s in suits for c in kn.groups[s]]
        if not core or len(core) > BURY_SIZE:
            continue
        rest = list(by_key)
        for c in core:
            rest.remove(c)
        _add(found, seen, [*core, *rest[: BURY_SIZE - len(core)]])
    return found[:6]

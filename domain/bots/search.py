"""Choosing among a few moves by playing them out in sampled worlds (determinized Monte Carlo).

:func:`successive_halving` spends a budget of rollouts on ``n`` candidates, candidate 0
being the *default* (the heuristic player's own choice). In each of about log2(n) stages
it samples fresh worlds and plays *every* surviving candidate in *each* world (common
random numbers: the candidates are compared on the same cards), then keeps the better
half by mean value — the default always stays. At the end a challenger replaces the
default only when its mean gain over the default, paired world by world, exceeds
:data:`MARGIN` standard errors: with few samples the search keeps the default rather than
follow noise, so it is never much worse than the heuristic, and better as samples grow.

The budget is a count of rollouts, never a clock (docs/decisions.md F12); the
caller may pass ``stop``, asked between worlds, to cut a search short (a deadline).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TypeVar

World = TypeVar("World")

MARGIN = 1.0
"""Standard errors by which a challenger's paired gain must exceed 0 to be chosen."""


def successive_halving(
    n: int,
    rollouts: int,
    sample: Callable[[], World],
    value: Callable[[World, int], float],
    stop: Callable[[], bool] | None = None,
) -> int:
    """Index of the chosen candidate (0, the default, unless a challenger is clearly better).

    A budget too small for all ``n`` candidates weighs only the first ``rollouts // 2``;
    below four rollouts there is no search: the default stands."""
    n = min(n, rollouts // 2)  # each candidate needs two worlds at least
    if n <= 1:
        return 0
    diff = [0.0] * n  # sums of (value - default's value) over the worlds both saw
    diff2 = [0.0] * n
    counts = [0] * n
    alive = list(range(n))
    stages = max(1, (n - 1).bit_length())
    per_stage = max(1, rollouts // stages)
    for stage in range(stages):
        worlds = max(1, per_stage // len(alive))
        if stage == stages - 1:
            worlds = max(worlds, (rollouts - sum(counts)) // len(alive))
        stopped = False
        for _ in range(worlds):
            world = sample()
            base = value(world, 0)
            counts[0] += 1
            for i in alive[1:]:
                d = value(world, i) - base
                diff[i] += d
                diff2[i] += d * d
                counts[i] += 1
            if stop is not None and stop():
                stopped = True
                break
        if stopped or stage == stages - 1 or len(alive) <= 2:
            break
        challengers = sorted(alive[1:], key=lambda i: (-diff[i] / counts[i], i))
        alive = [0, *sorted(challengers[: max(1, len(challengers) // 2)])]
    best = max(alive[1:], key=lambda i: (diff[i] / counts[i], -i))
    k = counts[best]
    mean = diff[best] / k
    if k < 2:
        return 0
    var = max(0.0, (diff2[best] - k * mean * mean) / (k - 1))
    return best if mean > MARGIN * math.sqrt(var / k) and mean > 0 else 0

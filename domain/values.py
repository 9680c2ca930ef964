"""Immutable values: a frozen object made only of immutable parts is its own copy.

``copy.deepcopy`` rebuilds every object it meets, and the eventsourcing library deep-copies
an aggregate out of its cache on every load (so a command's changes reach the cache only
through its save). An aggregate's state holds large *values* — the rule set, the trump
context's order tables (R8–R10), the deal (R16, R35), the bidding state — that never
change once made: a change makes a new value. Copying them would cost milliseconds per
load and protect nothing, so they answer ``copy``/``deepcopy`` with themselves, as
``tuple``, ``str`` and ``frozenset`` do. The aggregates themselves have no copy hooks:
the library's deep copy gives each load its own mutable state (hands, tricks, seats).
"""

from __future__ import annotations

from typing import Any, Self


class Value:
    """Mixin for a frozen class whose every field is immutable."""

    __slots__ = ()

    def __copy__(self) -> Self:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Self:
        return self

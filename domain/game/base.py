"""Shared base of the game's aggregates and events.

Every event class carries ``class_version`` (for future upcasting, the eventsourcing
library's ``upcast_v1_v2`` convention) and is timestamped with the ``now`` the service
passes in: the domain never reads a clock (docs/decisions.md F5).

The library deep-copies an aggregate out of its cache on every load, so a command's
changes reach the cache only through its save. :meth:`GameAggregate.__deepcopy__` keeps
that guarantee and makes it cheap: the copy owns every mutable container (lists, dicts,
sets, and the objects in them) and shares what cannot change — numbers, strings, ids,
times, enums, tuples of those, and frozen values (domain/values.py). Anything else is
deep-copied as before (docs/decisions.md D-edge).
"""

from __future__ import annotations

import copy
from datetime import datetime
from enum import Enum
from typing import Any, Self
from uuid import UUID

from eventsourcing.domain import Aggregate, DomainEvent

from domain.values import Value

_ATOMS: frozenset[type] = frozenset({int, str, float, bool, type(None), bytes, UUID, datetime})


def _shared(value: object) -> bool:
    """Whether ``value`` can never change, so a copy may share it."""
    kind = type(value)
    if kind in _ATOMS or isinstance(value, (Value, Enum)):
        return True
    if kind is tuple or kind is frozenset:
        return all(_shared(v) for v in value)  # type: ignore[attr-defined]
    if isinstance(value, DomainEvent):  # frozen: shared when its fields are
        return all(_shared(v) for v in vars(value).values())
    return False


def _copied(value: object, memo: dict[int, Any]) -> object:
    """``value`` for a copy: itself when it cannot change, else a copy owning its parts."""
    if _shared(value):
        return value
    done = memo.get(id(value))
    if done is not None:
        return done
    kind = type(value)
    result: object
    if kind is list:
        result = [v if type(v) in _ATOMS else _copied(v, memo) for v in value]  # type: ignore[attr-defined]
    elif kind is dict:
        result = {k: _copied(v, memo) for k, v in value.items()}  # type: ignore[attr-defined]
    elif kind is set:
        result = set(value)  # type: ignore[call-overload]  # set members are hashable values
    else:
        return copy.deepcopy(value, memo)
    memo[id(value)] = result
    return result


class GameAggregate(Aggregate):
    """Base aggregate: commands take ``now`` and stamp it on the events they trigger."""

    def _emit(self, event_class: type[Aggregate.Event], now: datetime, **kwargs: Any) -> None:
        self.trigger_event(event_class, timestamp=now, **kwargs)

    def __deepcopy__(self, memo: dict[int, Any]) -> Self:
        """A copy whose mutable state is its own; what cannot change is shared. Python's copy
        protocol on our own class (the library's aggregate cache deep-copies on every load;
        nothing of the library is overridden, docs/decisions.md D-edge)."""
        twin = type(self).__new__(type(self))
        memo[id(self)] = twin
        state = twin.__dict__
        for name, value in self.__dict__.items():
            state[name] = _copied(value, memo)
        return twin

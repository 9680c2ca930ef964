"""Who hears of the game service's saves (docs/decisions.md D-rooms).

The composition root gives the :class:`~services.game.GameService` one :class:`Saves` when
it builds it; whoever wants to hear of saves subscribes there (the live hub, the view
tags, the lists' follower, the sweeper, the bot driver, the metrics, the live streams), so
the service itself is complete once built and never changed afterwards. Each kind of news
is a :class:`Listeners`: told on the saving thread, in the order the listeners subscribed,
a listener's error logged and never raised (the events are stored whatever a listener
does).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar
from uuid import UUID

from eventsourcing.persistence import Recording

from domain.game.match import Match
from domain.game.round import Round
from domain.talk.table_talk import TableTalk

log = logging.getLogger(__name__)

T = TypeVar("T")


class Listeners(Generic[T]):
    """Callables told one value each (the module docstring); thread-safe: subscribing
    replaces a tuple, so a save being told goes on with the listeners it started with."""

    def __init__(self, news: str) -> None:
        self.news = news
        """What the listeners are told (for the log of a failing one)."""
        self._listeners: tuple[Callable[[T], None], ...] = ()
        self._lock = threading.Lock()

    def add(self, listener: Callable[[T], None], *, first: bool = False) -> None:
        """Tell ``listener`` from now on (``first``: before the others); once only."""
        with self._lock:
            if listener not in self._listeners:
                ordered = (listener, *self._listeners) if first else (*self._listeners, listener)
                self._listeners = ordered

    def remove(self, listener: Callable[[T], None]) -> None:
        """Tell ``listener`` no more (nothing happens when it was not told)."""
        with self._lock:
            self._listeners = tuple(x for x in self._listeners if x != listener)

    def __contains__(self, listener: object) -> bool:
        return listener in self._listeners

    def __bool__(self) -> bool:
        return bool(self._listeners)

    def tell(self, news: T) -> None:
        for listener in self._listeners:
            try:
                listener(news)
            except Exception:
                log.exception("a listener of %s failed (the events are saved)", self.news)


@dataclass(frozen=True, slots=True)
class SaveTimed:
    """How long a save took (seconds) and how it ended: ``ok``, ``conflict`` or ``error``."""

    seconds: float
    outcome: str


@dataclass(frozen=True, slots=True)
class Recorded:
    """A save of this process as it ended: its ticket (:meth:`Saves.begin`) and its
    recordings — each event with its notification id, in the log's order — none when it
    stored nothing or failed."""

    ticket: int
    recordings: Sequence[Recording[Any]]


class Saves:
    """The news of one service's saves (the module docstring)."""

    def __init__(self) -> None:
        self._issued = 0
        self._issuing = threading.Lock()
        self.recorded: Listeners[Recorded] = Listeners("the saves' recordings")
        """Every save begun with a ticket, as it ended, successful or not (the live hub
        takes this process's own rows from here rather than reading them back from the
        store: docs/decisions.md D-path5)."""
        self.changed: Listeners[frozenset[UUID]] = Listeners("the ids a save changed")
        """The ids a save changed: each match (a round and a table's talk count as their
        match) and every other
        aggregate by its own id — an account (a player's streams end when its token is
        revoked, docs/decisions.md D-fair), a tournament (its standings and display
        streams, D-streams). The in-process hub, the view tags, the lists' follower."""
        self.stored: Listeners[Sequence[Match | Round]] = Listeners("the state a save stored")
        """The matches and rounds a save stored, as saved (read only): the sweeper, the
        bot driver."""
        self.timed: Listeners[SaveTimed] = Listeners("the saves' durations")
        """Every save's duration and outcome (the store append latency metric)."""
        self.forgotten: Listeners[frozenset[UUID]] = Listeners("the copies dropped")
        """Ids whose cached copies were dropped with no new version (a name erased): the
        live streams reload those matches."""

    def begin(self) -> int:
        """A save starts (before anything of it reaches the store): its ticket, in the
        order saves began; it ends with :attr:`recorded` told (thread-safe)."""
        with self._issuing:
            ticket = self._issued
            self._issued = ticket + 1
        return ticket

    @property
    def issued(self) -> int:
        """How many tickets were given: every save begun so far has one below it."""
        return self._issued

    def saved(self, objs: Iterable[object]) -> None:
        """A save stored ``objs`` (the service calls it after every save that stored
        events): tell :attr:`changed` and :attr:`stored`."""
        if not (self.changed or self.stored):
            return
        objs = [o for o in objs if o is not None]
        state = [o for o in objs if isinstance(o, Match | Round)]
        touched = {o.id if isinstance(o, Match) else o.match_id for o in state}
        touched.update(o.match_id for o in objs if isinstance(o, TableTalk))  # its stream's
        for o in objs:
            mine = isinstance(o, Match | Round | TableTalk)
            other = None if mine else getattr(o, "id", None)
            if isinstance(other, UUID):
                touched.add(other)
        self.changed.tell(frozenset(touched))
        self.stored.tell(state)

"""The in-process side of the live hub: subscriptions and the hub of a single process
(see :mod:`infra.hub` for the whole design; docs/decisions.md F3).

A hub says *which match changed* and, when it read them (the PostgreSQL hub), hands over
the new events too, so a subscriber need not read them again (:meth:`Subscription.take`);
a wake-up without them (a save in this process, a reconnect) means "read the store".
Signals coalesce: several changes between two waits are one wake-up.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any
from uuid import UUID

from services.game import GameService


class Subscription:
    """One subscriber's "match changed" signals; several changes coalesce into one.

    ``await wait()`` returns True after a change since the previous wait, False once the
    subscription is closed (the hub stopped); ``async for _ in subscription`` does the
    same until closed. Use it on the event loop the hub runs on.
    """

    __slots__ = ("_closed", "_event", "_events", "_hub", "match_id")

    def __init__(self, hub: LocalHub, match_id: UUID) -> None:
        self._hub = hub
        self.match_id = match_id
        self._event = asyncio.Event()
        self._closed = False
        self._events: list[Any] | None = []

    @property
    def closed(self) -> bool:
        return self._closed

    async def wait(self) -> bool:
        if not self._closed:
            await self._event.wait()
            self._event.clear()
        return not self._closed

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._hub._discard(self)
        self._event.set()

    def take(self) -> list[Any] | None:
        """The match's events the hub handed over since the last take, in commit order —
        or None when some wake-up came without them (then read the store)."""
        events, self._events = self._events, []
        return events

    def _signal(self, events: Sequence[Any] | None = None) -> None:
        if events is None:
            self._events = None
        elif self._events is not None:
            self._events.extend(events)
        self._event.set()

    def __aiter__(self) -> Subscription:
        return self

    async def __anext__(self) -> None:
        if not await self.wait():
            raise StopAsyncIteration

    def __enter__(self) -> Subscription:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class LocalHub:
    """Subscriptions of this process, by match; wakes them on its event loop."""

    def __init__(self) -> None:
        self._subscribers: dict[UUID, set[Subscription]] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self.on_changed: list[Callable[[frozenset[UUID]], None]] = []
        """Told of every change the hub hears, whoever follows the match (a worker process
        hears the saves of the API processes this way; docs/scaling.md)."""
        self.on_relayed: list[Callable[[bytes], None]] = []
        """Told of every message another process relayed (presence, docs/decisions.md
        D-social); a hub of one process relays nothing (there is nobody else)."""

    def relay(self, message: bytes) -> None:
        """Tell ``message`` to the other processes' :attr:`on_relayed` (thread-safe; none
        in one process)."""

    @property
    def listening(self) -> bool:
        """Someone wants to hear of changes: a subscription or a change listener."""
        return bool(self._subscribers or self.on_changed)

    def subscribe(self, match_id: UUID) -> Subscription:
        """Signals for ``match_id`` from now on (call on the hub's event loop)."""
        self._loop = self._loop or asyncio.get_running_loop()
        sub = Subscription(self, match_id)
        self._subscribers.setdefault(match_id, set()).add(sub)
        return sub

    def subscribed(self) -> set[UUID]:
        """The matches that have subscribers in this process."""
        return set(self._subscribers)

    def publish(self, match_id: UUID) -> None:
        """Wake ``match_id``'s subscribers in this process (thread-safe)."""
        self.publish_many((match_id,))

    def publish_many(self, match_ids: Iterable[UUID]) -> None:
        """Wake the subscribers of every match in ``match_ids`` (thread-safe: a
        ``saves.changed`` listener runs on the thread that saved)."""
        loop = self._loop
        if loop is None or loop.is_closed():
            return  # nobody ever subscribed: nobody to wake
        ids = frozenset(match_ids)
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            self._wake(ids)
        else:
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                loop.call_soon_threadsafe(self._wake, ids)

    async def start(self) -> None:
        self._loop = asyncio.get_running_loop()

    async def stop(self) -> None:
        """Close every subscription (their ``wait`` returns False)."""
        for subs in list(self._subscribers.values()):
            for sub in list(subs):
                sub.close()
        self._subscribers.clear()

    def _wake(
        self, match_ids: Iterable[UUID], events: Mapping[UUID, Sequence[Any]] | None = None
    ) -> None:
        """Wake the subscribers of ``match_ids``, handing over ``events[match_id]`` when
        the hub read them (else they read the store); tell the change listeners."""
        match_ids = frozenset(match_ids)
        for listener in self.on_changed:
            listener(match_ids)
        for match_id in match_ids:
            given = None if events is None else events.get(match_id)
            for sub in self._subscribers.get(match_id, ()):
                sub._signal(given)

    def _discard(self, sub: Subscription) -> None:
        subs = self._subscribers.get(sub.match_id)
        if subs is not None:
            subs.discard(sub)
            if not subs:
                del self._subscribers[sub.match_id]


class InProcessHub(LocalHub):
    """The hub of a single process (SQLite, POPO): the service's saves wake it."""

    def attach(self, service: GameService) -> None:
        """Publish every match and tournament ``service`` saves from now on (a tournament
        wakes its standings and display streams, docs/decisions.md D-streams)."""
        service.saves.changed.add(self.publish_many)

    def detach(self, service: GameService) -> None:
        service.saves.changed.remove(self.publish_many)

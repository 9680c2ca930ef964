"""The game application: the event store of matches, rounds, tournaments and players, and
their loads.

Built on the eventsourcing library's :class:`~eventsourcing.application.Application`:
the recorder (POPO, SQLite or PostgreSQL) is chosen by the
``env`` the composition root passes (``PERSISTENCE_MODULE`` …); events are msgspec-encoded
(:mod:`services.codec`). Randomness and time come from injected callables, so tests can
fix them: a 256-bit seed per deal from ``secrets`` (R35), ``now`` from the clock.

Every write is a command through the bus (:mod:`services.bus`, its handlers in
:mod:`services.handlers`), which saves each command's aggregates here in one ``save``.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, ClassVar, TypeVar
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError, Application, LRUCache, Repository
from eventsourcing.domain import DomainEventProtocol, MutableOrImmutableAggregate
from eventsourcing.persistence import IntegrityError, Mapper, Recording, StoredEvent

from domain.game.match import Match
from domain.game.round import Round
from domain.game.round_events import Pacing
from domain.game.timers import Timers
from domain.talk.table_talk import Limits
from services.accounts.keys import KeyStore, MemoryKeys, Sealer
from services.codec import MsgspecMapper
from services.errors import NotFoundError
from services.kept_cache import KeptCache
from services.saves import Recorded, Saves, SaveTimed
from services.settling import Settling
from services.sources import new_seed, utc_now

Clock = Callable[[], datetime]
SeedSource = Callable[[], bytes]
A = TypeVar("A")
SETTLE_S = 1.0
"""The longest a read waits for the live hub to reach the log's end (D-settle)."""
QUICK_PLAY_TIMERS = Timers(declare_ms=30_000, bury_ms=60_000, play_ms=30_000)
TALK_LIMITS = Limits()


@dataclass(frozen=True, slots=True)
class TablePolicy:
    """What the service's settings say about tables and players (docs/configuration.md;
    docs/decisions.md D-table-life)."""

    session_idle: timedelta = timedelta(days=30)
    """A player session unused (not refreshed) this long no longer signs in."""
    quick_play_rounds: int = 4
    """Quick play's match length (``rounds:N``) when its rule set would never end (wrap)."""
    quick_play_timers: Timers = QUICK_PLAY_TIMERS
    """Quick play's turn limits: the timeout bot moves for a seat over its time."""
    substitute: str = "heuristic"
    """The bot that plays a seat whose player left (the timeout bot's kind)."""
    talk: Limits = TALK_LIMITS
    """Table talk's bounds: free text's length, messages a minute, reports (R37)."""


def replay(aggregate: A | None, events: Iterable[Any]) -> A | None:
    """``aggregate`` after ``events``: each event's ``mutate`` in turn (what the library's
    ``project_aggregate`` does, without its per-event check against a runtime protocol,
    ~20 µs an event, most of a replay's cost)."""
    for event in events:
        aggregate = event.mutate(aggregate)
    return aggregate


def _on_event_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


class GameService(Application[UUID]):
    """Commands and loads for matches and their rounds."""

    name = "shengji"
    env: ClassVar[dict[str, str]] = {
        # services built without settings (tests, tools); the composition root passes
        # the setting (infra.store.persistence_env)
        "AGGREGATE_CACHE_MAXSIZE": "1000",
    }
    log_section_size = 500  # notifications a follower (the webhook outbox) reads a query

    def __init__(
        self,
        env: Mapping[str, str] | None = None,
        *,
        clock: Clock = utc_now,
        seeds: SeedSource = new_seed,
        pacing: Pacing | None = None,
        table: TablePolicy | None = None,
        keys: KeyStore | None = None,
        saves: Saves | None = None,
        on_close: Sequence[Callable[[], None]] = (),
    ) -> None:
        """Everything the service needs, given once (docs/decisions.md D-rooms): ``keys``
        the players' keys its events' personal fields are sealed under (crypto-shredding;
        by default keys in memory, which live and die with the service: tests, a record's
        replay), ``saves`` who hears of its saves, ``on_close`` what runs once its store is
        closed (the embedded store's writer claim)."""
        self.sealer = Sealer(keys if keys is not None else MemoryKeys())
        """Seals and opens the events' personal fields (read by the mapper, built below)."""
        super().__init__(env)
        self.clock = clock
        self.seeds = seeds
        self.pacing = pacing or Pacing(interval_ms=0, declare_ms=30_000, window_ms=0)
        self.table = table or TablePolicy()
        """Sessions' idle limit, quick play's match length and turn limits, the bot that
        takes a seat left (``SESSION_IDLE_S``, ``QUICK_PLAY_*``, ``TIMEOUT_BOT``)."""
        self.saves = saves or Saves()
        """Who hears of the saves (:mod:`services.saves`)."""
        self.events_replayed = 0
        """Events applied to rebuild aggregates from the store (metrics)."""
        self.stale_retries = 0
        """Commands decided again once on fresh copies because a cached copy was stale
        (docs/decisions.md D-owner; metrics)."""
        self.heard_elsewhere = 0
        """Cached aggregates brought up to a save another process made (metrics)."""
        self.settling = Settling()
        """Where the live hub has read the log to (:meth:`heard`); a request's read from
        the trusted cache waits for it to reach the log's end as of the read's start, at
        most :data:`SETTLE_S` (docs/decisions.md D-settle)."""
        self._replayed_lock = threading.Lock()
        self._on_close = tuple(on_close)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Subclasses (test doubles, benches) keep the same event tables."""
        super().__init_subclass__(**kwargs)
        cls.name = GameService.name

    def close(self) -> None:
        """Close the store, then run ``on_close`` (once)."""
        try:
            super().close()
        finally:
            callbacks, self._on_close = self._on_close, ()
            for callback in callbacks:
                callback()

    def construct_repository(self) -> Repository[UUID]:
        """The library's repository; a cache served without asking the store
        (``AGGREGATE_CACHE_FASTFORWARD=n``) is a :class:`~services.kept_cache.KeptCache`,
        which never holds a copy older than a save heard of (docs/decisions.md D-owner).
        On a store other processes write (PostgreSQL) it is trusted only once a live hub
        keeps it (:meth:`hub_caught_up`): a process with no hub (an offline command, two
        services in one test) asks the store on every load."""
        repository = super().construct_repository()
        if isinstance(repository.cache, LRUCache) and not repository.fastforward:
            repository.cache = KeptCache(repository.cache.maxsize, kept=self.sole_writer)
        return repository

    @property
    def sole_writer(self) -> bool:
        """Only this process writes the store (the embedded file, memory): every save
        reaches the cache by this process's own saves."""
        return self.env.get("PERSISTENCE_MODULE") != "eventsourcing.postgres"

    def construct_mapper(self) -> Mapper[UUID]:
        return MsgspecMapper(sealer=self.sealer)

    # -- loading ---------------------------------------------------------------------------

    def get_match(
        self, match_id: UUID, version: int | None = None, *, read_only: bool = False
    ) -> Match:
        """The match (at ``version``): the library's load, a copy of its cached aggregate
        (a command's changes reach the cache only by its save). ``read_only``: to read and
        never to change — the cached aggregate itself, not a copy, where the cache never
        changes one in place (no fast-forward: the owner's cache, the embedded store's;
        docs/decisions.md D-bus2); a copy elsewhere."""
        self.settle()
        shared = read_only and not self.repository.fastforward
        try:
            match: Match = self.repository.get(
                match_id,
                version=version,
                projector_func=self._replay,
                deepcopy_from_cache=not shared,
            )
        except AggregateNotFoundError:
            raise NotFoundError(f"no match {match_id}") from None
        if not isinstance(match, Match):
            raise NotFoundError(f"no match {match_id}")
        return match

    def get_round(self, round_id: UUID, version: int | None = None) -> Round:
        """The round (at ``version``), as :meth:`get_match` loads."""
        self.settle()
        try:
            round_: Round = self.repository.get(
                round_id, version=version, projector_func=self._replay
            )
        except AggregateNotFoundError:
            raise NotFoundError(f"no round {round_id}") from None
        if not isinstance(round_, Round):
            raise NotFoundError(f"no round {round_id}")
        return round_

    def _replay(self, aggregate: Any, events: Iterable[Any]) -> Any:
        """The projector the library's loads take: :func:`replay`, counting the events it
        applies (metrics)."""
        events = list(events)
        with self._replayed_lock:
            self.events_replayed += len(events)
        return replay(aggregate, events)

    def current_round(self, match: Match) -> Round | None:
        rid = match.current_round_id()
        return None if rid is None else self.get_round(rid)

    # -- the aggregate cache (docs/decisions.md D-owner) ------------------------------------

    @property
    def trusts_cache(self) -> bool:
        """Loads serve the cached aggregate without asking the store for newer events
        (``AGGREGATE_CACHE_FASTFORWARD=n``): a copy may be stale when another process
        saved, so a command refused on one is decided again once (:mod:`services.bus`)."""
        return self.repository.cache is not None and not self.repository.fastforward

    def settle(self) -> None:
        """Make a request's read see every save acknowledged before it began
        (docs/decisions.md D-settle): its first load asks the store where its log ends
        (one query, shared by the reads that begin while it runs) and waits, at most
        :data:`SETTLE_S`, until the live hub has told the cache every row up to there; if
        it has not, this load reads the store. Free while no hub keeps the cache, for the
        later loads of a read, a command's loads, loads outside a request's read
        (:mod:`services.settling`) and on the event loop (which the hub tells from)."""
        settling = self.settling
        cache = self.repository.cache
        if _on_event_loop() or not isinstance(cache, KeptCache):
            return
        if settling.unsettled():
            cache.miss_once()  # an earlier load of this read could not be settled
            return
        if not settling.needed() or not cache.kept:
            return  # (not kept: loads read the store anyway)
        try:
            settled = settling.reach(settling.end_of_log(self._log_end), SETTLE_S)
        except Exception:  # the store will answer the loads itself (or fail them)
            settled = False
        if not settled:
            settling.give_up()
            cache.miss_once()

    def _log_end(self) -> int:
        """The last notification id in the store (the library's recorder: one query)."""
        return self.recorder.max_notification_id() or 0

    def stale_retried(self) -> None:
        """Count a command decided again on fresh copies (thread-safe)."""
        with self._replayed_lock:
            self.stale_retries += 1

    def behind(self, versions: Mapping[UUID, int]) -> bool:
        """The store holds an event after ``versions[id]`` of some aggregate (one indexed
        query each): a command refused on those copies may have been refused on stale
        ones. Always False while loads ask the store anyway."""
        if not self.trusts_cache:
            return False
        return any(
            next(iter(self.events.get(originator_id=i, gt=v, limit=1)), None) is not None
            for i, v in versions.items()
        )

    def cached(self, aggregate_id: UUID) -> Any | None:
        """The trusted cache's copy of ``aggregate_id`` as it is kept — brought up to every
        save heard of (D-owner) — not a copy of it: to read, never to change; None when
        it is not cached or the cache is not trusted (then only a load knows)."""
        cache = self.repository.cache
        if not isinstance(cache, KeptCache) or not cache.kept:
            return None
        try:
            return cache.peek(aggregate_id)
        except KeyError:
            return None

    def refresh(self, *ids: UUID) -> None:
        """Drop the cached copies of ``ids``: the next load reads the store (a command
        that may have been decided on stale copies). The library's cache API."""
        cache = self.repository.cache
        if cache is not None:
            for aggregate_id in ids:
                with contextlib.suppress(KeyError):
                    cache.get(aggregate_id, evict=True)

    def heard(self, stored: Sequence[StoredEvent]) -> None:
        """Rows of the store's log another process may have saved (the PostgreSQL hub
        tells every row it reads, in order): a cached aggregate older than its row is
        brought up to it — a copy of the cached one with the new events applied, put in
        place of it — or dropped when the rows do not follow on from it; a copy older than
        a row heard is never put afterwards (:class:`~services.kept_cache.KeptCache`). Rows
        of this process's own saves find the cache already at their version."""
        cache = self.repository.cache
        if not isinstance(cache, KeptCache):
            return
        touched = cache.heard(stored, self.mapper.to_domain_event, self._replay)
        if touched:
            with self._replayed_lock:
                self.heard_elsewhere += touched

    def hub_lost(self) -> None:
        """The live hub has no connection: saves of other processes may go unheard, so
        loads read the store (and put nothing) until :meth:`hub_caught_up`."""
        cache = self.repository.cache
        if isinstance(cache, KeptCache):
            cache.lose()

    def hub_caught_up(self) -> None:
        """The live hub is connected and has told every row since it was last connected
        (since it first connected): loads trust the cache again."""
        cache = self.repository.cache
        if isinstance(cache, KeptCache):
            cache.keep()

    # -- internals -------------------------------------------------------------------------

    def save(
        self,
        *objs: MutableOrImmutableAggregate[UUID] | DomainEventProtocol[UUID] | None,
        **kwargs: Any,
    ) -> list[Recording[UUID]]:
        """Save, then tell :attr:`saves` (the events are stored whatever a listener
        does: a listener's error is logged, not raised)."""
        started = time.perf_counter()
        cache = self.repository.cache
        if isinstance(cache, KeptCache):
            cache.begin()  # what the save puts in the cache belongs to this epoch
        saves = self.saves
        ticket = saves.begin()
        recordings: list[Recording[UUID]] = []
        try:
            recordings = super().save(*objs, **kwargs)
        except Exception as e:
            self._observe_save(started, "conflict" if isinstance(e, IntegrityError) else "error")
            raise
        finally:
            if recordings and isinstance(cache, KeptCache):
                cache.saved(r.notification for r in recordings)  # as if heard (D-owner)
            saves.recorded.tell(Recorded(ticket, recordings))
        self._observe_save(started, "ok")
        if recordings:
            self.saves.saved(objs)
        return recordings

    def _observe_save(self, started: float, outcome: str) -> None:
        if self.saves.timed:
            self.saves.timed.tell(SaveTimed(time.perf_counter() - started, outcome))

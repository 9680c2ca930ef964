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

import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial
from typing import Any, ClassVar
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError, Application, project_aggregate
from eventsourcing.domain import Aggregate, DomainEventProtocol, MutableOrImmutableAggregate
from eventsourcing.persistence import IntegrityError, Mapper, Recording

from domain.accounts.account import Account
from domain.game.match import Match
from domain.game.round import Round
from domain.game.round_events import Pacing
from domain.game.timers import Timers
from services.codec import MsgspecMapper
from services.errors import NotFoundError
from services.sources import new_seed, utc_now

Clock = Callable[[], datetime]
SeedSource = Callable[[], bytes]
SaveListener = Callable[[frozenset[UUID]], None]
"""Told the ids of the matches a save touched (a round counts as its match)."""
StateListener = Callable[[Sequence[Match | Round]], None]
"""Told the matches and rounds a save stored, as saved (read only)."""
SaveObserver = Callable[[float, str], None]
"""Told each save's duration (seconds) and outcome: ``ok``, ``conflict`` or ``error``."""

log = logging.getLogger(__name__)

QUICK_PLAY_TIMERS = Timers(declare_ms=30_000, bury_ms=60_000, play_ms=30_000)


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


class GameService(Application[UUID]):
    """Commands and loads for matches and their rounds."""

    name = "shengji"
    env: ClassVar[dict[str, str]] = {
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
    ) -> None:
        super().__init__(env)
        self.clock = clock
        self.seeds = seeds
        self.pacing = pacing or Pacing(interval_ms=0, declare_ms=30_000, window_ms=0)
        self.table = table or TablePolicy()
        """Sessions' idle limit, quick play's match length and turn limits, the bot that
        takes a seat left (``SESSION_IDLE_S``, ``QUICK_PLAY_*``, ``TIMEOUT_BOT``)."""
        self.on_saved: list[SaveListener] = []
        """Called after every save, on the saving thread (the in-process live hub), with the
        ids of the matches it changed and of the :attr:`followed` aggregates it saved."""
        self.followed: tuple[type[Aggregate], ...] = (Account,)
        """Aggregates told to :attr:`on_saved` by their own id: an account (a player's streams
        end when its token is revoked, docs/decisions.md D-fair); the composition root adds
        the tournament (its standings and display streams, D-streams)."""
        self.on_saved_state: list[StateListener] = []
        """Told each save's matches and rounds as saved (read only; the sweeper)."""
        self.save_observers: list[SaveObserver] = []
        """Told every save's duration and outcome (the store append latency metric)."""
        self.events_replayed = 0
        """Events applied to rebuild aggregates from the store (metrics)."""
        self._replayed_lock = threading.Lock()
        self.on_forgotten: list[SaveListener] = []
        """Told ids whose cached copies were dropped with no new version (a name erased)."""
        self.on_close: list[Callable[[], None]] = []
        """Called once the store is closed (the embedded store's writer claim)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Subclasses (test doubles, benches) keep the same event tables."""
        super().__init_subclass__(**kwargs)
        cls.name = GameService.name

    def close(self) -> None:
        """Close the store, then run :attr:`on_close`."""
        try:
            super().close()
        finally:
            callbacks, self.on_close = self.on_close, []
            for callback in callbacks:
                callback()

    def construct_mapper(self) -> Mapper[UUID]:
        return MsgspecMapper()

    # -- loading ---------------------------------------------------------------------------

    def get_match(self, match_id: UUID, version: int | None = None) -> Match:
        """The match (at ``version``): the library's load, a copy of its cached aggregate
        (a command's changes reach the cache only by its save)."""
        try:
            match: Match = self.repository.get(
                match_id, version=version, projector_func=self._replay
            )
        except AggregateNotFoundError:
            raise NotFoundError(f"no match {match_id}") from None
        if not isinstance(match, Match):
            raise NotFoundError(f"no match {match_id}")
        return match

    def get_round(self, round_id: UUID, version: int | None = None) -> Round:
        """The round (at ``version``), as :meth:`get_match` loads."""
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
        """The library's projector, counting the events it applies (metrics)."""
        events = list(events)
        with self._replayed_lock:
            self.events_replayed += len(events)
        return project_aggregate(aggregate, events)

    def current_round(self, match: Match) -> Round | None:
        rid = match.current_round_id()
        return None if rid is None else self.get_round(rid)

    # -- internals -------------------------------------------------------------------------

    def save(
        self,
        *objs: MutableOrImmutableAggregate[UUID] | DomainEventProtocol[UUID] | None,
        **kwargs: Any,
    ) -> list[Recording[UUID]]:
        """Save, then tell :attr:`on_saved` which matches changed. The events are
        stored whatever a listener does, so a listener's error is logged, not raised."""
        started = time.perf_counter()
        try:
            recordings = super().save(*objs, **kwargs)
        except Exception as e:
            self._observe_save(started, "conflict" if isinstance(e, IntegrityError) else "error")
            raise
        self._observe_save(started, "ok")
        if recordings and (self.on_saved or self.on_saved_state):
            state = [o for o in objs if isinstance(o, Match | Round)]
            # The matches changed, and the accounts: a player's streams follow their
            # account, to end when its token is revoked (docs/decisions.md D-fair).
            touched = frozenset(o.id if isinstance(o, Match) else o.match_id for o in state)
            touched |= {o.id for o in objs if isinstance(o, self.followed)}
            listeners: list[Callable[[], None]] = [
                *(partial(listener, touched) for listener in self.on_saved),
                *(partial(listener, state) for listener in self.on_saved_state),
            ]
            for call in listeners:
                try:
                    call()
                except Exception:
                    log.exception("a save listener failed (the events are saved)")
        return recordings

    def _observe_save(self, started: float, outcome: str) -> None:
        seconds = time.perf_counter() - started
        for observe in self.save_observers:
            observe(seconds, outcome)

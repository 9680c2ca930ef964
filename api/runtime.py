"""What the REST handlers share: the bus (the game service and its Idempotency-Keys), one
thread limiter and the bot driver (the ``runtime`` dependency, built by ``api.app``).

The eventsourcing library is synchronous (docs/decisions.md F2): every blocking call into
the service made from async code — commands, reads, the live streams' loads, the sweeper —
runs through :meth:`Runtime.call`, ``anyio.to_thread.run_sync`` under the app's one
:class:`anyio.CapacityLimiter`, sized to the store's connection pool, so no more calls
are ever inside the store at once than it has connections. The bots move on the driver's
own threads, outside it (docs/decisions.md D-bot-driver).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar
from uuid import UUID

import anyio

from domain.game.match import Match
from domain.game.round import Round, RoundPhase
from services.access import Credential
from services.accounts.ranked import RankedQueues
from services.bot_driver import BotDriver
from services.bus import Bus
from services.career.reads import CareerModels
from services.game import GameService
from services.ratings.boards import RatingModels
from services.readmodels.lists import ReadModels
from services.settling import Settling
from services.social.reads import SocialModels, social_of
from services.sources import PLAYER_ROLE

T = TypeVar("T")


class ViewTags:
    """The last ETag of each match's views and the seat of each seat token, kept in
    memory so a poll that is not modified is answered with no store read and no thread.

    Only for a single-process store (SQLite, POPO): every save in this process tells
    :meth:`changed` (the service's ``saves.changed``), which drops the match's tag. A tag read
    before a save and stored after it is refused by the generation check. Views that
    change with the clock (a paced deal, an unclaimed deadline) are never cached.
    """

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self._lock = threading.Lock()
        self._tags: dict[UUID, str] = {}
        self._generation: dict[UUID, int] = {}
        self._seats: dict[UUID, dict[str, int]] = {}
        """Per match: a save forgets them with the tag (a seat token replaced by a new one
        must not be answered 304 by its old token); the next read remembers them again."""

    def changed(self, match_ids: frozenset[UUID]) -> None:
        with self._lock:
            for match_id in match_ids:
                self._tags.pop(match_id, None)
                self._seats.pop(match_id, None)
                self._generation[match_id] = self._generation.get(match_id, 0) + 1

    def generation(self, match_id: UUID) -> int:
        with self._lock:
            return self._generation.get(match_id, 0)

    def remember(self, match_id: UUID, generation: int, tag: str) -> None:
        if not self.enabled or "-" in tag:
            return
        with self._lock:
            if self._generation.get(match_id, 0) == generation:
                if len(self._tags) > 100_000:
                    self._tags.clear()
                self._tags[match_id] = tag

    def tag(self, match_id: UUID) -> str | None:
        return self._tags.get(match_id) if self.enabled else None

    def remember_seat(self, match_id: UUID, cred: Credential, seat: int) -> None:
        # A player token's seat is not remembered: its session can be revoked or rotated,
        # and its seat token replaced (docs/players.md); the match's changes drop the rest.
        if self.enabled and cred.role != PLAYER_ROLE:
            with self._lock:
                if len(self._seats) > 100_000:
                    self._seats.clear()
                self._seats.setdefault(match_id, {})[cred.token] = seat

    def seat(self, match_id: UUID, cred: Credential | None) -> int | None:
        return None if cred is None else self._seats.get(match_id, {}).get(cred.token)


@dataclass
class Runtime:
    bus: Bus
    """Every write's way in (:mod:`services.bus`)."""
    limiter: anyio.CapacityLimiter
    bots: BotDriver
    """The bot driver: the organiser's "run the bots" routes wake it."""
    tags: ViewTags = field(default_factory=lambda: ViewTags(enabled=False))
    retry_ms: int = 1000
    """The ``retry:`` hint of every stream (``SSE_RETRY_MS``): one reconnection delay for
    the match, player, ticket, standings and feed streams alike."""
    read_models: ReadModels | None = None
    """The lists' read models (docs/decisions.md D-readmodels); None: a view in memory
    that this process keeps."""

    rating_models: RatingModels | None = None
    """The ratings' read model (docs/decisions.md D-ratings); None: in memory, kept here."""
    ranked_queues: RankedQueues = field(default_factory=RankedQueues)
    """The ranked queues as this process follows them (a ranked ticket's expected wait)."""
    career_models: CareerModels | None = None
    """The players' careers (docs/decisions.md D-career); None: in memory, kept here."""
    social_models: SocialModels | None = None
    """Friends and presence (docs/decisions.md D-social); None: the bus's own."""

    def __post_init__(self) -> None:
        if self.read_models is None:
            self.read_models = ReadModels.in_memory(self.service)
        if self.rating_models is None:
            self.rating_models = RatingModels.in_memory(self.service)
        if self.career_models is None:
            self.career_models = CareerModels.in_memory(self.service)
        if self.social_models is None:
            self.social_models = social_of(self.bus)

    @property
    def ratings(self) -> RatingModels:
        assert self.rating_models is not None  # __post_init__ set it
        return self.rating_models

    @property
    def career(self) -> CareerModels:
        assert self.career_models is not None  # __post_init__ set it
        return self.career_models

    @property
    def social(self) -> SocialModels:
        assert self.social_models is not None  # __post_init__ set it
        return self.social_models

    @property
    def lists(self) -> ReadModels:
        assert self.read_models is not None  # __post_init__ set it
        return self.read_models

    @property
    def service(self) -> GameService:
        return self.bus.service

    async def call(self, fn: Callable[..., T], *args: Any) -> T:
        """Run the blocking ``fn(*args)`` in a worker thread under the limiter (the
        request's contextvars, its log context, go along). Its loads are one read: they
        see every save acknowledged before it began (docs/decisions.md D-settle)."""
        return await in_thread(self.limiter, Settling.read, fn, *args)

    def provide(self) -> Runtime:
        """The ``runtime`` dependency."""
        return self


async def in_thread(limiter: anyio.CapacityLimiter | None, fn: Callable[..., T], *args: Any) -> T:
    """The one way async code runs a blocking call: ``fn(*args)`` in a worker thread,
    under ``limiter`` (the store's, for a call into the store)."""
    return await anyio.to_thread.run_sync(fn, *args, limiter=limiter)


def snapshot(service: GameService, match_id: UUID) -> tuple[Match, Round | None]:
    """The match and its current round as one moment, to read (not to change).

    The match changes only around its rounds (seats, a round recorded and the next begun,
    the end), and those saves also score, abandon or begin the round: so the match is
    read again only when the round read after it is over, or there is none — then a save
    of both in between is not seen half-way."""
    match = service.get_match(match_id)
    for _ in range(3):
        round_ = service.current_round(match)
        if round_ is not None and round_.phase not in _OVER:
            return match, round_
        again = service.get_match(match_id)
        if again.version == match.version:
            return match, round_
        match = again
    return match, service.current_round(match)


_OVER = frozenset((RoundPhase.SCORED, RoundPhase.ABANDONED))

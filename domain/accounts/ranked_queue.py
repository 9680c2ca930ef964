"""Ranked quick play: the ``RankedQueue`` of one rule-set family (docs/players.md).

A queue per family (its id comes from the family, :func:`ranked_queue_id`) holds the
ranked tickets that wait, oldest first, each with the shown rating its player had when it
queued (:class:`~domain.accounts.matchmaking.Entrant`). Every change — a ticket queued, one
that leaves, a match made — is an event of the queue, so the store's optimistic
concurrency on its version lets exactly one of two racing changes through, as the casual
lobby's does (domain/accounts/lobby.py). Who is seated with whom is
:mod:`domain.accounts.matchmaking`'s, a pure function of the queue and the time.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, ClassVar
from uuid import NAMESPACE_URL, UUID, uuid5

from eventsourcing.domain import Aggregate

from domain.accounts.matchmaking import Entrant
from domain.game.base import GameAggregate

NAMESPACE = uuid5(NAMESPACE_URL, "shengji:ranked-queue")
RankedSeat = tuple[int, UUID, UUID, int, int]
"""(seat, ticket id, account id, rating when queued, ms waited) of a ranked match's seat."""


def ranked_queue_id(family: str) -> UUID:
    return uuid5(NAMESPACE, family)


class RankedQueueOpened(Aggregate.Created):
    class_version: ClassVar[int] = 1
    family: str

    def apply(self, aggregate: Any) -> None:
        queue: RankedQueue = aggregate
        queue.family = self.family
        queue.waiting = []


class RankedQueueEvent(Aggregate.Event):
    class_version: ClassVar[int] = 1

    def apply(self, aggregate: Any) -> None:
        self.apply_to(aggregate)

    def apply_to(self, queue: RankedQueue) -> None:  # pragma: no cover - every event overrides
        raise NotImplementedError


class RankedTicketQueued(RankedQueueEvent):
    ticket_id: UUID
    account_id: UUID
    rating: int
    """The player's shown rating in the family when the ticket queued."""
    provisional: bool

    def apply_to(self, queue: RankedQueue) -> None:
        queue.waiting.append(
            Entrant(self.ticket_id, self.account_id, self.rating, self.provisional, self.timestamp)
        )


class RankedTicketLeft(RankedQueueEvent):
    ticket_id: UUID

    def apply_to(self, queue: RankedQueue) -> None:
        queue.waiting = [e for e in queue.waiting if e.ticket_id != self.ticket_id]


class RankedMatchMade(RankedQueueEvent):
    """Four waiting tickets seated (``match_id`` is created, seated and dealt in the same
    transaction); each seat with its rating and how long its ticket waited (the expected
    waits' read model reads them)."""

    match_id: UUID
    seats: tuple[RankedSeat, RankedSeat, RankedSeat, RankedSeat]

    def apply_to(self, queue: RankedQueue) -> None:
        gone = {ticket for _, ticket, _, _, _ in self.seats}
        queue.waiting = [e for e in queue.waiting if e.ticket_id not in gone]


class RankedQueue(GameAggregate):
    if TYPE_CHECKING:
        family: str
        waiting: list[Entrant]

    @classmethod
    def open(cls, family: str, now: datetime) -> RankedQueue:
        """The family's queue (its matches take the family's preset, as quick play plays
        it, when they are made)."""
        return cls._create(
            RankedQueueOpened, id=ranked_queue_id(family), family=family, timestamp=now
        )

    def queue(self, entrant: Entrant, now: datetime) -> None:
        self._emit(
            RankedTicketQueued,
            now,
            ticket_id=entrant.ticket_id,
            account_id=entrant.account_id,
            rating=entrant.rating,
            provisional=entrant.provisional,
        )

    def leave(self, ticket_id: UUID, now: datetime) -> None:
        if any(e.ticket_id == ticket_id for e in self.waiting):
            self._emit(RankedTicketLeft, now, ticket_id=ticket_id)

    def make_match(
        self, match_id: UUID, seated: tuple[Entrant, Entrant, Entrant, Entrant], now: datetime
    ) -> None:
        """``seated``: the entrants at seats 0–3."""
        seats = tuple(
            (s, e.ticket_id, e.account_id, e.rating, _ms(now - e.queued_at))
            for s, e in enumerate(seated)
        )
        self._emit(RankedMatchMade, now, match_id=match_id, seats=seats)


def _ms(waited: timedelta) -> int:
    return max(0, int(waited.total_seconds() * 1000))

"""Webhook subscriptions and their delivery queues (docs/webhooks.md).

A ``Subscription`` (in the game's store) is registered by the operator: a URL, a secret
(to sign with HMAC-SHA256; shown to nobody, never in history: ``SECRET_FIELDS``) and the
kinds it wants. A ``Queue`` (in the outbox's store) holds one subscription's deliveries
for one player (or one tournament), in the order of the event log: only its head is
sent, so a player's deliveries arrive in order; each attempt is recorded (the delivery
log), and a failed one waits its backoff before the next.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar
from uuid import NAMESPACE_URL, UUID, uuid5

from eventsourcing.domain import Aggregate

from domain.game.base import GameAggregate
from domain.rules.errors import IllegalMoveError, InvalidInputError

KINDS = (
    "your-turn",
    "match-found",
    "match-finished",
    "rating-changed",
    "tournament-round-ready",
    "friend-request",
    "friend-accepted",
    "table-invitation",
    "friend-online",
)
QUEUES = uuid5(NAMESPACE_URL, "shengji:webhook-queue")


def queue_id(subscription_id: UUID, key: str) -> UUID:
    return uuid5(QUEUES, f"{subscription_id}:{key}")


class SubscriptionRegistered(Aggregate.Created):
    class_version: ClassVar[int] = 1
    SECRET_FIELDS: ClassVar[tuple[str, ...]] = ("secret",)
    SHOWN_TO_NOBODY: ClassVar[tuple[str, ...]] = ("secret",)
    """The signing key: not even the operator's feed shows it (docs/webhooks.md)."""
    url: str
    secret: str
    kinds: tuple[str, ...]

    def apply(self, aggregate: Any) -> None:
        s: Subscription = aggregate
        s.url, s.secret, s.kinds, s.active = self.url, self.secret, tuple(self.kinds), True


class SubscriptionRemoved(Aggregate.Event):
    class_version: ClassVar[int] = 1

    def apply(self, aggregate: Any) -> None:
        aggregate.active = False


class Subscription(GameAggregate):
    if TYPE_CHECKING:
        url: str
        secret: str
        kinds: tuple[str, ...]
        active: bool

    @classmethod
    def register(
        cls, sub_id: UUID, url: str, secret: str, kinds: tuple[str, ...], now: datetime
    ) -> Subscription:
        if not url.startswith(("http://", "https://")) or len(url) > 2000:
            raise InvalidInputError("url: an http(s) URL of at most 2000 characters")
        if not 16 <= len(secret) <= 200:
            raise InvalidInputError("secret: 16 to 200 characters")
        if not kinds or any(k not in KINDS for k in kinds):
            raise InvalidInputError(f"kinds: some of {', '.join(KINDS)}")
        return cls._create(
            SubscriptionRegistered,
            id=sub_id,
            url=url,
            secret=secret,
            kinds=tuple(dict.fromkeys(kinds)),
            timestamp=now,
        )

    def remove(self, now: datetime) -> None:
        if not self.active:
            raise IllegalMoveError("the subscription is removed already", code="no-subscription")
        self._emit(SubscriptionRemoved, now)


@dataclass(frozen=True, slots=True)
class Attempt:
    at: datetime
    status: int | None
    """The receiver's HTTP status; None when it could not be reached."""
    error: str


@dataclass
class Item:
    seq: int
    kind: str
    body: str
    """The JSON sent (the same bytes on every attempt)."""
    enqueued_at: datetime
    attempts: list[Attempt]
    delivered_at: datetime | None = None


class QueueOpened(Aggregate.Created):
    class_version: ClassVar[int] = 1
    subscription_id: UUID
    key: str

    def apply(self, aggregate: Any) -> None:
        q: Queue = aggregate
        q.subscription_id, q.key, q.items, q.head, q.next_at = (
            self.subscription_id,
            self.key,
            [],
            0,
            None,
        )


class Enqueued(Aggregate.Event):
    class_version: ClassVar[int] = 1
    kind: str
    body: str

    def apply(self, aggregate: Any) -> None:
        q: Queue = aggregate
        q.items.append(Item(len(q.items) + 1, self.kind, self.body, self.timestamp, []))


class AttemptFailed(Aggregate.Event):
    class_version: ClassVar[int] = 1
    seq: int
    status: int | None
    error: str
    next_at: datetime

    def apply(self, aggregate: Any) -> None:
        q: Queue = aggregate
        q.items[self.seq - 1].attempts.append(Attempt(self.timestamp, self.status, self.error))
        q.next_at = self.next_at


class Delivered(Aggregate.Event):
    class_version: ClassVar[int] = 1
    seq: int
    status: int

    def apply(self, aggregate: Any) -> None:
        q: Queue = aggregate
        item = q.items[self.seq - 1]
        item.attempts.append(Attempt(self.timestamp, self.status, ""))
        item.delivered_at = self.timestamp
        q.head = self.seq
        q.next_at = None


class Queue(GameAggregate):
    if TYPE_CHECKING:
        subscription_id: UUID
        key: str
        items: list[Item]
        head: int
        """How many items were delivered (the next to send is ``head + 1``)."""
        next_at: datetime | None
        """When the head may be tried again after a failure."""

    @classmethod
    def open(cls, subscription_id: UUID, key: str, now: datetime) -> Queue:
        return cls._create(
            QueueOpened,
            id=queue_id(subscription_id, key),
            subscription_id=subscription_id,
            key=key,
            timestamp=now,
        )

    def pending(self) -> Item | None:
        return self.items[self.head] if self.head < len(self.items) else None

    def enqueue(self, kind: str, body: str, now: datetime) -> None:
        self._emit(Enqueued, now, kind=kind, body=body)

    def failed(
        self, seq: int, status: int | None, error: str, next_at: datetime, now: datetime
    ) -> None:
        self._emit(AttemptFailed, now, seq=seq, status=status, error=error[:300], next_at=next_at)

    def delivered(self, seq: int, status: int, now: datetime) -> None:
        self._emit(Delivered, now, seq=seq, status=status)


class TableOpened(Aggregate.Created):
    """The outbox's note of a match where a player sits (whose seat is whose)."""

    class_version: ClassVar[int] = 1
    match_id: UUID

    def apply(self, aggregate: Any) -> None:
        aggregate.match_id, aggregate.seats = self.match_id, {}


class PlayerSeated(Aggregate.Event):
    class_version: ClassVar[int] = 1
    seat: int
    account_id: UUID

    def apply(self, aggregate: Any) -> None:
        aggregate.seats[self.seat] = self.account_id


class Table(GameAggregate):
    """Seats of a match held by players (accounts), as the outbox learnt them."""

    if TYPE_CHECKING:
        match_id: UUID
        seats: dict[int, UUID]

    @classmethod
    def open(cls, table_id: UUID, match_id: UUID, now: datetime) -> Table:
        return cls._create(TableOpened, id=table_id, match_id=match_id, timestamp=now)

    def seat(self, seat: int, account_id: UUID, now: datetime) -> None:
        self._emit(PlayerSeated, now, seat=seat, account_id=account_id)


class RegistryOpened(Aggregate.Created):
    class_version: ClassVar[int] = 1

    def apply(self, aggregate: Any) -> None:
        aggregate.subscriptions = {}


class Subscribed(Aggregate.Event):
    class_version: ClassVar[int] = 1
    subscription_id: UUID
    kinds: tuple[str, ...]

    def apply(self, aggregate: Any) -> None:
        aggregate.subscriptions[self.subscription_id] = tuple(self.kinds)


class Unsubscribed(Aggregate.Event):
    class_version: ClassVar[int] = 1
    subscription_id: UUID

    def apply(self, aggregate: Any) -> None:
        aggregate.subscriptions.pop(self.subscription_id, None)


class Registry(GameAggregate):
    """The subscriptions as the outbox learnt them from the log, in its order."""

    if TYPE_CHECKING:
        subscriptions: dict[UUID, tuple[str, ...]]

    @classmethod
    def open(cls, registry_id: UUID, now: datetime) -> Registry:
        return cls._create(RegistryOpened, id=registry_id, timestamp=now)

    def subscribe(self, sub_id: UUID, kinds: tuple[str, ...], now: datetime) -> None:
        self._emit(Subscribed, now, subscription_id=sub_id, kinds=kinds)

    def unsubscribe(self, sub_id: UUID, now: datetime) -> None:
        self._emit(Unsubscribed, now, subscription_id=sub_id)

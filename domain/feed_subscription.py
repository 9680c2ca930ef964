"""Feed subscriptions: a consumer's position in the event log, kept by the server
(docs/events.md, "Subscriptions").

A ``FeedSubscription`` is named (its id derives from the name) and follows the log after
a position, optionally only some event types. Consumers **claim** the next range of
positions ``(after, upto]`` under a lease, process its items and **acknowledge** the
lease. Several consumers of one subscription share its events: each range is leased to
one consumer at a time; a lease not acknowledged before it expires is claimed again by
whichever consumer asks next (at least once, never lost). The **checkpoint** is the
highest position below which every range is acknowledged: a consumer that restarts, on
any replica, resumes there. A single consumer may also **commit** a position directly
(the stream's ``Last-Event-ID``): everything up to it that no consumer holds a lease on
counts as acknowledged, and the checkpoint moves on as far as no open lease stops it. A
commit never drops a lease: the range is acknowledged by its consumer, or, expired, claimed
again (docs/decisions.md D-doors).

Pure: ids, lease ids and ``now`` come in as arguments.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, ClassVar
from uuid import NAMESPACE_URL, UUID, uuid5

from eventsourcing.domain import Aggregate

from domain.game.base import GameAggregate
from domain.rules.errors import IllegalMoveError, InvalidInputError

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
LEASE_MS_MAX = 3_600_000


def subscription_id(name: str) -> UUID:
    """The subscription called ``name`` (one per name, on every replica)."""
    return uuid5(NAMESPACE_URL, f"shengji:feed-subscription:{name}")


class LeaseLostError(IllegalMoveError):
    """An acknowledgement of a lease the subscription no longer holds for that consumer:
    it expired and another consumer claimed the range, or it was acknowledged already."""

    code = "lease-lost"


@dataclass(frozen=True, slots=True)
class Lease:
    """A range of positions ``(after, upto]`` leased to ``consumer`` until ``expires``."""

    lease: str
    consumer: str
    after: int
    upto: int
    expires: datetime


def _join_acknowledged(s: FeedSubscription) -> None:
    """The checkpoint moves over the acknowledged ranges that start where it stands."""
    while s.checkpoint in s.acked:
        s.checkpoint = s.acked.pop(s.checkpoint)


def _acknowledge_unleased(s: FeedSubscription, position: int) -> None:
    """What lies between the checkpoint and ``position`` outside every lease (open or
    expired) and every acknowledged range counts as acknowledged: a commit never takes a
    range leased to a consumer, which acknowledges it or loses it to the next claim."""
    cursor = s.checkpoint
    held = sorted([*((x.after, x.upto) for x in s.leases.values()), *s.acked.items()])
    for after, upto in held:
        if after >= position:
            break
        if after > cursor:
            s.acked[cursor] = after
        cursor = max(cursor, upto)
    if cursor < position:
        s.acked[cursor] = position


class FeedSubscriptionCreated(Aggregate.Created):
    class_version: ClassVar[int] = 1
    SECRET_FIELDS: ClassVar[tuple[str, ...]] = ()
    name: str
    types: tuple[str, ...]
    start: int
    lease_ms: int

    def apply(self, aggregate: Any) -> None:
        s: FeedSubscription = aggregate
        s.name, s.types, s.lease_ms = self.name, tuple(self.types), self.lease_ms
        s.checkpoint = s.handed = self.start
        s.leases, s.acked = {}, {}


class RangeClaimed(Aggregate.Event):
    """A range leased to a consumer (a new one, or an expired lease's range again)."""

    class_version: ClassVar[int] = 1
    SECRET_FIELDS: ClassVar[tuple[str, ...]] = ()
    lease: str
    consumer: str
    after: int
    upto: int
    expires: datetime

    def apply(self, aggregate: Any) -> None:
        s: FeedSubscription = aggregate
        for key, old in list(s.leases.items()):
            if old.after == self.after:
                del s.leases[key]  # an expired lease's range, claimed again
        s.leases[self.lease] = Lease(self.lease, self.consumer, self.after, self.upto, self.expires)
        s.handed = max(s.handed, self.upto)


class RangeAcknowledged(Aggregate.Event):
    """A consumer processed its leased range."""

    class_version: ClassVar[int] = 1
    SECRET_FIELDS: ClassVar[tuple[str, ...]] = ()
    lease: str

    def apply(self, aggregate: Any) -> None:
        s: FeedSubscription = aggregate
        done = s.leases.pop(self.lease)
        s.acked[done.after] = done.upto
        _join_acknowledged(s)


class CheckpointCommitted(Aggregate.Event):
    """A consumer said it processed everything up to ``position``: what is not leased to a
    consumer counts as acknowledged (a lease stays: :func:`_acknowledge_unleased`)."""

    class_version: ClassVar[int] = 1
    SECRET_FIELDS: ClassVar[tuple[str, ...]] = ()
    position: int

    def apply(self, aggregate: Any) -> None:
        s: FeedSubscription = aggregate
        _acknowledge_unleased(s, self.position)
        s.handed = max(s.handed, self.position)
        _join_acknowledged(s)


class FeedSubscription(GameAggregate):
    """A named consumer position in the log (module docstring)."""

    if TYPE_CHECKING:
        name: str
        types: tuple[str, ...]
        lease_ms: int
        checkpoint: int
        handed: int
        leases: dict[str, Lease]
        acked: dict[int, int]

    @classmethod
    def create(
        cls, name: str, types: tuple[str, ...], start: int, lease_ms: int, now: datetime
    ) -> FeedSubscription:
        if not NAME.match(name):
            raise InvalidInputError(
                f"name: 1 to 64 letters, digits, '.', '_' or '-' (starting with a letter or "
                f"digit), got {name[:80]!r}"
            )
        if not 1000 <= lease_ms <= LEASE_MS_MAX:
            raise InvalidInputError(f"leaseMs: 1000..{LEASE_MS_MAX}, got {lease_ms}")
        if start < 0:
            raise InvalidInputError(f"from: a position in the log, 0 or more, got {start}")
        return cls._create(
            FeedSubscriptionCreated,
            id=subscription_id(name),
            name=name,
            types=tuple(dict.fromkeys(types)),
            start=start,
            lease_ms=lease_ms,
            timestamp=now,
        )

    def expired(self, now: datetime) -> Lease | None:
        """The oldest range whose lease has expired (claimed again before anything new)."""
        due = [x for x in self.leases.values() if x.expires <= now]
        return min(due, key=lambda x: x.after) if due else None

    def claim(self, lease: str, consumer: str, after: int, upto: int, now: datetime) -> Lease:
        """Lease ``(after, upto]`` to ``consumer``: an expired lease's range, or the range
        right after everything handed out so far."""
        expired = self.expired(now)
        if expired is not None:
            if (after, upto) != (expired.after, expired.upto):
                raise IllegalMoveError("an expired lease's range is claimed first")
        elif after != self.handed or upto <= after:
            raise IllegalMoveError(f"the next range starts after {self.handed}")
        expires = now + timedelta(milliseconds=self.lease_ms)
        self._emit(
            RangeClaimed,
            now,
            lease=lease,
            consumer=consumer,
            after=after,
            upto=upto,
            expires=expires,
        )
        return self.leases[lease]

    def acknowledge(self, lease: str, consumer: str, now: datetime) -> None:
        held = self.leases.get(lease)
        if held is None or held.consumer != consumer:
            raise LeaseLostError(
                f"lease {lease[:40]!r} is not held by {consumer[:40]!r}: it expired and was "
                "claimed again, or it was acknowledged already; its items may be processed "
                "by another consumer"
            )
        self._emit(RangeAcknowledged, now, lease=lease)

    def commit(self, position: int, now: datetime) -> None:
        if position < 0:
            raise InvalidInputError(f"position: 0 or more, got {position}")
        if position > self.checkpoint:
            self._emit(CheckpointCommitted, now, position=position)

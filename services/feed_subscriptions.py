"""Feed subscriptions kept by the server (docs/events.md, "Subscriptions";
:mod:`domain.feed_subscription`): create one, claim the next range of the log under a
lease, acknowledge it, commit a position, read where it stands.

A claim reads the feed as the operator reads it (:func:`services.feed.feed_page`, every
field) and keeps the items of the subscription's types. A range without any of them is
acknowledged in the same save and the next one is read (at most :data:`SKIP_PAGES`), so a
consumer of rare types is not handed empty work. Two consumers claiming at once conflict
on the subscription's version: one save wins, the other is tried again on the new state
(:data:`ATTEMPTS`), so a range is never leased twice at the same time. The subscription
is in the event store: it survives restarts and is the same on every replica.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Final, TypeVar
from uuid import uuid4

import msgspec
from msgspec import Meta

from domain.feed_subscription import FeedSubscription, Lease, subscription_id
from domain.rules.errors import InvalidInputError
from services.accounts.store import save_all
from services.errors import VersionConflictError
from services.event_schema import EVENT_CLASSES
from services.feed import MAX_LIMIT, FeedItem, feed_page, last_position
from services.game import GameService
from services.loading import load

ATTEMPTS: Final = 20
SKIP_PAGES: Final = 10
DEFAULT_LEASE_MS: Final = 30_000
KNOWN_TYPES: Final = frozenset(cls.__name__ for _, cls in EVENT_CLASSES)
_T = TypeVar("_T")


class LeaseView(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """A range of positions leased to a consumer."""

    lease: Annotated[
        str, Meta(description="The lease's id: acknowledge it when the range is processed.")
    ]
    consumer: Annotated[str, Meta(description="Who holds it.")]
    after: Annotated[int, Meta(description="The range starts after this position.")]
    upto: Annotated[int, Meta(description="The range ends at this position (inclusive).")]
    expires: Annotated[
        str,
        Meta(
            description=(
                "When the lease ends (ISO 8601): then another consumer may claim the range again."
            )
        ),
    ]


class FeedSubscriptionView(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """A feed subscription: where its consumers stand."""

    name: Annotated[str, Meta(description="Its name (unique).", examples=["Alice"])]
    types: Annotated[list[str], Meta(description="The event types it follows; empty: every type.")]
    lease_ms: Annotated[int, Meta(description="How long a claimed range stays leased, in ms.")]
    checkpoint: Annotated[
        int,
        Meta(description="Every position up to here is processed: a consumer resumes after it."),
    ]
    handed: Annotated[
        int, Meta(description="The last position handed out in a lease (claims go on after it).")
    ]
    last_position: Annotated[
        int,
        Meta(description="The log's last position when this was read (how far behind it is)."),
    ]
    leases: Annotated[list[LeaseView], Meta(description="The ranges leased now, in log order.")]


class Claimed(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """A range claimed: its lease and its items (none: the subscription is caught up)."""

    lease: Annotated[
        LeaseView | None,
        Meta(description="Acknowledge it once the items are processed; null when nothing is new."),
    ]
    items: Annotated[
        list[FeedItem],
        Meta(
            description=(
                "The range's events of the subscription's types, unredacted (the operator's)."
            )
        ),
    ]
    checkpoint: Annotated[int, Meta(description="The subscription's checkpoint after this claim.")]


def _lease(x: Lease) -> LeaseView:
    return LeaseView(
        lease=x.lease,
        consumer=x.consumer,
        after=x.after,
        upto=x.upto,
        expires=x.expires.isoformat(),
    )


def view(service: GameService, sub: FeedSubscription) -> FeedSubscriptionView:
    return FeedSubscriptionView(
        name=sub.name,
        types=list(sub.types),
        lease_ms=sub.lease_ms,
        checkpoint=sub.checkpoint,
        handed=sub.handed,
        last_position=last_position(service),
        leases=[_lease(x) for x in sorted(sub.leases.values(), key=lambda x: x.after)],
    )


def get(service: GameService, name: str) -> FeedSubscription:
    sub: FeedSubscription = load(service, subscription_id(name), FeedSubscription, "subscription")
    return sub


def _on_stored(service: GameService, name: str, step: Callable[[FeedSubscription], _T]) -> _T:
    """``step`` (a change it saves) on subscription ``name`` as stored; when another save
    won meanwhile, again on the new state (at most :data:`ATTEMPTS` times)."""
    for _ in range(ATTEMPTS):
        try:
            return step(get(service, name))
        except VersionConflictError:
            continue
    raise VersionConflictError("the subscription is busy; try again")  # pragma: no cover


def create(
    service: GameService,
    name: str,
    types: tuple[str, ...] = (),
    start: int = 0,
    lease_ms: int = DEFAULT_LEASE_MS,
    *,
    extras: Callable[[FeedSubscription], list[Any]] | None = None,
) -> FeedSubscription:
    """A new subscription after position ``start`` (409 ``subscription-exists`` when the
    name is taken); ``extras(sub)``: what to save with it (an idempotency record)."""
    unknown = sorted(set(types) - KNOWN_TYPES)
    if unknown:
        raise InvalidInputError(f"types: no event type {', '.join(unknown)} (docs/events.md)")
    top = last_position(service)
    if start > top:
        raise InvalidInputError(f"from: {start} is beyond the log's last position {top}")
    sub = FeedSubscription.create(name, types, start, lease_ms, service.clock())
    try:
        save_all(service, sub, *(extras(sub) if extras else ()))
    except VersionConflictError:
        raise SubscriptionExistsError(f"a subscription named {name!r} exists already") from None
    return sub


class SubscriptionExistsError(InvalidInputError):
    code = "subscription-exists"
    status = 409


BOOKKEEPING: Final = frozenset(
    {
        "FeedSubscriptionCreated",
        "RangeClaimed",
        "RangeAcknowledged",
        "CheckpointCommitted",
        "Recorded",  # an Idempotency-Key's record
    }
)
"""Event types no subscription hands out: its own claims and acknowledgements (and the
keys' records saved with them) would otherwise feed it for ever."""


def _wanted(sub: FeedSubscription, item: FeedItem) -> bool:
    return item.type not in BOOKKEEPING and (not sub.types or item.type in sub.types)


def _items(service: GameService, sub: FeedSubscription, after: int, upto: int) -> list[FeedItem]:
    """The subscription's items in ``(after, upto]``, read a page at a time."""
    items: list[FeedItem] = []
    while after < upto:
        page = feed_page(service, after=after, limit=min(upto - after, MAX_LIMIT), operator=True)
        items += [i for i in page.items if i.position <= upto and _wanted(sub, i)]
        if page.next <= after:
            break
        after = page.next
    return items


ClaimExtras = Callable[[FeedSubscription, LeaseView | None], list[Any]]


def claim(
    service: GameService,
    name: str,
    consumer: str,
    limit: int = 100,
    *,
    extras: ClaimExtras | None = None,
) -> Claimed:
    """Lease the next range to ``consumer`` (an expired lease's range first) with its
    items; ``extras(sub, lease)``: what to save with it (an idempotency record)."""
    if not 1 <= limit <= MAX_LIMIT:
        raise InvalidInputError(f"limit: 1..{MAX_LIMIT}, got {limit}")
    if not 1 <= len(consumer) <= 100:
        raise InvalidInputError("consumer: 1 to 100 characters naming the consumer")
    return _on_stored(
        service, name, lambda sub: _claim(service, sub, consumer, limit, service.clock(), extras)
    )


def _claim(
    service: GameService,
    sub: FeedSubscription,
    consumer: str,
    limit: int,
    now: Any,
    extras: ClaimExtras | None,
) -> Claimed:
    def done(lease: Lease | None, items: list[FeedItem]) -> Claimed:
        shown = None if lease is None else _lease(lease)
        save_all(service, sub, *(extras(sub, shown) if extras else ()))
        return Claimed(lease=shown, items=items, checkpoint=sub.checkpoint)

    expired = sub.expired(now)
    if expired is not None:
        lease = sub.claim(str(uuid4()), consumer, expired.after, expired.upto, now)
        return done(lease, _items(service, sub, lease.after, lease.upto))
    after = cursor = sub.handed
    for _ in range(SKIP_PAGES):
        page = feed_page(service, after=cursor, limit=limit, operator=True)
        if page.next <= cursor:
            return Claimed(lease=None, items=[], checkpoint=sub.checkpoint)  # caught up
        cursor = page.next
        items = [i for i in page.items if _wanted(sub, i)]
        if items:  # the lease covers the ranges passed over too
            return done(sub.claim(str(uuid4()), consumer, after, cursor, now), items)
    # pages of nothing it follows: passed over for good (claimed and acknowledged at once)
    passed = sub.claim(str(uuid4()), consumer, after, cursor, now)
    sub.acknowledge(passed.lease, consumer, now)
    return done(None, [])


def replay_claim(service: GameService, name: str, facts: dict[str, Any]) -> Claimed:
    """A claim answered again (its Idempotency-Key): the same lease and range, read again."""
    sub = get(service, name)
    if "lease" not in facts:
        return Claimed(lease=None, items=[], checkpoint=sub.checkpoint)
    lease = LeaseView(
        lease=str(facts["lease"]),
        consumer=str(facts["consumer"]),
        after=int(facts["after"]),
        upto=int(facts["upto"]),
        expires=str(facts["expires"]),
    )
    items = _items(service, sub, lease.after, lease.upto)
    return Claimed(lease=lease, items=items, checkpoint=sub.checkpoint)


def acknowledge(
    service: GameService,
    name: str,
    lease: str,
    consumer: str,
    *,
    extras: Callable[[FeedSubscription], list[Any]] | None = None,
) -> FeedSubscription:
    """``consumer`` processed its leased range (409 ``lease-lost`` when it no longer holds it)."""

    def step(sub: FeedSubscription) -> FeedSubscription:
        sub.acknowledge(lease, consumer, service.clock())
        save_all(service, sub, *(extras(sub) if extras else ()))
        return sub

    return _on_stored(service, name, step)


def commit(
    service: GameService,
    name: str,
    position: int,
    *,
    extras: Callable[[FeedSubscription], list[Any]] | None = None,
) -> FeedSubscription:
    """Everything up to ``position`` is processed (a streaming consumer's Last-Event-ID)."""
    top = last_position(service)
    if position > top:
        raise InvalidInputError(f"position: {position} is beyond the log's last position {top}")

    def step(sub: FeedSubscription) -> FeedSubscription:
        sub.commit(position, service.clock())
        save_all(service, sub, *(extras(sub) if extras else ()))
        return sub

    return _on_stored(service, name, step)


def checkpoint_of(service: GameService, name: str) -> int:
    """Where a stream of subscription ``name`` resumes."""
    return get(service, name).checkpoint


__all__ = [
    "Claimed",
    "FeedSubscriptionView",
    "acknowledge",
    "checkpoint_of",
    "claim",
    "commit",
    "create",
    "get",
    "subscription_id",
    "view",
]

"""Feed subscriptions kept by the server (docs/events.md, "Subscriptions";
:mod:`domain.feed_subscription`): create one, claim the next range of the log under a
lease, acknowledge it, commit a position — the operator's commands and their handlers
(:mod:`services.bus`) — and read where it stands.

A claim reads the feed as the operator reads it (:func:`services.feed.feed_page`, every
field) and keeps the items of the subscription's types. A range without any of them is
acknowledged in the same save and the next one is read (at most :data:`SKIP_PAGES`), so a
consumer of rare types is not handed empty work. Two consumers claiming at once conflict
on the subscription's version: one save wins, the other is tried again on the new state
(:data:`ATTEMPTS`), so a range is never leased twice at the same time. The subscription
is in the event store: it survives restarts and is the same on every replica.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Final
from uuid import uuid4

import msgspec
from msgspec import Meta

from domain.feed_subscription import FeedSubscription, Lease, subscription_id
from domain.rules.errors import InvalidInputError
from services.bus import Caller, Handler, Outcome
from services.event_schema import EVENT_CLASSES
from services.feed import MAX_LIMIT, FeedItem, feed_page, last_position
from services.game import GameService
from services.loading import load
from services.operator import Operator
from services.unit_of_work import Reading, UnitOfWork

ATTEMPTS: Final = 20
SKIP_PAGES: Final = 10
DEFAULT_LEASE_MS: Final = 30_000
KNOWN_TYPES: Final = frozenset(cls.__name__ for _, cls in EVENT_CLASSES)
SUBSCRIPTIONS: Final = "feed subscriptions"
TOP: Final = "lastPosition"


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
    """``sub`` and the log's last position now."""
    return view_at(sub, last_position(service))


def view_at(sub: FeedSubscription, top: int) -> FeedSubscriptionView:
    """``sub`` with the log's last position ``top`` (as a command saw it)."""
    return FeedSubscriptionView(
        name=sub.name,
        types=list(sub.types),
        lease_ms=sub.lease_ms,
        checkpoint=sub.checkpoint,
        handed=sub.handed,
        last_position=top,
        leases=[_lease(x) for x in sorted(sub.leases.values(), key=lambda x: x.after)],
    )


def get(service: GameService, name: str) -> FeedSubscription:
    sub: FeedSubscription = load(service, subscription_id(name), FeedSubscription, "subscription")
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


def claim_range(uow: UnitOfWork, sub: FeedSubscription, consumer: str, limit: int) -> Lease | None:
    """Lease the next range to ``consumer`` (an expired lease's range first): the lease,
    None when the subscription is caught up (or only passed over ranges it does not
    follow: those are claimed and acknowledged at once)."""
    service, now = uow.service, uow.now
    expired = sub.expired(now)
    if expired is not None:
        return sub.claim(str(uuid4()), consumer, expired.after, expired.upto, now)
    after = cursor = sub.handed
    for _ in range(SKIP_PAGES):
        page = feed_page(service, after=cursor, limit=limit, operator=True)
        if page.next <= cursor:
            return None  # caught up
        cursor = page.next
        if any(_wanted(sub, i) for i in page.items):  # the lease covers the ranges passed
            return sub.claim(str(uuid4()), consumer, after, cursor, now)
    # pages of nothing it follows: passed over for good (claimed and acknowledged at once)
    passed = sub.claim(str(uuid4()), consumer, after, cursor, now)
    sub.acknowledge(passed.lease, consumer, now)
    return None


def checkpoint_of(service: GameService, name: str) -> int:
    """Where a stream of subscription ``name`` resumes."""
    return get(service, name).checkpoint


# -- the commands --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CreateFeedSubscription:
    """A named subscription of ``types`` (none: every type) after position ``start``."""

    name: str
    types: tuple[str, ...] = ()
    start: int = 0
    lease_ms: int = DEFAULT_LEASE_MS


@dataclass(frozen=True, slots=True)
class ClaimFeedRange:
    """The next range of subscription ``name``'s log, leased to ``consumer``."""

    name: str
    consumer: str
    limit: int = 100


@dataclass(frozen=True, slots=True)
class AcknowledgeFeedRange:
    """``consumer`` processed the range of ``lease`` (409 ``lease-lost`` once it no longer
    holds it)."""

    name: str
    lease: str
    consumer: str


@dataclass(frozen=True, slots=True)
class CommitFeedPosition:
    """Everything up to ``position`` is processed (a streaming consumer's Last-Event-ID)."""

    name: str
    position: int


class _OperatorCommand:
    """A command of the operator (``OPERATOR_TOKEN``), answered with where the subscription
    stands as of the command (its version, the log's last position then)."""

    attempts: ClassVar[int] = ATTEMPTS  # two consumers conflict on the subscription's version

    def __init__(self, operator: Operator) -> None:
        self.operator = operator

    def authorise(self, command: object, caller: Caller) -> None:
        self.operator.require(caller, SUBSCRIPTIONS)

    @staticmethod
    def outcome(uow: UnitOfWork, sub: FeedSubscription, status: int = 200) -> Outcome:
        return Outcome(status, sub.id, sub.version, facts={TOP: last_position(uow.service)})

    def answer(
        self, command: object, who: None, outcome: Outcome, state: Reading
    ) -> FeedSubscriptionView:
        sub = state.get(outcome.subject, FeedSubscription, "subscription", outcome.version)
        return view_at(sub, int(outcome.facts.get(TOP) or 0))


class CreateFeedSubscriptionHandler(
    _OperatorCommand, Handler[CreateFeedSubscription, None, FeedSubscriptionView]
):
    """409 ``subscription-exists`` when the name is taken."""

    attempts: ClassVar[int] = 1

    def handle(self, uow: UnitOfWork, command: CreateFeedSubscription, who: None) -> Outcome:
        unknown = sorted(set(command.types) - KNOWN_TYPES)
        if unknown:
            raise InvalidInputError(f"types: no event type {', '.join(unknown)} (docs/events.md)")
        top = last_position(uow.service)
        if command.start > top:
            raise InvalidInputError(
                f"from: {command.start} is beyond the log's last position {top}"
            )
        if uow.find(subscription_id(command.name), FeedSubscription) is not None:
            raise SubscriptionExistsError(f"a subscription named {command.name!r} exists already")
        sub = FeedSubscription.create(
            command.name, command.types, command.start, command.lease_ms, uow.now
        )
        uow.add(sub)
        return self.outcome(uow, sub, 201)


class ClaimFeedRangeHandler(_OperatorCommand, Handler[ClaimFeedRange, None, Claimed]):
    """The range's items (unredacted, the operator's) are read again for the answer: the
    log's range never changes."""

    def handle(self, uow: UnitOfWork, command: ClaimFeedRange, who: None) -> Outcome:
        if not 1 <= command.limit <= MAX_LIMIT:
            raise InvalidInputError(f"limit: 1..{MAX_LIMIT}, got {command.limit}")
        if not 1 <= len(command.consumer) <= 100:
            raise InvalidInputError("consumer: 1 to 100 characters naming the consumer")
        sub = uow.get(subscription_id(command.name), FeedSubscription, "subscription")
        lease = claim_range(uow, sub, command.consumer, command.limit)
        facts: dict[str, Any] = {} if lease is None else msgspec.structs.asdict(_lease(lease))
        return Outcome(200, sub.id, sub.version, facts=facts)

    def answer(  # type: ignore[override]
        self, command: ClaimFeedRange, who: None, outcome: Outcome, state: Reading
    ) -> Claimed:
        sub = state.get(outcome.subject, FeedSubscription, "subscription", outcome.version)
        facts = outcome.facts
        if "lease" not in facts:
            return Claimed(lease=None, items=[], checkpoint=sub.checkpoint)
        lease = LeaseView(
            lease=str(facts["lease"]),
            consumer=str(facts["consumer"]),
            after=int(str(facts["after"])),
            upto=int(str(facts["upto"])),
            expires=str(facts["expires"]),
        )
        items = _items(state.service, sub, lease.after, lease.upto)
        return Claimed(lease=lease, items=items, checkpoint=sub.checkpoint)


class AcknowledgeFeedRangeHandler(
    _OperatorCommand, Handler[AcknowledgeFeedRange, None, FeedSubscriptionView]
):
    def handle(self, uow: UnitOfWork, command: AcknowledgeFeedRange, who: None) -> Outcome:
        sub = uow.get(subscription_id(command.name), FeedSubscription, "subscription")
        sub.acknowledge(command.lease, command.consumer, uow.now)
        return self.outcome(uow, sub)


class CommitFeedPositionHandler(
    _OperatorCommand, Handler[CommitFeedPosition, None, FeedSubscriptionView]
):
    """A position at or below the checkpoint changes nothing."""

    def handle(self, uow: UnitOfWork, command: CommitFeedPosition, who: None) -> Outcome:
        top = last_position(uow.service)
        if command.position > top:
            raise InvalidInputError(
                f"position: {command.position} is beyond the log's last position {top}"
            )
        sub = uow.get(subscription_id(command.name), FeedSubscription, "subscription")
        sub.commit(command.position, uow.now)
        return self.outcome(uow, sub)

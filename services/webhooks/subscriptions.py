"""Webhook subscriptions (in the game's store) and their delivery log (in the outbox's)."""

from __future__ import annotations

import json
from typing import Annotated, Any
from uuid import UUID

import msgspec
from eventsourcing.utils import get_topic
from msgspec import Meta

from domain.accounts.webhooks import Queue, Subscription, SubscriptionRegistered
from services import field_docs
from services.game import GameService
from services.loading import load
from services.webhooks.dispatch import Dispatcher


class AttemptView(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """One attempt to deliver."""

    at: Annotated[str, Meta(description="When it was made, ISO 8601.")]
    status: Annotated[
        int | None,
        Meta(description="The receiver's HTTP status; null when it could not be reached."),
    ]
    error: Annotated[str, Meta(description="Why it failed (empty when delivered).")]


class DeliveryView(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """One delivery of a subscription, with every attempt (the delivery log)."""

    delivery_id: Annotated[
        str,
        Meta(description="`<queue id>:<seq>`, the `Shengji-Delivery` header (deduplicate by it)."),
    ]
    key: Annotated[
        str,
        Meta(
            description="Whose queue: `player:<id>` or `tournament:<id>` (in order within a key)."
        ),
    ]
    seq: Annotated[
        int, Meta(description="Its place in its key's queue, from 1 (sent in this order).")
    ]
    kind: Annotated[str, field_docs.KIND]
    body: Annotated[
        dict[str, Any],
        Meta(
            description=(
                "The JSON posted (the same bytes on every attempt): kind, "
                "playerId, occurredAt, position, data."
            )
        ),
    ]
    enqueued_at: Annotated[str, Meta(description="When it was queued, ISO 8601.")]
    delivered_at: Annotated[
        str | None, Meta(description="When a 2xx answered it, ISO 8601; null until then.")
    ]
    next_attempt_at: Annotated[
        str | None,
        Meta(
            description=(
                "When the next attempt may be made after a failure (backoff); null when none waits."
            )
        ),
    ]
    attempts: Annotated[list[AttemptView], Meta(description="Every attempt, in order.")]


class WebhookSubscriptionView(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """A webhook subscription (its secret is never shown)."""

    subscription_id: Annotated[str, Meta(description="The subscription's id.")]
    url: Annotated[str, Meta(description="Where deliveries are posted.")]
    kinds: Annotated[list[str], Meta(description="The kinds of deliveries it gets.")]
    active: Annotated[bool, Meta(description="False once deleted: nothing more is sent.")]


def get_subscription(service: GameService, sub_id: UUID) -> Subscription:
    return load(service, sub_id, Subscription, "webhook subscription")


def view(sub: Subscription) -> WebhookSubscriptionView:
    return WebhookSubscriptionView(
        subscription_id=str(sub.id), url=sub.url, kinds=list(sub.kinds), active=sub.active
    )


def subscriptions(service: GameService) -> list[WebhookSubscriptionView]:
    found = service.recorder.select_notifications(
        0, 1000, topics=[get_topic(SubscriptionRegistered)], inclusive_of_start=False
    )
    return [view(get_subscription(service, UUID(str(n.originator_id)))) for n in found]


def deliveries(
    service: GameService, dispatcher: Dispatcher, sub_id: UUID, limit: int
) -> list[DeliveryView]:
    """The subscription's deliveries, newest first (at most ``limit``)."""
    get_subscription(service, sub_id)
    out: list[DeliveryView] = []
    for qid in dispatcher.refresh():
        queue: Queue = dispatcher.outbox.repository.get(qid)
        if queue.subscription_id != sub_id:
            continue
        for item in queue.items:
            head = item.seq == queue.head + 1
            out.append(
                DeliveryView(
                    delivery_id=f"{qid}:{item.seq}",
                    key=queue.key,
                    seq=item.seq,
                    kind=item.kind,
                    body=json.loads(item.body),
                    enqueued_at=item.enqueued_at.isoformat(),
                    delivered_at=None
                    if item.delivered_at is None
                    else item.delivered_at.isoformat(),
                    next_attempt_at=(
                        queue.next_at.isoformat() if head and queue.next_at is not None else None
                    ),
                    attempts=[
                        AttemptView(at=a.at.isoformat(), status=a.status, error=a.error)
                        for a in item.attempts
                    ],
                )
            )
    out.sort(key=lambda d: d.enqueued_at, reverse=True)
    return out[:limit]

"""Webhooks for the app's push service (docs/webhooks.md): the operator's routes and the
worker that runs the outbox.

``POST /v1/webhooks`` registers a subscription (URL, secret, kinds), ``GET`` lists them,
``DELETE /v1/webhooks/{id}`` stops it, ``GET /v1/webhooks/{id}/deliveries`` is its
delivery log; all with ``Authorization: Bearer <OPERATOR_TOKEN>`` (403 when the service
has none, or for another token). :class:`WebhookWorker` follows the event log into the
outbox and sends what is due, every ``interval_s``, on every replica (the store lets one
record each result).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any
from uuid import UUID

import anyio
from litestar import Controller, Litestar, Request, Response, delete
from litestar.di import NamedDependency
from litestar.params import FromPath, QueryParameter

from api.auth import credential
from api.calls import Writing, write_route
from api.players.dto import RegisterWebhook
from api.routes import route
from api.runtime import Runtime
from services.access import Credential
from services.operator import Operator
from services.webhooks import subscriptions as subs
from services.webhooks.commands import WEBHOOKS, RemoveWebhook
from services.webhooks.commands import RegisterWebhook as Register
from services.webhooks.dispatch import Dispatcher, Post
from services.webhooks.outbox import WebhookOutbox
from services.webhooks.targets import TargetPolicy

log = logging.getLogger(__name__)


@dataclass
class WebhookConfig:
    """What the app factory passes: the operator token, the outbox's store environment,
    the worker's period (0: off) and how to send (tests pass a fake)."""

    operator_token: str | None = None
    outbox_env: Mapping[str, str] = field(
        default_factory=lambda: {"PERSISTENCE_MODULE": "eventsourcing.popo"}
    )
    interval_s: float = 0.0
    policy: TargetPolicy = field(default_factory=TargetPolicy)
    """Where deliveries may go (checked at registration and at every delivery)."""
    post: Post | None = None
    """How to send; None: :meth:`TargetPolicy.post` (tests pass a fake)."""


class Webhooks:
    """The outbox, its dispatcher and the operator check (the ``webhooks`` dependency)."""

    def __init__(self, runtime: Runtime, config: WebhookConfig) -> None:
        self.runtime = runtime
        self.config = config
        self.outbox = WebhookOutbox(config.outbox_env, leader=runtime.service)
        self.dispatcher = Dispatcher(
            self.outbox, runtime.service, post=config.post or config.policy.post
        )
        self.operator = Operator(config.operator_token)

    def provide(self) -> Webhooks:
        return self

    def require_operator(self, cred: Credential | None) -> None:
        self.operator.require(cred, WEBHOOKS)

    def run_once(self) -> int:
        """Follow the log into the outbox, then send what is due (blocking)."""
        self.outbox.catch_up()
        return self.dispatcher.deliver_due()

    @contextlib.asynccontextmanager
    async def lifespan(self, app: Litestar) -> AsyncIterator[None]:
        if not self.config.interval_s:
            yield
            self.outbox.close()
            return
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._loop)
            try:
                yield
            finally:
                tg.cancel_scope.cancel()
        self.outbox.close()

    async def _loop(self) -> None:
        while True:
            try:
                await self.runtime.call(self.run_once)
            except Exception:  # the tracked position stays: the next run resumes there
                log.exception("the webhook outbox failed")
            await anyio.sleep(self.config.interval_s)


class WebhookController(Controller):
    path = "/v1/webhooks"
    tags = ["webhooks"]  # noqa: RUF012 - Litestar declares it an instance attribute

    @write_route("/", 201, 401, 403, body=RegisterWebhook)
    async def register_webhook(
        self, write: Writing, webhooks: NamedDependency[Webhooks]
    ) -> Response[subs.WebhookSubscriptionView]:
        """Register a webhook subscription (operator)

        Deliveries of the kinds asked for are POSTed to `url` as JSON, signed (`Shengji-Signature:
        t=<unix>,v1=<hex HMAC-SHA256(secret, "<t>." + body)>`; refuse a `t` older than 300 s), at
        least once (deduplicate by `Shengji-Delivery`), in order per player, retried with
        exponential backoff and jitter. Only `https` to public addresses (`http` with
        `WEBHOOK_ALLOW_HTTP`; private networks listed in `WEBHOOK_PRIVATE_TARGETS`): a URL naming
        or resolving to loopback, a private, link-local or reserved address is a 422
        `webhook-target-refused`, checked again at every delivery.
        """
        data = await write.body()
        return await write.send(Register(data.url, data.secret, tuple(data.kinds)))

    @route("/", 401, 403)
    async def list_webhooks(
        self, request: Request[Any, Any, Any], webhooks: NamedDependency[Webhooks]
    ) -> list[subs.WebhookSubscriptionView]:
        """The webhook subscriptions (operator)

        The webhook subscriptions (operator token).
        """
        webhooks.require_operator(credential(request))
        return await webhooks.runtime.call(subs.subscriptions, webhooks.runtime.service)

    @write_route("/{subscription_id:uuid}", 200, 401, 403, 404, 409, handler=delete)
    async def delete_webhook(
        self, write: Writing, subscription_id: FromPath[UUID]
    ) -> Response[subs.WebhookSubscriptionView]:
        """Stop a subscription (operator); its undelivered items are not sent

        Stop a webhook subscription (operator token); its undelivered items are not
        sent.
        """
        return await write.send(RemoveWebhook(subscription_id))

    @route("/{subscription_id:uuid}/deliveries", 401, 403, 404)
    async def list_deliveries(
        self,
        request: Request[Any, Any, Any],
        webhooks: NamedDependency[Webhooks],
        subscription_id: FromPath[UUID],
        limit: Annotated[int, QueryParameter(ge=1, le=1000)] = 100,
    ) -> list[subs.DeliveryView]:
        """The delivery log of a subscription, newest first (operator)

        Each delivery with its attempts (status or error), when it was delivered, and when the next
        attempt is due.
        """
        webhooks.require_operator(credential(request))
        service = webhooks.runtime.service
        return await webhooks.runtime.call(
            subs.deliveries, service, webhooks.dispatcher, subscription_id, limit
        )

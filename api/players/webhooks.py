"""Webhooks for the app's push service (docs/webhooks.md): the operator's routes.

``POST /v1/webhooks`` registers a subscription (URL, secret, kinds), ``GET`` lists them,
``DELETE /v1/webhooks/{id}`` stops it, ``GET /v1/webhooks/{id}/deliveries`` is its
delivery log; all with ``Authorization: Bearer <OPERATOR_TOKEN>`` (403 when the service
has none, or for another token). The outbox's work — following the event log into it and
sending what is due — is background work (:mod:`services.webhooks.delivery`).
"""

from __future__ import annotations

from typing import Annotated, Any
from uuid import UUID

from litestar import Controller, Request, Response, delete
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
from services.webhooks.delivery import WebhookDelivery


class Webhooks:
    """The operator check and the outbox's deliveries (the ``webhooks`` dependency)."""

    def __init__(self, runtime: Runtime, delivery: WebhookDelivery, operator: Operator) -> None:
        self.runtime = runtime
        self.delivery = delivery
        """The outbox and its dispatcher (:mod:`services.webhooks.delivery`: their loop runs
        in the processes that run the background work)."""
        self.operator = operator

    def provide(self) -> Webhooks:
        return self

    def require_operator(self, cred: Credential | None) -> None:
        self.operator.require(cred, WEBHOOKS)


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
            subs.deliveries, service, webhooks.delivery.dispatcher, subscription_id, limit
        )

"""The operator's webhook commands (docs/webhooks.md): register a subscription and stop
one, with their handlers (:mod:`services.bus`). Only the operator (``OPERATOR_TOKEN``) may:
401 without a token, 403 with another one or when the service has none."""

from __future__ import annotations

from dataclasses import dataclass
from uuid import UUID, uuid4

from domain.accounts.webhooks import Subscription
from services.bus import Caller, Handler, Outcome
from services.operator import Operator
from services.unit_of_work import Reading, UnitOfWork
from services.webhooks.subscriptions import WebhookSubscriptionView, view
from services.webhooks.targets import TargetPolicy

WEBHOOKS = "webhooks"


@dataclass(frozen=True, slots=True)
class RegisterWebhook:
    """Deliveries of ``kinds`` POSTed to ``url``, signed with ``secret`` (only ``https`` to
    public addresses: 422 ``webhook-target-refused`` otherwise, docs/webhooks.md)."""

    url: str
    secret: str
    kinds: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class RemoveWebhook:
    """Stop a subscription: its undelivered items are not sent."""

    subscription_id: UUID


class RegisterWebhookHandler(Handler[RegisterWebhook, None, WebhookSubscriptionView]):
    """The target is checked after the caller (a URL naming or resolving to loopback, a
    private, link-local or reserved address is refused; resolving a name may wait on DNS, on
    the bus's worker thread) and again at every delivery."""

    def __init__(self, operator: Operator, targets: TargetPolicy) -> None:
        self.operator = operator
        self.targets = targets

    def authorise(self, command: RegisterWebhook, caller: Caller) -> None:
        self.operator.require(caller, WEBHOOKS)

    def handle(self, uow: UnitOfWork, command: RegisterWebhook, who: None) -> Outcome:
        self.targets.check(command.url, False)
        sub = Subscription.register(uuid4(), command.url, command.secret, command.kinds, uow.now)
        uow.add(sub)
        return Outcome(201, sub.id, sub.version)

    def answer(
        self, command: RegisterWebhook, who: None, outcome: Outcome, state: Reading
    ) -> WebhookSubscriptionView:
        return view(state.get(outcome.subject, Subscription, "webhook subscription", 1))


class RemoveWebhookHandler(Handler[RemoveWebhook, None, WebhookSubscriptionView]):
    def __init__(self, operator: Operator) -> None:
        self.operator = operator

    def authorise(self, command: RemoveWebhook, caller: Caller) -> None:
        self.operator.require(caller, WEBHOOKS)

    def handle(self, uow: UnitOfWork, command: RemoveWebhook, who: None) -> Outcome:
        sub = uow.get(command.subscription_id, Subscription, "webhook subscription")
        sub.remove(uow.now)
        return Outcome(200, sub.id, sub.version)

    def answer(
        self, command: RemoveWebhook, who: None, outcome: Outcome, state: Reading
    ) -> WebhookSubscriptionView:
        sub = state.get(outcome.subject, Subscription, "webhook subscription", outcome.version)
        return view(sub)

"""The webhook outbox's work (docs/webhooks.md): follow the game's log into the outbox,
then send what is due — every period, on every worker (the outbox's store lets one record
each result)."""

from __future__ import annotations

from collections.abc import Mapping

from services.background import Loop
from services.game import GameService
from services.webhooks.dispatch import Dispatcher, Post
from services.webhooks.outbox import WebhookOutbox


class WebhookDelivery:
    """The outbox on its own store (``env``) and its dispatcher, sending with ``post``."""

    def __init__(self, service: GameService, env: Mapping[str, str], post: Post) -> None:
        self.outbox = WebhookOutbox(env, leader=service)
        self.dispatcher = Dispatcher(self.outbox, service, post=post)

    def step(self) -> int:
        """Follow the log into the outbox, then send what is due (blocking); the
        deliveries made. After a failure the tracked position stays: the next step
        resumes there."""
        self.outbox.catch_up()
        return self.dispatcher.deliver_due()

    def loop(self, period_s: float) -> Loop:
        """The outbox as background work (:mod:`services.background`)."""
        return Loop("webhook-outbox", self.step, period_s)

    def close(self) -> None:
        """Close the outbox's store."""
        self.outbox.close()

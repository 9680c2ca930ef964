"""Sending the outbox's deliveries (docs/webhooks.md).

Each queue (one subscription, one player) sends only its head, so a player's deliveries
arrive in order; a delivery is recorded ``Delivered`` only after the receiver answered
2xx, so a crash between the two sends it again (**at least once**: receivers deduplicate
by the ``Shengji-Delivery`` header). A failure is recorded with the time of the next
attempt: exponential backoff (``base * 2^attempts``, at most ``cap``) with jitter (each
wait drawn between half and all of it), so many receivers coming back do not all get
hit at once.

Signature: ``Shengji-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret,
"<t>." + body)>``. A receiver recomputes it over the raw body and refuses a ``t`` older
than :data:`REPLAY_WINDOW_S` (a captured request replayed later is refused).
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable
from datetime import timedelta
from typing import Any
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError
from eventsourcing.persistence import IntegrityError
from eventsourcing.utils import get_topic

from domain.accounts.webhooks import Queue, QueueOpened, Subscription
from services.game import Clock, GameService
from services.sources import jitter as draw_jitter
from services.webhooks.outbox import WebhookOutbox
from services.webhooks.targets import TargetPolicy

REPLAY_WINDOW_S = 300
SIGNATURE_HEADER = "Shengji-Signature"
Post = Callable[[str, bytes, dict[str, str]], int]
"""Sends a body to a URL with headers; answers the HTTP status (raises when unreachable)."""


def sign(secret: str, timestamp: int, body: bytes) -> str:
    mac = hmac.new(secret.encode(), b"%d." % timestamp + body, hashlib.sha256).hexdigest()
    return f"t={timestamp},v1={mac}"


def verify(secret: str, header: str, body: bytes, now: int) -> bool:
    """A receiver's check: the signature matches and is within the replay window."""
    try:
        parts = dict(p.split("=", 1) for p in header.split(","))
        timestamp = int(parts["t"])
    except (KeyError, ValueError):
        return False
    if abs(now - timestamp) > REPLAY_WINDOW_S:
        return False
    return hmac.compare_digest(sign(secret, timestamp, body), header)


class Dispatcher:
    """Sends due deliveries of every queue (one thread at a time)."""

    def __init__(
        self,
        outbox: WebhookOutbox,
        leader: GameService,
        *,
        post: Post | None = None,
        clock: Clock | None = None,
        jitter: Callable[[], float] = draw_jitter,
        base_s: float = 1.0,
        cap_s: float = 300.0,
    ) -> None:
        self.outbox = outbox
        self.leader = leader
        self.post = post or TargetPolicy().post
        """Sends a delivery: by default to public https addresses only, checked at each
        delivery (:mod:`services.webhooks.targets`)."""
        self.clock = clock or leader.clock
        self.jitter = jitter
        self.base_s = base_s
        self.cap_s = cap_s
        self.position = 0
        self.queues: list[UUID] = []

    def refresh(self) -> list[UUID]:
        """The queues of the outbox, read from its own log (every replica sees all)."""
        topic = get_topic(QueueOpened)
        recorder = self.outbox.recorder
        top = recorder.max_notification_id() or 0
        while self.position < top:
            found = recorder.select_notifications(
                self.position, 500, stop=top, topics=[topic], inclusive_of_start=False
            )
            for n in found:
                self.queues.append(UUID(str(n.originator_id)))
                self.position = n.id
            if len(found) < 500:
                self.position = top  # read to the end: the next read starts there (D-pgcost)
                break
        return self.queues

    def backoff(self, attempts: int) -> timedelta:
        wait = min(self.cap_s, self.base_s * 2**attempts)
        return timedelta(seconds=wait * (0.5 + self.jitter() / 2))

    def deliver_due(self) -> int:
        """Send the due head of every queue, and what follows it while it succeeds;
        answers how many were delivered."""
        delivered = 0
        for qid in self.refresh():
            while self._one(qid):
                delivered += 1
        return delivered

    def _one(self, qid: UUID) -> bool:
        queue: Queue = self.outbox.repository.get(qid)
        item = queue.pending()
        now = self.clock()
        if item is None or (queue.next_at is not None and queue.next_at > now):
            return False
        sub = self._subscription(queue.subscription_id)
        if sub is None or not sub.active:
            return False
        body = item.body.encode()
        headers = {
            "Content-Type": "application/json",
            "Shengji-Event": item.kind,
            "Shengji-Delivery": f"{qid}:{item.seq}",
            SIGNATURE_HEADER: sign(sub.secret, int(now.timestamp()), body),
        }
        status: int | None
        try:
            status = self.post(sub.url, body, headers)
            error = "" if 200 <= status < 300 else f"HTTP {status}"
        except Exception as exc:  # unreachable, timed out, refused: retried later
            status, error = None, type(exc).__name__
        if error:
            queue.failed(item.seq, status, error, now + self.backoff(len(item.attempts)), now)
        else:
            assert status is not None
            queue.delivered(item.seq, status, now)
        try:
            self.outbox.save(queue)
        except IntegrityError:
            return False  # another replica recorded this head first
        return not error

    def _subscription(self, sub_id: UUID) -> Subscription | None:
        try:
            found: Any = self.leader.repository.get(sub_id)
        except AggregateNotFoundError:
            return None
        return found if isinstance(found, Subscription) else None

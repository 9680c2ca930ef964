"""Idempotency records (IETF draft ``httpapi-idempotency-key-header``), kept in the events'
store itself.

A request's ``Idempotency-Key`` names an :class:`IdempotencyRecord` aggregate, id
``uuid5(NAMESPACE, scope + key)`` (the scope is the caller: the hash of its token, or its
address). Its single event, ``Recorded``, holds what is needed to answer the request again
— never the answer itself: the request's fingerprint (sha256 of method, path and body),
the status, the resource the request acted on (``subject``), that resource's version after
it, the acting seat and a few small facts of the answer (a bot's kind, how many moves a
bot run made). A replay rebuilds the answer from the resource as of that version.

It is saved in the **same** ``save()`` as the command's events (the bus's unit of work,
:mod:`services.bus`), so either both are stored or neither is; a second save of
the same key fails on the record's version 1 — the store's own optimistic concurrency
(docs/decisions.md F1) — so, across processes too, one request wins and the others
find its record.

:class:`Keys` is how the bus uses a key (docs/decisions.md D-bus): after the caller is
authorised, :meth:`Keys.claimed` holds the key in this process (409 while its first
request runs) and :meth:`Keys.recorded` finds its record (409 when the key names another
request), which the bus answers again.

No secret is ever kept in a record: a token minted by the first request (a seat or
organiser token) is stored only as its hash, in the match's own events, so a replay
cannot give it again (``docs/security.md``: a replay answers without the token and says
so). Records of version 1 held the answer's body; they are upcast with the tokens taken
out.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar
from uuid import NAMESPACE_URL, UUID, uuid5

from eventsourcing.application import AggregateNotFoundError
from eventsourcing.domain import Aggregate

from services.errors import (
    IdempotencyInFlightError,
    IdempotencyKeyReusedError,
)
from services.game import GameService

T = TypeVar("T")

NAMESPACE = uuid5(NAMESPACE_URL, "shengji:idempotency-key")


def record_id(scope: str, key: str) -> UUID:
    """The record's id for ``key`` used by ``scope`` (the caller)."""
    return uuid5(NAMESPACE, f"{scope}\n{key}")


def fingerprint(method: str, path: str, body: bytes) -> str:
    """sha256 of the request: method, path and body, as received."""
    digest = hashlib.sha256()
    for part in (method.upper().encode(), path.encode(), body):
        digest.update(len(part).to_bytes(8, "big"))
        digest.update(part)
    return digest.hexdigest()


Fact = str | int | bool | None
SECRET_KEYS = frozenset({"token", "organiserToken", "seatTokens", "tokens"})
"""Fields of a version-1 record's body that held a minted token."""


@dataclass(frozen=True, slots=True)
class Receipt:
    """What a request left, as a record keeps it: enough to answer it again."""

    status: int
    subject: UUID
    """The match or tournament the request acted on (or created)."""
    version: int
    """The subject's version right after the request."""
    seat: int | None = None
    """The acting seat, for a command."""
    facts: Mapping[str, Fact] = field(default_factory=dict)
    """Small, non-secret facts of the answer that the subject's state does not hold."""


class IdempotencyRecord(Aggregate):
    """What the first request with an Idempotency-Key did."""

    if TYPE_CHECKING:
        fingerprint: str
        outcome: Receipt
        legacy_body: str | None

    class Recorded(Aggregate.Created):
        class_version: ClassVar[int] = 2
        fingerprint: str
        status: int
        subject: str
        version: int
        seat: int | None
        facts: dict[str, Fact]
        legacy_body: str | None = None
        """A version-1 record's answer, its tokens taken out (no subject to rebuild from)."""

        def apply(self, aggregate: Any) -> None:
            record: IdempotencyRecord = aggregate
            record.fingerprint = self.fingerprint
            subject = UUID(self.subject) if self.subject else NAMESPACE
            record.outcome = Receipt(self.status, subject, self.version, self.seat, self.facts)
            record.legacy_body = self.legacy_body

        @staticmethod
        def upcast_v1_v2(state: dict[str, Any]) -> None:
            """Version 1 kept the whole answer, tokens included: keep it without them."""
            body = state.pop("body", "")
            try:
                answer = json.loads(body)
            except ValueError:
                answer = None
            if isinstance(answer, dict):
                answer = {k: v for k, v in answer.items() if k not in SECRET_KEYS}
            state.update(
                subject="",
                version=0,
                seat=None,
                facts={},
                legacy_body=json.dumps(answer, separators=(",", ":")),
            )

    @classmethod
    def record(
        cls, rid: UUID, request_fingerprint: str, outcome: Receipt, now: datetime
    ) -> IdempotencyRecord:
        return cls._create(
            cls.Recorded,
            id=rid,
            fingerprint=request_fingerprint,
            status=outcome.status,
            subject=str(outcome.subject),
            version=outcome.version,
            seat=outcome.seat,
            facts=dict(outcome.facts),
            timestamp=now,
        )


def find(service: GameService, rid: UUID) -> IdempotencyRecord | None:
    """The stored record ``rid``, None when the key was never used."""
    try:
        found: object = service.repository.get(rid)
    except AggregateNotFoundError:
        return None
    return found if isinstance(found, IdempotencyRecord) else None


@dataclass(frozen=True, slots=True)
class RequestKey:
    """An ``Idempotency-Key`` as a request sent it: its record's id (the caller's scope
    and the key) and the request's fingerprint."""

    rid: UUID
    fingerprint: str

    @classmethod
    def of(cls, scope: str, key: str, request_fingerprint: str) -> RequestKey:
        return cls(record_id(scope, key), request_fingerprint)


class Keys:
    """The Idempotency-Keys of one service: those in flight in this process, and the
    records in the store."""

    def __init__(self, service: GameService) -> None:
        self.service = service
        self._lock = threading.Lock()
        self._running: set[UUID] = set()

    @contextmanager
    def claimed(self, key: RequestKey) -> Iterator[None]:
        """Hold ``key`` while its request runs here: 409 when it is already held."""
        with self._lock:
            if key.rid in self._running:
                raise IdempotencyInFlightError(
                    "a request with this Idempotency-Key is still being handled; retry later"
                )
            self._running.add(key.rid)
        try:
            yield
        finally:
            with self._lock:
                self._running.discard(key.rid)

    def record(self, key: RequestKey, receipt: Receipt, now: datetime) -> list[Any]:
        """What a save stores for ``key``'s first request (with the command's events, in
        its one save): the record's event, not the record — the aggregate cache keeps
        matches, not keys (a key is read again only by a retry, which loads it:
        docs/decisions.md D-bus2)."""
        made = IdempotencyRecord.record(key.rid, key.fingerprint, receipt, now)
        return list(made.collect_events())

    def recorded(self, key: RequestKey) -> IdempotencyRecord | None:
        """The key's record, None when the key is new; 409 when it names another request."""
        found = find(self.service, key.rid)
        if found is not None and found.fingerprint != key.fingerprint:
            raise IdempotencyKeyReusedError(
                "this Idempotency-Key was used for another request (method, path or body "
                "differ); use a new key for a new request"
            )
        return found

"""Idempotency records (IETF draft ``httpapi-idempotency-key-header``), kept in the events'
store itself.

A request's ``Idempotency-Key`` names an :class:`IdempotencyRecord` aggregate, id
``uuid5(NAMESPACE, scope + key)`` (the scope is the caller: the hash of its token, or
``anonymous``). Its single event, ``Recorded``, holds the request's fingerprint (sha256
of method, path and body), the response's status and body. It is saved in the **same**
``save()`` as the command's events (:data:`services.game.Attach`), so either both are
stored or neither is; a second save of the same key fails on the record's version 1 —
the store's own optimistic concurrency (ARCHITECTURE decision 1) — so, across processes
too, one request wins and the others find its record.

A response body is kept as the client got it, tokens included: replaying a key is how a
client whose connection dropped recovers the seat or organiser token it was shown once.
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar
from uuid import NAMESPACE_URL, UUID, uuid5

from eventsourcing.application import AggregateNotFoundError
from eventsourcing.domain import Aggregate

from services.game import GameService

NAMESPACE = uuid5(NAMESPACE_URL, "shengji:idempotency-key")
MAX_KEY_LENGTH = 255


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


class IdempotencyRecord(Aggregate):
    """The first response to a request with an Idempotency-Key."""

    if TYPE_CHECKING:
        fingerprint: str
        status: int
        body: str

    class Recorded(Aggregate.Created):
        class_version: ClassVar[int] = 1
        SECRET_FIELDS: ClassVar[tuple[str, ...]] = ("body",)
        fingerprint: str
        status: int
        body: str

        def apply(self, aggregate: Any) -> None:
            record: IdempotencyRecord = aggregate
            record.fingerprint = self.fingerprint
            record.status = self.status
            record.body = self.body

    @classmethod
    def record(
        cls, rid: UUID, request_fingerprint: str, status: int, body: str, now: datetime
    ) -> IdempotencyRecord:
        return cls._create(
            cls.Recorded,
            id=rid,
            fingerprint=request_fingerprint,
            status=status,
            body=body,
            timestamp=now,
        )


def find(service: GameService, rid: UUID) -> IdempotencyRecord | None:
    """The stored record ``rid``, None when the key was never used."""
    try:
        found: object = service.repository.get(rid)
    except AggregateNotFoundError:
        return None
    return found if isinstance(found, IdempotencyRecord) else None

"""``Idempotency-Key`` on POST (IETF draft ``httpapi-idempotency-key-header``).

* First request with a key: the command runs; the key's record — what is needed to answer
  again: the request's fingerprint, the status, the resource acted on, its version after
  the command, the acting seat (:class:`services.idempotency.Outcome`) — is stored in the
  events' store **in the same save** as the command's events (``GameService``'s
  ``attach``), so a retry can never repeat the command and the record cannot exist
  without it. The answer is rendered after the save, never inside it.
* Same key, same request (method, path and body fingerprint): the answer is rebuilt from
  the resource as of the recorded version — same status, same body but for minted tokens,
  ``Idempotent-Replayed: true`` — and no new event.
* **No replay gives a secret.** A token the first request minted (seat, organiser) is
  stored only as its hash; the replay answers without it (``token: null``,
  ``tokenWithheld: true``), since whoever sends the same key and body cannot be told apart
  from the first caller (docs/security.md).
* Same key, another request: 409 ``idempotency-key-reused`` — the request conflicts
  with the one the key already names (the IETF draft suggests 422; a schema-valid request
  is not refused for its form, so 409, as the in-flight conflict: docs/decisions.md).
* Same key while the first request is still running: 409 ``idempotency-in-flight``
  (a per-process map; across processes the store's conflict on the record's version 1
  lets one request win, and the loser replays the winner's record).
* A request that fails stores nothing (it changed nothing): retrying the key runs it again.
* Authorisation comes first: ``run``'s ``authorize`` (the route's token check) runs before
  the key is looked up, so a caller without a valid token gets its 401/403 whatever key
  it sends — never a 409 or a replay that tells it what the key was used for.

Keys are scoped by caller (the hash of the bearer token, or the client's address). POSTs
that change nothing (``/v1/verify``, the rules oracle) accept the header and ignore it:
they answer the same body with the same response anyway.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, TypeVar
from uuid import UUID

import msgspec
from litestar import MediaType, Request, Response

from api.runtime import Runtime
from domain.rules.errors import ShengjiError
from services.commands import Attach, Pending
from services.errors import VersionConflictError
from services.game import Clock, GameService
from services.idempotency import IdempotencyRecord, Outcome, find, fingerprint, record_id

T = TypeVar("T")
REPLAYED_HEADER = "Idempotent-Replayed"
KEY_DOC = (
    "Makes the POST safe to retry (IETF draft httpapi-idempotency-key-header): the same "
    "key with the same body answers the first response again without acting twice (a "
    "token it minted is withheld: `tokenWithheld: true`); with another body 409 "
    "`idempotency-key-reused`; while "
    "the first is still running 409."
)


class IdempotencyKeyReusedError(ShengjiError):
    code = "idempotency-key-reused"
    status: ClassVar[int] = 409


class IdempotencyInFlightError(ShengjiError):
    code = "idempotency-in-flight"
    status: ClassVar[int] = 409


@dataclass(frozen=True, slots=True)
class Answer(Generic[T]):
    """A route's answer: its status and body (a legacy record's stored JSON: bytes)."""

    status: int
    body: T | bytes
    replayed: bool = False


@dataclass(frozen=True, slots=True)
class Key:
    """The request's idempotency record, if it has a key: what to save with the command."""

    rid: UUID | None
    fingerprint: str
    clock: Clock

    def records(self, outcome: Outcome) -> list[Any]:
        """The aggregates to save with the command's events (none without a key)."""
        if self.rid is None:
            return []
        return [IdempotencyRecord.record(self.rid, self.fingerprint, outcome, self.clock())]

    def attach(self, outcome: Callable[[Pending], Outcome]) -> Attach | None:
        """The ``attach`` of a service command: the key's record, from the command's
        outcome about to be saved (None without a key)."""
        if self.rid is None:
            return None
        return lambda pending: self.records(outcome(pending))


Work = Callable[[Key], Answer[T]]
"""A handler's blocking part: runs the command, saving ``key.records(...)`` with it."""
Replay = Callable[[Outcome], T]
"""Rebuilds a route's answer from a record's outcome (in a worker thread)."""
Authorize = Callable[[], object]
"""A route's token check (raises 401/403/404): runs before the key is looked up."""


async def run(
    runtime: Runtime,
    request: Request[Any, Any, Any],
    key: str | None,
    scope: str,
    work: Work[T],
    replay: Replay[T],
    authorize: Authorize | None = None,
) -> Response[T]:
    """Run ``work`` in a worker thread under the Idempotency-Key semantics above, after
    ``authorize`` (when a key is given: without one, ``work`` checks the token itself)."""
    service = runtime.service
    if key is None:
        return _response(await runtime.call(work, Key(None, "", service.clock)))
    path = request.url.path
    query = request.scope.get("query_string", b"")
    if query:
        path += "?" + bytes(query).decode("latin-1")
    fp = fingerprint(request.method, path, await request.body())
    rid = record_id(scope, key)
    if not runtime.in_flight.claim(rid):
        if authorize is not None:  # 401/403 (and 404) before anything about the key
            await runtime.call(authorize)
        raise IdempotencyInFlightError(
            "a request with this Idempotency-Key is still being handled; retry later"
        )
    try:
        done = await runtime.call(_once, service, rid, fp, work, replay, authorize)
    finally:
        runtime.in_flight.release(rid)
    return _response(done)


def _once(
    service: GameService,
    rid: UUID,
    fp: str,
    work: Work[T],
    replay: Replay[T],
    authorize: Authorize | None,
) -> Answer[T]:
    if authorize is not None:
        authorize()  # 401/403 (and 404) before anything about the key
    found = find(service, rid)
    if found is not None:
        return _replay(found, fp, replay)
    try:
        return work(Key(rid, fp, service.clock))
    except VersionConflictError:
        found = find(service, rid)  # another process saved this key first
        if found is not None:
            return _replay(found, fp, replay)
        raise


def _replay(found: IdempotencyRecord, fp: str, replay: Replay[T]) -> Answer[T]:
    if found.fingerprint != fp:
        raise IdempotencyKeyReusedError(
            "this Idempotency-Key was used for another request (method, path or body "
            "differ); use a new key for a new request"
        )
    outcome = found.outcome
    if found.legacy_body is not None:  # recorded before records kept outcomes
        return Answer(outcome.status, found.legacy_body.encode(), replayed=True)
    return Answer(outcome.status, replay(outcome), replayed=True)


def field_of(response: Response[Any], name: str) -> Any:
    """A top-level field (its JSON name) of an answer built by :func:`run`, for a header
    such as ``Location``."""
    content = response.content
    found = (
        msgspec.json.decode(content) if isinstance(content, bytes) else msgspec.to_builtins(content)
    )
    return found.get(name) if isinstance(found, dict) else None


def _response(done: Answer[T]) -> Response[T]:
    headers = {REPLAYED_HEADER: "true"} if done.replayed else {}
    response: Response[Any] = Response(
        done.body, status_code=done.status, headers=headers, media_type=MediaType.JSON
    )
    return response

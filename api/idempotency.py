"""``Idempotency-Key`` on POST (IETF draft ``httpapi-idempotency-key-header``).

* First request with a key: the command runs; its response (status and body) is stored
  in the events' store **in the same save** as the command's events
  (:mod:`services.idempotency`, ``GameService``'s ``attach``), so a retry can never
  repeat the command and the record cannot exist without it.
* Same key, same request (method, path and body fingerprint): the stored response again
  — same status, same body, ``Idempotent-Replayed: true`` — and no new event.
* Same key, another request: 422 ``idempotency-key-reused``.
* Same key while the first request is still running: 409 ``idempotency-in-flight``
  (a per-process map; across processes the store's conflict on the record's version 1
  lets one request win, and the loser replays the winner's record).
* A request that fails stores nothing (it changed nothing): retrying the key runs it again.
* Authorisation comes first: ``run``'s ``authorize`` (the route's token check) runs before
  the key is looked up, so a caller without a valid token gets its 401/403 whatever key
  it sends — never a 422 or a replay that tells it what the key was used for.

Keys are scoped by caller (the hash of the bearer token, or ``anonymous``). POSTs that
change nothing (``/v1/verify``, the rules oracle) accept the header and ignore it: they
answer the same body with the same response anyway.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar
from uuid import UUID

import msgspec
from litestar import MediaType, Request, Response
from litestar.types import ASGIApp, Receive, Scope, Send

from api.runtime import Runtime
from domain.rules.errors import ShengjiError
from services.errors import VersionConflictError
from services.game import Clock, GameService, Pending
from services.idempotency import IdempotencyRecord, find, fingerprint, record_id

T = TypeVar("T")
REPLAYED_HEADER = "Idempotent-Replayed"
KEY_DOC = (
    "Makes the POST safe to retry (IETF draft httpapi-idempotency-key-header): the same "
    "key with the same body answers the first response again without acting twice; with "
    "another body 422; while the first is still running 409."
)


class IdempotencyKeyReusedError(ShengjiError):
    code = "idempotency-key-reused"
    status: ClassVar[int] = 422


class IdempotencyInFlightError(ShengjiError):
    code = "idempotency-in-flight"
    status: ClassVar[int] = 409


@dataclass(frozen=True, slots=True)
class Reply:
    """A response as the client gets it (and as a key stores it)."""

    status: int
    body: bytes
    replayed: bool = False


@dataclass(frozen=True, slots=True)
class Key:
    """The request's idempotency record, if it has a key: what to save with the command."""

    rid: UUID | None
    fingerprint: str
    clock: Clock

    def records(self, reply: Reply) -> list[Any]:
        """The aggregates to save with the command's events (none without a key)."""
        if self.rid is None:
            return []
        body = reply.body.decode()
        return [
            IdempotencyRecord.record(self.rid, self.fingerprint, reply.status, body, self.clock())
        ]


class Capture:
    """The ``attach`` of a command: builds the reply from the outcome about to be saved
    and hands back the key's record, so both are saved with the command's events."""

    def __init__(self, key: Key, build: Callable[[Pending], Reply]) -> None:
        self.key = key
        self.build = build
        self.reply: Reply | None = None

    def __call__(self, pending: Pending) -> list[Any]:
        self.reply = self.build(pending)
        return self.key.records(self.reply)

    def result(self) -> Reply:
        assert self.reply is not None, "the command did not reach its save"
        return self.reply


Work = Callable[[Key], Reply]
"""A handler's blocking part: runs the command, saving ``key.records(reply)`` with it."""
Authorize = Callable[[], object]
"""A route's token check (raises 401/403/404): runs before the key is looked up."""


def reply(status: int, payload: msgspec.Struct) -> Reply:
    return Reply(status, msgspec.json.encode(payload))


async def run(
    runtime: Runtime,
    request: Request[Any, Any, Any],
    key: str | None,
    scope: str,
    work: Work,
    response_type: type[T],
    authorize: Authorize | None = None,
    *,
    quick: bool = False,
    body: bytes | None = None,
) -> Response[T]:
    """Run ``work`` in a worker thread under the Idempotency-Key semantics above, after
    ``authorize`` (when a key is given: without one, ``work`` checks the token itself).
    ``quick``: ``work`` is a short command (``Runtime.quick``: on the loop on the
    embedded store). ``body``: the request's body when the handler read it itself."""
    service = runtime.service
    call = runtime.quick if quick else runtime.call
    if key is None:
        done = await call(work, Key(None, "", service.clock))
        return _response(done, response_type)
    path = request.url.path
    query = request.scope.get("query_string", b"")
    if query:
        path += "?" + bytes(query).decode("latin-1")
    fp = fingerprint(request.method, path, await request.body() if body is None else body)
    rid = record_id(scope, key)
    if not runtime.in_flight.claim(rid):
        raise IdempotencyInFlightError(
            "a request with this Idempotency-Key is still being handled; retry later"
        )
    try:
        done = await call(_once, service, rid, fp, work, authorize)
    finally:
        runtime.in_flight.release(rid)
    return _response(done, response_type)


def _once(
    service: GameService, rid: UUID, fp: str, work: Work, authorize: Authorize | None
) -> Reply:
    if authorize is not None:
        authorize()  # 401/403 (and 404) before anything about the key
    found = find(service, rid)
    if found is not None:
        return _replay(found, fp)
    try:
        return work(Key(rid, fp, service.clock))
    except VersionConflictError:
        found = find(service, rid)  # another process saved this key first
        if found is not None:
            return _replay(found, fp)
        raise


def _replay(found: IdempotencyRecord, fp: str) -> Reply:
    if found.fingerprint != fp:
        raise IdempotencyKeyReusedError(
            "this Idempotency-Key was used for another request (method, path or body "
            "differ); use a new key for a new request"
        )
    return Reply(found.status, found.body.encode(), replayed=True)


def _response(done: Reply, response_type: type[T]) -> Response[T]:
    """The reply's body as it was encoded in the worker (or stored, for a replay): sent
    as those bytes, never decoded and encoded again (``response_type`` types the route)."""
    headers = {REPLAYED_HEADER: "true"} if done.replayed else {}
    response: Response[Any] = EncodedJSON(
        done.body, status_code=done.status, headers=headers, media_type=MediaType.JSON
    )
    return response


class EncodedJSON(Response[Any]):
    """A response whose ``content`` is JSON already encoded: sent as two ASGI messages
    with its status and headers (and the route's), skipping Litestar's general
    ``ASGIResponse`` (rendering, header containers, cookies, background tasks). With
    cookies, a background task or for HEAD it is a plain ``Response``."""

    def to_asgi_response(  # type: ignore[override]
        self,
        app: Any,
        request: Request[Any, Any, Any],
        *,
        background: Any = None,
        cookies: Any = None,
        headers: dict[str, str] | None = None,
        is_head_response: bool = False,
        **rest: Any,
    ) -> ASGIApp:
        body = self.content
        if (
            not isinstance(body, bytes)
            or self.cookies
            or cookies
            or self.background
            or background
            or is_head_response
            or rest.get("encoded_headers")
        ):
            return super().to_asgi_response(
                app,
                request,
                background=background,
                cookies=cookies,
                headers=headers,
                is_head_response=is_head_response,
                **rest,
            )
        merged = {**headers, **self.headers} if headers else self.headers
        raw = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in merged.items()]
        raw.append((b"content-type", b"application/json"))
        raw.append((b"content-length", str(len(body)).encode()))
        return _Encoded(self.status_code or rest.get("status_code") or 200, raw, body)


class _Encoded:
    __slots__ = ("body", "headers", "status")

    def __init__(self, status: int, headers: list[tuple[bytes, bytes]], body: bytes) -> None:
        self.status = status
        self.headers = headers
        self.body = body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": self.status, "headers": self.headers})
        await send({"type": "http.response.body", "body": self.body, "more_body": False})


def body_of(response: Response[Any], response_type: type[T]) -> T:
    """The object of a response built by :func:`run` (for a header such as ``Location``)."""
    return msgspec.json.decode(response.content, type=response_type)

"""The way in of every write: the ``write`` dependency and the ``@write_route`` decorator
(docs/decisions.md D-pipeline).

A POST (or an idempotent DELETE) handler takes ``write: Write`` and is a few lines: it
reads its body (:meth:`Write.body`), then hands the service a plain call —
:meth:`Write.command` for a round command (:mod:`services.pipeline`), :meth:`Write.run`
for any other write: *authorise* (who is calling, from the request's credential; 401/403
and 404 before anything else), then the write under its Idempotency-Key, in **one**
worker-thread call. The dependency parses the request's credential once
(:func:`services.access.read_authorization`) and its ``Idempotency-Key``.

``Idempotency-Key`` (IETF draft ``httpapi-idempotency-key-header``), on every write:

* First request with a key: the write runs; the key's record — the request's fingerprint,
  the status, the resource acted on, its version after the write, the acting seat and a
  few small facts (:class:`services.idempotency.Outcome`) — is stored in the events' store
  in the same save as the write's events, so a retry can never repeat the write and the
  record cannot exist without it. The answer is rendered after the save.
* Same key, same request (method, path with its query, body): the answer is rebuilt from
  the resource as of the recorded version — same status, same body but for minted tokens,
  ``Idempotent-Replayed: true`` — and no new event.
* **No replay gives a secret.** A token the first request minted is stored only as its
  hash; the replay answers without it (``token: null``, ``tokenWithheld: true``), since
  whoever sends the same key and body cannot be told apart from the first caller
  (docs/security.md).
* Same key, another request: 409 ``idempotency-key-reused`` (docs/decisions.md).
* Same key while the first request still runs: 409 ``idempotency-in-flight`` (per
  process; across processes the store's conflict on the record lets one request win and
  the loser replays the winner's record).
* A request that fails stores nothing: retrying the key runs it again.
* Authorisation comes first: a caller without a valid credential gets its 401/403 whatever
  key it sends — never a 409 or a replay that tells it what the key was used for.

Keys are scoped by caller: the hash of the bearer token, or the client's address. POSTs
that change nothing (``/v1/verify``, the rules oracle) take no ``write`` and ignore the
header.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Annotated, Any, TypeVar

from litestar import MediaType, Request, Response, post
from litestar.datastructures import ResponseHeader
from litestar.di import NamedDependency
from litestar.handlers import HTTPRouteHandler
from litestar.params import HeaderParameter

from api.dto import REPLAYED_HEADER, problems
from api.logging import bind_seat
from api.runtime import Runtime
from api.strict import json_body, read_body
from services.access import Credential, read_authorization
from services.idempotency import Outcome, Replayable, RequestKey, Stamp, fingerprint
from services.pipeline import Answered, Command, run_command

A = TypeVar("A")
T = TypeVar("T")
ANONYMOUS = "anonymous"
BEARER: list[dict[str, list[str]]] = [{"bearer": []}]
OPTIONAL_BEARER: list[dict[str, list[str]]] = [{}, {"bearer": []}]
KEY_DOC = (
    "Makes the POST safe to retry (IETF draft httpapi-idempotency-key-header): the same "
    "key with the same body answers the first response again without acting twice (a "
    "token it minted is withheld: `tokenWithheld: true`); with another body 409 "
    "`idempotency-key-reused`; while the first is still running 409."
)
IdempotencyKey = Annotated[
    str | None,
    HeaderParameter(name="Idempotency-Key", min_length=1, max_length=255, description=KEY_DOC),
]


def scope_of(credential: Credential | None, client: str | None = None) -> str:
    """Who is calling, for idempotency keys: the credential's hash; without one, the
    client's address. A replay answers only the caller that made the first request."""
    if credential is not None:
        return credential.digest
    return ANONYMOUS if client is None else f"{ANONYMOUS}:{client}"


@dataclass(frozen=True, slots=True)
class Write:
    """A write request as the service needs it: the credential, the key, the runtime."""

    request: Request[Any, Any, Any]
    runtime: Runtime
    credential: Credential | None
    key: RequestKey | None

    async def body(self, target: Any) -> Any:
        """The JSON body as ``target`` (:func:`api.strict.read_body`)."""
        return await read_body(self.request, target)

    async def run(
        self,
        authorize: Callable[[], A],
        work: Callable[[A, Stamp], tuple[int, T]],
        replay: Callable[[A, Outcome], T],
        *,
        location: Callable[[T], str] | None = None,
    ) -> Response[T]:
        """``authorize()`` (who is calling), then ``work(who, stamp)`` — a status and an
        answer; it saves ``stamp.records(...)`` with its events — under the key, or a
        recorded answer ``replay(who, outcome)``: one call in a worker thread."""
        keys = self.runtime.keys

        def blocking() -> Replayable[T]:
            who = authorize()
            return keys.once(self.key, partial(work, who), partial(replay, who))

        return respond(await self.runtime.call(blocking), location)

    async def command(self, command: Command) -> Response[Any]:
        """A round command through the pipeline (:func:`services.pipeline.run_command`)."""
        done: Answered = await self.runtime.call(
            run_command, self.runtime.service, self.runtime.keys, command
        )
        bind_seat(self.request, done.seat)
        return respond(done.answer)


async def provide_write(
    request: Request[Any, Any, Any],
    runtime: NamedDependency[Runtime],
    idempotency_key: IdempotencyKey = None,
) -> Write:
    """The ``write`` dependency: the credential (401 for a malformed Authorization
    header) and the Idempotency-Key with the request's fingerprint."""
    credential = read_authorization(request.headers.get("authorization"))
    key = None
    if idempotency_key is not None:
        path = request.url.path
        query = request.scope.get("query_string", b"")
        if query:
            path += "?" + bytes(query).decode("latin-1")
        client = request.client.host if request.client else None
        key = RequestKey.of(
            scope_of(credential, client),
            idempotency_key,
            fingerprint(request.method, path, await request.body()),
        )
    return Write(request, runtime, credential, key)


def respond(done: Replayable[T], location: Callable[[T], str] | None = None) -> Response[T]:
    """The HTTP answer of a write (``Idempotent-Replayed: true`` on a replay)."""
    headers = {REPLAYED_HEADER.name: "true"} if done.replayed else {}
    if done.legacy is not None:
        body: Any = done.legacy
    else:
        body = done.body
        if location is not None and done.body is not None:
            headers["Location"] = location(done.body)
    return Response(body, status_code=done.status, headers=headers, media_type=MediaType.JSON)


def write_route(
    path: str,
    *,
    summary: str,
    description: str | None = None,
    status_code: int = 200,
    body: Any = None,
    statuses: Sequence[int] = (),
    security: list[dict[str, list[str]]] | None = BEARER,
    headers: Sequence[ResponseHeader] = (),
    handler: Callable[..., Callable[[Any], HTTPRouteHandler]] = post,
    **kwargs: Any,
) -> Callable[[Any], HTTPRouteHandler]:
    """A write's route decorator (``post`` by default): its problems (``statuses``, with
    413/415 when it takes a ``body``), the ``Idempotent-Replayed`` header, the bearer
    security (``None``: no token needed) and the request body's type for the document."""
    extra: dict[str, Any] = {} if security is None else {"security": security}
    if body is not None:
        extra["opt"] = json_body(body)
    return handler(
        path,
        status_code=status_code,
        summary=summary,
        description=description,
        responses=problems(*statuses, body=body is not None),
        response_headers=[*headers, REPLAYED_HEADER],
        **extra,
        **kwargs,
    )

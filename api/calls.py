"""The way in of every request: the ``read`` and ``write`` dependencies and the
``@write_route`` decorator (docs/decisions.md D-bus).

A handler takes ``read: Read`` — the runtime and the request's credential, parsed once
by :mod:`services.access` when first asked for — or, for a write, ``write: Write``.

A POST (or an idempotent DELETE) handler takes ``write: Write`` and is a few lines: it
reads its body (:meth:`Write.body`, as the type its route declares), builds its typed
command and sends it (:meth:`Write.send`): the bus (:mod:`services.bus`) authorises the
request's credential (401/403 and 404 before anything else), then runs the command under
its Idempotency-Key, in **one** worker-thread call. The dependency parses the request's
credential once (:func:`services.access.read_authorization`) and its ``Idempotency-Key``.

``Idempotency-Key`` (IETF draft ``httpapi-idempotency-key-header``), on every write:

* First request with a key: the write runs; the key's record — the request's fingerprint,
  the status, the resource acted on, its version after the write, the acting seat and a
  few small facts (:class:`services.idempotency.Receipt`) — is stored in the events' store
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

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Annotated, Any, TypeVar

from litestar import MediaType, Request, Response, post
from litestar.datastructures import ResponseHeader
from litestar.di import NamedDependency
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import HeaderParameter

from api.dto import REPLAYED_HEADER, problems
from api.logging import bind_seat
from api.payer import payer_of
from api.routes import WRITE, Documented, RouteDecorator
from api.runtime import Runtime
from api.strict import json_body, read_body
from services.access import Credential, read_authorization
from services.bus import Answered
from services.game import GameService
from services.idempotency import RequestKey, fingerprint

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
CHECKED = (401, 403, 404, 409)
"""The problems of a write whose caller is checked: no or a bad credential (401), one of
something else or the wrong role (403), no such resource (404), refused by a rule or a
race (409)."""
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


class Read:
    """A request as the service needs it: the runtime and the caller's credential."""

    def __init__(self, request: Request[Any, Any, Any], runtime: Runtime) -> None:
        self.request = request
        self.runtime = runtime
        self._credential: tuple[Credential | None] | None = None

    @property
    def credential(self) -> Credential | None:
        """The ``Authorization: Bearer`` credential (None without one; 401 for a header
        that is not ``Bearer <token>``), read when first asked for."""
        if self._credential is None:
            self._credential = (read_authorization(self.request.headers.get("authorization")),)
        return self._credential[0]

    @property
    def service(self) -> GameService:
        return self.runtime.service

    async def call(self, fn: Callable[..., T], *args: Any) -> T:
        """The blocking ``fn(*args)`` in a worker thread (:meth:`api.runtime.Runtime.call`)."""
        return await self.runtime.call(fn, *args)


Reading = NamedDependency[Read]
"""A handler's ``read`` parameter."""


async def provide_read(request: Request[Any, Any, Any], runtime: NamedDependency[Runtime]) -> Read:
    """The ``read`` dependency."""
    return Read(request, runtime)


class Write(Read):
    """A write request: a :class:`Read` with its Idempotency-Key."""

    def __init__(
        self,
        request: Request[Any, Any, Any],
        runtime: Runtime,
        credential: Credential | None,
        key: RequestKey | None,
    ) -> None:
        super().__init__(request, runtime)
        self._credential = (credential,)  # read before anything else (401 first)
        self.key = key

    async def body(self, target: Any = None) -> Any:
        """The JSON body as the type the route declares (``write_route(body=T)``,
        :func:`api.strict.read_body`)."""
        return await read_body(self.request, target)

    async def send(
        self,
        command: Any,
        *,
        dry: bool = False,
        location: Callable[[Any], str] | None = None,
    ) -> Response[Any]:
        """``command`` through the bus (:meth:`services.bus.Bus.handle`) for this request's
        credential under its Idempotency-Key (none for a dry run), in one worker-thread
        call; rendered with ``Idempotent-Replayed`` (and ``Location`` from ``location``)."""
        bus = self.runtime.bus
        key = None if dry else self.key
        payer = payer_of(self.request.scope)
        done = await self.runtime.call(
            partial(bus.handle, key=key, dry=dry, payer=payer), command, self.credential
        )
        if done.outcome is not None and done.outcome.seat is not None:
            bind_seat(self.request, done.outcome.seat)
        return respond(done, location)

    async def send_no_content(self, command: Any) -> None:
        """:meth:`send` for a command answered with no content (204, the route's status;
        Litestar documents a 204 only for a handler that returns nothing, so a replay's
        ``Idempotent-Replayed`` is not told)."""
        bus = self.runtime.bus
        payer = payer_of(self.request.scope)
        await self.runtime.call(
            partial(bus.handle, key=self.key, payer=payer), command, self.credential
        )


Writing = NamedDependency[Write]
"""A handler's ``write`` parameter."""


async def provide_write(
    request: Request[Any, Any, Any],
    runtime: NamedDependency[Runtime],
    idempotency_key: IdempotencyKey = None,
) -> Write:
    """The ``write`` dependency: the credential (401 for a malformed Authorization
    header) and the Idempotency-Key with the request's fingerprint."""
    credential = read_authorization(request.headers.get("authorization"))  # 401 first
    key = None
    if idempotency_key is not None:
        scope = request.scope
        path = scope.get("root_path", "") + scope["path"]  # request.url.path, no URL built
        query = scope.get("query_string", b"")
        if query:
            path += "?" + bytes(query).decode("latin-1")
        # the address scopes a key only without a credential (a seat's command has one)
        client = None if credential is not None or request.client is None else request.client.host
        key = RequestKey.of(
            scope_of(credential, client),
            idempotency_key,
            fingerprint(request.method, path, await request.body()),
        )
    return Write(request, runtime, credential, key)


def respond(done: Answered[T], location: Callable[[T], str] | None = None) -> Response[T]:
    """The HTTP answer of a write (``Idempotent-Replayed: true`` on a replay)."""
    headers = {REPLAYED_HEADER.name: "true"} if done.replayed else {}
    if done.legacy is not None:
        body: Any = done.legacy
    else:
        body = done.body
        where = "" if location is None or done.body is None else location(done.body)
        if where:
            headers["Location"] = where
    return Response(body, status_code=done.status, headers=headers, media_type=MediaType.JSON)


def write_route(
    path: str,
    status_code: int = 200,
    *statuses: int,
    body: Any = None,
    security: list[dict[str, list[str]]] | None = BEARER,
    headers: Sequence[ResponseHeader] = (),
    description: str | None = None,
    handler: Callable[..., RouteDecorator] = post,
    also: Mapping[int, ResponseSpec] | None = None,
    **kwargs: Any,
) -> RouteDecorator:
    """A write's route (``post`` by default): its status, the problems it may answer
    (``statuses``, with 413/415 when it takes a ``body``), the ``Idempotent-Replayed``
    header, the bearer security (``None``: no token needed) and the request body's type,
    declared here only: the handler reads it (:meth:`Write.body`) and the document shows
    it. Its summary and description are its handler's docstring: the first
    paragraph, then the others (``description`` given instead: that). ``also``: another
    success it may answer (quick play's ticket asked for again: 200 beside 201)."""

    extra: dict[str, Any] = {} if security is None else {"security": security}
    extra["opt"] = {WRITE: True, **(json_body(body) if body is not None else {})}
    return Documented(
        handler,
        path,
        description,
        status_code=status_code,
        responses={**problems(*statuses, body=body is not None), **(also or {})},
        response_headers=[*headers, REPLAYED_HEADER],
        **extra,
        **kwargs,
    )

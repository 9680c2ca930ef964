"""Round commands: ``POST /v1/matches/{match_id}/actions/{action}``.

``action`` is one of declare (R17, R18), overcall (R20), pass (R17, R18, R20), bury (R21),
play (R22–R25) and redeal (暴动, §10); the body's ``cards`` are R4 tokens. The seat is the
one the bearer seat token names (401 without or with a bad token; 403 for another
match's or an organiser's). The answer is the new match version and the acting seat's
view right after the command; the bots then play their pending moves.

Status codes: 200 done; 409 when the rules forbid the move (the problem's ``type`` is the
rule's own code, e.g. ``illegal-follow``, and it names the R-number and the cards) or
when another command changed the match first (``version-conflict``: exactly one of two
conflicting commands wins); 412 when ``If-Match`` is not the current version; 422 for
input that cannot be understood (a card token, a field).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Annotated, Any, cast, get_args
from uuid import UUID

import msgspec
from litestar import Controller, Request, Response, post
from litestar.di import NamedDependency
from litestar.exceptions import InternalServerException
from litestar.exceptions.http_exceptions import RequestEntityTooLarge
from litestar.params import FromPath, HeaderParameter, JSONBody

from api.auth import bearer, bearer_token, scope_of, seat_of
from api.dto import REPLAYED_HEADER, Action, ActionRequest, Cards, CommandDone, problems
from api.etag import expected_version
from api.idempotency import Capture, Key, Reply, reply, run
from api.logging import bind_seat
from api.matches import BEARER, IdempotencyKey, play_bots
from api.runtime import Runtime
from api.strict import decode_body, strict_body
from domain.rules.cards import Card, parse_cards
from domain.rules.errors import InvalidInputError
from services.bots import bot_seats
from services.game import Pending
from services.views import table_view

ACT_DOC = """`action`: `declare` (R17, R18), `overcall` (R20), `pass` (R17, R18, R20), `bury`
(R21, 8 cards), `play` (R22–R25) or `redeal` (暴动, §10); `cards` in R4 notation. The seat
is the bearer seat token's. Answers the match version the command left and the acting
seat's view right after it; then the bots play their pending moves.

409: the rules forbid the move (the problem's `type` is the rule's own code, such as
`illegal-follow`, and names the R-number and the cards), or another command changed the
match first (`version-conflict`: of two conflicting commands exactly one wins).
412: `If-Match` is not the current version. 422: input that cannot be understood."""

IfMatch = Annotated[
    str | None,
    HeaderParameter(
        name="If-Match",
        description='"<version>": act only if the match is at this version, else 412',
    ),
]


def parse_field(value: Cards | None, field: str) -> tuple[Card, ...]:
    """R4 tokens of a request field; an error names the field and the token."""
    if value is None:
        return ()
    try:
        return tuple(parse_cards(value))
    except InvalidInputError as e:
        raise InvalidInputError(f"{field}: {e.detail}", code=e.code, rule=e.rule) from None


ACTIONS = frozenset(get_args(Action))
_ACTION_REQUEST = msgspec.json.Decoder(ActionRequest, strict=True)
MAX_KEY = 255
"""The longest ``Idempotency-Key`` (its ``HeaderParameter``'s ``max_length``)."""


async def act_well_formed(request: Request[Any, Any, Any]) -> Response[CommandDone] | None:
    """The act route's ``before_request``: performs the command with its input read once
    — the headers it needs from the raw list, the body from the ASGI messages and decoded
    straight into an ``ActionRequest`` — and its answer is the route's, without the
    handler's signature model checking again what this has checked. A body that is not
    exactly an ``ActionRequest`` is refused as the app refuses any body
    (:func:`~api.strict.decode_body`: the field named). An unknown action or a malformed
    ``Idempotency-Key`` go the general way (Litestar's parameters, then the handler):
    the same :func:`perform` either way. Commands are the hot path of a game (``make
    bench-api``'s play)."""
    action = request.path_params.get("action")
    headers = _headers(request.scope["headers"])
    key = headers.get(b"idempotency-key")
    if action not in ACTIONS or (key is not None and not 1 <= len(key) <= MAX_KEY):
        await strict_body(request)
        return None
    raw = await read_body(request)
    try:
        data: ActionRequest | None = _ACTION_REQUEST.decode(raw)
    except msgspec.DecodeError:  # ValidationError too: the general words, or None
        data = decode_body(raw, ActionRequest | None)
    return await perform(
        request.app.state.runtime,
        request,
        request.path_params["match_id"],
        cast("Action", action),
        data,
        bearer_token(headers.get(b"authorization")),
        headers.get(b"if-match"),
        key,
        raw,
    )


_WANTED = frozenset((b"authorization", b"if-match", b"idempotency-key"))


def _headers(raw: Iterable[tuple[bytes, bytes]]) -> dict[bytes, str]:
    """The first value of each header a command reads (ASGI names are lower case)."""
    found: dict[bytes, str] = {}
    for name, value in raw:
        if name in _WANTED and name not in found:
            found[name] = value.decode("latin-1")
    return found


async def read_body(request: Request[Any, Any, Any]) -> bytes:
    """The request body from its ASGI messages, within the route's size limit (413), as
    Litestar's ``Request.body`` reads it."""
    limit = request.route_handler.resolve_request_max_body_size() or math.inf
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await request.receive()
        if message["type"] == "http.disconnect":
            raise InternalServerException("client disconnected prematurely")
        if message["type"] != "http.request":
            continue
        body = message.get("body", b"")
        if body:
            size += len(body)
            if size > limit:
                raise RequestEntityTooLarge
            chunks.append(body)
        if not message.get("more_body", False):
            request.is_connected = False
            return b"".join(chunks)


async def perform(
    runtime: Runtime,
    request: Request[Any, Any, Any],
    match_id: UUID,
    action: Action,
    data: ActionRequest | None,
    token: str | None,
    if_match: str | None,
    idempotency_key: str | None,
    body: bytes | None = None,
) -> Response[CommandDone]:
    """The command as the token's seat, under the Idempotency-Key semantics (``body``:
    the raw body when the caller read it, for the key's fingerprint)."""
    service = runtime.service
    seats: list[int] = []
    bots: list[bool] = []

    def authorize() -> None:
        seat_of(service, service.get_match(match_id, copy=False), token)

    def work(key: Key) -> Reply:
        match = service.get_match(match_id, copy=False)  # read only
        seat = seat_of(service, match, token)
        seats.append(seat)
        expected = expected_version(if_match)  # after auth: 401/403 before 412
        cards = parse_field(data.cards if data else None, "cards")

        def build(p: Pending) -> Reply:
            view = table_view(p.match, p.round, seat, service.clock())
            return reply(200, CommandDone(version=p.result.version, view=view))

        capture = Capture(key, build)
        service.act(match_id, seat, action, cards, expected_version=expected, attach=capture)
        bots.append(bool(bot_seats(match)))  # seats never change hands
        return capture.result()

    try:
        # The command is short (on the embedded store it runs on the loop, D2a); the
        # bots' moves after it, up to a whole round, go to a worker thread.
        response = await run(
            runtime,
            request,
            idempotency_key,
            scope_of(token),
            work,
            CommandDone,
            authorize,
            quick=True,
            body=body,
        )
        if any(bots):
            await runtime.call(play_bots, service, match_id, runtime.bot_steps)
        return response
    finally:
        if seats:
            bind_seat(request, seats[0])


class CommandController(Controller):
    path = "/v1/matches"
    tags = ["commands"]  # noqa: RUF012 - Litestar declares it an instance attribute

    @post(
        "/{match_id:uuid}/actions/{action:str}",
        status_code=200,
        summary="Act in the round as the token's seat",
        description=ACT_DOC,
        responses=problems(401, 403, 404, 409, 412, body=True),
        response_headers=[REPLAYED_HEADER],
        security=BEARER,
        before_request=act_well_formed,
    )
    async def act(
        self,
        request: Request[Any, Any, Any],
        runtime: NamedDependency[Runtime],
        match_id: FromPath[UUID],
        action: FromPath[Action],
        data: JSONBody[ActionRequest | None] = None,
        if_match: IfMatch = None,
        idempotency_key: IdempotencyKey = None,
    ) -> Response[CommandDone]:
        # Requests :func:`act_well_formed` did not perform: validated by the signature.
        token = bearer(request)
        return await perform(
            runtime, request, match_id, action, data, token, if_match, idempotency_key
        )

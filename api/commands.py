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

from typing import Annotated, Any, cast
from uuid import UUID

from litestar import Controller, Request, Response, post
from litestar.di import NamedDependency
from litestar.params import FromPath, HeaderParameter, QueryParameter

from api.auth import bearer, scope_of, seat_of
from api.dto import REPLAYED_HEADER, Action, ActionRequest, Cards, CommandDone, problems
from api.etag import expected_version
from api.idempotency import Answer, Key, run
from api.logging import bind_seat
from api.matches import BEARER, IdempotencyKey, play_bots
from api.runtime import Runtime
from api.strict import json_body, read_body
from domain.game.match import Match
from domain.rules.cards import Card, parse_cards
from domain.rules.errors import InvalidInputError
from services.bots import bot_seats
from services.dryrun import DryRun, dry_run
from services.history import state_at
from services.idempotency import Outcome
from services.view_types import SeatView
from services.views import table_view

ACT_DOC = """`action`: `declare` (R17, R18), `overcall` (R20), `pass` (R17, R18, R20), `bury`
(R21, 8 cards), `play` (R22–R25) or `redeal` (暴动, §10); `cards` in R4 notation. The seat
is the bearer seat token's. Answers the match version the command left and the acting
seat's view right after it; then the bots play their pending moves.

409: the rules forbid the move (the problem's `type` is the rule's own code, such as
`illegal-follow`, and names the R-number and the cards), or another command changed the
match first (`version-conflict`: of two conflicting commands exactly one wins).
412: `If-Match` is not the current version. 422: input that cannot be understood.

`?dryRun=true`: check the command without acting — the same checks, the same problem
when it is refused; a legal one answers `DryRun` (the cards a play would play, and for a
throw that would fail, R22, the forced component and the penalty). Nothing is saved (the
match stays at its version), no bot moves, and an `Idempotency-Key` is not used."""

DryRunFlag = Annotated[
    bool,
    QueryParameter(
        name="dryRun",
        description="true: check the command and answer whether it is legal (a DryRun, or "
        "the problem a real command would answer); nothing is saved",
        required=False,
    ),
]

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


async def perform(
    runtime: Runtime,
    request: Request[Any, Any, Any],
    match_id: UUID,
    action: Action,
    data: ActionRequest | None,
    if_match: str | None,
    idempotency_key: str | None,
) -> Response[CommandDone]:
    """The command as the token's seat, under the Idempotency-Key semantics."""
    service = runtime.service
    token = bearer(request)
    seats: list[int] = []
    bots: list[bool] = []

    def authorize() -> None:
        seat_of(service, service.get_match(match_id), token)

    def work(key: Key) -> Answer[CommandDone]:
        def who(match: Match) -> tuple[int, int | None, tuple[Card, ...]]:
            seat = seat_of(service, match, token)
            seats.append(seat)
            bots.append(bool(bot_seats(match)))  # seats never change hands
            expected = expected_version(if_match)  # after auth: 401/403 before 412
            return seat, expected, parse_field(data.cards if data else None, "cards")

        done = service.act(
            match_id,
            -1,  # the seat, If-Match and cards: who()
            action,
            attach=key.attach(lambda p: Outcome(200, match_id, p.result.version, seats[-1])),
            authorize=who,
        )
        assert done.match is not None
        view = table_view(done.match, done.current, seats[-1], service.clock())
        return Answer(200, CommandDone(version=done.version, view=view))

    def replay(outcome: Outcome) -> CommandDone:
        seat = (
            outcome.seat
            if outcome.seat is not None
            else seat_of(service, service.get_match(match_id), token)
        )
        state = state_at(service, match_id, outcome.version, seat)
        return CommandDone(version=outcome.version, view=cast("SeatView", state.view))

    try:
        response = await run(
            runtime, request, idempotency_key, scope_of(token), work, replay, authorize
        )
        if any(bots):  # the bots' moves after it, up to a whole round
            await runtime.call(play_bots, service, match_id, runtime.bot_steps)
        return response
    finally:
        if seats:
            bind_seat(request, seats[0])


async def check(
    runtime: Runtime,
    request: Request[Any, Any, Any],
    match_id: UUID,
    action: Action,
    data: ActionRequest | None,
    if_match: str | None,
) -> Response[CommandDone | DryRun]:
    """The dry run: the command's checks as the token's seat, on copies (nothing saved)."""
    service = runtime.service
    token = bearer(request)
    seats: list[int] = []

    def who(match: Match) -> tuple[int, int | None, tuple[Card, ...]]:
        seat = seat_of(service, match, token)
        seats.append(seat)
        expected = expected_version(if_match)
        return seat, expected, parse_field(data.cards if data else None, "cards")

    try:
        answer = await runtime.call(dry_run, service, match_id, action, who)
        return Response(answer, status_code=200)
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
        opt=json_body(ActionRequest | None),
    )
    async def act(
        self,
        request: Request[Any, Any, Any],
        runtime: NamedDependency[Runtime],
        match_id: FromPath[UUID],
        action: FromPath[Action],
        if_match: IfMatch = None,
        idempotency_key: IdempotencyKey = None,
        dry_run: DryRunFlag = False,
    ) -> Response[CommandDone | DryRun]:
        data: ActionRequest | None = await read_body(request, ActionRequest | None)
        if dry_run:
            return await check(runtime, request, match_id, action, data, if_match)
        done = await perform(runtime, request, match_id, action, data, if_match, idempotency_key)
        return cast("Response[CommandDone | DryRun]", done)

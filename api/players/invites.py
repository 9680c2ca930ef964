"""Invite codes for private tables (docs/players.md).

``POST /v1/matches/{id}/invites`` (the organiser's token, or a seat's: a seat or player
token of the match) answers a short code; ``GET /v1/invites/{code}`` shows the table and
its free seats; ``POST /v1/invites/{code}`` takes the lowest free seat (R1): with a
player token as that player (who then acts with it from any device), without one under
the name given ("guest" without one) — either way the answer carries a seat token, shown once.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated, Any
from uuid import UUID

from litestar import Controller, Request, Response, get, post
from litestar.di import NamedDependency
from litestar.openapi.spec import Example
from litestar.params import FromPath, PathParameter

from api.auth import bearer, player_of, require_organiser, scope_of, seat_of
from api.dto import REPLAYED_HEADER, problems
from api.idempotency import Answer, Key, run
from api.matches import BEARER, IdempotencyKey, play_bots
from api.players.dto import (
    CreateInviteRequest,
    InviteInfo,
    JoinRequest,
    NewInvite,
    PlayerSeat,
)
from api.runtime import Runtime
from api.strict import json_body, read_body
from domain.accounts.invite import normal_code
from services.accounts.invites import create_invite, find_invite, free_seats, join
from services.accounts.players import is_player_token
from services.game import GameService
from services.idempotency import Outcome
from services.sources import ORGANISER_ROLE

CodeParam = Annotated[
    str,
    PathParameter(
        pattern="^[A-HJ-NP-Za-hj-np-z2-9]{4}-?[A-HJ-NP-Za-hj-np-z2-9]{4}$",
        description="An invite code (case and the dash are free)",
        examples=[Example(value="K7QX-M2PA")],
    ),
]


def inviter(service: GameService, match_id: UUID, token: str | None) -> str:
    """Who may invite to ``match_id``: its organiser, or one of its seats."""
    match = service.get_match(match_id)
    if token is not None and token.startswith(ORGANISER_ROLE + "."):
        require_organiser(service, match, token)
        return "organiser"
    return f"seat {seat_of(service, match, token)}"


class InviteController(Controller):
    tags = ["players"]  # noqa: RUF012 - Litestar declares it an instance attribute

    @post(
        "/v1/matches/{match_id:uuid}/invites",
        status_code=201,
        summary="An invite code to this match (organiser, or a seated player)",
        responses=problems(401, 403, 404, 409, body=True),
        security=BEARER,
        response_headers=[REPLAYED_HEADER],
        opt=json_body(CreateInviteRequest | None),
    )
    async def create(
        self,
        request: Request[Any, Any, Any],
        runtime: NamedDependency[Runtime],
        match_id: FromPath[UUID],
        idempotency_key: IdempotencyKey = None,
    ) -> Response[NewInvite]:
        data = await read_body(request, CreateInviteRequest | None) or CreateInviteRequest()
        service, token = runtime.service, bearer(request)

        def work(key: Key) -> Answer[NewInvite]:
            by = inviter(service, match_id, token)
            code, invite = create_invite(
                service,
                match_id,
                by,
                timedelta(seconds=data.ttl_seconds),
                extras=lambda code, i: key.records(Outcome(201, i.id, 1, facts={"code": code})),
            )
            return Answer(201, _new(code, invite.match_id, invite.expires_at.isoformat()))

        def replay(outcome: Outcome) -> NewInvite:
            code = str(outcome.facts.get("code"))
            invite = find_invite(service, code)
            return _new(code, invite.match_id, invite.expires_at.isoformat())

        return await run(
            runtime,
            request,
            idempotency_key,
            scope_of(token),
            work,
            replay,
            lambda: inviter(service, match_id, token),
        )

    @get(
        "/v1/invites/{code:str}",
        summary="The table an invite code seats at, and its free seats",
        responses=problems(404, 409),
    )
    async def show(self, runtime: NamedDependency[Runtime], code: CodeParam) -> InviteInfo:
        service = runtime.service

        def read() -> InviteInfo:
            invite = find_invite(service, code)
            invite.check_open(service.clock())
            match = service.get_match(invite.match_id)
            return InviteInfo(
                match_id=str(match.id),
                name=match.name,
                expires_at=invite.expires_at.isoformat(),
                free_seats=free_seats(match),
            )

        return await runtime.call(read)

    @post(
        "/v1/invites/{code:str}",
        status_code=201,
        summary="Take a seat with an invite code (the lowest free seat, R1)",
        description="With a player token the player sits under their display name and acts "
        "with the player token too; without one, under `name` (`guest` by default). Answers a "
        "seat token once. "
        "409 `no-free-seat` when four sit already, `invite-expired` after its time.",
        responses=problems(401, 403, 404, 409, body=True),
        response_headers=[REPLAYED_HEADER],
        opt=json_body(JoinRequest | None),
    )
    async def join(
        self,
        request: Request[Any, Any, Any],
        runtime: NamedDependency[Runtime],
        code: CodeParam,
        idempotency_key: IdempotencyKey = None,
    ) -> Response[PlayerSeat]:
        data = await read_body(request, JoinRequest | None) or JoinRequest()
        service, token = runtime.service, bearer(request)
        normal_code(code)  # 422 for a code that cannot be one

        def authorize() -> UUID | None:
            return player_of(service, token).account.id if token is not None else None

        def work(key: Key) -> Answer[PlayerSeat]:
            account_id = authorize()
            joined = join(
                service,
                code,
                name=data.name or "guest",
                account_id=account_id,
                attach=lambda seat: key.attach(
                    lambda p: Outcome(201, p.match.id, p.result.version, seat)
                ),
            )
            play_bots(service, joined.match_id, runtime.bot_steps)
            return Answer(
                201,
                PlayerSeat(
                    match_id=str(joined.match_id),
                    seat=joined.seat,
                    token=joined.token,
                    version=joined.result.version,
                ),
            )

        def replay(outcome: Outcome) -> PlayerSeat:
            return PlayerSeat(
                match_id=str(outcome.subject),
                seat=outcome.seat or 0,
                token=None,
                version=outcome.version,
                token_withheld=True,
            )

        scope = scope_of(token, request.client.host if request.client else None)
        if token is not None and not is_player_token(token):
            player_of(service, token)  # 403: only a player token signs a join
        return await run(runtime, request, idempotency_key, scope, work, replay, authorize)


def _new(code: str, match_id: UUID, expires_at: str) -> NewInvite:
    return NewInvite(code=f"{code[:4]}-{code[4:]}", match_id=str(match_id), expires_at=expires_at)

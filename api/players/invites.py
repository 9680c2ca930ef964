"""Invite codes for private tables (docs/players.md).

``POST /v1/matches/{id}/invites`` (the organiser's token, or a seat's: a seat or player
token of the match) answers a short code and makes the table private; ``GET
/v1/invites/{code}`` shows the table and its free seats; ``POST /v1/invites/{code}`` takes
the seat asked for, or the lowest free one (R1): with a player token as that player (who
then acts with it from any device), without one under the name given ("guest" without
one) — either way the answer carries a seat token, shown once.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated
from uuid import UUID

from litestar import Controller, Response
from litestar.openapi.spec import Example
from litestar.params import FromPath, PathParameter

from api.calls import CHECKED, Reading, Writing, write_route
from api.players.dto import CreateInviteRequest, InviteInfo, JoinRequest
from api.routes import route
from domain.accounts.invite import normal_code
from services.accounts.invites import find_invite
from services.accounts.seat_commands import CreateInvite, JoinByInvite, NewInvite, PlayerSeat
from services.accounts.seating import free_seats
from services.game import GameService

CodeParam = Annotated[
    str,
    PathParameter(
        pattern="^[A-HJ-NP-Za-hj-np-z2-9]{4}-?[A-HJ-NP-Za-hj-np-z2-9]{4}$",
        description="An invite code (case and the dash are free)",
        examples=[Example(value="K7QX-M2PA")],
    ),
]


class InviteController(Controller):
    tags = ["players"]  # noqa: RUF012 - Litestar declares it an instance attribute

    @write_route(
        "/v1/matches/{match_id:uuid}/invites", 201, *CHECKED, body=CreateInviteRequest | None
    )
    async def create_invite(self, write: Writing, match_id: FromPath[UUID]) -> Response[NewInvite]:
        """An invite code to this match (organiser, or a seated player)

        The table becomes private with its first code: no longer listed, its free seats taken only
        with a code or by the organiser (docs/decisions.md D-table-life).
        """
        data = await write.body() or CreateInviteRequest()
        return await write.send(CreateInvite(match_id, timedelta(seconds=data.ttl_seconds)))

    @route("/v1/invites/{code:str}", 404, 409)
    async def get_invite(self, read: Reading, code: CodeParam) -> InviteInfo:
        """The table an invite code seats at, and its free seats

        The table an invite code seats at and its free seats; the code is the
        invitation, so no token is needed.
        """
        return await read.call(invite_info, read.service, code)

    @write_route("/v1/invites/{code:str}", 201, *CHECKED, security=None, body=JoinRequest | None)
    async def join_by_invite(self, write: Writing, code: CodeParam) -> Response[PlayerSeat]:
        """Take a seat with an invite code (`seat`, or the lowest free seat, R1)

        With a player token the player sits under their display name and acts with the player token
        too; without one, under `name` (`guest` by default). `seat` seats a friend as partner (R2).
        Answers a seat token once. 409 `seat-taken`, `no-free-seat` when four sit already,
        `already-seated` for a player seated there or a guest presenting a seat token of the
        match (R1: a guest is known by its seat token), `invite-expired` after its time. The
        code is the only way in to a private table.
        """
        data = await write.body() or JoinRequest()
        normal_code(code)  # 422 for a code that cannot be one
        return await write.send(JoinByInvite(code, data.name or "guest", data.seat))


def invite_info(service: GameService, code: str) -> InviteInfo:
    """The table ``code`` seats at and its free seats (blocking; 404, 409 once closed)."""
    invite = find_invite(service, code)
    invite.check_open(service.clock())
    match = service.get_match(invite.match_id)
    return InviteInfo(
        match_id=str(match.id),
        name=match.name,
        expires_at=invite.expires_at.isoformat(),
        free_seats=free_seats(match),
    )

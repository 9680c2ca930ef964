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
from api.players.dto import CreateInviteRequest, InviteInfo, JoinRequest, NewInvite, PlayerSeat
from api.routes import route
from domain.accounts.invite import normal_code
from services.access import Credential, player_if_any, seat_or_organiser
from services.accounts.invites import create_invite, find_invite, join
from services.accounts.players import Signed
from services.accounts.seating import free_seats
from services.game import GameService
from services.idempotency import Receipt, Stamp

CodeParam = Annotated[
    str,
    PathParameter(
        pattern="^[A-HJ-NP-Za-hj-np-z2-9]{4}-?[A-HJ-NP-Za-hj-np-z2-9]{4}$",
        description="An invite code (case and the dash are free)",
        examples=[Example(value="K7QX-M2PA")],
    ),
]


def inviter(service: GameService, match_id: UUID, cred: Credential | None) -> str:
    """Who may invite to ``match_id``: its organiser, or one of its seats."""
    who = seat_or_organiser(service, service.get_match(match_id), cred)
    return f"seat {who}" if isinstance(who, int) else "organiser"


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
        data = await write.body(CreateInviteRequest | None) or CreateInviteRequest()
        service = write.runtime.service

        def work(by: str, stamp: Stamp) -> tuple[int, NewInvite]:
            code, invite = create_invite(
                service,
                match_id,
                by,
                timedelta(seconds=data.ttl_seconds),
                extras=lambda code, i: stamp.records(Receipt(201, i.id, 1, facts={"code": code})),
            )
            return 201, _new(code, invite.match_id, invite.expires_at.isoformat())

        def replay(_: str, outcome: Receipt) -> NewInvite:
            code = str(outcome.facts.get("code"))
            invite = find_invite(service, code)
            return _new(code, invite.match_id, invite.expires_at.isoformat())

        return await write.run(lambda: inviter(service, match_id, write.credential), work, replay)

    @route("/v1/invites/{code:str}", 404, 409)
    async def get_invite(self, read: Reading, code: CodeParam) -> InviteInfo:
        """The table an invite code seats at, and its free seats

        The table an invite code seats at and its free seats; the code is the
        invitation, so no token is needed.
        """
        service = read.service

        def info() -> InviteInfo:
            invite = find_invite(service, code)
            invite.check_open(service.clock())
            match = service.get_match(invite.match_id)
            return InviteInfo(
                match_id=str(match.id),
                name=match.name,
                expires_at=invite.expires_at.isoformat(),
                free_seats=free_seats(match),
            )

        return await read.call(info)

    @write_route("/v1/invites/{code:str}", 201, *CHECKED, security=None, body=JoinRequest | None)
    async def join_by_invite(self, write: Writing, code: CodeParam) -> Response[PlayerSeat]:
        """Take a seat with an invite code (`seat`, or the lowest free seat, R1)

        With a player token the player sits under their display name and acts with the player token
        too; without one, under `name` (`guest` by default). `seat` seats a friend as partner (R2).
        Answers a seat token once. 409 `seat-taken`, `no-free-seat` when four sit already,
        `invite-expired` after its time. The code is the only way in to a private table.
        """
        data = await write.body(JoinRequest | None) or JoinRequest()
        service = write.runtime.service
        normal_code(code)  # 422 for a code that cannot be one

        def work(player: Signed | None, stamp: Stamp) -> tuple[int, PlayerSeat]:
            joined = join(
                service,
                code,
                name=data.name or "guest",
                account_id=None if player is None else player.account.id,
                attach=lambda seat: stamp.attach(
                    lambda p: Receipt(201, p.match.id, p.result.version, seat)
                ),
                seat=data.seat,
            )
            return 201, PlayerSeat(
                match_id=str(joined.match_id),
                seat=joined.seat,
                token=joined.token,
                version=joined.result.version,
            )

        def replay(_: Signed | None, outcome: Receipt) -> PlayerSeat:
            return PlayerSeat(
                match_id=str(outcome.subject),
                seat=outcome.seat or 0,
                token=None,
                version=outcome.version,
                token_withheld=True,
            )

        return await write.run(lambda: player_if_any(service, write.credential), work, replay)


def _new(code: str, match_id: UUID, expires_at: str) -> NewInvite:
    return NewInvite(code=f"{code[:4]}-{code[4:]}", match_id=str(match_id), expires_at=expires_at)

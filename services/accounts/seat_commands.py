"""A player at tables: claim a seat as the player, leave a table, invite to a private table
and take a seat with an invite code — the commands and their handlers (:mod:`services.bus`;
docs/players.md, docs/decisions.md D-table-life).

A player's seat is the match's ``SeatTaken`` (the name sealed under the player's key) and the
account's ``SeatClaimed``, in one save; the fourth seat deals round 1 in the same save (R16).
Leaving lets the timeout bot (``TIMEOUT_BOT``) play the seat to the match's end: the match's
``SeatLeft`` and the account's ``MatchLeft`` in one save. An invite code makes the table
private (``TableMadePrivate``, with the code's ``InviteCreated``); with a code anyone takes
the lowest free seat (R1) or the one they name (a friend as partner, R2).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Annotated, Final, Literal, cast
from uuid import UUID

import msgspec
from msgspec import Meta

from domain.accounts.account import Account
from domain.accounts.invite import Invite
from domain.game.match import Match
from domain.rules.errors import IllegalMoveError
from services import field_docs, table_life
from services.access import Credential, player_if_any, seat_or_organiser, signed_player
from services.accounts.invites import find_invite, new_code
from services.accounts.players import Signed
from services.accounts.seating import (
    check_admitted,
    claim_seat,
    free_seats,
    refuse_a_seated_guest,
)
from services.bus import Caller, Handler, Outcome, Service
from services.dealer import Dealer
from services.game import GameService
from services.match_commands import TOKEN, match_version, take_seat
from services.sources import SEAT_ROLE, new_token
from services.unit_of_work import Reading, UnitOfWork

BotKind = Literal["random", "heuristic", "strong"]
ATTEMPTS: Final = 8
"""Runs of a seat's command against seats taken (or codes drawn) first."""
CODE: Final = "code"


class _Answer(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    pass


class PlayerSeat(_Answer, frozen=True, kw_only=True):
    """The seat the player took, with a seat token for it (shown once)."""

    match_id: Annotated[str, field_docs.MATCH_ID]
    seat: Annotated[int, field_docs.SEAT]
    token: Annotated[
        str | None,
        Meta(
            description="A seat token for this seat (the player token acts for it too).",
            examples=["s-8e1d47…"],
        ),
    ]
    version: Annotated[int, field_docs.VERSION]
    token_withheld: Annotated[bool, field_docs.TOKEN_WITHHELD] = False


class LeftSeat(_Answer, frozen=True, kw_only=True):
    """The player left the table (docs/decisions.md D-table-life)."""

    match_id: Annotated[str, field_docs.MATCH_ID]
    seat: Annotated[int, Meta(description="The seat the player held.")]
    replaced_by: Annotated[
        BotKind | None,
        Meta(
            description=(
                "The bot that plays the seat to the match's end; null: "
                "the match had not begun and the seat is free again."
            ),
            examples=["heuristic"],
        ),
    ]
    version: Annotated[
        int,
        Meta(description="The match version (leaving is no move of the game: it takes none)."),
    ]


class NewInvite(_Answer, frozen=True, kw_only=True):
    """An invite code (shown as `XXXX-XXXX`; dashes and case do not matter)."""

    code: Annotated[
        str, Meta(description="Give it to a friend: `POST /v1/invites/{code}` takes a seat.")
    ]
    match_id: Annotated[str, field_docs.MATCH_ID]
    expires_at: Annotated[str, Meta(description="When the code stops working, ISO 8601.")]


# -- the commands --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ClaimSeatAsPlayer:
    """The player takes ``seat`` of ``match_id`` (R1: one seat per match)."""

    match_id: UUID
    seat: int


@dataclass(frozen=True, slots=True)
class LeaveMatch:
    """The player leaves their seat in ``match_id``: the timeout bot plays it on."""

    match_id: UUID


@dataclass(frozen=True, slots=True)
class CreateInvite:
    """An invite code to ``match_id`` (its organiser, or a seated player), valid ``ttl``."""

    match_id: UUID
    ttl: timedelta


@dataclass(frozen=True, slots=True)
class JoinByInvite:
    """Take a seat with an invite code: ``seat``, or the lowest free one (R1); a player
    sits under their display name, anyone else under ``name``."""

    code: str
    name: str = "guest"
    seat: int | None = None


@dataclass(frozen=True, slots=True)
class Guest:
    """A caller without an account: known only by the seat token it presents, if any
    (:func:`~services.accounts.seating.refuse_a_seated_guest`)."""

    seat_token: Credential | None = None


def _player(service: GameService, caller: Caller) -> Signed:
    if isinstance(caller, Service):
        raise IllegalMoveError("a player's command needs the player's token")
    return signed_player(service, caller)


def _seat_answer(outcome: Outcome, state: Reading) -> PlayerSeat:
    token = outcome.minted.get(TOKEN)
    return PlayerSeat(
        match_id=str(outcome.subject),
        seat=outcome.seat or 0,
        token=token,
        version=outcome.version,
        token_withheld=state.replay,
    )


# -- the handlers --------------------------------------------------------------------------------


class ClaimSeatAsPlayerHandler(Handler[ClaimSeatAsPlayer, Signed, PlayerSeat]):
    def __init__(self, service: GameService, dealer: Dealer) -> None:
        self.service = service
        self.dealer = dealer

    def authorise(self, command: ClaimSeatAsPlayer, caller: Caller) -> Signed:
        return _player(self.service, caller)

    def handle(self, uow: UnitOfWork, command: ClaimSeatAsPlayer, who: Signed) -> Outcome:
        uow.add(who.account)
        match = uow.match(command.match_id)
        token = claim_seat(
            uow,
            self.dealer,
            who.account,
            match,
            command.seat,
            session_id=who.session_id,
            distinct=True,
        )
        version = match_version(uow, match)
        return Outcome(201, match.id, version, command.seat, minted={TOKEN: token})

    def answer(
        self, command: ClaimSeatAsPlayer, who: Signed, outcome: Outcome, state: Reading
    ) -> PlayerSeat:
        return _seat_answer(outcome, state)


class LeaveMatchHandler(Handler[LeaveMatch, Signed, LeftSeat]):
    """Leaving applies to the table as it is: a move saved first runs it again."""

    attempts = ATTEMPTS

    def __init__(self, service: GameService) -> None:
        self.service = service

    def authorise(self, command: LeaveMatch, caller: Caller) -> Signed:
        return _player(self.service, caller)

    def handle(self, uow: UnitOfWork, command: LeaveMatch, who: Signed) -> Outcome:
        account = uow.get(who.account.id, Account, "player")
        bot = self.service.table.substitute
        seat, replaced_by = table_life.leave(uow, account, command.match_id, bot)
        match = uow.match(command.match_id)
        facts = {"replacedBy": replaced_by}
        return Outcome(200, match.id, match_version(uow, match), seat, facts=facts)

    def answer(
        self, command: LeaveMatch, who: Signed, outcome: Outcome, state: Reading
    ) -> LeftSeat:
        return LeftSeat(
            match_id=str(outcome.subject),
            seat=outcome.seat or 0,
            replaced_by=cast("BotKind | None", outcome.facts.get("replacedBy")),
            version=outcome.version,
        )


class CreateInviteHandler(Handler[CreateInvite, str, NewInvite]):
    """The table becomes private with its first code (``TableMadePrivate`` in the same
    save). A code already taken conflicts on the store's version 1: another is drawn."""

    attempts = ATTEMPTS

    def __init__(self, service: GameService) -> None:
        self.service = service

    def authorise(self, command: CreateInvite, caller: Caller) -> str:
        """Who invites: the organiser or a seat of the match (recorded with the code)."""
        if isinstance(caller, Service):
            return "service"
        who = seat_or_organiser(self.service, self.service.get_match(command.match_id), caller)
        return f"seat {who}" if isinstance(who, int) else "organiser"

    def handle(self, uow: UnitOfWork, command: CreateInvite, who: str) -> Outcome:
        match = uow.match(command.match_id)
        match.make_private(uow.now)  # refused once the match is over (R32)
        code = new_code()
        invite = Invite.create(code, match.id, command.ttl, who, uow.now)
        uow.add(invite)
        return Outcome(201, invite.id, 1, facts={CODE: code})

    def answer(
        self, command: CreateInvite, who: str, outcome: Outcome, state: Reading
    ) -> NewInvite:
        code = str(outcome.facts.get(CODE))
        invite = state.get(outcome.subject, Invite, "invite", 1)
        return NewInvite(
            code=f"{code[:4]}-{code[4:]}",
            match_id=str(invite.match_id),
            expires_at=invite.expires_at.isoformat(),
        )


class JoinByInviteHandler(Handler[JoinByInvite, Signed | Guest, PlayerSeat]):
    """Two callers racing for one seat conflict on the match's version; the loser looks
    again (the next free seat). A player sits as their account (R1 on the account); a
    guest presenting a seat token of the match sits already (R1: 409 ``already-seated``)."""

    attempts = ATTEMPTS

    def __init__(self, service: GameService, dealer: Dealer) -> None:
        self.service = service
        self.dealer = dealer

    def authorise(self, command: JoinByInvite, caller: Caller) -> Signed | Guest:
        if isinstance(caller, Service):
            return Guest()
        if caller is not None and caller.role == SEAT_ROLE:
            return Guest(caller)
        return player_if_any(self.service, caller) or Guest()

    def handle(self, uow: UnitOfWork, command: JoinByInvite, who: Signed | Guest) -> Outcome:
        invite = find_invite(self.service, command.code)
        invite.check_open(uow.now)
        match: Match = uow.match(invite.match_id)
        if match.finished:
            raise IllegalMoveError("the match is over", rule="R32", code="match-finished")
        if isinstance(who, Guest):
            refuse_a_seated_guest(self.service, match, who.seat_token)
        free = free_seats(match)
        if command.seat is None and not free:
            raise IllegalMoveError(
                "R1: the table has four players already", rule="R1", code="no-free-seat"
            )
        chosen = free[0] if command.seat is None else command.seat
        check_admitted(match, chosen, invited=True)  # a rematch's kept seat: 403
        if isinstance(who, Signed):
            account = uow.get(who.account.id, Account, "player")
            token = claim_seat(
                uow,
                self.dealer,
                account,
                match,
                chosen,
                invited=True,
                session_id=who.session_id,
                distinct=True,
            )
        else:
            token = new_token(match.id, SEAT_ROLE)
            take_seat(uow, self.dealer, match, chosen, command.name, "human", token, distinct=True)
        version = match_version(uow, match)
        return Outcome(201, match.id, version, chosen, minted={TOKEN: token})

    def answer(
        self, command: JoinByInvite, who: Signed | Guest, outcome: Outcome, state: Reading
    ) -> PlayerSeat:
        return _seat_answer(outcome, state)

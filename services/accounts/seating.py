"""Seating a player: the match's ``SeatTaken`` (with the player's account, so the name is
sealed under their key) and, when the fourth seat fills, round 1 dealt (R16) — as a guest's
or a bot's seat is taken (:mod:`services.match_commands`), in the command's one save."""

from __future__ import annotations

from uuid import UUID

from domain.accounts.account import Account
from domain.game.match import Match
from domain.game.round import Round
from domain.rules.errors import IllegalMoveError
from services.access import Credential, seat_in
from services.accounts.players import account_holder
from services.dealer import Dealer
from services.errors import ForbiddenError, NotFoundError
from services.game import GameService
from services.sources import SEAT_ROLE, new_token, token_hash
from services.unit_of_work import UnitOfWork


def open_if_seated(uow: UnitOfWork, dealer: Dealer, match: Match) -> Round | None:
    """Round 1 begun and dealt once the fourth seat is taken (R16), in the same save."""
    if not match.seated:
        return None
    first = dealer.begin_round(uow, match, uow.now)
    uow.add(first)
    return first


def refuse_a_seated_guest(service: GameService, match: Match, cred: Credential | None) -> None:
    """R1 for a guest: a guest has no account and is known only by the seat token it holds
    (docs/players.md). A seat token of ``match`` presented to take another seat of it is
    409 ``already-seated`` (401 when no seat holds it); any other credential, or none, is
    no tie to this match."""
    if cred is None or cred.role != SEAT_ROLE or cred.owner != match.id:
        return
    held = seat_in(service, match, cred)
    raise IllegalMoveError(
        f"R1: one seat per person in a match; your seat token is seat {held}'s of match {match.id}",
        rule="R1",
        code="already-seated",
    )


def check_admitted(
    match: Match, seat: int, *, organiser: bool = False, invited: bool = False, holder: str = ""
) -> None:
    """403 unless the caller may take free ``seat`` (docs/decisions.md D-table-life): a
    rematch's seat only by the person it is kept for (``holder``); a private table's only
    with an invite code or by the organiser — to anyone else it is 404, in the words of a
    match that does not exist (docs/decisions.md D-hidden: a 403 would confirm it does)."""
    kept = match.reserved[seat] if type(seat) is int and 0 <= seat <= 3 else ""
    if match.private and not (organiser or invited or (kept and holder == kept)):
        raise NotFoundError(f"no match {match.id}")
    if kept and holder != kept:
        raise ForbiddenError(
            f"seat {seat} of this rematch is kept for the one who held it in match "
            f"{match.rematch_of}"
        )


def free_seats(match: Match) -> list[int]:
    """The seats anyone admitted may take: free and kept for no one."""
    return [s for s in range(4) if match.seats[s] is None and not match.reserved[s]]


def claim_seat(
    uow: UnitOfWork,
    dealer: Dealer,
    account: Account,
    match: Match,
    seat: int,
    *,
    invited: bool = False,
    session_id: UUID | None = None,
    distinct: bool = False,
) -> str:
    """The player takes ``seat`` (R1) under their display name; answers a seat token
    (the player token acts for the seat too, from any device), minted through the player's
    session ``session_id``: it works while that session does (docs/players.md).
    ``invited``: with an invite code (a private table's seats). Round 1 is dealt when it
    was the fourth seat. ``distinct``: the player chose this table (their name may not
    look like another seat's, :func:`domain.names.check_apart`)."""
    check_admitted(match, seat, invited=invited, holder=account_holder(account.id))
    account.claim_seat(match.id, seat, uow.now)  # refuses a second seat (R1)
    token = new_token(match.id, SEAT_ROLE)
    digest = token_hash(token)
    name = account.display_name
    match.take_seat(seat, name, "human", digest, uow.now, account.id, session_id, distinct=distinct)
    open_if_seated(uow, dealer, match)
    return token

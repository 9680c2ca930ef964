"""Seating a player: the match's ``SeatTaken`` (with the player's account, so the name is
sealed under their key) and, when the fourth seat fills, round 1 dealt (R16) — as
``GameService.take_seat`` does for guests and bots, in the same one save."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any
from uuid import UUID

from domain.accounts.account import Account
from domain.game.match import Match
from domain.game.round import Round
from services.accounts.store import save_all
from services.commands import Attach, CommandResult, Pending
from services.errors import ForbiddenError
from services.game import GameService
from services.sources import SEAT_ROLE, new_token, token_hash


def open_first_round(service: GameService, match: Match, now: datetime) -> Round:
    """Round 1 of a match whose fourth seat just filled, dealt from a fresh seed (R35)."""
    match.begin_round(now)
    first = Round.start(match.id, match.round_number, match.rules, match.levels, match.dealer, now)
    first.deal(service.seeds(), now, service.pacing)  # R16
    return first


def result(match: Match, current: Round | None) -> CommandResult:
    return CommandResult(
        match.id,
        match.version,
        None if current is None else current.id,
        None if current is None else current.version,
        match.sequence(0 if current is None else current.version),
        match,
        current,
    )


def account_holder(account_id: UUID) -> str:
    """A rematch seat kept for a player's account (``MatchCreated.reserved``)."""
    return f"account:{account_id.hex}"


def token_holder(digest: str) -> str:
    """A rematch seat kept for a guest: the hash of their seat token of the first match."""
    return f"token:{digest}"


def check_admitted(
    match: Match, seat: int, *, organiser: bool = False, invited: bool = False, holder: str = ""
) -> None:
    """403 unless the caller may take free ``seat`` (docs/decisions.md D-table-life): a
    rematch's seat only by the person it is kept for (``holder``); a private table's only
    with an invite code or by the organiser."""
    kept = match.reserved[seat] if type(seat) is int and 0 <= seat <= 3 else ""
    if kept:
        if holder != kept:
            raise ForbiddenError(
                f"seat {seat} of this rematch is kept for the one who held it in match "
                f"{match.rematch_of}"
            )
        return
    if match.private and not (organiser or invited):
        raise ForbiddenError(
            f"match {match.id} is a private table: take a seat with an invite code "
            "(POST /v1/invites/{code})"
        )


def free_seats(match: Match) -> list[int]:
    """The seats anyone admitted may take: free and kept for no one."""
    return [s for s in range(4) if match.seats[s] is None and not match.reserved[s]]


def claim_seat(
    service: GameService,
    account: Account,
    match_id: UUID,
    seat: int,
    *,
    attach: Attach | None = None,
    invited: bool = False,
    match: Match | None = None,
    also: Sequence[Any] = (),
) -> tuple[str, CommandResult]:
    """The player takes ``seat`` (R1) under their display name; answers a seat token
    (the player token acts for the seat too, from any device). ``invited``: with an
    invite code (a private table's seats); ``match``: as the caller loaded it; ``also``:
    saved first, in the same save."""
    now = service.clock()
    match = match or service.get_match(match_id)
    check_admitted(match, seat, invited=invited, holder=account_holder(account.id))
    account.claim_seat(match_id, seat, now)  # refuses a second seat (R1)
    token = new_token(match_id, SEAT_ROLE)
    match.take_seat(seat, account.display_name, "human", token_hash(token), now, account.id)
    first = open_first_round(service, match, now) if match.seated else None
    done = result(match, first)
    extras: Sequence[Any] = attach(Pending(done, match, first)) if attach is not None else ()
    save_all(service, *also, match, *([first] if first else []), account, *extras)
    return token, done

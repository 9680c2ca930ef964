"""Private tables: invite codes (docs/players.md).

``create_invite`` draws a code from the OS's CSPRNG (:data:`CODE_ALPHABET`, 8 characters,
40 bits) and saves the :class:`~domain.accounts.invite.Invite` whose id the code names; a
code already taken conflicts on the store's version 1 and another is drawn. ``join``
seats the caller at the lowest free seat (R1) — a player by their account (the seat and
the account's ``SeatClaimed`` in one save), anyone else under the name they give; two
callers racing for one seat conflict on the match's version and the loser tries the next
free seat.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError
from eventsourcing.persistence import IntegrityError

from domain.accounts.account import Account
from domain.accounts.invite import CODE_ALPHABET, CODE_LENGTH, Invite, invite_id
from domain.rules.errors import IllegalMoveError
from services.accounts.players import get_account
from services.accounts.seating import check_admitted, claim_seat, free_seats
from services.accounts.store import forget
from services.commands import Attach, CommandResult
from services.errors import NotFoundError, VersionConflictError
from services.game import GameService
from services.sources import SEAT_ROLE, new_token

ATTEMPTS = 8


def new_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def create_invite(
    service: GameService,
    match_id: UUID,
    by: str,
    ttl: timedelta,
    *,
    extras: Callable[[str, Invite], list[Any]] | None = None,
) -> tuple[str, Invite]:
    """A new code for ``match_id`` (which must be open: R32); the table becomes private
    with it (``TableMadePrivate``, in the same save: docs/decisions.md D-table-life)."""
    for _ in range(ATTEMPTS):
        match = service.get_match(match_id)
        now = service.clock()
        match.make_private(now)  # refused once the match is over (R32)
        code = new_code()
        invite = Invite.create(code, match_id, ttl, by, now)
        try:
            service.save(
                *([match] if match.pending_events else []),
                invite,
                *(extras(code, invite) if extras else ()),
            )
        except IntegrityError:
            forget(service, match_id)
            continue  # the code is taken, or the match moved on: draw another
        return code, invite
    raise VersionConflictError("no free invite code was drawn; try again")  # pragma: no cover


def find_invite(service: GameService, code: str) -> Invite:
    try:
        found: Any = service.repository.get(invite_id(code))
    except AggregateNotFoundError:
        raise NotFoundError("no invite with this code") from None
    if not isinstance(found, Invite):
        raise NotFoundError("no invite with this code")  # pragma: no cover
    return found


@dataclass(frozen=True, slots=True)
class Joined:
    match_id: UUID
    seat: int
    token: str
    result: CommandResult


def join(
    service: GameService,
    code: str,
    *,
    name: str | None,
    account_id: UUID | None,
    attach: Callable[[int], Attach | None],
    seat: int | None = None,
) -> Joined:
    """Seat the caller at ``seat`` of the invite's match (a friend sits as partner, R2;
    409 ``seat-taken`` when it is), or at the lowest free seat (R1)."""
    invite = find_invite(service, code)
    invite.check_open(service.clock())
    for _ in range(ATTEMPTS):
        match = service.get_match(invite.match_id)
        if match.finished:
            raise IllegalMoveError("the match is over", rule="R32", code="match-finished")
        free = free_seats(match)
        if seat is None and not free:
            raise IllegalMoveError(
                "R1: the table has four players already", rule="R1", code="no-free-seat"
            )
        chosen = free[0] if seat is None else seat
        check_admitted(match, chosen, invited=True)  # a rematch's kept seat: 403
        try:
            if account_id is not None:
                account: Account = get_account(service, account_id)
                token, done = claim_seat(
                    service,
                    account,
                    invite.match_id,
                    chosen,
                    attach=attach(chosen),
                    invited=True,
                    match=match,
                )
            else:
                token = new_token(invite.match_id, SEAT_ROLE)
                _, done = service.take_seat(
                    invite.match_id, chosen, name or "", token=token, attach=attach(chosen)
                )
        except VersionConflictError:
            continue  # someone took a seat (or the account changed) first: look again
        return Joined(invite.match_id, chosen, token, done)
    raise VersionConflictError("the table kept changing; try again")  # pragma: no cover

"""A table's life after it is made: who may sit at a private table, leaving a seat,
resigning, and the rematch (docs/decisions.md D-table-life).

* **Private tables** (``visibility: private``, or made private by an invite code): never
  listed; a free seat is taken only with an invite code or by the organiser
  (:func:`check_admitted`). A rematch keeps each seat for its holder (``reserved``).
* **Leaving** (:func:`leave`): the player's seat is played by a bot for the rest of the
  match (before round 1 it is free again); the match's ``SeatLeft`` and the account's
  ``MatchLeft`` in one save. The table goes on.
* **Resigning** (:func:`resign`, R32): a seat resigns for its team; the team concedes once
  each of its seats held by a person has resigned (a bot partner concedes with them): the
  match ends, the round in play is abandoned unscored, the other team wins.
* **Rematch** (:func:`rematch`): after a finished match any of its seats (or its
  organiser) opens the rematch — a new match, same rules, turn limits and visibility, each
  bot (and each seat left, now a bot's) seated at once and each person's seat kept for
  them. Every person confirms by asking for the rematch too (their own ``SeatTaken``
  there); when the last one has, the fourth seat fills and round 1 is dealt (R16).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final
from uuid import UUID, uuid4

from domain.accounts.account import Account
from domain.game.match import RESIGNED, Match
from domain.game.round import RoundPhase
from domain.rules.errors import IllegalMoveError
from services.accounts.players import get_account
from services.accounts.seating import (
    account_holder,
    check_admitted,
    claim_seat,
    open_first_round,
    result,
    token_holder,
)
from services.accounts.store import save_all
from services.commands import CommandResult
from services.errors import VersionConflictError
from services.game import GameService
from services.sources import ORGANISER_ROLE, SEAT_ROLE, new_token, token_hash

ATTEMPTS: Final = 8
ORGANISER: Final = "organiser"
Records = Callable[[CommandResult], Sequence[Any]]
"""What a write saves with its events, given its result (an idempotency record)."""


# -- leaving -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Left:
    seat: int
    replaced_by: str | None
    """The bot that plays the seat now; None: the seat is free again (before round 1)."""
    result: CommandResult


def leave(
    service: GameService, account_id: UUID, match_id: UUID, bot: str, records: Records
) -> Left:
    """The player leaves their seat in ``match_id``; the bot ``bot`` takes it."""
    for _ in range(ATTEMPTS):
        now = service.clock()
        account = get_account(service, account_id)
        seat = account.seats.get(match_id)
        if seat is None:
            where = "left" if match_id in account.left else "hold no seat in"
            raise IllegalMoveError(f"you {where} match {match_id}", rule="R1", code="not-seated")
        match = service.get_match(match_id)
        replaced_by = match.leave(seat, bot, now)
        account.leave(match_id, now)
        done = result(match, service.current_round(match))
        try:
            save_all(service, match, account, *records(done))
        except VersionConflictError:
            continue  # a move (a bot's) was saved first: leave the table as it is now
        return Left(seat, replaced_by, done)
    raise VersionConflictError("the table kept changing; try again")  # pragma: no cover


# -- resigning -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Resignation:
    ended: bool
    waiting_for: list[int]
    """The partner seats whose resignation is still needed (R32)."""
    result: CommandResult


def resign(service: GameService, match_id: UUID, seat: int, records: Records) -> Resignation:
    """R32: ``seat`` resigns for its team (the module docstring)."""
    for _ in range(ATTEMPTS):
        now = service.clock()
        match = service.get_match(match_id)
        current = service.current_round(match)
        ended = match.resign(seat, now)
        if ended and current is not None and current.phase not in _OVER:
            current.abandon(RESIGNED, now)  # saved with MatchFinished
        done = result(match, current)
        try:
            save_all(service, match, *([current] if ended and current else []), *records(done))
        except VersionConflictError:
            continue
        waiting = [s for s in match.humans(seat % 2) if s not in match.resigned]
        return Resignation(ended, waiting, done)
    raise VersionConflictError("the table kept changing; try again")  # pragma: no cover


_OVER: Final = (RoundPhase.SCORED, RoundPhase.ABANDONED)


def resign_team(service: GameService, match_id: UUID, team: int) -> None:
    """``team`` concedes (R32): each of its people resigns (the first seat of a team of
    bots) — a record's end replayed (``services.records.replay``)."""
    match = service.get_match(match_id)
    seats = match.humans(team) or [team]
    for seat in seats:
        if resign(service, match_id, seat, lambda _: ()).ended:
            return


# -- the rematch ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Caller:
    """Who asks for a rematch: a seat of the finished match — a player's account or the
    hash of a guest's seat token — or its organiser (``seat`` None)."""

    seat: int | None
    account_id: UUID | None = None
    token_digest: str = ""


@dataclass(frozen=True, slots=True)
class Rematched:
    match_id: UUID
    seat: int | None
    token: str | None
    """The caller's seat token there (shown once); the organiser's token for an organiser
    who opened the rematch; None for an organiser after that."""
    organiser: bool
    waiting_for: list[int]
    """Seats kept for people who have not confirmed yet; empty: round 1 is dealt."""
    result: CommandResult


def rematch(service: GameService, match_id: UUID, caller: Caller, records: Records) -> Rematched:
    """Open the rematch of finished ``match_id`` or confirm the caller's seat in it."""
    for _ in range(ATTEMPTS):
        first = service.get_match(match_id)
        if first.tournament_id is not None:
            raise IllegalMoveError(
                "a tournament table's next match is paired by its tournament (R36)",
                rule="R36",
                code="tournament-table",
            )
        try:
            if first.rematch is None:
                return _open(service, first, caller, records)
            return _confirm(service, service.get_match(first.rematch), caller, records)
        except VersionConflictError:
            continue  # another seat opened or confirmed first: look again
    raise VersionConflictError("the table kept changing; try again")  # pragma: no cover


def _open(service: GameService, first: Match, caller: Caller, records: Records) -> Rematched:
    now = service.clock()
    rematch_id = uuid4()
    organiser_token = new_token(rematch_id, ORGANISER_ROLE) if caller.seat is None else None
    kept = []
    for seat, info in enumerate(first.seats):
        account = first.accounts.get(seat)
        if info is None or info.kind != "human":
            kept.append("")
        elif account is not None:
            kept.append(account_holder(account))
        else:
            kept.append(token_holder(info.token_hash))
    match = Match.create(
        first.rules,
        now,
        name=first.name,
        preset=first.preset,
        match_id=rematch_id,
        organiser_token_hash=token_hash(organiser_token) if organiser_token else "",
        timers=first.timers,
        visibility=first.visibility,
        rematch_of=first.id,
        reserved=kept,
    )
    for seat, info in enumerate(first.seats):
        if info is not None and info.kind != "human":
            name = f"{info.kind} bot {seat}" if seat in first.left else info.name
            digest = token_hash(new_token(rematch_id, SEAT_ROLE))  # a bot's: never shown
            match.take_seat(seat, name, info.kind, digest, now)
    first.offer_rematch(rematch_id, caller.seat, now)
    if caller.seat is None:
        round1 = open_first_round(service, match, now) if match.seated else None
        done = result(match, round1)
        save_all(service, first, match, *([round1] if round1 else []), *records(done))
        return Rematched(rematch_id, None, organiser_token, True, waiting_for(match), done)
    return _take(service, match, caller, records, also=(first,))


def _confirm(service: GameService, match: Match, caller: Caller, records: Records) -> Rematched:
    if caller.seat is None:
        done = result(match, service.current_round(match))
        return Rematched(match.id, None, None, True, waiting_for(match), done)
    if match.seats[caller.seat] is not None:
        raise IllegalMoveError(
            f"you confirmed seat {caller.seat} of rematch {match.id} already",
            rule="R1",
            code="rematch-confirmed",
        )
    return _take(service, match, caller, records, also=())


def _take(
    service: GameService, match: Match, caller: Caller, records: Records, *, also: Sequence[Any]
) -> Rematched:
    """The caller's confirmation: their kept seat taken (and round 1 dealt when it is the
    last one), saved with ``also`` (the first match's ``RematchOffered``)."""
    seat = caller.seat
    assert seat is not None
    now = service.clock()
    if caller.account_id is not None:
        account: Account = get_account(service, caller.account_id)
        token, done = claim_seat(
            service,
            account,
            match.id,
            seat,
            attach=lambda pending: records(pending.result),
            match=match,
            also=also,
        )
        return Rematched(match.id, seat, token, False, waiting_for(match), done)
    check_admitted(match, seat, holder=token_holder(caller.token_digest))
    token = new_token(match.id, SEAT_ROLE)
    info = _first_seat_name(service, match, seat)
    match.take_seat(seat, info, "human", token_hash(token), now)
    round1 = open_first_round(service, match, now) if match.seated else None
    done = result(match, round1)
    save_all(service, *also, match, *([round1] if round1 else []), *records(done))
    return Rematched(match.id, seat, token, False, waiting_for(match), done)


def _first_seat_name(service: GameService, match: Match, seat: int) -> str:
    """A guest's name in the first match (the rematch seats them under it)."""
    assert match.rematch_of is not None
    info = service.get_match(match.rematch_of).seats[seat]
    return info.name if info is not None else "guest"


def waiting_for(match: Match) -> list[int]:
    return [s for s in range(4) if match.reserved[s] and match.seats[s] is None]

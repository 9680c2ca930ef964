"""A table's life after it is made: who may sit at a private table, leaving a seat,
resigning, and the rematch (docs/decisions.md D-table-life) — decided on a command's unit
of work (:mod:`services.unit_of_work`), saved by the bus in one save.

* **Private tables** (``visibility: private``, or made private by an invite code): never
  listed; a free seat is taken only with an invite code or by the organiser
  (:func:`services.accounts.seating.check_admitted`). A rematch keeps each seat for its
  holder (``reserved``).
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

from dataclasses import dataclass
from typing import Final
from uuid import UUID, uuid4

from domain.accounts.account import Account
from domain.game.match import RESIGNED, Match
from domain.game.round import RoundPhase
from domain.rules.errors import IllegalMoveError
from services.accounts.players import account_holder, token_holder
from services.accounts.seating import check_admitted, claim_seat, open_if_seated
from services.dealer import Dealer
from services.sources import ORGANISER_ROLE, SEAT_ROLE, new_token, token_hash
from services.unit_of_work import UnitOfWork

ORGANISER: Final = "organiser"
OVER: Final = (RoundPhase.SCORED, RoundPhase.ABANDONED)


# -- leaving -------------------------------------------------------------------------------------


def leave(uow: UnitOfWork, account: Account, match_id: UUID, bot: str) -> tuple[int, str | None]:
    """The player leaves their seat in ``match_id``; the bot ``bot`` takes it. Answers the
    seat and the bot that plays it now (None: the seat is free again, before round 1)."""
    seat = account.seats.get(match_id)
    if seat is None:
        where = "left" if match_id in account.left else "hold no seat in"
        raise IllegalMoveError(f"you {where} match {match_id}", rule="R1", code="not-seated")
    match = uow.match(match_id)
    replaced_by = match.leave(seat, bot, uow.now)
    account.leave(match_id, uow.now)
    return seat, replaced_by


# -- resigning -----------------------------------------------------------------------------------


def resign(uow: UnitOfWork, match_id: UUID, seat: int) -> Match:
    """R32: ``seat`` resigns for its team (the module docstring); the match as it left it."""
    match = uow.match(match_id)
    current = uow.current_round(match)
    ended = match.resign(seat, uow.now)
    if ended and current is not None and current.phase not in OVER:
        current.abandon(RESIGNED, uow.now)  # saved with MatchFinished
    return match


def waiting_to_resign(match: Match, seat: int) -> list[int]:
    """The partner seats of ``seat`` whose resignation is still needed (R32); none once the
    match is over."""
    if match.finished:
        return []
    return [s for s in match.humans(seat % 2) if s not in match.resigned]


# -- the rematch ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Caller:
    """Who asks for a rematch: a seat of the finished match — a player's account or the
    hash of a guest's seat token — or its organiser (``seat`` None)."""

    seat: int | None
    account_id: UUID | None = None
    token_digest: str = ""
    session_id: UUID | None = None
    """The player's session the caller's credential answers to (the rematch's seat token
    is minted through it, docs/players.md)."""


@dataclass(frozen=True, slots=True)
class Rematched:
    match: Match
    """The rematch, as the command left it."""
    token: str | None
    """The caller's seat token there (shown once); the organiser's token for an organiser
    who opened the rematch; None for an organiser after that."""


def rematch(uow: UnitOfWork, dealer: Dealer, match_id: UUID, caller: Caller) -> Rematched:
    """Open the rematch of finished ``match_id`` or confirm the caller's seat in it."""
    first = uow.match(match_id)
    if first.tournament_id is not None:
        raise IllegalMoveError(
            "a tournament table's next match is paired by its tournament (R36)",
            rule="R36",
            code="tournament-table",
        )
    if first.rematch is None:
        return _open(uow, dealer, first, caller)
    return _confirm(uow, dealer, uow.match(first.rematch), caller)


def _open(uow: UnitOfWork, dealer: Dealer, first: Match, caller: Caller) -> Rematched:
    now = uow.now
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
        talk=first.talk,
    )
    uow.add(match)
    for seat, info in enumerate(first.seats):
        if info is not None and info.kind != "human":
            name = f"{info.kind} bot {seat}" if seat in first.left else info.name
            digest = token_hash(new_token(rematch_id, SEAT_ROLE))  # a bot's: never shown
            match.take_seat(seat, name, info.kind, digest, now)
    first.offer_rematch(rematch_id, caller.seat, now)
    if caller.seat is None:
        open_if_seated(uow, dealer, match)
        return Rematched(match, organiser_token)
    return _take(uow, dealer, match, caller)


def _confirm(uow: UnitOfWork, dealer: Dealer, match: Match, caller: Caller) -> Rematched:
    if caller.seat is None:
        return Rematched(match, None)
    if match.seats[caller.seat] is not None:
        raise IllegalMoveError(
            f"you confirmed seat {caller.seat} of rematch {match.id} already",
            rule="R1",
            code="rematch-confirmed",
        )
    return _take(uow, dealer, match, caller)


def _take(uow: UnitOfWork, dealer: Dealer, match: Match, caller: Caller) -> Rematched:
    """The caller's confirmation: their kept seat taken (and round 1 dealt when it is the
    last one)."""
    seat = caller.seat
    assert seat is not None
    if caller.account_id is not None:
        account = uow.get(caller.account_id, Account, "player")
        token = claim_seat(uow, dealer, account, match, seat, session_id=caller.session_id)
        return Rematched(match, token)
    check_admitted(match, seat, holder=token_holder(caller.token_digest))
    token = new_token(match.id, SEAT_ROLE)
    match.take_seat(seat, _first_seat_name(uow, match, seat), "human", token_hash(token), uow.now)
    open_if_seated(uow, dealer, match)
    return Rematched(match, token)


def _first_seat_name(uow: UnitOfWork, match: Match, seat: int) -> str:
    """A guest's name in the first match (the rematch seats them under it)."""
    assert match.rematch_of is not None
    info = uow.match(match.rematch_of).seats[seat]
    return info.name if info is not None else "guest"


def waiting_for(match: Match) -> list[int]:
    """The rematch's seats kept for people who have not confirmed yet."""
    return [s for s in range(4) if match.reserved[s] and match.seats[s] is None]

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


def claim_seat(
    service: GameService,
    account: Account,
    match_id: UUID,
    seat: int,
    *,
    attach: Attach | None = None,
) -> tuple[str, CommandResult]:
    """The player takes ``seat`` (R1) under their display name; answers a seat token
    (the player token acts for the seat too, from any device)."""
    now = service.clock()
    account.claim_seat(match_id, seat, now)  # refuses a second seat (R1)
    match = service.get_match(match_id)
    token = new_token(match_id, SEAT_ROLE)
    match.take_seat(seat, account.display_name, "human", token_hash(token), now, account.id)
    first = open_first_round(service, match, now) if match.seated else None
    done = result(match, first)
    extras: Sequence[Any] = attach(Pending(done, match, first)) if attach is not None else ()
    save_all(service, match, *([first] if first else []), account, *extras)
    return token, done

"""Accounts: create, sessions (open, rotate, end), seats claimed by a player, a fresh seat
token, and the account's matches with whose turn it is (docs/players.md).

A player token is ``p.<account id hex>.<secret>`` (:func:`services.sources.new_token`),
shown once; the account's session keeps only its sha256. Seats: a player's claim saves
the match's ``SeatTaken`` and the account's ``SeatClaimed`` in **one** ``save`` (the
game's own :class:`~services.game.GameService`), so neither exists without the other.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any
from uuid import UUID, uuid4

from domain.accounts.account import Account
from services.accounts.keys import KeyStore, Sealer
from services.accounts.store import forget, save_all
from services.codec import MsgspecMapper
from services.errors import NotFoundError
from services.game import GameService
from services.loading import load
from services.sources import PLAYER_ROLE, SEAT_ROLE, new_token, token_hash


@dataclass(frozen=True, slots=True)
class Signed:
    """A verified player token: the account (as loaded) and the token's session."""

    account: Account
    session_id: UUID


def get_account(service: GameService, account_id: UUID) -> Account:
    return load(service, account_id, Account, "player")


def create_player(
    service: GameService,
    display_name: str,
    locale: str,
    label: str = "",
    *,
    account_id: UUID | None = None,
    extras: Sequence[Any] = (),
) -> tuple[Account, str]:
    """A new account and its first session; answers the player token (shown once)."""
    account_id = account_id or uuid4()
    token = new_token(account_id, PLAYER_ROLE)
    account = Account.create(
        account_id, display_name, locale, uuid4(), token_hash(token), label, service.clock()
    )
    service.save(account, *extras)
    return account, token


def open_session(service: GameService, account: Account, label: str) -> tuple[UUID, str]:
    """Another device's session: a new token beside the others."""
    session_id = uuid4()
    token = new_token(account.id, PLAYER_ROLE)
    account.open_session(session_id, token_hash(token), label, service.clock())
    service.save(account)
    return session_id, token


def rotate(service: GameService, signed: Signed) -> str:
    """A new token for the caller's session; the one used for this call stops working."""
    token = new_token(signed.account.id, PLAYER_ROLE)
    signed.account.rotate(signed.session_id, token_hash(token), service.clock())
    service.save(signed.account)
    return token


def end_session(service: GameService, account: Account, session_id: UUID) -> None:
    account.end_session(session_id, service.clock())
    service.save(account)


def fresh_seat_token(
    service: GameService,
    account: Account,
    match_id: UUID,
    records: Callable[[int, int], Sequence[Any]] | None = None,
) -> tuple[int, str, int]:
    """A new seat token for the player's seat in ``match_id``; the old one stops working.
    ``records(seat, version)``: what to save with it (an idempotency record). Answers the
    seat, the token and the match version after it."""
    seat = account.seats.get(match_id)
    if seat is None:
        raise NotFoundError(f"you hold no seat in match {match_id}")
    match = service.get_match(match_id)
    token = new_token(match_id, SEAT_ROLE)
    match.reissue_token(seat, token_hash(token), service.clock())
    current = service.current_round(match)
    version = match.sequence(0 if current is None else current.version)
    save_all(service, match, *(records(seat, version) if records else ()))
    return seat, token, version


def seat_for(account: Account, match_id: UUID) -> int | None:
    """The seat the account holds in ``match_id`` (its player token acts for it)."""
    return account.seats.get(match_id)


def personal_sealer(service: GameService) -> Sealer | None:
    """The sealer of the service's personal fields, if it has one."""
    mapper = service.mapper
    return mapper.sealer if isinstance(mapper, MsgspecMapper) else None


def seal_personal_data(service: GameService, keys: KeyStore) -> None:
    """From now on, the service's events store personal fields sealed under the players'
    keys (crypto-shredding); the composition root calls it once, before any save."""
    mapper = service.mapper
    assert isinstance(mapper, MsgspecMapper)
    mapper.sealer = Sealer(keys)


def erase(service: GameService, account: Account) -> None:
    """Forget the person: destroy their key first (their names in the history now read
    as erased, whatever happens next), then record the erasure (every session ends) and
    drop the cached copies that still hold the name in memory."""
    sealer = personal_sealer(service)
    now = service.clock()
    account.erase(now)  # refused when erased already
    if sealer is not None:
        sealer.keys.erase(account.id)
    service.save(account)
    forget(service, account.id, *account.seats, *account.left)  # left ones show the name too

"""Accounts: create, sessions (open, rotate, end), seats claimed by a player, a fresh seat
token, and the account's matches with whose turn it is (docs/players.md).

A player token is ``p.<account id hex>.<secret>`` (:func:`services.sources.new_token`),
shown once; the account's session keeps only its sha256. Seats: a player's claim saves
the match's ``SeatTaken`` and the account's ``SeatClaimed`` in **one** ``save`` (the
game's own :class:`~services.game.GameService`), so neither exists without the other.
"""

from __future__ import annotations

from dataclasses import dataclass
from uuid import UUID

from domain.accounts.account import Account
from services.accounts.keys import KeyStore, Sealer
from services.codec import MsgspecMapper
from services.game import GameService
from services.loading import load


@dataclass(frozen=True, slots=True)
class Signed:
    """A verified player token: the account (as loaded) and the token's session."""

    account: Account
    session_id: UUID


def get_account(service: GameService, account_id: UUID) -> Account:
    return load(service, account_id, Account, "player")


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

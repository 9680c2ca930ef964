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


def account_holder(account_id: UUID) -> str:
    """A rematch seat kept for a player's account (``MatchCreated.reserved``)."""
    return f"account:{account_id.hex}"


def token_holder(digest: str) -> str:
    """A rematch seat kept for a guest: the hash of their seat token of the first match."""
    return f"token:{digest}"

"""Private tables: invite codes (docs/players.md).

:func:`new_code` draws a code from the OS's CSPRNG (:data:`CODE_ALPHABET`, 8 characters, 40
bits); the :class:`~domain.accounts.invite.Invite` whose id the code names is created by
the invite command (:mod:`services.accounts.seat_commands`): a code already taken conflicts
on the store's version 1 and another is drawn. :func:`find_invite` reads a code's invite.
"""

from __future__ import annotations

import secrets
from typing import Any

from eventsourcing.application import AggregateNotFoundError

from domain.accounts.invite import CODE_ALPHABET, CODE_LENGTH, Invite, invite_id
from services.errors import NotFoundError
from services.game import GameService


def new_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def find_invite(service: GameService, code: str) -> Invite:
    try:
        found: Any = service.repository.get(invite_id(code))
    except AggregateNotFoundError:
        raise NotFoundError("no invite with this code") from None
    if not isinstance(found, Invite):
        raise NotFoundError("no invite with this code")  # pragma: no cover
    return found

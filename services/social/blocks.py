"""What stands between two players, as a command reads it (docs/decisions.md D-social):
the pair's :class:`~domain.accounts.friendship.Friendship`, and whether one blocks the
other (the ranked queue never seats such a pair together)."""

from __future__ import annotations

from uuid import UUID

from domain.accounts.friendship import Friendship, friendship_id
from services.unit_of_work import UnitOfWork


def pair(uow: UnitOfWork, me: UUID, other: UUID) -> Friendship | None:
    return uow.find(friendship_id(me, other), Friendship)


def blocked_between(uow: UnitOfWork, a: UUID, b: UUID) -> bool:
    found = pair(uow, a, b)
    return found is not None and found.blocked

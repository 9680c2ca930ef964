"""The ``Invite`` aggregate: a short code that seats whoever has it at a private table.

Its id is derived from the code (:func:`invite_id`), so the code finds its invite with
one read and two invites never share a code (the second save of an id conflicts). An
invite names its match and when it expires; taking a seat with it is the match's own
``SeatTaken`` (R1), so the invite itself records nothing when used.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, ClassVar
from uuid import NAMESPACE_URL, UUID, uuid5

from eventsourcing.domain import Aggregate

from domain.game.base import GameAggregate
from domain.rules.errors import IllegalMoveError, InvalidInputError

CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
"""No 0/O, 1/I: a code read aloud or typed from a screen."""
CODE_LENGTH = 8
MAX_TTL = timedelta(days=30)
NAMESPACE = uuid5(NAMESPACE_URL, "shengji:invite")


def normal_code(code: str) -> str:
    """The code as stored: upper case, without spaces or dashes (``abcd-efgh`` works)."""
    cleaned = code.replace("-", "").replace(" ", "").upper()
    if len(cleaned) != CODE_LENGTH or any(ch not in CODE_ALPHABET for ch in cleaned):
        raise InvalidInputError(
            f"an invite code is {CODE_LENGTH} letters and digits ({CODE_ALPHABET})"
        )
    return cleaned


def invite_id(code: str) -> UUID:
    return uuid5(NAMESPACE, normal_code(code))


class InviteCreated(Aggregate.Created):
    """An invite to ``match_id`` until ``expires_at``; ``by``: who made it (``organiser``
    or ``seat N``)."""

    class_version: ClassVar[int] = 1
    match_id: UUID
    expires_at: datetime
    by: str

    def apply(self, aggregate: Any) -> None:
        invite: Invite = aggregate
        invite.match_id = self.match_id
        invite.expires_at = self.expires_at
        invite.by = self.by


class Invite(GameAggregate):
    if TYPE_CHECKING:
        match_id: UUID
        expires_at: datetime
        by: str

    @classmethod
    def create(cls, code: str, match_id: UUID, ttl: timedelta, by: str, now: datetime) -> Invite:
        if not timedelta(minutes=1) <= ttl <= MAX_TTL:
            raise InvalidInputError("an invite lasts from 1 minute to 30 days")
        return cls._create(
            InviteCreated,
            id=invite_id(code),
            match_id=match_id,
            expires_at=now + ttl,
            by=by,
            timestamp=now,
        )

    def check_open(self, now: datetime) -> None:
        if now >= self.expires_at:
            raise IllegalMoveError(
                f"the invite expired at {self.expires_at.isoformat()}", code="invite-expired"
            )

"""The ``TableInvitation`` aggregate: a player asks a friend to an empty seat of a table
where the inviter sits (docs/players.md "Friends").

It names the match, the seat, both players and when it expires. Accepting seats the
friend with the match's own seat command (saved together with ``InvitationAccepted``);
declining or expiry ends it.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, ClassVar
from uuid import UUID

from eventsourcing.domain import Aggregate

from domain.game.base import GameAggregate
from domain.rules.errors import IllegalMoveError


class TableInvited(Aggregate.Created):
    """``inviter`` asked ``invitee`` to ``seat`` of ``match_id`` until ``expires_at``."""

    class_version: ClassVar[int] = 1
    SECRET_FIELDS: ClassVar[tuple[str, ...]] = ("inviter", "invitee")
    inviter: UUID
    invitee: UUID
    match_id: UUID
    seat: int
    expires_at: datetime

    def apply(self, aggregate: Any) -> None:
        i: TableInvitation = aggregate
        i.inviter, i.invitee = self.inviter, self.invitee
        i.match_id, i.seat, i.expires_at = self.match_id, self.seat, self.expires_at
        i.status = "open"


class InvitationEvent(Aggregate.Event):
    class_version: ClassVar[int] = 1
    status: ClassVar[str] = ""

    def apply(self, aggregate: Any) -> None:
        i: TableInvitation = aggregate
        i.status = self.status


class InvitationAccepted(InvitationEvent):
    """The friend took the seat (the match's ``SeatTaken`` in the same save)."""

    status: ClassVar[str] = "accepted"


class InvitationDeclined(InvitationEvent):
    """The friend said no."""

    status: ClassVar[str] = "declined"


class InvitationWithdrawn(InvitationEvent):
    """Ended without an answer: the inviter withdrew it, the friendship ended (removed or
    a block), or either player was erased."""

    status: ClassVar[str] = "withdrawn"


class TableInvitation(GameAggregate):
    if TYPE_CHECKING:
        inviter: UUID
        invitee: UUID
        match_id: UUID
        seat: int
        expires_at: datetime
        status: str

    @classmethod
    def send(
        cls,
        invitation_id: UUID,
        inviter: UUID,
        invitee: UUID,
        match_id: UUID,
        seat: int,
        ttl: timedelta,
        now: datetime,
    ) -> TableInvitation:
        return cls._create(
            TableInvited,
            id=invitation_id,
            inviter=inviter,
            invitee=invitee,
            match_id=match_id,
            seat=seat,
            expires_at=now + ttl,
            timestamp=now,
        )

    def check_open(self, now: datetime) -> None:
        if self.status != "open":
            raise IllegalMoveError(f"the invitation was {self.status}", code="invitation-closed")
        if now >= self.expires_at:
            raise IllegalMoveError(
                f"the invitation expired at {self.expires_at.isoformat()}",
                code="invitation-expired",
            )

    def accept(self, now: datetime) -> None:
        self.check_open(now)
        self._emit(InvitationAccepted, now)

    def decline(self, now: datetime) -> None:
        self.check_open(now)
        self._emit(InvitationDeclined, now)

    def withdraw(self, now: datetime) -> None:
        if self.status == "open":
            self._emit(InvitationWithdrawn, now)

"""The ``Ticket`` aggregate: one player's place in a lobby's queue (quick play), or in a
family's ranked queue (``family``, with the player's shown rating when it queued).

``waiting`` until the lobby or queue makes a match with it (``matched``: the match and
seat) or the player cancels it (``cancelled``). Saved with the lobby's or queue's events,
in one transaction.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar
from uuid import UUID

from eventsourcing.domain import Aggregate

from domain.game.base import GameAggregate
from domain.rules.errors import IllegalMoveError, InvalidInputError

BOT_KINDS = ("random", "heuristic", "strong")
MAX_BOT_WAIT_MS = 3_600_000


class TicketOpened(Aggregate.Created):
    """Version 2 says whether the ticket is ranked (``family``, the rating it queued
    with); version 1 tickets are casual (:meth:`upcast_v1_v2`)."""

    class_version: ClassVar[int] = 2
    account_id: UUID
    lobby_id: UUID
    preset: str | None
    partner_id: UUID | None
    bots_after_ms: int | None
    bot_kind: str
    family: str | None = None
    """The family of a ranked ticket (its queue's); None: casual quick play."""
    rating: int | None = None
    """A ranked ticket's player's shown rating in the family when it queued."""
    provisional: bool = False

    @staticmethod
    def upcast_v1_v2(state: dict[str, Any]) -> None:
        """A ticket opened before ranked play: casual."""
        state["family"] = None
        state["rating"] = None
        state["provisional"] = False

    def apply(self, aggregate: Any) -> None:
        t: Ticket = aggregate
        t.account_id = self.account_id
        t.lobby_id = self.lobby_id
        t.preset = self.preset
        t.partner_id = self.partner_id
        t.bots_after_ms = self.bots_after_ms
        t.bot_kind = self.bot_kind
        t.family = self.family
        t.rating = self.rating
        t.provisional = self.provisional
        t.status = "waiting"
        t.match_id = None
        t.seat = None


class TicketEvent(Aggregate.Event):
    class_version: ClassVar[int] = 1

    def apply(self, aggregate: Any) -> None:
        self.apply_to(aggregate)

    def apply_to(self, ticket: Ticket) -> None:  # pragma: no cover - every event overrides
        raise NotImplementedError


class TicketMatched(TicketEvent):
    match_id: UUID
    seat: int

    def apply_to(self, ticket: Ticket) -> None:
        ticket.status = "matched"
        ticket.match_id = self.match_id
        ticket.seat = self.seat


class TicketCancelled(TicketEvent):
    def apply_to(self, ticket: Ticket) -> None:
        ticket.status = "cancelled"


class Ticket(GameAggregate):
    if TYPE_CHECKING:
        account_id: UUID
        lobby_id: UUID
        preset: str | None
        partner_id: UUID | None
        bots_after_ms: int | None
        bot_kind: str
        family: str | None
        rating: int | None
        provisional: bool
        status: str
        match_id: UUID | None
        seat: int | None

    @classmethod
    def open(
        cls,
        ticket_id: UUID,
        account_id: UUID,
        lobby_id: UUID,
        preset: str | None,
        partner_id: UUID | None,
        bots_after_ms: int | None,
        bot_kind: str,
        now: datetime,
        *,
        ranked: tuple[str, int, bool] | None = None,
    ) -> Ticket:
        """``ranked``: a ranked ticket's family, and its player's shown rating in it and
        whether that is provisional."""
        if partner_id == account_id:
            raise InvalidInputError("partner: your partner is another player")
        if bots_after_ms is not None and not 0 <= bots_after_ms <= MAX_BOT_WAIT_MS:
            raise InvalidInputError("botsAfterSeconds: 0 to 3600")
        if bot_kind not in BOT_KINDS:
            raise InvalidInputError(f"botKind: one of {', '.join(BOT_KINDS)}")
        return cls._create(
            TicketOpened,
            id=ticket_id,
            account_id=account_id,
            lobby_id=lobby_id,
            preset=preset,
            partner_id=partner_id,
            bots_after_ms=bots_after_ms,
            bot_kind=bot_kind,
            family=None if ranked is None else ranked[0],
            rating=None if ranked is None else ranked[1],
            provisional=False if ranked is None else ranked[2],
            timestamp=now,
        )

    def matched(self, match_id: UUID, seat: int, now: datetime) -> None:
        self._check_waiting()
        self._emit(TicketMatched, now, match_id=match_id, seat=seat)

    def cancel(self, now: datetime) -> None:
        self._check_waiting()
        self._emit(TicketCancelled, now)

    def _check_waiting(self) -> None:
        if self.status != "waiting":
            raise IllegalMoveError(f"the ticket is {self.status}", code="ticket-closed")

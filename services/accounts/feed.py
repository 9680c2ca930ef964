"""What concerns one player, read from the event log (``GET /v1/players/me/stream``).

:class:`PlayerFeed` reads the store's notification log after a position and keeps the
events of the player's account, tickets, matches and those matches' rounds, as frames
whose id is the log position (so a client resumes with ``Last-Event-ID`` exactly where it
stopped, on any replica: docs/decisions.md F9):

* ``ticket`` — a ticket of theirs opened, matched or cancelled;
* ``match-found`` — they were seated (quick play, an invite, a claim);
* ``your-turn`` — after a change of one of their matches, it is their seat's turn (the
  deadline when a turn limit runs, docs/timers.md); one frame per such change;
* ``match-finished`` — one of their matches ended (R32).

A frame tells the state when it is read (a resumed stream's ``your-turn`` is the turn
now, not when the event was stored); the client deduplicates by ``matchId`` and
``version``. Nothing secret: no cards (R33).
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

import msgspec

from domain.accounts.account import Queued, SeatClaimed, Unqueued
from domain.accounts.ticket import TicketCancelled, TicketMatched, TicketOpened
from domain.game.match_events import MatchFinished, RoundBegun
from domain.game.round import round_id
from services.accounts.my_matches import one
from services.accounts.players import get_account
from services.game import GameService

BATCH = 500


class Frame(msgspec.Struct, frozen=True, kw_only=True):
    id: int
    """The event log position (``Last-Event-ID``)."""
    kind: str
    data: dict[str, Any]


class PlayerFeed:
    """A player's frames after ``position`` (one reader per stream, one thread at a time)."""

    def __init__(self, service: GameService, account_id: UUID, position: int) -> None:
        self.service = service
        self.account_id = account_id
        self.position = position
        self.ids: set[UUID] = {account_id}
        self.matches: dict[UUID, int] = {}
        """The player's matches and seats (also those seated after the stream began)."""
        self.rounds: dict[UUID, UUID] = {}
        """Round id → its match (the rounds begun and the next one of each match)."""
        account = get_account(service, account_id)
        if account.ticket is not None:
            self.ids.add(account.ticket)
        for match_id, seat in account.seats.items():
            self._follow(match_id, seat)

    def _follow(self, match_id: UUID, seat: int) -> None:
        self.matches[match_id] = seat
        self.ids.add(match_id)
        match = self.service.get_match(match_id)
        for number in range(1, match.round_number + 2):
            self._round(match_id, number)

    def _round(self, match_id: UUID, number: int) -> None:
        rid = round_id(match_id, number)
        self.rounds[rid] = match_id
        self.ids.add(rid)

    def poll(self) -> list[Frame]:
        """The frames of the log after :attr:`position` (at most a batch of it)."""
        found = self.service.recorder.select_notifications(
            self.position, BATCH, inclusive_of_start=False
        )
        frames: list[Frame] = []
        touched: dict[UUID, int] = {}
        for n in found:
            self.position = n.id
            oid = n.originator_id if isinstance(n.originator_id, UUID) else UUID(n.originator_id)
            if oid not in self.ids:
                continue
            event: Any = self.service.mapper.to_domain_event(n)
            if oid == self.account_id:
                frames.extend(self._account(n.id, event))
            elif oid in self.matches or oid in self.rounds:
                match_id = self.rounds.get(oid, oid)
                touched[match_id] = n.id
                if isinstance(event, RoundBegun):
                    self._round(match_id, event.number + 1)
                elif isinstance(event, MatchFinished):
                    data = {
                        "matchId": str(match_id),
                        "winner": event.winner,
                        "reason": event.reason,
                    }
                    frames.append(Frame(id=n.id, kind="match-finished", data=data))
            else:
                frames.extend(self._ticket(n.id, oid, event))
        for match_id, at in touched.items():
            item = one(self.service, match_id, self.matches[match_id])
            if item.your_turn:
                frames.append(Frame(id=at, kind="your-turn", data=msgspec.to_builtins(item)))
        return sorted(frames, key=lambda f: f.id)

    def _account(self, at: int, event: Any) -> list[Frame]:
        if isinstance(event, Queued | Unqueued):
            self.ids.add(event.ticket_id)  # saved before the ticket's own event
        elif isinstance(event, SeatClaimed):
            if event.ticket_id is not None:
                self.ids.add(event.ticket_id)
            self._follow(event.match_id, event.seat)
            data = {
                "matchId": str(event.match_id),
                "seat": event.seat,
                "ticketId": None if event.ticket_id is None else str(event.ticket_id),
            }
            return [Frame(id=at, kind="match-found", data=data)]
        return []

    @staticmethod
    def _ticket(at: int, ticket_id: UUID, event: Any) -> list[Frame]:
        data: dict[str, Any] = {"ticketId": str(ticket_id)}
        if isinstance(event, TicketOpened):
            data["status"] = "waiting"
        elif isinstance(event, TicketMatched):
            data |= {"status": "matched", "matchId": str(event.match_id), "seat": event.seat}
        elif isinstance(event, TicketCancelled):
            data["status"] = "cancelled"
        else:  # pragma: no cover - a ticket has no other events
            return []
        return [Frame(id=at, kind="ticket", data=data)]


def start_position(service: GameService) -> int:
    """The log's end now: a stream without ``Last-Event-ID`` starts here."""
    return service.recorder.max_notification_id() or 0

"""What concerns one player, read from the event log (``GET /v1/players/me/stream``).

:class:`PlayerFeed` reads the store's notification log after a position and keeps the
events of the player's account, tickets, matches and those matches' rounds, as frames
whose id is the log position (so a client resumes with ``Last-Event-ID`` exactly where it
stopped, on any replica: docs/decisions.md F9):

* ``ticket`` — a ticket of theirs opened, matched or cancelled;
* ``match-found`` — they were seated (quick play, an invite, a claim);
* ``your-turn`` — an event of one of their matches made it their seat's turn (the match
  ``version`` it became so, and the deadline when a turn limit runs, docs/timers.md):
  the feed follows each match event by event (its own copy of the match and the round,
  advanced with the log), so no turn is missed however fast the others move, and the
  frame's ``id`` is the log position of the event that gave the turn;
* ``match-finished`` — one of their matches ended (R32);
* ``rating-changed`` — a rated match moved their rating (the notice the career's policy
  saved once per player and match, docs/decisions.md D-career);
* ``friend-request``, ``friend-accepted``, ``table-invitation`` — a player asked them, a
  player accepted their request, a friend invited them to a seat (docs/decisions.md
  D-social; the words in :mod:`services.social.notices`).

A match is followed as it was at the stream's position (a resumed stream's backlog tells
every turn after ``Last-Event-ID``, exactly); the client may deduplicate by ``matchId``
and ``version``.
Nothing secret: no cards (R33).
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

import msgspec
from eventsourcing.utils import get_topic

from domain.accounts.account import MatchLeft, Queued, SeatClaimed, Unqueued
from domain.accounts.friendship import (
    FriendAccepted,
    FriendRemoved,
    FriendRequested,
    FriendshipErased,
    PlayerBlocked,
    PlayerUnblocked,
)
from domain.accounts.rating_change import RatingChanged
from domain.accounts.table_invitation import TableInvited
from domain.accounts.ticket import TicketCancelled, TicketMatched, TicketOpened
from domain.game.match import Match
from domain.game.match_events import MatchFinished, RoundBegun
from domain.game.round import Round, RoundPhase, round_id
from domain.game.round_events import TurnTimedOut
from services.accounts.my_matches import item
from services.accounts.players import get_account
from services.career.notice import notice_data
from services.game import GameService, replay
from services.social.notices import friend_accepted, friend_request, table_invitation
from services.social.reads import name_of

BATCH = 500
_RATING_CHANGED = get_topic(RatingChanged)
_SOCIAL = frozenset(
    get_topic(cls)
    for cls in (
        FriendRequested,
        FriendAccepted,
        FriendRemoved,
        PlayerBlocked,
        PlayerUnblocked,
        FriendshipErased,
        TableInvited,
    )
)


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
        self.tables: dict[UUID, _Table] = {}
        """The player's unfinished matches as followed, event by event (whose turn)."""
        self.friends_changed = False
        """A friendship of the player began or ended since the stream last looked."""
        account = get_account(service, account_id)
        if account.ticket is not None:
            self.ids.add(account.ticket)
        for match_id, seat in account.seats.items():
            self._follow(match_id, seat, position)

    def _follow(self, match_id: UUID, seat: int, at: int) -> None:
        """Follow ``match_id`` as it was at log position ``at`` (a resumed stream's backlog
        tells every turn after it, none passed over), its later events from the log."""
        self.matches[match_id] = seat
        self.ids.add(match_id)
        match = self.service.get_match(match_id)
        rounds = {round_id(match_id, n) for n in range(1, match.round_number + 2)}
        first = self._first_versions(at, {match_id, *rounds})
        if match_id in first:  # created after ``at`` (quick play's save): from its creation
            match = self.service.repository.get(match_id, version=max(1, first[match_id] - 1))
        for number in range(1, match.round_number + 2):
            self._round(match_id, number)
        if not match.finished:
            round_ = self.service.current_round(match)
            if round_ is not None and round_.id in first:
                before = first[round_.id] - 1
                round_ = self.service.repository.get(round_.id, version=before) if before else None
            self.tables[match_id] = _Table(match, round_, seat)

    def _first_versions(self, at: int, ids: set[UUID]) -> dict[UUID, int]:
        """The version of the first event after log position ``at`` of each of ``ids``
        that has one (what the aggregate was at ``at`` is the version before it). Reads
        the log from ``at`` to its end: a stream resumes only from a bounded backlog."""
        found: dict[UUID, int] = {}
        cursor = at
        while True:
            page = self.service.recorder.select_notifications(
                cursor, BATCH, inclusive_of_start=False
            )
            for n in page:
                oid = (
                    n.originator_id if isinstance(n.originator_id, UUID) else UUID(n.originator_id)
                )
                if oid in ids and oid not in found:
                    found[oid] = n.originator_version
            if len(page) < BATCH or len(found) == len(ids):
                return found
            cursor = page[-1].id

    @property
    def playing(self) -> list[UUID]:
        """The matches followed that are not over (their live feeds wake the stream)."""
        return list(self.tables)

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
        for n in found:
            self.position = n.id
            if n.topic == _RATING_CHANGED:
                frames.extend(self._rating(n))
                continue
            if n.topic in _SOCIAL:
                frames.extend(self._social(n))
                continue
            oid = n.originator_id if isinstance(n.originator_id, UUID) else UUID(n.originator_id)
            if oid not in self.ids:
                continue
            event: Any = self.service.mapper.to_domain_event(n)
            if oid == self.account_id:
                frames.extend(self._account(n.id, event))
            elif oid in self.matches or oid in self.rounds:
                match_id = self.rounds.get(oid, oid)
                table = self.tables.get(match_id)
                if table is not None and table.apply(event):
                    frames.append(Frame(id=n.id, kind="your-turn", data=table.turn()))
                if isinstance(event, RoundBegun):
                    self._round(match_id, event.number + 1)
                elif isinstance(event, MatchFinished):
                    data = {
                        "matchId": str(match_id),
                        "winner": event.winner,
                        "reason": event.reason,
                    }
                    frames.append(Frame(id=n.id, kind="match-finished", data=data))
                    self.tables.pop(match_id, None)
            else:
                frames.extend(self._ticket(n.id, oid, event))
        return frames

    def _rating(self, n: Any) -> list[Frame]:
        event = self.service.mapper.to_domain_event(n)
        if not isinstance(event, RatingChanged) or event.player_id != self.account_id:
            return []
        return [Frame(id=n.id, kind="rating-changed", data=notice_data(event))]

    def _social(self, n: Any) -> list[Frame]:
        """A friend's request or acceptance, a table invitation to the player; a change of
        who their friends are marks :attr:`friends_changed` (the stream watches again)."""
        event: Any = self.service.mapper.to_domain_event(n)
        me = self.account_id
        if isinstance(event, TableInvited):
            if event.invitee != me:
                return []
            name = name_of(self.service, event.inviter)
            return [Frame(id=n.id, kind="table-invitation", data=table_invitation(event, name))]
        if me not in (event.by, event.other):
            return []
        self.friends_changed = True
        if event.other != me:
            return []
        if isinstance(event, FriendRequested):
            data = friend_request(event.by, name_of(self.service, event.by))
            return [Frame(id=n.id, kind="friend-request", data=data)]
        if isinstance(event, FriendAccepted):
            data = friend_accepted(event.by, name_of(self.service, event.by))
            return [Frame(id=n.id, kind="friend-accepted", data=data)]
        return []

    def _account(self, at: int, event: Any) -> list[Frame]:
        if isinstance(event, MatchLeft):  # a bot plays the seat now: no more turns
            self.tables.pop(event.match_id, None)
        elif isinstance(event, Queued | Unqueued):
            self.ids.add(event.ticket_id)  # saved before the ticket's own event
        elif isinstance(event, SeatClaimed):
            if event.ticket_id is not None:
                self.ids.add(event.ticket_id)
            self._follow(event.match_id, event.seat, at)
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


_NO_TURN = frozenset(
    (RoundPhase.SCORED, RoundPhase.ABANDONED, RoundPhase.DEALING, RoundPhase.REDEAL)
)


class _Table:
    """One of the player's matches and its round, advanced with the log's events: after
    each, whether it became the player's turn."""

    def __init__(self, match: Match, round_: Round | None, seat: int) -> None:
        self.match = match
        self.round = round_
        self.seat = seat
        self.acting = self._to_act()

    def _to_act(self) -> int | None:
        round_ = self.round
        if self.match.finished or round_ is None or round_.phase in _NO_TURN:
            return None  # over, or cards being drawn: anyone may declare (R16, R17)
        play = round_.play
        playing = round_.phase is RoundPhase.PLAYING and play is not None
        if playing and play is not None and (len(play.trick) == 4 or play.finished):
            # the trick is complete (its winner leads once it is won, R24), or the last
            # one is: the round is scored in the same save (R26)
            return None
        return round_.to_act()

    def apply(self, event: Any) -> bool:
        """Apply ``event`` (one the copies hold already is passed over); True when it made
        it the player's turn: a turn that begins, or the seat to act again after its own
        move (it leads the next trick)."""
        if event.originator_id == self.match.id:
            if event.originator_version <= self.match.version:
                return False
            match = replay(self.match, (event,))
            assert match is not None
            self.match = match
            if isinstance(event, RoundBegun):
                self.round = None
        else:
            known = self.round is not None and self.round.id == event.originator_id
            if known and event.originator_version <= self.round.version:  # type: ignore[union-attr]
                return False
            if not known and event.originator_version != 1:
                return False  # a round this copy began from the store, already past it
            self.round = replay(self.round if known else None, (event,))
        before, self.acting = self.acting, self._to_act()
        mover = None if isinstance(event, TurnTimedOut) else getattr(event, "seat", None)
        return self.acting == self.seat and (before != self.seat or mover == self.seat)

    def turn(self) -> dict[str, Any]:
        """The ``your-turn`` frame's data: the match as the player's list shows it, at the
        version the turn began."""
        data: dict[str, Any] = msgspec.to_builtins(item(self.match, self.round, self.seat))
        return data

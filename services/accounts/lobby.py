"""Quick play (docs/players.md): tickets queue in the lobby of their rule set; four seats'
worth of waiting parties — or the oldest party and bots, once its wait has passed — make
a match, created, seated (partners opposite, R2) and dealt (R16) in the **same save** as
the lobby's ``MatchMade``, the tickets' ``TicketMatched`` and the accounts'
``SeatClaimed``. Two replicas racing over one lobby conflict on its version: one save
wins, the other is retried on the new state, so no ticket ever seats twice.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Final
from uuid import UUID, uuid4

from eventsourcing.utils import get_topic

from domain.accounts.account import Account
from domain.accounts.lobby import (
    Lobby,
    MatchMade,
    TicketLeft,
    TicketQueued,
    Waiting,
    lobby_id,
    plan,
    rules_key,
)
from domain.accounts.ranked_queue import RankedQueue
from domain.accounts.ticket import Ticket
from domain.game.match import Match
from domain.rules.errors import InvalidInputError
from domain.rules.ruleset import MatchEnd, MatchEndKind, RuleSet
from services.accounts.players import get_account
from services.dealer import Dealer
from services.errors import NotFoundError, VersionConflictError
from services.game import GameService
from services.loading import load
from services.social.blocks import blocked_between
from services.sources import SEAT_ROLE, new_token, token_hash
from services.unit_of_work import UnitOfWork, forget

BATCH = 500
QUICK_PLAY = "quick play"


@dataclass(frozen=True, slots=True)
class TicketRequest:
    account_id: UUID
    rules: RuleSet
    preset: str | None
    partner_id: UUID | None
    bots_after_ms: int | None
    bot_kind: str


def get_ticket(service: GameService, ticket_id: UUID) -> Ticket:
    ticket: Ticket = load(service, ticket_id, Ticket, "ticket")
    return ticket


def get_lobby(service: GameService, lid: UUID) -> Lobby | None:
    try:
        lobby: Lobby = load(service, lid, Lobby, "lobby")
    except NotFoundError:
        return None
    return lobby


def quick_play_rules(service: GameService, rules: RuleSet) -> RuleSet:
    """Quick play's rule set: a match end that never comes by itself (``wrap``, R32) is
    the service's preset length (``rounds:N``), so every quick-play match ends."""
    if rules.match_end.kind is not MatchEndKind.WRAP:
        return rules
    length = MatchEnd(MatchEndKind.ROUNDS, service.table.quick_play_rounds)
    return RuleSet.from_mapping({**rules.to_mapping(), "match_end": str(length)})


def queue_ticket(uow: UnitOfWork, dealer: Dealer, req: TicketRequest, ticket_id: UUID) -> Ticket:
    """Queue a ticket in its lobby (opened with it when it is the first), and make a match
    at once when it completes one: the ticket as it will be saved."""
    mapping = quick_play_rules(uow.service, req.rules).to_mapping()
    key = rules_key(mapping, req.preset)
    lid = lobby_id(key)
    if req.partner_id is not None and req.partner_id != req.account_id:
        check_partner(uow.service, req.partner_id)
    now = uow.now
    lobby = uow.find(lid, Lobby)
    if lobby is None:
        lobby = Lobby.open(key, req.preset, mapping, now)
    uow.add(lobby)
    account = uow.get(req.account_id, Account, "player")
    ticket = Ticket.open(
        ticket_id,
        account.id,
        lid,
        req.preset,
        req.partner_id,
        req.bots_after_ms,
        req.bot_kind,
        now,
    )
    uow.add(ticket)
    account.queue(ticket.id, now)
    lobby.queue(
        Waiting(ticket.id, account.id, req.partner_id, now, req.bots_after_ms, req.bot_kind), now
    )
    matchmake(uow, dealer, lobby)
    return ticket


def check_partner(service: GameService, partner_id: UUID) -> None:
    """422 for a partner who is no player, or an erased one: their ticket can never name
    this player, so the ticket would wait for good (a mistyped id, a deleted account)."""
    try:
        partner = get_account(service, partner_id)
    except NotFoundError:
        raise InvalidInputError(
            f"partner: no player {partner_id}; R2: partners are two players who name each other"
        ) from None
    if partner.erased:
        raise InvalidInputError(f"partner: player {partner_id} was erased (R2: no partner)")


def withdraw_ticket(uow: UnitOfWork, account: Account, ticket: Ticket) -> None:
    """The account's waiting ticket cancelled and out of its lobby or ranked queue (refused
    once matched or cancelled); the account's event first: a player's stream learns the
    ticket from it."""
    now = uow.now
    ticket.cancel(now)
    account.unqueue(ticket.id, now)
    uow.add(account, ticket)
    queue = uow.find(ticket.lobby_id, Lobby) or uow.find(ticket.lobby_id, RankedQueue)
    if queue is not None:
        queue.leave(ticket.id, now)
        uow.add(queue)


def owned_ticket(service: GameService, account_id: UUID, ticket_id: UUID) -> Ticket:
    """The account's own ticket (another's is not found: its existence is not shown)."""
    ticket = get_ticket(service, ticket_id)
    if ticket.account_id != account_id:
        raise NotFoundError(f"no ticket {ticket_id}")
    return ticket


def matchmake(uow: UnitOfWork, dealer: Dealer, lobby: Lobby) -> UUID | None:
    """The next match of ``lobby``, if its waiting tickets make one now: the match, its
    first round and the tickets' and accounts' events, in ``uow``; its id, else None."""
    now = uow.now
    seating = plan(lobby.waiting, now, apart=lambda a, b: blocked_between(uow, a, b))
    if seating is None:
        return None
    rules = RuleSet.from_mapping(lobby.rules)
    match = quick_match(uow, rules, lobby.preset, name=QUICK_PLAY)
    for seat, ticket_id, account_id, kind in seating:
        if account_id is None or ticket_id is None:
            digest = token_hash(new_token(match.id, SEAT_ROLE))  # never shown
            match.take_seat(seat, f"{kind} bot {seat}", kind, digest, now)
            continue
        seat_ticket(uow, match, seat, ticket_id, account_id, lobby.id)
    lobby.make_match(match.id, seating, now)
    uow.add(dealer.begin_round(uow, match, now))
    return match.id


def quick_match(
    uow: UnitOfWork, rules: RuleSet, preset: str | None, *, name: str, ranked: bool = False
) -> Match:
    """A quick-play match (casual or ranked), new in ``uow``: always with turn limits, so
    an absent person never stalls it."""
    match = Match.create(
        rules,
        uow.now,
        name=name,
        preset=preset,
        match_id=uuid4(),
        timers=uow.service.table.quick_play_timers,
        ranked=ranked,
    )
    uow.add(match)
    return match


def seat_ticket(
    uow: UnitOfWork, match: Match, seat: int, ticket_id: UUID, account_id: UUID, queue_id: UUID
) -> None:
    """The ticket's player takes ``seat`` (their account claims it, the ticket is matched);
    a ticket closed meanwhile is a version conflict on its lobby or queue (``queue_id``)."""
    now = uow.now
    digest = token_hash(new_token(match.id, SEAT_ROLE))  # never shown: see below
    account = uow.get(account_id, Account, "player")
    ticket = uow.get(ticket_id, Ticket, "ticket")
    if ticket.status != "waiting":
        # The queue was read before another replica's save that closed this ticket (its
        # save would conflict on the queue's version anyway): read both again.
        forget(uow.service, queue_id)
        raise VersionConflictError("the lobby changed meanwhile")
    # The player acts with their player token, or asks for a fresh seat token.
    match.take_seat(seat, account.display_name, "human", digest, now, account.id)
    account.claim_seat(match.id, seat, now, ticket_id=ticket_id)
    ticket.matched(match.id, seat, now)


class Lobbies:
    """The lobbies where a ticket waits for bots, followed through the store's notification
    log (their ``TicketQueued``, ``TicketLeft`` and ``MatchMade``), so every replica finds
    every such lobby, also those changed elsewhere or before it started. A lobby is read
    again only after it changed; one whose tickets are gone (or ask for no bots) is
    forgotten — it costs the sweeper nothing until a ticket queues there again. So the
    sweeper's idle cost is one read of the log's new lobby events, however many lobbies
    were ever opened (docs/decisions.md D-fair)."""

    TOPICS: Final = (get_topic(TicketQueued), get_topic(TicketLeft), get_topic(MatchMade))

    def __init__(self) -> None:
        self.position = 0
        self.changed: set[UUID] = set()
        self.due: dict[UUID, datetime] = {}
        """Lobby → when its oldest party asking for bots may have them."""

    def refresh(self, service: GameService) -> dict[UUID, datetime]:
        top = service.recorder.max_notification_id() or 0
        while self.position < top:
            found = service.recorder.select_notifications(
                self.position, BATCH, stop=top, topics=list(self.TOPICS), inclusive_of_start=False
            )
            for n in found:
                self.changed.add(UUID(str(n.originator_id)))
                self.position = n.id
            if len(found) < BATCH:
                self.position = top  # read to the end: the next read starts there (D-pgcost)
                break
        for lid in self.changed:
            found_lobby = get_lobby(service, lid)
            due = None if found_lobby is None else found_lobby.next_bots_at()
            if due is None:
                self.due.pop(lid, None)
            else:
                self.due[lid] = due
        self.changed.clear()
        return self.due


def due_lobbies(service: GameService, lobbies: Lobbies) -> list[UUID]:
    """The lobbies where a match is due now (bots after a wait)."""
    now = service.clock()
    due = []
    for lid, at in list(lobbies.refresh(service).items()):
        if at <= now:
            lobbies.changed.add(lid)  # read again at the next sweep, whatever happens
            due.append(lid)
    return due

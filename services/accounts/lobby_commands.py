"""Quick play's commands (docs/players.md): queue a ticket, cancel it, and make a lobby's
match that is due (bots after a wait) — with their handlers (:mod:`services.bus`) and the
ticket as a player sees it.

Each is one save: the ticket, the account, the lobby and — when the queue completes a
table — the match, its seats and round 1 (:func:`services.accounts.lobby.matchmake`). Two
replicas racing over one lobby conflict on its version; the handler runs again on the state
that won, so no ticket ever seats twice.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Final, Literal, cast
from uuid import UUID, uuid4

import msgspec
from msgspec import Meta

from domain.accounts.account import Account
from domain.accounts.lobby import Lobby, lobby_id, rules_key
from domain.accounts.ranked_queue import RankedQueue
from domain.accounts.ticket import Ticket
from domain.rules.errors import IllegalMoveError
from domain.rules.ruleset import RuleSet, preset
from services import field_docs
from services.access import signed_player
from services.accounts.lobby import (
    TicketRequest,
    get_lobby,
    matchmake,
    owned_ticket,
    queue_ticket,
    quick_play_rules,
    withdraw_ticket,
)
from services.accounts.players import Signed
from services.accounts.ranked import matchmake_ranked
from services.bus import SERVICE, Caller, Handler, Outcome, Service
from services.dealer import Dealer
from services.errors import ForbiddenError
from services.game import GameService
from services.unit_of_work import Reading, UnitOfWork

ATTEMPTS: Final = 20
"""Runs of a lobby's command against the lobby's version taken first."""
TicketStatus = Literal["waiting", "matched", "cancelled"]


class _Answer(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    pass


class TurnLimits(_Answer, frozen=True, kw_only=True):
    """Turn time limits in ms (docs/timers.md); 0: none."""

    declare_ms: Annotated[int, Meta(description="Each declaring or overcalling turn (R18, R20).")]
    bury_ms: Annotated[int, Meta(description="Burying the bottom (R21).")]
    play_ms: Annotated[int, Meta(description="Each lead or follow (R22, R23).")]


class RatingWindow(_Answer, frozen=True, kw_only=True):
    """The ratings a waiting ranked ticket accepts now (it widens with the wait)."""

    low: Annotated[int, Meta(description="The lowest shown rating accepted (inclusive).")]
    high: Annotated[int, Meta(description="The highest shown rating accepted (inclusive).")]
    width: Annotated[
        int, Meta(description="Its half-width: the ticket's rating ± this many points.")
    ]
    widens_at: Annotated[
        str | None,
        Meta(description="When it widens next, ISO 8601; null: it is as wide as it gets."),
    ]


class RankedTicket(_Answer, frozen=True, kw_only=True):
    """What a ranked ticket queued with and how its wait goes (docs/players.md)."""

    family: Annotated[str, Meta(description="The rule-set family: standard, tuolaji or duijia.")]
    rating: Annotated[
        int, Meta(description="The player's shown rating in the family when the ticket queued.")
    ]
    provisional: Annotated[
        bool, Meta(description="That rating was provisional (its window starts wider).")
    ]
    window: Annotated[
        RatingWindow | None,
        Meta(
            description="The ratings accepted now, while it waits; null once matched or cancelled."
        ),
    ]
    expected_wait_seconds: Annotated[
        int | None,
        Meta(
            description=(
                "The median wait of the tickets of the family's recent ranked matches in "
                "this rating band; null: none yet."
            )
        ),
    ]
    expected_from_matches: Annotated[
        int, Meta(description="How many recent matches the expected wait is taken from.")
    ]


class TicketView(_Answer, frozen=True, kw_only=True):
    """A quick-play ticket: waiting in its lobby, matched (its match and seat) or cancelled."""

    ticket_id: Annotated[str, Meta(description="The ticket's id.")]
    status: Annotated[
        TicketStatus,
        Meta(
            description=(
                "`waiting` in the lobby, `matched` (see `matchId` and `seat`) or `cancelled`."
            )
        ),
    ]
    version: Annotated[int, Meta(description="The ticket's version (the stream's event id).")]
    preset: Annotated[str | None, field_docs.PRESET]
    partner: Annotated[
        str | None,
        Meta(description="The partner's player id (they sit opposite, R2); null for none."),
    ]
    bots_after_seconds: Annotated[
        int | None,
        Meta(
            description=(
                "Bots fill the free seats after the ticket has waited so "
                "long; null: wait for people."
            )
        ),
    ]
    queued_at: Annotated[str, Meta(description="When the ticket was queued, ISO 8601.")]
    match_id: Annotated[
        str | None,
        Meta(
            description="The match made (`matched`): play with the player token.",
            examples=[field_docs.EXAMPLE_ID],
        ),
    ]
    seat: Annotated[int | None, field_docs.SEAT]
    match_end: Annotated[
        str,
        Meta(
            description=(
                "How the match made ends (R32): the rule set's "
                "`finish_at_A` or `rounds:N`; a rule set that would never "
                "end (`wrap`) plays quick play's preset length `rounds:N` "
                "(`QUICK_PLAY_ROUNDS`)."
            ),
            examples=["wrap"],
        ),
    ]
    turn_limits: Annotated[
        TurnLimits,
        Meta(
            description=(
                "The turn limits of the match made: always on in quick "
                "play; a seat over its time is played by the timeout bot "
                "(docs/timers.md)."
            )
        ),
    ]
    ranked: Annotated[
        RankedTicket | None,
        Meta(description="A ranked ticket's rating, window and expected wait; null: casual."),
    ] = None


def ticket_view(
    service: GameService, ticket: Ticket, ranked: RankedTicket | None = None
) -> TicketView:
    """The ticket as its player sees it (its lobby's rules never change); ``ranked``: a
    ranked ticket's part (:mod:`services.accounts.ranked_commands`)."""
    wait = ticket.bots_after_ms
    if ticket.family is not None:
        rules = quick_play_rules(service, preset(ticket.family)).to_mapping()
        match_end = str(rules.get("match_end", ""))
    else:
        found = get_lobby(service, ticket.lobby_id)
        match_end = str(found.rules.get("match_end", "")) if found is not None else ""
    limits = service.table.quick_play_timers
    return TicketView(
        ticket_id=str(ticket.id),
        status=cast("TicketStatus", ticket.status),
        version=ticket.version,
        preset=ticket.preset,
        partner=None if ticket.partner_id is None else str(ticket.partner_id),
        bots_after_seconds=None if wait is None else wait // 1000,
        queued_at=ticket.created_on.isoformat(),
        match_id=None if ticket.match_id is None else str(ticket.match_id),
        seat=ticket.seat,
        match_end=match_end,
        turn_limits=TurnLimits(
            declare_ms=limits.declare_ms, bury_ms=limits.bury_ms, play_ms=limits.play_ms
        ),
        ranked=ranked or _ranked_as_saved(ticket),
    )


def _ranked_as_saved(ticket: Ticket) -> RankedTicket | None:
    """A ranked ticket's part without the wait's figures (a cancelled or matched ticket's
    answer: no window any more)."""
    if ticket.family is None or ticket.rating is None:
        return None
    return RankedTicket(
        family=ticket.family,
        rating=ticket.rating,
        provisional=ticket.provisional,
        window=None,
        expected_wait_seconds=None,
        expected_from_matches=0,
    )


# -- the commands --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class QueueTicket:
    """The caller (a player) queues for quick play: a rule set, a partner who sits opposite
    once their ticket names the caller too (R2), and the wait after which bots may fill the
    free seats."""

    rules: RuleSet
    preset: str | None = None
    partner_id: UUID | None = None
    bots_after_ms: int | None = None
    bot_kind: str = "heuristic"


@dataclass(frozen=True, slots=True)
class CancelTicket:
    """The caller cancels their waiting ticket."""

    ticket_id: UUID


@dataclass(frozen=True, slots=True)
class MakeDueMatch:
    """The match of a lobby (bots after a wait) or of a ranked queue (windows widened), if
    one is due now: the lobby sweeper's, and a ticket's read (its lobby or queue is swept
    first)."""

    lobby_id: UUID


def current_ticket(uow: UnitOfWork, account_id: UUID) -> Ticket | None:
    """The player's quick play now: the ticket waiting, or the ticket whose match goes on
    with the player seated (not left, not finished); None when there is none."""
    account = uow.get(account_id, Account, "player")
    if account.ticket is not None:
        return uow.get(account.ticket, Ticket, "ticket")
    for match_id, ticket_id in account.quick_play.items():
        if match_id in account.seats and not uow.match(match_id).finished:
            return uow.get(ticket_id, Ticket, "ticket")
    return None


def same_request(service: GameService, ticket: Ticket, request: TicketRequest) -> bool:
    """``request`` asks for what ``ticket`` was: its lobby (rules and preset), partner,
    wait and bots."""
    mapping = quick_play_rules(service, request.rules).to_mapping()
    return (
        ticket.lobby_id == lobby_id(rules_key(mapping, request.preset))
        and ticket.partner_id == request.partner_id
        and ticket.bots_after_ms == request.bots_after_ms
        and ticket.bot_kind == request.bot_kind
    )


def _player(service: GameService, caller: Caller) -> Signed:
    if isinstance(caller, Service):
        raise ForbiddenError("a ticket is a player's: the player's token is needed")
    return signed_player(service, caller)


def _ticket(outcome: Outcome, state: Reading, service: GameService) -> TicketView:
    return ticket_view(service, state.get(outcome.subject, Ticket, "ticket", outcome.version))


# -- the handlers --------------------------------------------------------------------------------


class QueueTicketHandler(Handler[QueueTicket, Signed, TicketView]):
    """One quick play at a time (docs/players.md): while the player's ticket waits, or the
    quick-play match it made goes on with the player in it, the same ticket asked for again
    (a double tap, a retry without an Idempotency-Key) answers that ticket, 200; another
    one is 409 ``already-queued``."""

    attempts = ATTEMPTS

    def __init__(self, service: GameService, dealer: Dealer) -> None:
        self.service = service
        self.dealer = dealer

    def authorise(self, command: QueueTicket, caller: Caller) -> Signed:
        return _player(self.service, caller)

    def handle(self, uow: UnitOfWork, command: QueueTicket, who: Signed) -> Outcome:
        request = TicketRequest(
            who.account.id,
            command.rules,
            command.preset,
            command.partner_id,
            command.bots_after_ms,
            command.bot_kind,
        )
        held = current_ticket(uow, who.account.id)
        if held is not None:
            if not same_request(uow.service, held, request):
                raise IllegalMoveError(
                    f"you have quick-play ticket {held.id} ({held.status}) already: cancel "
                    "it, or finish or leave its match, first",
                    code="already-queued",
                )
            return Outcome(200, held.id, held.version)
        ticket = queue_ticket(uow, self.dealer, request, uuid4())
        return Outcome(201, ticket.id, ticket.version)

    def matches_made(self, command: QueueTicket, uow: UnitOfWork, outcome: Outcome) -> int:
        """A new ticket makes one match, now or later (the lobby's, with bots after its
        wait, made by the service for it): it is charged now; the same ticket asked for
        again makes none."""
        return 1 if outcome.status == 201 else 0

    def answer(
        self, command: QueueTicket, who: Signed, outcome: Outcome, state: Reading
    ) -> TicketView:
        return _ticket(outcome, state, self.service)


class CancelTicketHandler(Handler[CancelTicket, Signed, TicketView]):
    """409 ``ticket-closed`` once it is matched or cancelled."""

    attempts = ATTEMPTS

    def __init__(self, service: GameService) -> None:
        self.service = service

    def authorise(self, command: CancelTicket, caller: Caller) -> Signed:
        return _player(self.service, caller)

    def handle(self, uow: UnitOfWork, command: CancelTicket, who: Signed) -> Outcome:
        owned_ticket(self.service, who.account.id, command.ticket_id)  # 404 for another's
        account = uow.get(who.account.id, Account, "player")
        ticket = uow.get(command.ticket_id, Ticket, "ticket")
        withdraw_ticket(uow, account, ticket)
        return Outcome(200, ticket.id, ticket.version)

    def answer(
        self, command: CancelTicket, who: Signed, outcome: Outcome, state: Reading
    ) -> TicketView:
        return _ticket(outcome, state, self.service)


class MakeDueMatchHandler(Handler[MakeDueMatch, None, UUID | None]):
    """Answers the match made, None when none is due."""

    attempts = ATTEMPTS

    def __init__(self, dealer: Dealer) -> None:
        self.dealer = dealer

    def authorise(self, command: MakeDueMatch, caller: Caller) -> None:
        if caller is not SERVICE:
            raise ForbiddenError("only the service sweeps a lobby")

    def handle(self, uow: UnitOfWork, command: MakeDueMatch, who: None) -> Outcome:
        made, version = None, 0
        lobby = uow.find(command.lobby_id, Lobby)
        if lobby is not None:
            made, version = matchmake(uow, self.dealer, lobby), lobby.version
        queue = None if lobby is not None else uow.find(command.lobby_id, RankedQueue)
        if queue is not None:
            made, version = matchmake_ranked(uow, self.dealer, queue), queue.version
        facts = {"match": None if made is None else str(made)}
        return Outcome(200, command.lobby_id, version, facts=facts)

    def answer(
        self, command: MakeDueMatch, who: None, outcome: Outcome, state: Reading
    ) -> UUID | None:
        made = outcome.facts.get("match")
        return None if made is None else UUID(str(made))

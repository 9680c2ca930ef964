"""Ranked quick play's command (docs/players.md "Ranked quick play"): queue a ranked ticket,
with its handler (:mod:`services.bus`) and the ranked part of the ticket as its player
sees it. A ranked ticket is cancelled, read and streamed as a casual one is, and its
queue's match made when windows have widened by the same ``MakeDueMatch``
(:mod:`services.accounts.lobby_commands`).

Accounts only: ranked play rates people against people, so a guest — a caller with a
seat, team or organiser token, or a string that is no token of ours — is refused (403
``account-required``) before anything else; no token at all is a 401, as everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Final, Protocol
from uuid import UUID, uuid4

from domain.accounts.matchmaking import SCHEDULE
from domain.accounts.ticket import Ticket
from domain.rules.errors import IllegalMoveError, InvalidInputError
from services.access import player_of
from services.accounts.lobby_commands import (
    ATTEMPTS,
    RankedTicket,
    RatingWindow,
    TicketView,
    current_ticket,
    ticket_view,
)
from services.accounts.players import Signed
from services.accounts.ranked import (
    ExpectedWait,
    RankedQueues,
    queue_ranked_ticket,
)
from services.bus import Caller, Handler, Outcome, Service
from services.dealer import Dealer
from services.errors import ForbiddenError, UnauthorizedError
from services.game import GameService
from services.idempotency import Fact
from services.ratings.model import FAMILIES, Rating
from services.sources import PLAYER_ROLE
from services.unit_of_work import Reading, UnitOfWork

ACCOUNT_REQUIRED: Final = "account-required"


class Standings(Protocol):
    """Where a ranked ticket reads its player's rating (the ratings' read model,
    :class:`~services.ratings.boards.RatingModels`)."""

    def standing(self, player: UUID, family: str) -> tuple[Rating, bool]:
        """The player's rating in ``family`` and whether it is provisional."""
        ...


class AccountRequiredError(ForbiddenError):
    """403: ranked play is for players with an account; a guest is refused."""

    code = ACCOUNT_REQUIRED


@dataclass(frozen=True, slots=True)
class QueueRankedTicket:
    """The caller (a player with an account) queues for ranked quick play in ``family``:
    four players of close rating, teams balanced by rating (docs/players.md)."""

    family: str = "standard"


def ranked_part(ticket: Ticket, at: datetime, expected: ExpectedWait) -> RankedTicket | None:
    """The ranked part of ``ticket`` at ``at`` (None for a casual ticket)."""
    if ticket.family is None or ticket.rating is None:
        return None
    window = None
    if ticket.status == "waiting":
        waited = at - ticket.created_on
        width = SCHEDULE.width(waited, ticket.provisional)
        after = SCHEDULE.next_widening(waited, ticket.provisional)
        window = RatingWindow(
            low=ticket.rating - width,
            high=ticket.rating + width,
            width=width,
            widens_at=None if after is None else (ticket.created_on + after).isoformat(),
        )
    return RankedTicket(
        family=ticket.family,
        rating=ticket.rating,
        provisional=ticket.provisional,
        window=window,
        expected_wait_seconds=expected.seconds,
        expected_from_matches=expected.matches,
    )


def current_view(service: GameService, ticket: Ticket, queues: RankedQueues) -> TicketView:
    """Any ticket as its player sees it now: a ranked one with its window now and the
    expected wait of its family and band."""
    if ticket.family is None or ticket.rating is None:
        return ticket_view(service, ticket)
    expected = queues.expected(service, ticket.family, ticket.rating)
    return ticket_view(service, ticket, ranked_part(ticket, service.clock(), expected))


class QueueRankedTicketHandler(Handler[QueueRankedTicket, Signed, TicketView]):
    """One quick play at a time, ranked or casual (docs/players.md): while the player's
    ticket waits, or its match goes on with the player seated, the same ranked ticket asked
    for again (a double tap) answers that ticket, 200; another one is 409
    ``already-queued``. A new ticket counts one match against the caller's match quota,
    as a casual ticket does."""

    attempts = ATTEMPTS

    def __init__(
        self, service: GameService, dealer: Dealer, ratings: Standings, queues: RankedQueues
    ) -> None:
        self.service = service
        self.dealer = dealer
        self.ratings = ratings
        self.queues = queues

    def authorise(self, command: QueueRankedTicket, caller: Caller) -> Signed:
        if caller is None:
            raise UnauthorizedError(
                "ranked play is for players with an account: Authorization: Bearer <player "
                "token> (POST /v1/players makes one)"
            )
        if isinstance(caller, Service) or caller.role is None:
            raise AccountRequiredError(
                "ranked play is for players with an account: create one (POST /v1/players) "
                "and queue with its player token"
            )
        signed = player_of(self.service, caller)
        if signed is None:
            if caller.role == PLAYER_ROLE:
                raise UnauthorizedError(
                    "the player token is not valid (unknown, rotated, revoked or expired)"
                )
            raise AccountRequiredError(
                "ranked play is for players with an account: a seat, team or organiser "
                "token is not one; queue with a player token"
            )
        return signed

    def handle(self, uow: UnitOfWork, command: QueueRankedTicket, who: Signed) -> Outcome:
        if command.family not in FAMILIES:
            raise InvalidInputError(f"family: one of {', '.join(FAMILIES)}")
        at: dict[str, Fact] = {"at": uow.now.isoformat()}
        held = current_ticket(uow, who.account.id)
        if held is not None:
            if held.family != command.family:
                raise IllegalMoveError(
                    f"you have quick-play ticket {held.id} ({held.status}) already: cancel "
                    "it, or finish or leave its match, first",
                    code="already-queued",
                )
            return Outcome(200, held.id, held.version, facts=self._expected(held, at))
        rating, provisional = self.ratings.standing(who.account.id, command.family)
        ticket = queue_ranked_ticket(
            uow, self.dealer, who.account.id, command.family, (rating.shown, provisional), uuid4()
        )
        return Outcome(201, ticket.id, ticket.version, facts=self._expected(ticket, at))

    def _expected(self, ticket: Ticket, facts: dict[str, Fact]) -> dict[str, Fact]:
        if ticket.family is not None and ticket.rating is not None:
            found = self.queues.expected(self.service, ticket.family, ticket.rating)
            facts |= {"expectedWait": found.seconds, "expectedFrom": found.matches}
        return facts

    def matches_made(self, command: QueueRankedTicket, uow: UnitOfWork, outcome: Outcome) -> int:
        """A new ticket makes one match, now or later: charged now (as a casual ticket)."""
        return 1 if outcome.status == 201 else 0

    def answer(
        self, command: QueueRankedTicket, who: Signed, outcome: Outcome, state: Reading
    ) -> TicketView:
        """The ticket with its window at the command's moment and the expected wait it was
        told (the outcome's facts): a replay answers the same."""
        ticket = state.get(outcome.subject, Ticket, "ticket", outcome.version)
        facts = outcome.facts
        seconds, matches = facts.get("expectedWait"), facts.get("expectedFrom")
        expected = ExpectedWait(
            seconds if isinstance(seconds, int) else None,
            matches if isinstance(matches, int) else 0,
        )
        at = datetime.fromisoformat(str(facts["at"]))
        return ticket_view(self.service, ticket, ranked_part(ticket, at, expected))

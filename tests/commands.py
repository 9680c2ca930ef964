"""Commands in tests: the product's bus (:mod:`services.bus`) of a test's service, sent as the
service itself, with the plain arguments a test has at hand.

``bus_of(service)`` is the bus :func:`services.handlers.build_bus` gives ``service`` (one per
service, kept as long as the service lives). The functions below build the typed commands
(:mod:`services.match_commands`, :mod:`services.round_commands`) and answer what the tests
check: a match's id, a seat's token, the match version a command left.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal
from uuid import UUID, uuid4

from domain.accounts.account import Account
from domain.accounts.ticket import Ticket
from domain.game.actions import RoundAction, action_of
from domain.game.match import Entered
from domain.game.timers import Timers
from domain.rules.cards import Card
from domain.rules.ruleset import RuleSet
from services.accounts.commands import CreatePlayer
from services.accounts.lobby import (
    Lobbies,
    TicketRequest,
    due_lobbies,
    queue_ticket,
    withdraw_ticket,
)
from services.accounts.lobby_commands import MakeDueMatch
from services.accounts.seating import claim_seat
from services.bot_driver import DEFAULT_STEPS, BotRun
from services.bot_driver import run_bots as drive
from services.bus import Bus
from services.dealer import Dealer
from services.game import GameService
from services.handlers import build_bus, table_deals
from services.match_commands import ClaimSeat, CreateMatch, FinishMatch, match_version
from services.match_commands import take_seat as seat_at
from services.records.canonical import canonical
from services.records.format import GameRecord, encode
from services.records.replay import Imported, ImportRecord
from services.round_commands import Act, ClaimDeadlines, Precondition
from services.sources import SEAT_ROLE, new_token
from services.timers import ClaimTimeout, TimeoutClaimed
from services.unit_of_work import UnitOfWork
from services.webhooks.commands import RegisterWebhook
from services.webhooks.subscriptions import WebhookSubscriptionView

_buses: weakref.WeakKeyDictionary[GameService, Bus] = weakref.WeakKeyDictionary()


def bus_of(service: GameService) -> Bus:
    """The bus of ``service`` (built once)."""
    bus = _buses.get(service)
    if bus is None:
        bus = _buses[service] = build_bus(service)
    return bus


@dataclass(frozen=True, slots=True)
class Done:
    """What a command left: the match version (its events and its rounds'), and the round
    it acted on (a seat: the round the fourth seat began) with that round's version."""

    version: int
    round_id: UUID | None = None
    round_version: int | None = None


def _done(service: GameService, version: int, round_id: UUID | None) -> Done:
    if round_id is None:
        return Done(version)
    return Done(version, round_id, service.get_round(round_id).version)


def create_match(
    service: GameService,
    rules: RuleSet,
    *,
    name: str = "",
    preset: str | None = None,
    match_id: UUID | None = None,
    organiser_token_hash: str | None = None,
    tournament: tuple[UUID, int] | None = None,
    timers: Timers | None = None,
    visibility: Literal["public", "private"] = "public",
) -> UUID:
    """A new match's id."""
    command = CreateMatch(
        rules,
        name=name,
        preset=preset,
        timers=timers,
        visibility=visibility,
        tournament=tournament,
        organiser_token_hash=organiser_token_hash,
        match_id=match_id,
    )
    return UUID(bus_of(service).execute(command).match_id)


def take_seat(
    service: GameService, match_id: UUID, seat: int, player: str, kind: str = "human"
) -> tuple[str, Done]:
    """``player`` (a person, or a bot of ``kind``) takes ``seat``: its seat token and the
    match version after it. A person claims the seat (``ClaimSeat``); a bot is seated with a
    token of its own that the test may use (the organiser's ``SeatBot`` never shows one)."""
    if kind == "human":
        answer = bus_of(service).execute(ClaimSeat(match_id, seat, player))
        token, version = answer.token, answer.version
    else:
        uow = unit(service)
        match = uow.match(match_id)
        token = new_token(match_id, SEAT_ROLE)
        seat_at(uow, Dealer(table_deals(service)), match, seat, player, kind, token)
        uow.commit()
        version = match_version(uow, match)
    current = service.get_match(match_id).current_round_id()
    return token, _done(service, version, current)


def version_of(service: GameService, match_id: UUID) -> int:
    """The match version now (what a client acting on it saw: its ``If-Match``)."""
    match = service.get_match(match_id)
    current = service.current_round(match)
    return match.sequence(0 if current is None else current.version)


def act(
    service: GameService,
    match_id: UUID,
    seat: int,
    action: str | RoundAction,
    cards: Sequence[Card] = (),
    *,
    expected_version: int | None = None,
) -> Done:
    """``seat`` makes ``action`` (a name of ``domain.game.actions.ACTIONS`` with its cards,
    or the action itself)."""
    move = action_of(action, tuple(cards)) if isinstance(action, str) else action
    command = Act(match_id, move, Precondition(expected_version), seat=seat)
    acted = service.get_match(match_id).current_round_id()
    return _done(service, bus_of(service).execute(command).version, acted)


def finish_match(
    service: GameService, match_id: UUID, reason: str = "organiser", entered: Entered | None = None
) -> Done:
    """The match ends (R32)."""
    return Done(bus_of(service).execute(FinishMatch(match_id, reason, entered)).version)


def claim_deadlines(service: GameService, match_id: UUID) -> Done:
    """A passed deadline takes effect (R16, R17, R20)."""
    return Done(bus_of(service).execute(ClaimDeadlines(match_id)))


def claim_timeout(service: GameService, match_id: UUID, claimed_by: str) -> TimeoutClaimed:
    """The timeout of the seat to act claimed (the timeout bot moves for it)."""
    return bus_of(service).execute(ClaimTimeout(match_id, claimed_by=claimed_by))  # type: ignore[no-any-return]


def run_bots(service: GameService, match_id: UUID, max_steps: int = DEFAULT_STEPS) -> BotRun:
    """Every pending bot move of the match (the product's :func:`services.bot_driver.run_bots`)."""
    return drive(bus_of(service), match_id, max_steps)


def claim_as_player(service: GameService, account: Account, match_id: UUID, seat: int) -> str:
    """The player of ``account`` takes ``seat`` (as the player's own command does): its token."""
    uow = unit(service)
    dealer = Dealer(table_deals(service))
    token = claim_seat(
        uow, dealer, uow.get(account.id, Account, "player"), uow.match(match_id), seat
    )
    uow.commit()
    return token


def unit(service: GameService) -> UnitOfWork:
    """A unit of work on ``service`` at its clock's now (to change aggregates and save them
    together, as a handler does)."""
    return UnitOfWork(service)


# -- players, the lobby, webhooks, records ------------------------------------------------------


def open_ticket(service: GameService, request: TicketRequest) -> tuple[Ticket, UUID | None]:
    """A ticket queued (as the player's ``QueueTicket`` does, for ``request.account_id``):
    the ticket as saved and the match its queueing made, if any."""
    uow = unit(service)
    ticket = queue_ticket(uow, Dealer(table_deals(service)), request, uuid4())
    uow.commit()
    return ticket, ticket.match_id


def cancel_ticket(service: GameService, account_id: UUID, ticket_id: UUID) -> None:
    """The account's waiting ticket cancelled (as ``CancelTicket`` does)."""
    uow = unit(service)
    account = uow.get(account_id, Account, "player")
    withdraw_ticket(uow, account, uow.get(ticket_id, Ticket, "ticket"))
    uow.commit()


def sweep_due(service: GameService, lobbies: Lobbies) -> list[UUID]:
    """The lobby sweeper's sweep: a match for every lobby where one is due."""
    made = [bus_of(service).execute(MakeDueMatch(lid)) for lid in due_lobbies(service, lobbies)]
    return [m for m in made if m is not None]


def import_record(service: GameService, record: GameRecord, store: bool = False) -> Imported:
    """``record`` imported through the bus (``ImportRecord``): what was stored."""
    done = bus_of(service).execute(ImportRecord(record, store))
    data = encode(canonical(record))
    match_id = None if done.match_id is None else UUID(done.match_id)
    return Imported(done.kind, done.digest, done.rounds, done.moves, data, match_id, done.created)


def register_webhook(
    service: GameService, url: str, secret: str, kinds: tuple[str, ...]
) -> WebhookSubscriptionView:
    """A webhook subscription, registered as the operator does."""
    return bus_of(service).execute(RegisterWebhook(url, secret, kinds))  # type: ignore[no-any-return]


def create_player(
    service: GameService, display_name: str, locale: str = "en", label: str = ""
) -> tuple[Account, str]:
    """A new player (``CreatePlayer``): the account and its player token."""
    done = bus_of(service).execute(CreatePlayer(display_name, locale, label))
    return service.repository.get(UUID(done.player_id)), done.token

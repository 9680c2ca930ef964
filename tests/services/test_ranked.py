"""Ranked quick play through the bus (docs/players.md "Ranked quick play"): tickets queue
with their players' ratings (read from the ratings' read model: a fake one here), windows
widen with the injected clock until four fit, the sweeper makes the match — ranked in its
creation event, partnerships balanced (R2) — and the tickets show their windows and the
expected wait of their band; guests are refused; a double tap answers the same ticket; a
ticket costs one match of the caller's quota; casual quick play does not mix with it."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import cast
from uuid import UUID

import pytest

from domain.accounts.ticket import Ticket
from domain.game.match_events import MatchCreated
from domain.rules.errors import ShengjiError
from domain.rules.ruleset import STANDARD
from services.access import Credential
from services.accounts.lobby_commands import CancelTicket, QueueTicket, TicketView
from services.accounts.lobby_sweeper import LobbySweeper
from services.accounts.ranked import RankedQueues
from services.accounts.ranked_commands import QueueRankedTicket
from services.bus import SERVICE, Bus
from services.errors import QuotaExceededError
from services.game import GameService
from services.handlers import build_bus
from services.limits import Allowance, Payer
from services.ratings.boards import RatingModels
from services.ratings.model import MODEL, SCALE, Rating
from services.sources import SEAT_ROLE, new_token
from tests.commands import create_player
from tests.conftest import FakeClock


class FakeStandings:
    """Shown ratings by player (a provisional 1500 for anyone else)."""

    def __init__(self) -> None:
        self.shown: dict[UUID, tuple[int, bool]] = {}

    def standing(self, player: UUID, family: str) -> tuple[Rating, bool]:
        shown, provisional = self.shown.get(player, (1500, True))
        return Rating(MODEL.mu + (shown - 1500) / SCALE, 2.0), provisional


def view_of(body: object) -> TicketView:
    assert isinstance(body, TicketView)
    return body


class Table:
    def __init__(self, clock: FakeClock, quota: int = 0) -> None:
        self.clock = clock
        self.service = GameService({"PERSISTENCE_MODULE": "eventsourcing.popo"}, clock=clock)
        self.standings = FakeStandings()
        self.queues = RankedQueues()
        self.bus: Bus = build_bus(
            self.service,
            ratings=cast(RatingModels, self.standings),  # what a ranked ticket reads
            ranked=self.queues,
            matches=Allowance("matches created", "MATCH_QUOTA_PER_HOUR", quota),
        )
        self.sweeper = LobbySweeper(self.bus, self.queues)

    def player(self, name: str, shown: int, provisional: bool = False) -> Credential:
        account, token = create_player(self.service, name)
        self.standings.shown[account.id] = (shown, provisional)
        return Credential.parse(token)

    def queue(self, who: Credential, family: str = "standard", **kw: object) -> TicketView:
        done = self.bus.handle(QueueRankedTicket(family), who, **kw)  # type: ignore[arg-type]
        assert done.status in (200, 201)
        return view_of(done.body)

    def ticket(self, view: TicketView) -> Ticket:
        found: Ticket = self.service.repository.get(UUID(view.ticket_id))
        return found


@pytest.fixture
def table(clock: FakeClock) -> Table:
    return Table(clock)


def test_windows_widen_until_four_fit_and_the_teams_balance(table: Table) -> None:
    ratings = {"a": 1500, "b": 1560, "c": 1620, "d": 1680}
    who = {n: table.player(n, r) for n, r in ratings.items()}
    views = {n: table.queue(c) for n, c in who.items()}
    first = views["a"].ranked
    assert first is not None and first.window is not None
    assert (first.rating, first.window.low, first.window.high) == (1500, 1450, 1550)
    assert first.window.widens_at == (table.clock() + timedelta(seconds=10)).isoformat()
    assert all(v.status == "waiting" for v in views.values())
    # a and d are 180 apart: ±50 +25 every 10 s reach 180 after 60 s (±200)
    for seconds in (10, 20, 30, 40, 50):
        table.clock.set(first_at(table, views["a"]) + timedelta(seconds=seconds))
        table.sweeper.sweep()
        assert table.ticket(views["a"]).status == "waiting", seconds
    table.clock.set(first_at(table, views["a"]) + timedelta(seconds=60))
    table.sweeper.sweep()
    tickets = {n: table.ticket(v) for n, v in views.items()}
    assert {t.status for t in tickets.values()} == {"matched"}
    assert len({t.match_id for t in tickets.values()}) == 1
    seats = {n: t.seat for n, t in tickets.items()}
    # 1500 + 1680 against 1560 + 1620: the oldest (a) at seat 0, d opposite (R2)
    assert seats == {"a": 0, "b": 1, "d": 2, "c": 3}
    match_id = tickets["a"].match_id
    assert match_id is not None
    match = table.service.get_match(match_id)
    assert match.ranked and match.seated and match.round_number == 1
    created = next(iter(table.service.recorder.select_events(match_id)))
    event = table.service.mapper.to_domain_event(created)
    assert isinstance(event, MatchCreated) and event.ranked is True


def first_at(table: Table, view: TicketView) -> datetime:
    return table.ticket(view).created_on


def test_the_same_queue_and_time_make_the_same_match(clock: FakeClock) -> None:
    seatings = []
    for _ in range(2):
        clock.set(clock() + timedelta(hours=1))
        table = Table(clock)
        creds = [table.player(f"p{i}", 1500 + 35 * i) for i in range(6)]
        views = [table.queue(c) for c in creds]
        clock.advance(seconds=30)
        table.sweeper.sweep()
        seatings.append([table.ticket(v).seat for v in views])
    assert seatings[0] == seatings[1]
    assert sorted(s for s in seatings[0] if s is not None) == [0, 1, 2, 3]


def test_the_expected_wait_is_the_median_of_the_bands_recent_matches(table: Table) -> None:
    creds = [table.player(f"p{i}", 1510 + 10 * i) for i in range(4)]
    for i, c in enumerate(creds):
        table.queue(c)
        if i < 3:
            table.clock.advance(seconds=20)  # the tickets waited 60, 40, 20 and 0 s
    late = table.player("late", 1590)
    view = table.queue(late)
    assert view.ranked is not None
    assert (view.ranked.expected_wait_seconds, view.ranked.expected_from_matches) == (30, 1)
    other_band = table.queue(table.player("high", 1900))
    assert other_band.ranked is not None and other_band.ranked.expected_wait_seconds is None
    elsewhere = table.queue(table.player("tuolaji", 1590), family="tuolaji")
    assert elsewhere.ranked is not None and elsewhere.ranked.expected_wait_seconds is None


@pytest.mark.parametrize(
    "caller",
    [
        pytest.param(SERVICE, id="the service"),
        pytest.param(Credential.parse(new_token(UUID(int=7), SEAT_ROLE)), id="a seat token"),
        pytest.param(Credential.parse("junk"), id="not a token"),
    ],
)
def test_a_guest_is_refused(table: Table, caller: object) -> None:
    """A caller with a token that is no player's (and the service itself)."""
    with pytest.raises(ShengjiError) as refused:
        table.bus.handle(QueueRankedTicket("standard"), caller)  # type: ignore[arg-type]
    assert refused.value.code == "account-required"
    assert getattr(refused.value, "status", None) == 403


def test_no_token_is_a_401(table: Table) -> None:
    with pytest.raises(ShengjiError) as refused:
        table.bus.handle(QueueRankedTicket("standard"), None)
    assert refused.value.code == "unauthorized"


def test_a_double_tap_answers_the_same_ticket_and_another_is_refused(table: Table) -> None:
    mei = table.player("Mei", 1500)
    first = table.bus.handle(QueueRankedTicket("standard"), mei)
    again = table.bus.handle(QueueRankedTicket("standard"), mei)
    assert (first.status, again.status) == (201, 200)
    assert view_of(first.body).ticket_id == view_of(again.body).ticket_id
    for other in (QueueRankedTicket("tuolaji"), QueueTicket(STANDARD)):
        with pytest.raises(ShengjiError) as refused:
            table.bus.handle(other, mei)
        assert refused.value.code == "already-queued"
    table.bus.handle(CancelTicket(UUID(view_of(first.body).ticket_id)), mei)
    assert table.bus.handle(QueueRankedTicket("tuolaji"), mei).status == 201


def test_a_ticket_costs_one_match_of_the_quota(clock: FakeClock) -> None:
    table = Table(clock, quota=1)
    mei = table.player("Mei", 1500)
    payer = Payer(("player:mei",))
    first = table.queue(mei, payer=payer)
    assert table.queue(mei, payer=payer).ticket_id == first.ticket_id  # a double tap: free
    table.bus.handle(CancelTicket(UUID(first.ticket_id)), mei)
    with pytest.raises(QuotaExceededError):
        table.bus.handle(QueueRankedTicket("standard"), mei, payer=payer)


def test_casual_and_ranked_tickets_never_meet(table: Table) -> None:
    creds = [table.player(f"p{i}", 1500) for i in range(4)]
    for c in creds[:2]:
        table.queue(c)
    casual = [view_of(table.bus.handle(QueueTicket(STANDARD), c).body) for c in creds[2:]]
    assert all(v.ranked is None and v.status == "waiting" for v in casual)
    table.clock.advance(seconds=600)
    table.sweeper.sweep()
    assert {table.ticket(v).status for v in casual} == {"waiting"}

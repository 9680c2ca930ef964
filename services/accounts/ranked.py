"""Ranked quick play (docs/players.md "Ranked quick play", docs/decisions.md D-ranked): a
ticket queues in its family's :class:`~domain.accounts.ranked_queue.RankedQueue` with the
player's shown rating read from the ratings' read model; four who fit each other's
rating windows (:mod:`domain.accounts.matchmaking`) make a ranked match — created (marked
``ranked``), seated in balanced partnerships (R2) and dealt (R16) in the **same save** as
the queue's ``RankedMatchMade``, the tickets' ``TicketMatched`` and the accounts'
``SeatClaimed``, as casual quick play's (:mod:`services.accounts.lobby`).

:class:`RankedQueues` follows the queues through the log: when each queue's next window
widens (the sweeper's time to try again) and how long the tickets of its recent matches
waited, per rating band (the expected wait a ticket shows).
"""

from __future__ import annotations

import statistics
import threading
from collections import deque
from dataclasses import dataclass
from datetime import datetime
from typing import Final
from uuid import UUID

from eventsourcing.utils import get_topic

from domain.accounts.account import Account
from domain.accounts.matchmaking import Entrant, foursome, next_change, seating
from domain.accounts.ranked_queue import (
    RankedMatchMade,
    RankedQueue,
    RankedTicketLeft,
    RankedTicketQueued,
    ranked_queue_id,
)
from domain.accounts.ticket import Ticket
from domain.rules.ruleset import preset
from services.accounts.lobby import BATCH, quick_match, quick_play_rules, seat_ticket
from services.dealer import Dealer
from services.errors import NotFoundError
from services.game import GameService
from services.loading import load
from services.social.blocks import blocked_between
from services.unit_of_work import UnitOfWork

RANKED_PLAY: Final = "ranked play"
"""The name of a ranked match."""
BAND: Final = 200
"""Shown points per rating band of the expected waits (1400–1599, 1600–1799, …)."""
RECENT: Final = 20
"""The matches per family and band an expected wait is taken from (their tickets' waits)."""
TICKET_KIND: Final = "heuristic"
"""A ranked ticket asks for no bots; its ``bot_kind`` is the casual default."""


def queue_ranked_ticket(
    uow: UnitOfWork,
    dealer: Dealer,
    account_id: UUID,
    family: str,
    standing: tuple[int, bool],
    ticket_id: UUID,
) -> Ticket:
    """Queue a ranked ticket in the family's queue (opened with it when it is the first),
    with the player's shown rating and whether it is provisional (``standing``), and make
    a match at once when four fit: the ticket as it will be saved."""
    now = uow.now
    qid = ranked_queue_id(family)
    queue = uow.find(qid, RankedQueue) or RankedQueue.open(family, now)
    uow.add(queue)
    account = uow.get(account_id, Account, "player")
    rating, provisional = standing
    ticket = Ticket.open(
        ticket_id,
        account.id,
        qid,
        family,
        None,
        None,
        TICKET_KIND,
        now,
        ranked=(family, rating, provisional),
    )
    uow.add(ticket)
    account.queue(ticket.id, now)
    queue.queue(Entrant(ticket.id, account.id, rating, provisional, now), now)
    matchmake_ranked(uow, dealer, queue)
    return ticket


def matchmake_ranked(uow: UnitOfWork, dealer: Dealer, queue: RankedQueue) -> UUID | None:
    """The next ranked match of ``queue``, if four fit now: the match (the family's preset
    as quick play plays it, ``ranked``), its first round and the tickets' and accounts'
    events, in ``uow``; its id, else None. Never two players one of whom blocks the other
    (docs/decisions.md D-social)."""
    now = uow.now
    four = foursome(queue.waiting, now, apart=lambda a, b: blocked_between(uow, a, b))
    if four is None:
        return None
    rules = quick_play_rules(uow.service, preset(queue.family))
    match = quick_match(uow, rules, queue.family, name=RANKED_PLAY, ranked=True)
    seated = seating(four)
    for seat, entrant in enumerate(seated):
        seat_ticket(uow, match, seat, entrant.ticket_id, entrant.account_id, queue.id)
    queue.make_match(match.id, seated, now)
    uow.add(dealer.begin_round(uow, match, now))
    return match.id


def get_ranked_queue(service: GameService, qid: UUID) -> RankedQueue | None:
    try:
        queue: RankedQueue = load(service, qid, RankedQueue, "ranked queue")
    except NotFoundError:
        return None
    return queue


def band_of(rating: int) -> int:
    """The lowest rating of ``rating``'s band."""
    return rating // BAND * BAND


@dataclass(frozen=True, slots=True)
class ExpectedWait:
    """How long the tickets of a family's recent matches in a rating band waited."""

    seconds: int | None
    """Their median wait, whole seconds; None: no match in the band yet."""
    matches: int
    """How many matches it is taken from (at most :data:`RECENT`)."""


class RankedQueues:
    """The ranked queues as the log tells them (module docstring): their ``RankedTicketQueued``,
    ``RankedTicketLeft`` and ``RankedMatchMade``, read once each, in order, from a position
    this process keeps (the casual lobbies' :class:`~services.accounts.lobby.Lobbies` way:
    a process reads the queues' events of the whole log once when it starts, then only
    new ones). Thread-safe: the sweeper and the requests share one."""

    TOPICS: Final = (
        get_topic(RankedTicketQueued),
        get_topic(RankedTicketLeft),
        get_topic(RankedMatchMade),
    )

    def __init__(self) -> None:
        self.position = 0
        self.changed: set[UUID] = set()
        """Queues with events not yet looked at: tried at once (four or more waiting)."""
        self.tried: dict[UUID, datetime] = {}
        """Queues given to the sweeper, and when: next tried when a window widens after."""
        self.due: dict[UUID, datetime] = {}
        """Queue → when to try it (four or more waiting)."""
        self.waits: dict[tuple[str, int], deque[list[int]]] = {}
        """(family, band) → per recent match, its tickets' waits in that band (ms)."""
        self.families: dict[UUID, str] = {}
        self._lock = threading.Lock()

    def refresh(self, service: GameService) -> None:
        """Read the queues' new events; read again the queues they changed."""
        with self._lock:
            self._follow(service)

    def _follow(self, service: GameService) -> None:
        top = service.recorder.max_notification_id() or 0
        while self.position < top:
            found = service.recorder.select_notifications(
                self.position, BATCH, stop=top, topics=list(self.TOPICS), inclusive_of_start=False
            )
            for n in found:
                qid = UUID(str(n.originator_id))
                self.changed.add(qid)
                self.position = n.id
                if n.topic == self.TOPICS[2]:
                    event = service.mapper.to_domain_event(n)
                    assert isinstance(event, RankedMatchMade)
                    self._made(service, qid, event)
            if len(found) < BATCH:
                self.position = top  # read to the end: the next read starts there (D-pgcost)
                break
        now = service.clock()
        for qid in self.changed | self.tried.keys():
            queue = get_ranked_queue(service, qid)
            since = self.tried.get(qid, now)
            due = None if queue is None else next_change(queue.waiting, since)
            if due is not None and qid in self.changed:
                due = now  # changed since it was last tried (or never tried here): try now
            if due is None:
                self.due.pop(qid, None)
            else:
                self.due[qid] = due
        self.changed.clear()
        self.tried.clear()

    def _made(self, service: GameService, qid: UUID, event: RankedMatchMade) -> None:
        family = self.families.get(qid)
        if family is None:
            queue = get_ranked_queue(service, qid)
            family = "" if queue is None else queue.family
            self.families[qid] = family
        bands: dict[int, list[int]] = {}
        for _, _, _, rating, waited_ms in event.seats:
            bands.setdefault(band_of(rating), []).append(waited_ms)
        for band, waits in bands.items():
            self.waits.setdefault((family, band), deque(maxlen=RECENT)).append(waits)

    def due_queues(self, service: GameService) -> list[UUID]:
        """The queues where a window has widened since they were last tried."""
        with self._lock:
            self._follow(service)
            now = service.clock()
            found = [qid for qid, at in self.due.items() if at <= now]
            self.tried.update(dict.fromkeys(found, now))  # read again at the next sweep
            return found

    def expected(self, service: GameService, family: str, rating: int) -> ExpectedWait:
        """The expected wait of a ticket of ``rating`` in ``family``."""
        with self._lock:
            self._follow(service)
            recent = self.waits.get((family, band_of(rating)), ())
            waits = [w for match in recent for w in match]
            matches = len(recent)
        if not waits:
            return ExpectedWait(None, 0)
        return ExpectedWait(round(statistics.median(waits) / 1000), matches)

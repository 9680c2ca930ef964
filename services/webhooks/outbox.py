"""The webhook outbox: a follower of the game's event log (the eventsourcing library's
``ProcessApplication``, docs/decisions.md F10).

It pulls the game's notifications after its tracked position; for each, its
:meth:`WebhookOutbox.policy` appends deliveries to the queues of the subscriptions that
want them, and the library saves those events **with the tracking record in one
transaction** (its process recorder). So a crash at any point resumes exactly after the
last notification processed: nothing is lost, nothing enqueued twice. The outbox has a
store of its own (its own tables on PostgreSQL, its own file beside the SQLite one).

Kinds, per player: ``match-found`` (the account's ``SeatClaimed``), ``your-turn`` (a
round event after which the seat to act changed to a player's), ``match-finished``
(``MatchFinished``), ``rating-changed`` (``RatingChanged``: the notice the career's policy
saved once per player and rated match, docs/decisions.md D-career), ``friend-request``,
``friend-accepted``, ``table-invitation``, ``friend-online`` (``FriendCameOnline``: one
per friend it names, docs/decisions.md D-social); per tournament:
``tournament-round-ready`` (``RoundScheduled``).
"""

from __future__ import annotations

import contextlib
import json
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, ClassVar, Final
from uuid import NAMESPACE_URL, UUID, uuid5

from eventsourcing.application import AggregateNotFoundError, ProcessingEvent
from eventsourcing.domain import DomainEventProtocol
from eventsourcing.persistence import IntegrityError, Mapper, Tracking
from eventsourcing.system import ProcessApplication
from eventsourcing.utils import get_topic

from domain.accounts.account import SeatClaimed
from domain.accounts.friend_online import FriendCameOnline
from domain.accounts.friendship import FriendAccepted, FriendRequested
from domain.accounts.rating_change import RatingChanged
from domain.accounts.table_invitation import TableInvited
from domain.accounts.webhooks import (
    Queue,
    Registry,
    SubscriptionRegistered,
    SubscriptionRemoved,
    Table,
    queue_id,
)
from domain.game.match_events import MatchFinished
from domain.game.round import Round
from domain.game.round_events import ROUND_EVENTS, RoundStarted
from domain.game.timers import turn_clock
from domain.tournament.events import RoundScheduled
from services.career.notice import notice_data
from services.codec import MsgspecMapper
from services.game import GameService, replay
from services.social.notices import (
    friend_accepted,
    friend_online,
    friend_request,
    table_invitation,
)
from services.social.reads import name_of

NS = uuid5(NAMESPACE_URL, "shengji:webhook-outbox")
ROUND_EVENTS_WITH_START: tuple[type, ...] = (RoundStarted, *ROUND_EVENTS)
REGISTRY_ID = uuid5(NS, "registry")


def table_id(match_id: UUID) -> UUID:
    return uuid5(NS, f"table:{match_id}")


class WebhookOutbox(ProcessApplication[UUID]):
    name = "webhookoutbox"
    env: ClassVar[dict[str, str]] = {"AGGREGATE_CACHE_MAXSIZE": "10000"}
    """The library's aggregate cache (fast-forwarded on every load, so replicas sharing
    the outbox's store stay right): the registry and the tables are read per event."""
    topics: Sequence[str] = tuple(
        get_topic(cls)
        for cls in (
            SubscriptionRegistered,
            SubscriptionRemoved,
            SeatClaimed,
            MatchFinished,
            RatingChanged,
            RoundScheduled,
            FriendRequested,
            FriendAccepted,
            TableInvited,
            FriendCameOnline,
            *ROUND_EVENTS_WITH_START,
        )
    )
    """Everything the policy can read (the library filters the log by topic); each catch-up
    narrows it to what the subscriptions want (:func:`wanted_topics`)."""
    pull_section_size = 500
    """Notifications read per query (the library's default is 10)."""

    def __init__(self, env: Mapping[str, str] | None, *, leader: GameService) -> None:
        super().__init__(env)
        self.leader = leader
        self.round_matches: dict[UUID, UUID] = {}
        """Round id → its match, from ``RoundStarted`` (no replay to find a round's match)."""
        self.rounds: OrderedDict[UUID, Round] = OrderedDict()
        """Rounds followed event by event for ``your-turn`` (the library's projector on a
        copy loaded once), so a round event costs no replay; bounded, least recent out."""
        self.follow(leader.name, leader.notification_log)

    def construct_mapper(self) -> Mapper[UUID]:
        return MsgspecMapper()

    def catch_up(self) -> None:
        """Process the game's log after the tracked position — only the notifications some
        subscription wants (:func:`wanted_topics`: with no subscription, only the seat
        claims that a later subscription's deliveries need) — then record the position
        reached with the library's tracking record, so what nobody wanted is neither
        processed nor read again. The log is taken up to the next registration or removal
        at a time, so events after a new subscription are filtered by its wants."""
        leader = self.leader.name
        while True:
            try:
                registry: Registry | None = self.repository.get(REGISTRY_ID)
            except AggregateNotFoundError:
                registry = None
            self.turns_wanted = registry is not None and _wants_turns(registry)
            self.topics = wanted_topics(registry)
            start = self.recorder.max_tracking_id(leader) or 0
            top = self.leader.recorder.max_notification_id() or 0
            if top <= start:
                return
            change = self.leader.recorder.select_notifications(
                start, 1, stop=top, topics=REGISTRATION_TOPICS, inclusive_of_start=False
            )
            stop = change[0].id if change else top
            self.pull_and_process(leader, start=start, stop=stop)
            if (self.recorder.max_tracking_id(leader) or 0) < stop:
                with contextlib.suppress(IntegrityError):  # another outbox got there first
                    self.recorder.insert_tracking(Tracking(leader, stop))
            if stop >= top:
                return

    # -- the policy --------------------------------------------------------------------------

    def policy(
        self, domain_event: DomainEventProtocol[UUID], processing_event: ProcessingEvent[UUID]
    ) -> None:
        e: Any = domain_event
        work = _Work(self, processing_event, e.timestamp)
        if isinstance(e, SubscriptionRegistered):
            work.registry().subscribe(e.originator_id, tuple(e.kinds), e.timestamp)
            self.turns_wanted = _wants_turns(work.registry())
        elif isinstance(e, SubscriptionRemoved):
            work.registry().unsubscribe(e.originator_id, e.timestamp)
            self.turns_wanted = _wants_turns(work.registry())
        elif isinstance(e, SeatClaimed):
            table = work.table(e.match_id, create=True)
            assert table is not None
            table.seat(e.seat, e.originator_id, e.timestamp)
            work.deliver(
                "match-found", e.originator_id, {"matchId": str(e.match_id), "seat": e.seat}
            )
        elif isinstance(e, MatchFinished):
            table = work.table(e.originator_id)
            for seat, account in sorted((table.seats if table else {}).items()):
                data = {"matchId": str(e.originator_id), "seat": seat, "winner": e.winner}
                work.deliver("match-finished", account, data)
        elif isinstance(e, RatingChanged):
            work.deliver("rating-changed", e.player_id, notice_data(e))
        elif isinstance(e, FriendRequested):
            work.deliver(
                "friend-request", e.other, friend_request(e.by, name_of(self.leader, e.by))
            )
        elif isinstance(e, FriendAccepted):
            data = friend_accepted(e.by, name_of(self.leader, e.by))
            work.deliver("friend-accepted", e.other, data)
        elif isinstance(e, TableInvited):
            data = table_invitation(e, name_of(self.leader, e.inviter))
            work.deliver("table-invitation", e.invitee, data)
        elif isinstance(e, FriendCameOnline):
            data = friend_online(e.player_id, name_of(self.leader, e.player_id))
            for friend in e.friends:
                work.deliver("friend-online", friend, data)
        elif isinstance(e, RoundScheduled):
            data = {"tournamentId": str(e.originator_id), "round": e.number}
            work.deliver("tournament-round-ready", None, data, key=f"tournament:{e.originator_id}")
        elif isinstance(e, RoundStarted):
            self._remember_round(e.originator_id, e.match_id)
        elif type(e).__module__ == "domain.game.round_events":
            self._your_turn(work, e)
        work.collect()

    def _remember_round(self, round_id: UUID, match_id: UUID) -> None:
        if len(self.round_matches) > 100_000:
            self.round_matches.clear()
        self.round_matches[round_id] = match_id

    def _your_turn(self, work: _Work, e: Any) -> None:
        """A player's seat is to act after this round event and was not before it. The
        round is replayed (at this version and the one before) only when a subscription
        wants ``your-turn`` and a player sits in its match."""
        if not self.turns_wanted:
            return
        round_id, version = e.originator_id, e.originator_version
        match_id = self.round_matches.get(round_id)
        if match_id is None:  # a round begun before this process followed the log
            match_id = self.leader.get_round(round_id).match_id
            self._remember_round(round_id, match_id)
        table = work.table(match_id)
        if table is None:
            return
        after = self._followed(round_id, version, e)
        if after is None:  # pragma: no cover - the event is in the log
            return
        to_act = after.to_act()
        if to_act is None or to_act not in table.seats or self.acted_before == to_act:
            return
        match = self.leader.get_match(after.match_id)
        clock = turn_clock(match.timers, after)
        data = {
            "matchId": str(after.match_id),
            "seat": to_act,
            "round": after.number,
            "turnDeadline": None if clock is None else clock.deadline.isoformat(),
        }
        work.deliver("your-turn", table.seats[to_act], data)

    turns_wanted = False
    """Whether a subscription wants ``your-turn`` (read at each catch-up)."""
    acted_before: int | None = None
    """The seat to act before the round event :meth:`_followed` last applied."""

    def _followed(self, round_id: UUID, version: int, event: Any) -> Round | None:
        """The round right after ``event`` (its ``version``), from the followed copy when
        it is at the version before, else loaded at that version once; the seat to act
        before it in :attr:`acted_before`."""
        round_ = self.rounds.pop(round_id, None)
        if round_ is None or round_.version != version - 1:
            if version == 1:
                round_ = None
            else:
                try:
                    round_ = self.leader.repository.get(round_id, version=version - 1)
                except AggregateNotFoundError:
                    return None
        self.acted_before = None if round_ is None else round_.to_act()
        round_ = replay(round_, (event,))
        if round_ is None:  # pragma: no cover - a round's first event creates it
            return None
        self.rounds[round_id] = round_
        if len(self.rounds) > 10_000:
            self.rounds.popitem(last=False)
        return round_


REGISTRATION_TOPICS: Final = (get_topic(SubscriptionRegistered), get_topic(SubscriptionRemoved))
ALWAYS_TOPICS: Final = (*REGISTRATION_TOPICS, get_topic(SeatClaimed))
"""Followed with or without subscriptions: the registrations, and the seat claims whose
tables a later subscription's ``match-finished`` and ``your-turn`` need."""
KIND_TOPICS: Final[Mapping[str, tuple[str, ...]]] = {
    "match-found": (),
    "match-finished": (get_topic(MatchFinished),),
    "rating-changed": (get_topic(RatingChanged),),
    "friend-request": (get_topic(FriendRequested),),
    "friend-accepted": (get_topic(FriendAccepted),),
    "table-invitation": (get_topic(TableInvited),),
    "friend-online": (get_topic(FriendCameOnline),),
    "tournament-round-ready": (get_topic(RoundScheduled),),
    "your-turn": tuple(get_topic(cls) for cls in ROUND_EVENTS_WITH_START),
}
"""What each kind of delivery reads beyond :data:`ALWAYS_TOPICS`."""


def wanted_topics(registry: Registry | None) -> tuple[str, ...]:
    """The log's topics the subscriptions of ``registry`` want followed."""
    kinds = {
        kind
        for subscribed in (registry.subscriptions if registry else {}).values()
        for kind in subscribed
    }
    return ALWAYS_TOPICS + tuple(t for kind in sorted(kinds) for t in KIND_TOPICS.get(kind, ()))


def _wants_turns(registry: Registry) -> bool:
    return any("your-turn" in kinds for kinds in registry.subscriptions.values())


class _Work:
    """The aggregates one notification touches, loaded once, collected once."""

    def __init__(self, app: WebhookOutbox, processing: ProcessingEvent[UUID], at: datetime):
        self.app = app
        self.processing = processing
        self.at = at
        self.loaded: dict[UUID, Any] = {}

    def get(self, aggregate_id: UUID) -> Any:
        if aggregate_id not in self.loaded:
            try:
                self.loaded[aggregate_id] = self.app.repository.get(aggregate_id)
            except AggregateNotFoundError:
                return None
        return self.loaded[aggregate_id]

    def registry(self) -> Registry:
        found: Registry | None = self.get(REGISTRY_ID)
        if found is None:
            found = self.loaded[REGISTRY_ID] = Registry.open(REGISTRY_ID, self.at)
        return found

    def table(self, match_id: UUID, *, create: bool = False) -> Table | None:
        tid = table_id(match_id)
        found: Table | None = self.get(tid)
        if found is None and create:
            found = self.loaded[tid] = Table.open(tid, match_id, self.at)
        return found

    def deliver(
        self, kind: str, account: UUID | None, data: dict[str, Any], *, key: str | None = None
    ) -> None:
        registry: Registry | None = self.get(REGISTRY_ID)
        if registry is None:
            return
        key = key or f"player:{account}"
        tracking = self.processing.tracking
        body = {
            "kind": kind,
            "playerId": None if account is None else str(account),
            "occurredAt": self.at.isoformat(),
            "position": None if tracking is None else tracking.notification_id,
            "data": data,
        }
        text = json.dumps(body, separators=(",", ":"), sort_keys=True)
        for sub_id, kinds in sorted(registry.subscriptions.items()):
            if kind not in kinds:
                continue
            qid = queue_id(sub_id, key)
            queue: Queue | None = self.get(qid)
            if queue is None:
                queue = self.loaded[qid] = Queue.open(sub_id, key, self.at)
            queue.enqueue(kind, text, self.at)

    def collect(self) -> None:
        self.processing.collect_events(*self.loaded.values())

"""The whole event log as a feed (docs/events.md): every event of every match, round and
tournament in commit order, redacted to what the public may see *now* (RULES R33–R36).

The feed reads the library's own notification log (``recorder.select_notifications``,
``recorder.max_notification_id``): an item's **position** is the event's notification id,
gap-free on PostgreSQL and SQLite and in commit order (``infra.pgstore`` keeps the table
lock), so ``after=<position>`` pages on without loss or repeat, whatever is saved
meanwhile, on any replica.

**Streams.** Each item names its stream: ``match`` (a :class:`~domain.game.match.Match`),
``round`` (a :class:`~domain.game.round.Round`, with its match and number) or
``tournament``; ``version`` is the event's version in that stream. Other aggregates of
the store (idempotency records, and whatever later features add) are not part of the
public feed; the operator reads them as ``other``.

**Redaction**, decided when the page is read, with the history's own rules
(:func:`services.history.released_secrets`, :mod:`services.history_items`):

* fields an event lists in ``SECRET_FIELDS`` are left out and named in ``hidden``: the
  token hashes always; ``Dealt.seed`` and ``BottomBuried.cards`` until their round is
  scored (R21, R33, R35) — a round abandoned unscored keeps them for good (R32);
  ``RoundScheduled.secret`` until its tournament round completes (R35, R36);
* a round of a tournament table whose tournament round is not complete is closed to the
  public (R36, as ``/public``, history and streams are): its items keep their stream,
  version, type and time, but ``data`` is empty, every field is in ``hidden`` and
  ``withheld`` says why. So are the match's events that tell how its deals went
  (:data:`RESULT_EVENTS`: the levels and dealer a round begins with, a round's result,
  the winner), and the tournament's entries of a table's result
  (:data:`TABLE_RESULT_EVENTS`) until the round completes — as the match summaries and
  the tournament's reads withhold them (docs/decisions.md D-hidden). The match's other
  events (its creation, seats) stay open.

**Private tables** (``visibility: private``, or made private by an invite code) are not
in the public feed at all — neither their match's events nor their rounds': their ids and
seat names are for the people of the table (docs/decisions.md D-hidden); whether a match
is private is decided when the page is read, so a table made private later drops out of
the feed from then on.

**Players**: accounts, sessions, invites, the lobby and its tickets and webhook
subscriptions are not in the public feed at all — not even their type or time (a
session's time says when a person played): a page passes over them. In the match's own
stream ``SeatTaken.accountId`` is hidden from the public (it links a person's matches);
its ``player`` name is public as the seats are, and reads ``erased player`` once the
player is erased (crypto-shredding, :mod:`services.accounts.keys`).

The **operator** (``OPERATOR_TOKEN``) reads every field of every event (``kind: other``
for the aggregates the public does not see), names decrypted, except what an event lists
in ``SHOWN_TO_NOBODY`` (a webhook's signing secret).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Annotated, Any
from uuid import UUID

import msgspec
from eventsourcing.application import AggregateNotFoundError
from eventsourcing.persistence import Notification
from eventsourcing.utils import get_topic
from msgspec import Meta

from domain.game.match import Match
from domain.game.match_events import (
    MatchCreated,
    MatchEvent,
    MatchFinished,
    RoundBegun,
    RoundRecorded,
)
from domain.game.round_events import RoundEvent, RoundScored, RoundStarted
from domain.rules.errors import InvalidInputError
from domain.tournament.events import (
    ResultCorrected,
    RoundScheduled,
    TableForfeited,
    TableResultEntered,
    TableResultRecorded,
    TournamentCreated,
    TournamentEvent,
)
from services.embargo import Embargo, embargo_for
from services.event_schema import EVENT_CLASSES
from services.game import GameService
from services.history import released_secrets
from services.history_items import history_item

MAX_LIMIT = 1000
"""Items per page at most."""
MAX_POSITION = 10**15
"""The largest ``after`` a client may name: the stores' notification ids are 64-bit
integers, so a larger one is refused rather than sent to SQL; 10^15 stays exact as a
JSON Schema ``maximum`` (a double), as the other paged routes' bound."""
_SCORED = get_topic(RoundScored)
_NONE: frozenset[str] = frozenset()
RESULT_EVENTS: tuple[type[MatchEvent], ...] = (RoundBegun, RoundRecorded, MatchFinished)
"""A match's events that tell how its deals went: the levels and dealer (R31) a round
begins with, a round's result, the winner and the end's reason (a paper result's levels):
withheld on a tournament table in play (R36)."""
TABLE_RESULT_EVENTS = (TableResultRecorded, ResultCorrected, TableResultEntered, TableForfeited)
"""A tournament's entries of a table's result: withheld until its round completes (R36)."""


class FeedStream(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """The stream (aggregate) an event belongs to."""

    kind: Annotated[
        str,
        Meta(description="`match`, `round`, `tournament` (`other`: only the operator sees those)."),
    ]
    id: Annotated[str, Meta(description="The aggregate's id (a UUID).")]
    match_id: Annotated[str | None, Meta(description="A round's match.")] = None
    round: Annotated[int | None, Meta(description="A round's number in its match.")] = None


class FeedItem(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """One event of the log, redacted for its reader (R33, R36)."""

    position: Annotated[
        int,
        Meta(
            description=(
                "The event's place in the whole log (the library's "
                "notification id): gap-free, in commit order; pass the "
                "last one seen as `after` (or `Last-Event-ID`)."
            )
        ),
    ]
    stream: Annotated[FeedStream, Meta(description="The stream the event belongs to.")]
    version: Annotated[int, Meta(description="The event's version in its stream (1, 2, …).")]
    type: Annotated[
        str,
        Meta(description="The event class (`CardPlayed`, `RoundScheduled`, …; docs/events.md)."),
    ]
    class_version: Annotated[
        int,
        Meta(description="The event class's version (its JSON Schema: `GET /v1/events/schema`)."),
    ]
    time: Annotated[str, Meta(description="When it happened (ISO 8601, UTC).")]
    data: Annotated[
        dict[str, Any],
        Meta(
            description="Its fields in camelCase, cards in R4 notation, without the `hidden` ones."
        ),
    ]
    hidden: Annotated[
        list[str], Meta(description="Secret fields left out for this reader (camelCase).")
    ]
    withheld: Annotated[
        str | None,
        Meta(description="Why the whole payload is withheld (a tournament table in play, R36)."),
    ] = None


class FeedPage(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """A page of the event log, redacted for its reader (R33-R36)."""

    items: Annotated[list[FeedItem], Meta(description="The events of this page, in log order.")]
    next: Annotated[
        int,
        Meta(
            description=(
                "Pass as `after` for the next page: the last position "
                "read (items the reader may not see at all are passed "
                "over, so it can be beyond the last item's). Reading "
                "backwards (`before`): the oldest position read; pass it "
                "as `before`."
            )
        ),
    ]
    more: Annotated[
        bool,
        Meta(
            description=(
                "True when the log held events beyond `next` when it was "
                "read (backwards: before it)."
            )
        ),
    ]


_TOPICS: dict[str, str] = {cls.__name__: get_topic(cls) for _, cls in EVENT_CLASSES}
MAX_SCAN = 5000
"""Events a filtered page reads from the log at most (the page then ends early, with
``more``): a filter that matches little never makes a request unbounded."""


@dataclass(frozen=True, slots=True)
class FeedFilter:
    """Which items of the log a reader wants (all by default), decided on the server."""

    types: frozenset[str] | None = None
    """Event types (``CardPlayed``, …): only these."""
    match_id: UUID | None = None
    """Only the events of this match and its rounds."""
    tournament_id: UUID | None = None
    """Only the events of this tournament, its tables and their rounds."""
    since: datetime | None = None
    """Only events at or after it."""
    until: datetime | None = None
    """Only events before it."""

    def __post_init__(self) -> None:
        if self.types is not None:
            unknown = sorted(self.types - _TOPICS.keys())  # every type the store may hold
            if unknown or not self.types:
                raise InvalidInputError(
                    f"type: unknown event type(s) {', '.join(repr(u[:40]) for u in unknown)} "
                    "(GET /v1/events/schema lists them)"
                )
        for name, moment in (("since", self.since), ("until", self.until)):
            if moment is not None and moment.tzinfo is None:
                raise InvalidInputError(f"{name} needs a time zone (e.g. 2026-01-01T00:00:00Z)")
        if self.since and self.until and self.since > self.until:
            raise InvalidInputError(
                f"since ({self.since.isoformat()}) is after until ({self.until.isoformat()})"
            )

    @property
    def everything(self) -> bool:
        return self == _ALL

    @property
    def topics(self) -> list[str] | None:
        """The stored topics of ``types`` (the store filters on them), or None."""
        return None if self.types is None else sorted(_TOPICS[t] for t in self.types)


@dataclass(frozen=True, slots=True)
class _RoundFacts:
    match_id: UUID
    number: int
    revealed: bool
    """Scored, and not under a tournament embargo (R33, R35, R36)."""
    closed: Embargo | None
    """The tournament embargo of its table (R36): the round is closed to the public."""


@dataclass(slots=True)
class _Reader:
    """What one page needs to know about the rounds and tables it meets (read once)."""

    service: GameService
    operator: bool
    rounds: dict[UUID, _RoundFacts] = field(default_factory=dict)
    tables: dict[UUID, Embargo | None] = field(default_factory=dict)
    tournaments: dict[UUID, UUID | None] = field(default_factory=dict)
    private: dict[UUID, bool] = field(default_factory=dict)

    def item(self, n: Notification, where: FeedFilter | None = None) -> FeedItem | None:
        event: Any = self.service.mapper.to_domain_event(n)
        found = self.redacted(n, event)
        if found is None or where is None or where.everything:
            return found
        return found if self.admits(where, event, found) else None

    def redacted(self, n: Notification, event: Any) -> FeedItem | None:
        originator = event.originator_id
        version = event.originator_version
        visible: frozenset[str] = frozenset(getattr(type(event), "SECRET_FIELDS", ()))
        withheld: tuple[str, ...] = ()
        reason: str | None = None
        number = 0
        if isinstance(event, RoundStarted | RoundEvent):
            facts = self.round_facts(originator, event)
            if not self.operator and self.is_private(facts.match_id):
                return None  # D-hidden: a private table is not in the public feed
            number = facts.number
            stream = FeedStream(
                kind="round", id=str(originator), match_id=str(facts.match_id), round=number
            )
            if not self.operator:
                if facts.closed is not None:
                    reason = facts.closed.reason
                    withheld = _payload(event)
                    visible = _NONE
                else:
                    visible = released_secrets(event) if facts.revealed else _NONE
        elif isinstance(event, MatchCreated | MatchEvent):
            if not self.operator and self.is_private(originator):
                return None  # D-hidden: nor its id, nor its seats' names
            stream = FeedStream(kind="match", id=str(originator))
            visible = visible if self.operator else _NONE  # token hashes: never public
            if not self.operator and isinstance(event, RESULT_EVENTS):
                closed = self.table_embargo(originator)
                if closed is not None:  # R36: how a table's deals went
                    reason, withheld = closed.reason, _payload(event)
        elif isinstance(event, TournamentCreated | TournamentEvent):
            stream = FeedStream(kind="tournament", id=str(originator))
            if not self.operator:
                visible = _NONE
                if isinstance(event, RoundScheduled) and (
                    embargo_for(self.service, originator, event.number) is None
                ):
                    visible = frozenset({"secret"})  # R35: revealed by RoundCompleted
                if isinstance(event, TABLE_RESULT_EVENTS):
                    closed = embargo_for(self.service, originator, event.number)
                    if closed is not None:  # R36: a result of a round in play
                        reason, withheld = closed.reason, _payload(event)
        elif self.operator:
            stream = FeedStream(kind="other", id=str(originator))
        else:
            return None  # players, sessions, invites, lobby, webhooks: the operator's only
        visible -= frozenset(getattr(type(event), "SHOWN_TO_NOBODY", ()))
        h = history_item(n.id, number, event, visible, withheld)
        return FeedItem(
            position=n.id,
            stream=stream,
            version=version,
            type=h.type,
            class_version=getattr(type(event), "class_version", 1),
            time=h.timestamp,
            data=h.data,
            hidden=h.hidden,
            withheld=reason,
        )

    def admits(self, where: FeedFilter, event: Any, item: FeedItem) -> bool:
        """``item`` (of ``event``) is one ``where`` wants."""
        if where.since is not None and event.timestamp < where.since:
            return False
        if where.until is not None and event.timestamp >= where.until:
            return False
        match = item.stream.match_id or (item.stream.id if item.stream.kind == "match" else None)
        if where.match_id is not None and match != str(where.match_id):
            return False
        if where.tournament_id is not None:
            if item.stream.kind == "tournament":
                return item.stream.id == str(where.tournament_id)
            return match is not None and self.tournament_of(UUID(match)) == where.tournament_id
        return True

    def is_private(self, match_id: UUID) -> bool:
        """The match is a private table now (its creation or a later ``TableMadePrivate``)."""
        if match_id not in self.private:
            try:
                found: object = self.service.repository.get(match_id, deepcopy_from_cache=False)
            except AggregateNotFoundError:
                found = None
            self.private[match_id] = isinstance(found, Match) and found.private
        return self.private[match_id]

    def tournament_of(self, match_id: UUID) -> UUID | None:
        """The tournament whose table ``match_id`` is (None for any other match)."""
        if match_id not in self.tournaments:
            stored = self.service.recorder.select_events(match_id, lte=1)
            created: Any = self.service.mapper.to_domain_event(stored[0]) if stored else None
            found = created.tournament_id if isinstance(created, MatchCreated) else None
            self.tournaments[match_id] = found
        return self.tournaments[match_id]

    def round_facts(self, rid: UUID, event: Any) -> _RoundFacts:
        found = self.rounds.get(rid)
        if found is not None:
            return found
        recorder, mapper = self.service.recorder, self.service.mapper
        if isinstance(event, RoundStarted):
            started: Any = event
        else:
            started = mapper.to_domain_event(recorder.select_events(rid, lte=1)[0])
        last = recorder.select_events(rid, desc=True, limit=1)
        scored = bool(last) and last[0].topic == _SCORED
        closed = self.table_embargo(started.match_id)
        found = _RoundFacts(started.match_id, started.number, scored and closed is None, closed)
        self.rounds[rid] = found
        return found

    def table_embargo(self, match_id: UUID) -> Embargo | None:
        """R36: the embargo of a tournament table (None for any other match)."""
        if match_id not in self.tables:
            stored = self.service.recorder.select_events(match_id, lte=1)
            created: Any = self.service.mapper.to_domain_event(stored[0]) if stored else None
            embargo = None
            if isinstance(created, MatchCreated):
                embargo = embargo_for(self.service, created.tournament_id, created.tournament_round)
            self.tables[match_id] = embargo
        return self.tables[match_id]


_ALL = FeedFilter()


_IDENTITY_FIELDS = frozenset(
    {"originator_id", "originator_version", "originator_topic", "timestamp"}
)


def _payload(event: Any) -> tuple[str, ...]:
    """Every field of ``event`` but its identity: what a withheld item leaves out."""
    return tuple(k for k in vars(event) if k not in _IDENTITY_FIELDS)


def feed_page(
    service: GameService,
    *,
    after: int = 0,
    limit: int = 100,
    operator: bool = False,
    before: int | None = None,
    where: FeedFilter | None = None,
) -> FeedPage:
    """The log's events after position ``after``, at most ``limit``, redacted for the
    public (or, ``operator``, not at all). ``before``: backwards instead — the events
    before that position, newest first; ``next`` is then the oldest position read (pass
    it as ``before``) and ``more`` says older ones remain. With ``where``, only the items
    it wants — read from at most :data:`MAX_SCAN` events of the log, so a page of a rare
    filter may end early (``next`` is then the last position read, and ``more`` says
    there is more)."""
    if type(limit) is not int or not 1 <= limit <= MAX_LIMIT:
        raise InvalidInputError(f"limit must be 1..{MAX_LIMIT}, got {limit!r}")
    if type(after) is not int or not 0 <= after <= MAX_POSITION:
        raise InvalidInputError(f"after is a position in the log, 0..{MAX_POSITION}, got {after!r}")
    reader = _Reader(service, operator)
    if before is not None:
        if type(before) is not int or not 1 <= before <= MAX_POSITION + 1:
            raise InvalidInputError(
                f"before is a position in the log, 1..{MAX_POSITION + 1}, got {before!r}"
            )
        if where is not None and not where.everything:
            raise InvalidInputError("a filter reads forwards: send it without before")
        start = max(before - limit, 1)
        older: Sequence[Notification] = (
            service.recorder.select_notifications(start, limit, stop=before - 1)
            if before > 1
            else []
        )
        items = [i for i in (reader.item(n) for n in reversed(older)) if i is not None]
        first = older[0].id if older else before
        return FeedPage(items=items, next=first, more=first > 1)
    top = service.recorder.max_notification_id() or 0
    items = []
    if where is None or where.everything:
        found: Sequence[Notification] = service.recorder.select_notifications(
            after, limit, inclusive_of_start=False
        )
        items = [i for i in (reader.item(n) for n in found) if i is not None]
        last = found[-1].id if found else after
        return FeedPage(items=items, next=last, more=last < top)
    last, scanned, exhausted = after, 0, False
    while not exhausted and len(items) < limit and scanned < MAX_SCAN:
        want = min(MAX_LIMIT, MAX_SCAN - scanned)
        found = service.recorder.select_notifications(
            last, want, topics=where.topics or (), inclusive_of_start=False
        )
        exhausted = len(found) < want
        for n in found:
            last, scanned = n.id, scanned + 1
            item = reader.item(n, where)
            if item is not None:
                items.append(item)
                if len(items) == limit:
                    exhausted = exhausted and n is found[-1]
                    break
    if exhausted:
        last = max(last, top)  # nothing more it wants up to the end (other types skipped)
    return FeedPage(items=items, next=last, more=last < top)


def last_position(service: GameService) -> int:
    """The log's last position (0 when empty)."""
    return service.recorder.max_notification_id() or 0


__all__ = [
    "MAX_LIMIT",
    "MAX_POSITION",
    "FeedFilter",
    "FeedItem",
    "FeedPage",
    "FeedStream",
    "feed_page",
    "last_position",
]

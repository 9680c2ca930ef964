"""A match's history, redacted per viewer, and its state as of any moment (RULES R33, R34).

**Order.** Every event of a match — the ``Match`` aggregate's and every ``Round``'s — has
a *position*: the notification id the eventsourcing recorder gave it when it was saved
(ARCHITECTURE decision 1: POPO, SQLite and PostgreSQL all number notifications gap-free,
in commit order, under a table lock). A match's history is its events ordered by
position; events saved together (a command's round events, the ``RoundScored`` policy's
match events, the next round's start) are contiguous and keep the order they were saved
in. The position is the history *cursor*: ``after=cursor`` returns the match's events
with a greater position, so paging never loses or repeats an event, whatever is saved
meanwhile. A page scans the store's notifications from the match's creation (or the
cursor) up to the last one that existed when the page was asked for; the returned
``cursor`` may point past the last item (up to where the scan reached) so the next page
does not scan the same notifications again.

**Redaction** (R33, R35): fields an event lists in ``SECRET_FIELDS`` are removed (and
named in ``hidden``) unless the viewer may see them: ``Dealt.seed`` once that round's
``RoundScored`` exists, ``BottomBuried.cards`` for the seat that buried them, the
overcaller that took them (炒底, R20) and, once the round is scored, everyone;
``SeatTaken.token_hash`` never; any other secret field never.

**As of** (R34): :func:`view_at` is the table (:func:`services.views.table_view`) as a
viewer saw it once every event up to a cursor had happened. :func:`round_as_of` and
:func:`match_as_of` take an aggregate version and show the *last* moment that version
was current: everything saved before the aggregate's next event (for a round's final
version, before the next round starts). So the view of round version v equals the live
view right after the command that wrote v, unless another command changed the match
before the round moved on (only the organiser's ``finish`` can). A match version current
while a round was scored shows that round's end, its ``RoundScored`` included.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from uuid import UUID

from eventsourcing.domain import Aggregate
from eventsourcing.persistence import Notification
from eventsourcing.utils import get_topic

from domain.game.match_events import MatchCreated
from domain.game.round import Round, round_id
from domain.game.round_events import BottomBuried, Dealt, Overcalled, RoundScored
from domain.rules.cards import RANKS, SUITS, card_name, card_names
from domain.rules.errors import InvalidInputError
from domain.rules.shows import Strength
from services.errors import NotFoundError
from services.game import GameService
from services.views import PublicView, SeatView, table_view

SCAN = 500
"""Notifications read per query while scanning the store's order."""
MAX_LIMIT = 1000

_IDENTITY = frozenset({"originator_id", "originator_version", "originator_topic", "timestamp"})
_CARD_LISTS = frozenset({"cards", "attempted", "forced", "bottom_cards"})


@dataclass(frozen=True, slots=True)
class HistoryItem:
    """One event of a match, redacted for its viewer (R33)."""

    cursor: int
    """The event's position in the store's order (see the module docstring)."""
    aggregate: str
    """``match`` or ``round N``."""
    aggregate_id: str
    version: int
    type: str
    """The event class name (``CardPlayed``, ``RoundRecorded``, …)."""
    timestamp: str
    data: dict[str, Any]
    """The event's fields, JSON-friendly: cards in R4 notation, ranks ``"2"``..``"A"``."""
    hidden: list[str]
    """Secret fields left out for this viewer."""


@dataclass(frozen=True, slots=True)
class HistoryPage:
    items: list[HistoryItem]
    cursor: int
    """Pass as ``after`` for the next page."""
    more: bool
    """True when the page is full: more events may follow at once."""


@dataclass(frozen=True, slots=True)
class _Entry:
    """A stored event of the match at its position, decoded only when needed."""

    position: int
    aggregate_id: UUID
    version: int
    stored: Notification

    def event(self, service: GameService) -> Aggregate.Event:
        event = service.mapper.to_domain_event(self.stored)
        assert isinstance(event, Aggregate.Event)
        return event


@dataclass(slots=True)
class _RoundSecrets:
    """What a round's stream says about who may see its secret fields."""

    scored: bool = False
    takers: dict[int, int] = field(default_factory=dict)
    """BottomBuried version → the seat that took those cards under 炒底 (R20)."""


def match_history(
    service: GameService,
    match_id: UUID,
    viewer: int | None,
    *,
    after: int | None = None,
    limit: int = 100,
) -> HistoryPage:
    """The match's events after ``after`` (a cursor), at most ``limit``, redacted for
    ``viewer`` (a seat 0..3, None = spectator), in the store's order (R34)."""
    _check_viewer(viewer)
    if type(limit) is not int or not 1 <= limit <= MAX_LIMIT:
        raise InvalidInputError(f"limit must be 1..{MAX_LIMIT}, got {limit!r}")
    if after is not None and (type(after) is not int or after < 0):
        raise InvalidInputError(f"a cursor is a position >= 0, got {after!r}")
    stop = service.recorder.max_notification_id() or 0
    names = _aggregates(service, match_id)
    start = after if after is not None else _created_at(service, match_id, stop) - 1
    items: list[HistoryItem] = []
    secrets: dict[UUID, _RoundSecrets] = {}
    reached = max(start, 0)
    for entry, position in _scan(service, names, start, stop):
        reached = position
        if entry is not None:
            aid = entry.aggregate_id
            if aid != match_id and aid not in secrets:
                secrets[aid] = _round_secrets(service.events.get(aid))
            event = entry.event(service)
            items.append(_item(entry.position, event, names[aid], viewer, secrets.get(aid)))
            if len(items) == limit:
                return HistoryPage(items, entry.position, True)
    return HistoryPage(items, max(reached, after or 0), False)


def view_at(
    service: GameService,
    match_id: UUID,
    cursor: int,
    viewer: int | None,
    *,
    now: datetime | None = None,
) -> SeatView | PublicView:
    """The table as ``viewer`` saw it once every event of the match up to ``cursor`` had
    happened (R34); ``now`` defaults to the last of those events' timestamps."""
    entries = [e for e in _timeline(service, match_id) if e.position <= cursor]
    if not entries:
        raise NotFoundError(f"match {match_id} did not exist at position {cursor}")
    return _view(service, match_id, entries, None, viewer, now)


def round_as_of(
    service: GameService,
    round_id_: UUID,
    version: int,
    viewer: int | None,
    *,
    now: datetime | None = None,
) -> SeatView | PublicView:
    """Round ``round_id_`` as of its ``version``, as ``viewer`` saw it (R33, R34)."""
    _check_viewer(viewer)
    current = service.get_round(round_id_)
    if type(version) is not int or not 1 <= version <= current.version:
        raise NotFoundError(f"round {round_id_} has versions 1..{current.version}, not {version}")
    timeline = _timeline(service, current.match_id)
    following = round_id(current.match_id, current.number + 1)
    end = next(
        (
            e.position
            for e in timeline
            if (e.aggregate_id == round_id_ and e.version > version) or e.aggregate_id == following
        ),
        None,
    )
    entries = [e for e in timeline if end is None or e.position < end]
    round_ = service.get_round(round_id_, version=version)
    return _view(service, current.match_id, entries, round_, viewer, now)


def match_as_of(
    service: GameService,
    match_id: UUID,
    version: int,
    viewer: int | None,
    *,
    now: datetime | None = None,
) -> SeatView | PublicView:
    """The match as of its ``version`` (the last moment it was current), as ``viewer``
    saw the table then (R33, R34)."""
    _check_viewer(viewer)
    current = service.get_match(match_id)
    if type(version) is not int or not 1 <= version <= current.version:
        raise NotFoundError(f"match {match_id} has versions 1..{current.version}, not {version}")
    timeline = _timeline(service, match_id)
    end = next(
        (e.position for e in timeline if e.aggregate_id == match_id and e.version > version),
        None,
    )
    entries = [e for e in timeline if end is None or e.position < end]
    return _view(service, match_id, entries, None, viewer, now)


# -- internals ------------------------------------------------------------------------------


def _check_viewer(viewer: int | None) -> None:
    if viewer is not None and (type(viewer) is not int or not 0 <= viewer <= 3):
        raise InvalidInputError(f"a viewer is a seat 0..3 or None, got {viewer!r}", rule="R1")


def _view(
    service: GameService,
    match_id: UUID,
    entries: Sequence[_Entry],
    round_: Round | None,
    viewer: int | None,
    now: datetime | None,
) -> SeatView | PublicView:
    """The table built from the aggregates at the versions ``entries`` reach."""
    versions: dict[UUID, int] = {}
    for e in entries:
        versions[e.aggregate_id] = e.version
    match = service.get_match(match_id, version=versions[match_id])
    if round_ is None:
        rid = match.current_round_id()
        if rid is not None and rid in versions:
            round_ = service.get_round(rid, version=versions[rid])
    when = now if now is not None else entries[-1].event(service).timestamp
    return table_view(match, round_, viewer, when)


def _aggregates(service: GameService, match_id: UUID) -> dict[UUID, str]:
    """The match's aggregates (the match and its rounds so far) and their names."""
    match = service.get_match(match_id)
    names = {match_id: "match"}
    for n in range(1, match.round_number + 1):
        names[round_id(match_id, n)] = f"round {n}"
    return names


def _created_at(service: GameService, match_id: UUID, stop: int) -> int:
    """The position of the match's ``MatchCreated`` (only creations are read)."""
    recorder = service.recorder
    topics = [get_topic(MatchCreated)]
    start = 0
    while start < stop:
        found = recorder.select_notifications(start, SCAN, stop, topics, inclusive_of_start=False)
        for n in found:
            if n.originator_id == match_id or str(n.originator_id) == str(match_id):
                return n.id
        if len(found) < SCAN:
            break
        start = found[-1].id
    raise NotFoundError(f"no match {match_id}")


def _scan(
    service: GameService, names: Mapping[UUID, str], start: int, stop: int
) -> Iterator[tuple[_Entry | None, int]]:
    """The match's events with positions in (start, stop], in order; also yields the
    position reached after each batch of notifications (entry None)."""
    recorder = service.recorder
    wanted = {str(k): k for k in names}
    while start < stop:
        batch = recorder.select_notifications(start, SCAN, stop, inclusive_of_start=False)
        for n in batch:
            aid = wanted.get(str(n.originator_id))
            if aid is not None:
                yield _Entry(n.id, aid, n.originator_version, n), n.id
        if not batch:
            break
        start = batch[-1].id
        yield None, start


def _timeline(service: GameService, match_id: UUID) -> list[_Entry]:
    """Every event of the match, in the store's order (R34)."""
    stop = service.recorder.max_notification_id() or 0
    names = _aggregates(service, match_id)
    start = _created_at(service, match_id, stop) - 1
    return [e for e, _ in _scan(service, names, start, stop) if e is not None]


def _round_secrets(events: Iterator[Any] | Sequence[Any]) -> _RoundSecrets:
    secrets = _RoundSecrets()
    buried: int | None = None
    for e in events:
        if isinstance(e, Dealt):
            buried = None
        elif isinstance(e, BottomBuried):
            buried = e.originator_version
        elif isinstance(e, Overcalled) and buried is not None:
            secrets.takers[buried] = e.seat  # 炒底: the overcaller takes them (R20)
            buried = None
        elif isinstance(e, RoundScored):
            secrets.scored = True
    return secrets


def _may_see(
    event: Aggregate.Event, name: str, viewer: int | None, round_: _RoundSecrets | None
) -> bool:
    """The one rule for secret fields in history (R21, R33, R35)."""
    if round_ is None:
        return False  # match events: SeatTaken.token_hash is never shown
    if isinstance(event, Dealt) and name == "seed":
        return round_.scored
    if isinstance(event, BottomBuried) and name == "cards":
        seers = {event.seat, round_.takers.get(event.originator_version)}
        return round_.scored or (viewer is not None and viewer in seers)
    return False


def _item(
    position: int,
    event: Aggregate.Event,
    aggregate: str,
    viewer: int | None,
    round_: _RoundSecrets | None,
) -> HistoryItem:
    secret = getattr(type(event), "SECRET_FIELDS", ())
    data: dict[str, Any] = {}
    hidden: list[str] = []
    for name, value in vars(event).items():
        if name in _IDENTITY:
            continue
        if name in secret and not _may_see(event, name, viewer, round_):
            hidden.append(name)
            continue
        data[name] = _plain(name, value)
    return HistoryItem(
        cursor=position,
        aggregate=aggregate,
        aggregate_id=str(event.originator_id),
        version=event.originator_version,
        type=type(event).__name__,
        timestamp=event.timestamp.isoformat(),
        data=data,
        hidden=hidden,
    )


def _plain(name: str, value: Any) -> Any:
    """A JSON-friendly value: cards in R4 notation, ranks and suits as letters."""
    if value is None:
        return None
    if name in _CARD_LISTS:
        return card_names(value)
    if name == "fallback_card":
        return card_name(value)
    if name == "trump":
        return SUITS[value]
    if name in ("level", "start_level"):
        return RANKS[value]
    if name == "levels":
        return [RANKS[v] for v in value]
    if name == "strength":
        return Strength(value).name.lower()
    if isinstance(value, UUID):
        return str(value)
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, tuple | list):
        return [_plain("", v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain("", v) for k, v in value.items()}
    return value

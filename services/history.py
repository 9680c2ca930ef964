"""A match's history by match version, redacted per viewer, and its state as of any
version (RULES R33, R34).

**Order.** A match's events, in the order they were saved, are a structural merge of the
``Match`` aggregate's events and each ``Round``'s: right after ``RoundBegun(n)`` come all
of round n's events (rounds never interleave: round n+1 begins in the save that scores
round n, after ``RoundRecorded(n)``; nothing happens in a round after ``MatchFinished``).
An event's **version** is its 1-based position in that order — so the match version
after a command, :meth:`Match.sequence`, is the version of the command's last event, and
versions are gap-free and never change. ``after=<version>`` pages on from there, so no
event is lost or repeated, whatever is saved meanwhile. A match event that is no move of
the game (``VERSIONED = False``: a seat's token re-issued, possibly mid-round) takes no
version and is not in the history.

A page reads only what it needs: the match's own events (a few per round) give the
layout — each round's length is ``RoundRecorded.round_events``, or the open round's
current version — and only the rounds' events inside the page are read
(``recorder.select_events(round, gt=, lte=)``).

**Redaction** (R33, R35): fields an event lists in ``SECRET_FIELDS`` are left out (and
named in ``hidden``) unless the viewer may see them: ``Dealt.seed`` once that round is
scored; ``BottomBuried.cards`` for the seat that buried them and the 炒底 overcaller who
took them (R20), and for everyone once the round is scored (R21, R33); token hashes
never. On a tournament table whose tournament round is not complete
(:mod:`services.embargo`, R36) a scored round keeps its during-play redaction, and
``RoundScored`` loses ``seed``, ``bottomCards`` and ``bottomPoints`` (named in
``hidden``); the page's ``embargo`` says why.

**As of** (R34): :func:`state_at` is the table as ``viewer`` saw it right after the event
at a version — the match as of its version then, the round as of its version then — and,
once that round is scored, everything it hid (:class:`Revealed`) — or, under the
tournament embargo, no ``revealed`` and ``embargo`` saying why.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any
from uuid import UUID

import msgspec
from msgspec import Meta

from domain.game.match import Match
from domain.game.match_events import MatchCreated, RoundBegun, RoundRecorded
from domain.game.round import Round, round_id
from domain.game.round_events import BottomBuried, Dealt, Overcalled, RoundScored
from domain.rules.errors import InvalidInputError
from services import field_docs
from services.embargo import Embargo, embargo_for
from services.errors import NotFoundError
from services.game import GameService
from services.history_items import HistoryItem, history_item
from services.legal import round_context, sorted_names
from services.talk.reads import TalkMessage, said_by
from services.views import PublicView, SeatView, table_view

MAX_LIMIT = 1000

_NONE: frozenset[str] = frozenset()
_SEED = frozenset({"seed"})
_CARDS = frozenset({"cards"})
EMBARGOED_FIELDS = ("seed", "bottom_cards", "bottom_points")
"""``RoundScored`` fields withheld under the tournament embargo (R36): the seed and
what the bottom held."""
_LOOKAHEAD = 6
"""Round events read after a ``BottomBuried`` to find a 炒底 overcaller (R20: at most
three passes come before an overcall; four close the window)."""


class HistoryPage(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """A page of a match's events, redacted for the viewer (R33, R34)."""

    items: Annotated[list[HistoryItem], field_docs.ITEMS]
    next: Annotated[
        int,
        Meta(
            description="Pass as `after` for the next page: the last item's version (or `after`)."
        ),
    ]
    more: Annotated[
        bool,
        Meta(description="True when the match held more events than this page when it was read."),
    ]
    embargo: Annotated[
        str | None,
        Meta(
            description=(
                "Set when scored rounds keep their secrets: `embargoed "
                "until tournament round N completes` (R36, "
                "docs/tournaments.md)."
            )
        ),
    ] = None


class Revealed(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """What a scored round hid at a version, public since it was scored (R33, R35)."""

    hands: Annotated[
        list[list[str]],
        Meta(
            description=(
                "Each seat's hand at that version (during a paced deal, the cards drawn so far)."
            )
        ),
    ]
    bottom: Annotated[
        list[str],
        Meta(
            description="The bottom then: as dealt, or the cards buried last (R21).",
            examples=[field_docs.EXAMPLE_CARDS],
        ),
    ]
    buried_by: Annotated[
        int | None, Meta(description="The seat that buried the bottom then; null before burying")
    ]
    seed: Annotated[
        str,
        Meta(
            description="The seed of the deal in effect then (R35).",
            examples=[field_docs.EXAMPLE_HEX64],
        ),
    ]


class StateAt(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """The table as a viewer saw it at a match version (R34)."""

    version: Annotated[int, Meta(description="The match version this state is as of (R34)")]
    view: Annotated[SeatView | PublicView, Meta(description="The viewer's view at that version")]
    revealed: Annotated[
        Revealed | None,
        Meta(description="Once the round of that version is scored: everything it hid then."),
    ]
    embargo: Annotated[
        str | None,
        Meta(
            description=(
                "Why `revealed` is None although that round is scored: "
                "`embargoed until tournament round N completes` (R36, "
                "docs/tournaments.md)."
            )
        ),
    ] = None
    talk: Annotated[
        list[TalkMessage],
        Meta(
            description=(
                "The table talk said up to this version that the viewer reads (R37): a "
                "seat's, its mutes applied; spectators' where the table allows it."
            )
        ),
    ] = []


@dataclass(frozen=True, slots=True)
class _Segment:
    """A run of events of one aggregate, contiguous in the match's order."""

    start: int
    """The version (position) of its first event."""
    count: int
    aggregate_id: UUID
    number: int
    """0 for the match's own events, else the round's number."""
    first: int
    """The aggregate version of its first event."""


@dataclass(frozen=True, slots=True)
class _Layout:
    match_id: UUID
    match_events: Sequence[Any]
    segments: list[_Segment]
    total: int
    lengths: dict[int, int]
    """Round number → events of that round (so far, for the open round)."""
    scored: frozenset[int]
    """Rounds with a ``RoundRecorded``: scored (the policy records them in the same save)."""
    begun_at: dict[int, int]
    """Round number → the match version of its ``RoundBegun``."""

    def segment_at(self, version: int) -> _Segment:
        starts = [s.start for s in self.segments]
        return self.segments[bisect_right(starts, version) - 1]


def _layout(service: GameService, match_id: UUID) -> _Layout:
    """The match's events and where every round's events sit among them."""
    stored = service.recorder.select_events(match_id)
    events: list[Any] = [service.mapper.to_domain_event(s) for s in stored]
    if not events or not isinstance(events[0], MatchCreated):
        raise NotFoundError(f"no match {match_id}")
    recorded = {e.number: e.round_events for e in events if isinstance(e, RoundRecorded)}
    segments: list[_Segment] = []
    lengths: dict[int, int] = {}
    begun_at: dict[int, int] = {}
    position = 0
    run_start = run_first = 0
    for e in events:
        if not getattr(e, "VERSIONED", True):  # no move of the game: no version (R34)
            if run_start:
                segments.append(
                    _Segment(run_start, position + 1 - run_start, match_id, 0, run_first)
                )
                run_start = 0
            continue
        if not run_start:
            run_start, run_first = position + 1, e.originator_version
        position += 1
        if isinstance(e, RoundBegun):
            segments.append(_Segment(run_start, position + 1 - run_start, match_id, 0, run_first))
            run_start = 0
            begun_at[e.number] = e.originator_version
            count = recorded.get(e.number)
            if count is None:
                last = service.recorder.select_events(e.round_id, desc=True, limit=1)
                count = last[0].originator_version if last else 0
            lengths[e.number] = count
            if count:
                segments.append(_Segment(position + 1, count, e.round_id, e.number, 1))
                position += count
    if run_start:
        segments.append(_Segment(run_start, position + 1 - run_start, match_id, 0, run_first))
    return _Layout(match_id, events, segments, position, lengths, frozenset(recorded), begun_at)


def match_history(
    service: GameService,
    match_id: UUID,
    viewer: int | None,
    *,
    after: int | None = None,
    limit: int = 100,
) -> HistoryPage:
    """The match's events after version ``after``, at most ``limit``, redacted for
    ``viewer`` (a seat 0..3, None = spectator), in the match's order (R34)."""
    _check_viewer(viewer)
    if type(limit) is not int or not 1 <= limit <= MAX_LIMIT:
        raise InvalidInputError(f"limit must be 1..{MAX_LIMIT}, got {limit!r}")
    after = 0 if after is None else after
    if type(after) is not int or after < 0:
        raise InvalidInputError(f"after is a match version >= 0, got {after!r}")
    layout = _layout(service, match_id)
    embargo = _embargo(service, layout)
    items: list[HistoryItem] = []
    for seg in layout.segments:
        if seg.start + seg.count - 1 <= after:
            continue
        if len(items) == limit:
            break
        skip = max(0, after + 1 - seg.start)
        take = min(seg.count - skip, limit - len(items))
        first = seg.first + skip
        if seg.number == 0:
            events = layout.match_events[first - 1 : first - 1 + take]
        else:
            stored = service.recorder.select_events(
                seg.aggregate_id, gt=first - 1, lte=first - 1 + take
            )
            events = [service.mapper.to_domain_event(s) for s in stored]
        for k, event in enumerate(events):
            visible = _visible(service, layout, seg, event, viewer, embargo)
            withheld = EMBARGOED_FIELDS if embargo and isinstance(event, RoundScored) else ()
            items.append(history_item(seg.start + skip + k, seg.number, event, visible, withheld))
    last = items[-1].version if items else after
    return HistoryPage(
        items=items,
        next=last,
        more=last < layout.total,
        embargo=None if embargo is None else embargo.reason,
    )


def state_at(service: GameService, match_id: UUID, version: int, viewer: int | None) -> StateAt:
    """The table as ``viewer`` saw it right after the match's event at ``version`` (R34):
    during a round only what the viewer could see (R33); once that round is scored,
    :class:`Revealed` adds everything else."""
    _check_viewer(viewer)
    _check_version(version)
    layout = _layout(service, match_id)
    match, round_, now = _as_of(service, layout, version)
    scored = round_ is not None and round_.number in layout.scored
    embargo = _embargo(service, layout) if scored else None
    view = table_view(match, round_, viewer, now, embargo=embargo)
    revealed = None
    if round_ is not None and scored and embargo is None:
        revealed = _revealed(round_, now)
    reason = None if embargo is None else embargo.reason
    talk = said_by(service, match, viewer, version)
    return StateAt(version=version, view=view, revealed=revealed, embargo=reason, talk=talk)


def state_tables(service: GameService, match_id: UUID, version: int) -> tuple[Match, Round | None]:
    """The match and its round as they were right after the event at ``version`` (R34)."""
    match, round_, _ = aggregates_at(service, match_id, version)
    return match, round_


def aggregates_at(
    service: GameService, match_id: UUID, version: int
) -> tuple[Match, Round | None, datetime]:
    """The match and its round as of a match version, and the time of that version's
    event (R34): what :func:`state_at` views, and what the match summary is built from."""
    _check_version(version)
    return _as_of(service, _layout(service, match_id), version)


# -- internals ------------------------------------------------------------------------------


def _as_of(
    service: GameService, layout: _Layout, version: int
) -> tuple[Match, Round | None, datetime]:
    match_id = layout.match_id
    _check_version(version)
    if version > layout.total:
        raise NotFoundError(f"match {match_id} has versions 1..{layout.total}, not {version}")
    seg = layout.segment_at(version)
    round_: Round | None = None
    if seg.number == 0:
        match_version = seg.first + version - seg.start
        match = _match_at(service, layout, match_version)
        number = match.round_number
        # the round's events follow its RoundBegun: at RoundBegun itself there are none yet
        if number and layout.begun_at[number] < match_version and layout.lengths[number]:
            rid = round_id(match_id, number)
            round_ = _round_at(service, rid, layout.lengths[number], layout.lengths[number])
        now: datetime = match.modified_on
    else:
        match = _match_at(service, layout, layout.begun_at[seg.number])
        wanted = version - seg.start + 1
        round_ = _round_at(service, seg.aggregate_id, wanted, layout.lengths[seg.number])
        now = round_.modified_on
    return match, round_, now


def _match_at(service: GameService, layout: _Layout, version: int) -> Match:
    """The match at its aggregate ``version``: when that is its last (the state the tables
    are at now, read most), the service's load (a copy of its cached aggregate), else a
    replay to it."""
    if version == layout.match_events[-1].originator_version:
        match = service.get_match(layout.match_id)
        if match.version == version:  # no save since the layout was read
            return match
    return service.get_match(layout.match_id, version=version)


def _round_at(service: GameService, rid: UUID, version: int, length: int) -> Round:
    """The round at ``version`` as :func:`_match_at` loads a match (``length``: its events
    as the layout read them)."""
    if version == length:
        round_ = service.get_round(rid)
        if round_.version == version:
            return round_
    return service.get_round(rid, version=version)


def version_at(service: GameService, match_id: UUID, at: datetime) -> int:
    """The match version at the moment ``at`` (R34): the version of the last event that
    happened at or before it (events are in commit order, their times from the service's
    clock). NotFoundError before the match was created. Only the rounds whose events
    straddle ``at`` are read."""
    if at.tzinfo is None:
        raise InvalidInputError("at needs a time zone (e.g. 2026-01-01T12:00:00Z)")
    layout = _layout(service, match_id)
    version = 0
    for i, seg in enumerate(layout.segments):
        if seg.number:
            following = layout.segments[i + 1] if i + 1 < len(layout.segments) else None
            if following is not None and layout.match_events[following.first - 1].timestamp <= at:
                version = seg.start + seg.count - 1  # the whole round was before ``at``
                continue
            stored = service.recorder.select_events(
                seg.aggregate_id, gt=seg.first - 1, lte=seg.first - 1 + seg.count
            )
            events: Sequence[Any] = [service.mapper.to_domain_event(s) for s in stored]
        else:
            events = layout.match_events[seg.first - 1 : seg.first - 1 + seg.count]
        for k, event in enumerate(events):
            if event.timestamp > at:
                return _existing(match_id, version, at)
            version = seg.start + k
    return _existing(match_id, version, at)


def _existing(match_id: UUID, version: int, at: datetime) -> int:
    if not version:
        raise NotFoundError(f"match {match_id} did not exist yet at {at.isoformat()}")
    return version


def _check_version(version: int) -> None:
    if type(version) is not int or version < 1:
        raise InvalidInputError(f"version is a match version >= 1, got {version!r}")


def _check_viewer(viewer: int | None) -> None:
    if viewer is not None and (type(viewer) is not int or not 0 <= viewer <= 3):
        raise InvalidInputError(f"a viewer is a seat 0..3 or None, got {viewer!r}", rule="R1")


def _embargo(service: GameService, layout: _Layout) -> Embargo | None:
    """The tournament embargo on the match's scored rounds (R36); asked only when the
    match has a scored round to hide."""
    if not layout.scored:
        return None
    created = layout.match_events[0]
    return embargo_for(service, created.tournament_id, created.tournament_round)


def _revealed(round_: Round, now: datetime) -> Revealed:
    ctx = round_context(round_)
    if round_.dealt is None:
        return Revealed(hands=[[], [], [], []], bottom=[], buried_by=None, seed="")
    return Revealed(
        hands=[sorted_names(round_.hand_at(seat, now), ctx) for seat in range(4)],
        bottom=sorted_names(round_.bottom, ctx),
        buried_by=round_.buried_by,
        seed=round_.seed_hex,
    )


def _visible(
    service: GameService,
    layout: _Layout,
    seg: _Segment,
    event: Any,
    viewer: int | None,
    embargo: Embargo | None = None,
) -> frozenset[str]:
    """The secret fields of ``event`` that ``viewer`` may see (R21, R33, R35); under the
    tournament embargo a scored round keeps its during-play redaction (R36)."""
    if seg.number == 0:
        return _NONE  # token hashes are never shown
    scored = seg.number in layout.scored and embargo is None
    if scored:
        return released_secrets(event)
    if (
        isinstance(event, BottomBuried)
        and viewer is not None
        and viewer in (event.seat, _taker(service, seg, event.originator_version))
    ):
        return _CARDS
    return _NONE


def released_secrets(event: Any) -> frozenset[str]:
    """The secret fields of a round's ``event`` everyone may see once its round is scored
    (and, on a tournament table, its tournament round complete, R36): ``Dealt.seed``
    (R35) and ``BottomBuried.cards`` (R21, R33). Before that, none (a spectator's view;
    the feed of :mod:`services.feed` shares this)."""
    if isinstance(event, Dealt):
        return _SEED
    if isinstance(event, BottomBuried):
        return _CARDS
    return _NONE


def _taker(service: GameService, seg: _Segment, buried: int) -> int | None:
    """The 炒底 overcaller who took the cards buried at round version ``buried`` (R20)."""
    stored = service.recorder.select_events(seg.aggregate_id, gt=buried, limit=_LOOKAHEAD)
    for s in stored:
        e = service.mapper.to_domain_event(s)
        if isinstance(e, Overcalled):
            return e.seat
        if isinstance(e, BottomBuried | Dealt):
            return None
    return None

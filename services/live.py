"""A match followed event by event, for the live streams (a frame per version:
docs/decisions.md L12).

A :class:`LiveTable` is a match and its current round as of one match version, owned by
whoever follows it: it is loaded once (a copy, like every load) and then *advanced* by
applying the events saved since, one at a time, through the library's
:func:`services.game.replay` — no reload, no copy per change.
After each event the caller renders what every viewer sees at that version
(:meth:`LiveTable.frame`): the event that made the version, redacted for the viewer as it
was at that moment (R33), and the viewer's view after it (:func:`services.views.table_view`
at the event's time, so a frame's view is the state as of its version, R34).

**Order** (as :mod:`services.history` lays it out): a match's events and its rounds' events
merge structurally — right after ``RoundBegun(n)`` come all of round n's events, then the
match's ``RoundRecorded(n)``. :meth:`LiveTable.advance` reads the open round's new events,
then the match's new events; a ``RoundRecorded(n)`` first takes whatever of round n it has
not applied yet (the round was read a moment before the match, and a save may have landed
in between), and a ``RoundBegun(k)`` is followed by round k's events. Every event applied
adds exactly one to :meth:`Match.sequence` (checked).

**Redaction at the moment** (R21, R33, R35): a ``BottomBuried`` shows its cards to the seat
that buried them only; a ``Dealt`` never shows its seed (the round is not scored when it is
dealt; the history resource reveals both once it is); token hashes never; under the
tournament embargo (R36) a ``RoundScored`` loses its seed and bottom.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any
from uuid import UUID

import msgspec
from eventsourcing.domain import Aggregate
from msgspec import Meta

from domain.game.match import Match
from domain.game.match_events import RoundBegun, RoundRecorded, SeatLeft, SeatTokenReissued
from domain.game.round import DRAWS, Round, RoundPhase
from domain.game.round_events import BottomBuried, RoundScored
from services import field_docs
from services.embargo import Embargo, view_embargo
from services.game import GameService, replay
from services.history import state_tables
from services.history_items import HistoryItem, history_item
from services.json_patch import Json, PatchOperation, diff
from services.view_types import PublicView, SeatView
from services.views import stored_views, table_view

_NONE: frozenset[str] = frozenset()
_CARDS = frozenset({"cards"})
_EMBARGOED = ("seed", "bottom_cards", "bottom_points")


_VERSION_DOC = "The match version this frame is for (also the SSE `id`)."
_EVENT_DOC = (
    "The event that made this version, redacted for the viewer as at that moment (R33): "
    "fields the viewer may not see are left out and named in `hidden`."
)
_VIEW_DOC = "The viewer's table right after the event: the state as of this version (R34)."
_DEAL_VERSION_DOC = "The match version the deal belongs to (Last-Event-ID stays at it)."
_DRAWN_DOC = "Cards drawn so far, all seats together (R16)."


class _Frame(msgspec.Struct, frozen=True, kw_only=True, rename="camel", tag_field="kind"):
    """A live stream's frame; ``kind`` says whose (``seat``: a seat token's stream,
    ``public``: a spectator's), so that each decodes as its own type."""


class SeatFrame(_Frame, frozen=True, kw_only=True, tag="seat"):
    """What a seat's live stream sends for one match version (``event: view``, ``id:`` the
    version): the event that made the version and the seat's view right after it."""

    version: Annotated[Annotated[int, Meta(description=_VERSION_DOC)], field_docs.VERSION]
    event: Annotated[HistoryItem, Meta(description=_EVENT_DOC)]
    view: Annotated[SeatView, Meta(description=_VIEW_DOC)]


class PublicFrame(_Frame, frozen=True, kw_only=True, tag="public"):
    """What a spectator's live stream sends for one match version (``event: view``,
    ``id:`` the version): the event that made the version and the public view after it."""

    version: Annotated[Annotated[int, Meta(description=_VERSION_DOC)], field_docs.VERSION]
    event: Annotated[HistoryItem, Meta(description=_EVENT_DOC)]
    view: Annotated[PublicView, Meta(description=_VIEW_DOC)]


class SeatDealFrame(_Frame, frozen=True, kw_only=True, tag="seat"):
    """A paced deal's progress on a seat's stream (``event: deal``, no ``id``: it is not a
    version): the seat's view as cards are drawn (R16) — its hand grows."""

    version: Annotated[Annotated[int, Meta(description=_DEAL_VERSION_DOC)], field_docs.VERSION]
    drawn: Annotated[int, Meta(description=_DRAWN_DOC)]
    view: Annotated[SeatView, Meta(description="The seat's table now, with its cards so far.")]


class PublicDealFrame(_Frame, frozen=True, kw_only=True, tag="public"):
    """A paced deal's progress on a spectator's stream (``event: deal``, no ``id``): the
    public view as cards are drawn (R16) — every seat's hand size."""

    version: Annotated[Annotated[int, Meta(description=_DEAL_VERSION_DOC)], field_docs.VERSION]
    drawn: Annotated[int, Meta(description=_DRAWN_DOC)]
    view: Annotated[PublicView, Meta(description="The table now, hand sizes so far.")]


LiveFrame = SeatFrame | PublicFrame
"""One match version's frame (``event: view``)."""
DealFrame = SeatDealFrame | PublicDealFrame
"""A paced deal's progress frame (``event: deal``)."""


class PatchFrame(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """A version as a patch (``event: patch``, ``id:`` the version), on a stream asked for
    ``?frames=patch``: the event that made the version, as in a :class:`LiveFrame`, and an
    RFC 6902 JSON Patch that turns the viewer's view at the version before into its view at
    this one (docs/decisions.md D-light-frames)."""

    version: Annotated[
        Annotated[
            int, Meta(description="The match version this frame is for (also the SSE `id`).")
        ],
        field_docs.VERSION,
    ]
    event: Annotated[
        HistoryItem,
        Meta(
            description="The event that made this version, redacted for the viewer as at "
            "that moment (R33), as in a LiveFrame."
        ),
    ]
    patch: Annotated[
        list[PatchOperation],
        Meta(
            description="RFC 6902 operations (add, remove, replace; in order) that turn the "
            "view of the frame before (a `view` frame's, or the last one patched) into the "
            "view as of this version (R34): what `GET /v1/matches/{id}/state?version=` "
            "shows this viewer. Empty when the view did not change."
        ),
    ]


class DealPatchFrame(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """A paced deal's progress as a patch (``event: deal-patch``, no ``id``), on a stream
    asked for ``?frames=patch``: what changed since the deal frame before — a seat's new
    card, the hand sizes, the cards drawn (R16)."""

    version: Annotated[
        Annotated[
            int,
            Meta(description="The match version the deal belongs to (Last-Event-ID stays at it)."),
        ],
        field_docs.VERSION,
    ]
    drawn: Annotated[int, Meta(description="Cards drawn so far, all seats together (R16).")]
    patch: Annotated[
        list[PatchOperation],
        Meta(
            description="RFC 6902 operations that turn the deal's view before — the previous "
            "`deal`/`deal-patch` frame's of this version, else the version's own view — into "
            "the viewer's table now, with the cards drawn so far. A version frame that "
            "follows patches the version's view, not the deal's."
        ),
    ]


def view_json(view: SeatView | PublicView) -> Json:
    """A view as the JSON values a patch is made over (the names and values it encodes to)."""
    return msgspec.to_builtins(view)


def patch_frame(frame: LiveFrame, before: Json) -> tuple[PatchFrame, Json]:
    """``frame`` as a patch over the viewer's view ``before``, and the view after it."""
    after = view_json(frame.view)
    return PatchFrame(version=frame.version, event=frame.event, patch=diff(before, after)), after


def deal_patch_frame(frame: DealFrame, before: Json) -> tuple[DealPatchFrame, Json]:
    """``frame`` as a patch over the deal's view ``before``, and the view after it."""
    after = view_json(frame.view)
    patch = DealPatchFrame(version=frame.version, drawn=frame.drawn, patch=diff(before, after))
    return patch, after


class StoreNeededError(Exception):
    """An advance that may not read the store (``offline``) met events it was not handed."""


@dataclass(frozen=True, slots=True)
class Step:
    """One event applied: the match version it made and the round it belongs to."""

    version: int
    number: int
    """The round's number for a round event; 0 for the match's own."""
    event: Aggregate.Event


class LiveTable:
    """A match and its current round at one version, advanced event by event."""

    def __init__(
        self,
        service: GameService,
        match: Match,
        round_: Round | None,
        version: int,
    ) -> None:
        self.service = service
        self.match = match
        self.round = round_
        self.version = version
        self.embargo: Embargo | None = view_embargo(service, match, round_)
        self._known: Sequence[Any] | None = None
        self._offline = False
        self.reissued: set[int] = set()
        """Seats whose token was re-issued while advancing (their streams must end)."""
        self._item: tuple[Step, frozenset[str], tuple[str, ...], HistoryItem] | None = None
        """The last step's event as a history item, for the next viewer who sees the same
        fields of it (:meth:`frame`)."""
        self.last = self._last_step()
        """The step that made :attr:`version` (the current version's frame)."""

    @classmethod
    def now(cls, service: GameService, match_id: UUID) -> LiveTable:
        """The match as it stands (:class:`~services.errors.NotFoundError` if none)."""
        match = service.get_match(match_id)
        # a save landing between the two reads is caught up by advance() (load_live)
        round_ = service.current_round(match)
        return cls(service, match, round_, match.sequence(_round_version(round_)))

    @classmethod
    def at(cls, service: GameService, match_id: UUID, version: int) -> LiveTable:
        """The match as of ``version`` (R34), to advance from there (a resumed stream)."""
        match, round_ = state_tables(service, match_id, version)
        return cls(service, match, round_, version)

    def _last_step(self) -> Step:
        """The event at :attr:`version`: the open round's last, else the match's last
        (the match's order: ``RoundBegun(n)``, round n's events, ``RoundRecorded(n)``)."""
        round_ = self.round
        if self.match.round_open and round_ is not None and round_.version > 0:
            event = self._read(round_.id, round_.version - 1, round_.version)[0]
            return Step(self.version, round_.number, event)
        stored = self.service.recorder.select_events(self.match.id, desc=True)
        versioned: Any = next(
            e
            for e in map(self.service.mapper.to_domain_event, stored)
            if getattr(e, "VERSIONED", True)  # MatchCreated is
        )
        return Step(self.version, 0, versioned)

    # -- following ----------------------------------------------------------------------------

    def advance(
        self,
        known: Sequence[Any] | None = None,
        *,
        upto: int | None = None,
        offline: bool = False,
    ) -> Iterator[Step]:
        """Apply the events saved after :attr:`version`, one at a time, yielding after each
        (the tables are then as of that step's version); stop after ``upto``.

        ``known``: the match's newest events as the hub handed them over (commit order);
        they are used instead of reading the store wherever they follow on from what is
        applied — the store is read only to fill a gap (a row the hub did not hand over).
        ``offline``: the store is never read — a gap raises :class:`StoreNeededError` before
        anything of it is applied, so the tables stay as of the last step yielded and a
        later advance (one that may read) goes on from there (docs/decisions.md D-path)."""
        self._known = known
        self._offline = offline
        match = self.match
        if match.round_open:
            rid = match.current_round_id()
            assert rid is not None
            if self.round is not None and self.round.id != rid:
                self.round = None  # begun, none of its events applied yet
            for event in self._read(rid, 0 if self.round is None else self.round.version):
                if upto is not None and self.version >= upto:
                    return
                yield self._apply_round(event)
        for event in self._read(match.id, match.version):
            if upto is not None and self.version >= upto:
                return
            if isinstance(event, RoundRecorded) and self.round is not None:
                behind = self.round.version < event.round_events
                if self.round.number == event.number and behind:
                    late = self._read(self.round.id, self.round.version, event.round_events)
                    for round_event in late:
                        if upto is not None and self.version >= upto:
                            return
                        yield self._apply_round(round_event)
                    if upto is not None and self.version >= upto:
                        return
            replay(match, (event,))
            if not getattr(event, "VERSIONED", True):  # no game move: no version, no frame
                if isinstance(event, SeatTokenReissued | SeatLeft):
                    self.reissued.add(event.seat)  # the seat's old token stops: its streams end
                continue
            if isinstance(event, RoundBegun):
                self.round = None
            yield self._stepped(Step(self.version + 1, 0, event))
            if isinstance(event, RoundBegun):
                for round_event in self._read(event.round_id, 0):
                    if upto is not None and self.version >= upto:
                        return
                    yield self._apply_round(round_event)

    def _read(self, originator: UUID, after: int, upto: int | None = None) -> list[Any]:
        known = self._known
        if known is not None:
            events = [
                e
                for e in known
                if e.originator_id == originator
                and e.originator_version > after
                and (upto is None or e.originator_version <= upto)
            ]
            versions = [e.originator_version for e in events]
            complete = upto is None or (versions[-1] if versions else after) == upto
            if versions == list(range(after + 1, after + 1 + len(versions))) and complete:
                return events
        if self._offline:
            raise StoreNeededError(f"events of {originator} after {after}: not handed over")
        stored = self.service.recorder.select_events(originator, gt=after, lte=upto)
        return [self.service.mapper.to_domain_event(s) for s in stored]

    def _apply_round(self, event: Any) -> Step:
        self.round = replay(self.round, (event,))
        if isinstance(event, RoundScored):
            self.embargo = view_embargo(self.service, self.match, self.round)
        assert self.round is not None
        return self._stepped(Step(self.version + 1, self.round.number, event))

    def _stepped(self, step: Step) -> Step:
        version = self.match.sequence(_round_version(self.round))
        if version != step.version:  # pragma: no cover - the stored order is broken
            raise RuntimeError(
                f"match {self.match.id}: an event made version {version}, not {step.version}"
            )
        self.version = version
        self.last = step
        return step

    def refresh_embargo(self) -> None:
        """Ask the tournament again (R36: its round's completion is no match version)."""
        self.embargo = view_embargo(self.service, self.match, self.round)

    # -- what a viewer sees ----------------------------------------------------------------------

    def frame(self, step: Step, viewer: int | None) -> LiveFrame:
        """``viewer``'s frame for the step just applied (:meth:`frames`)."""
        return self.frames(step, (viewer,))[0]

    def frames(self, step: Step, viewers: Sequence[int | None]) -> list[LiveFrame]:
        """Each of ``viewers``' frames for the step just applied, in their order: their
        views of the stored version looked up together (:func:`services.views.stored_views`,
        docs/decisions.md D-path4). The step's history item is built once for the viewers
        who see the same fields of its event (every viewer but the seat that buried a
        bottom, R21, R33) and shared by their frames (an immutable struct, encoded with
        each)."""
        event = step.event
        views = stored_views(
            self.service, self.match, self.round, viewers, event.timestamp, embargo=self.embargo
        )
        withheld = _EMBARGOED if self.embargo and isinstance(event, RoundScored) else ()
        frames: list[LiveFrame] = []
        for viewer, view in zip(viewers, views, strict=True):
            visible = _NONE
            if isinstance(event, BottomBuried) and viewer == event.seat:
                visible = _CARDS
            kept = self._item
            if kept is not None and kept[0] is step and kept[1] == visible and kept[2] == withheld:
                item = kept[3]  # the viewers of a step see the same item but for a burier's cards
            else:
                item = history_item(step.version, step.number, event, visible, withheld)
                self._item = (step, visible, withheld, item)
            if isinstance(view, SeatView):
                frames.append(SeatFrame(version=step.version, event=item, view=view))
            else:
                frames.append(PublicFrame(version=step.version, event=item, view=view))
        return frames

    def dealing(self, at: datetime) -> int | None:
        """Cards drawn by ``at`` while a paced deal is still under way (R16), else None."""
        round_ = self.round
        if (
            round_ is None
            or round_.phase is not RoundPhase.DEALING
            or not round_.pacing.interval_ms
            or not self.match.round_open
        ):
            return None
        drawn = round_.drawn_at(at)
        return drawn if drawn < DRAWS else None

    def deal_frame(self, viewer: int | None, at: datetime, drawn: int) -> DealFrame:
        view = table_view(self.match, self.round, viewer, at, embargo=self.embargo)
        if isinstance(view, SeatView):
            return SeatDealFrame(version=self.version, drawn=drawn, view=view)
        return PublicDealFrame(version=self.version, drawn=drawn, view=view)


def _round_version(round_: Round | None) -> int:
    return 0 if round_ is None else round_.version


def load_live(service: GameService, match_id: UUID) -> LiveTable:
    """:meth:`LiveTable.now`, caught up with whatever landed while it was read."""
    table = LiveTable.now(service, match_id)
    for _ in table.advance():
        pass
    return table


def current_version(service: GameService, match_id: UUID) -> int:
    """The match's version as stored now (R34)."""
    match = service.get_match(match_id)
    return match.sequence(_round_version(service.current_round(match)))

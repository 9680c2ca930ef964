"""Views of a match's table for one seat or for spectators (RULES R33: who sees what).

:func:`table_view` is the **only** path from aggregate state to a viewer: every card that
reaches an API client passes through it (or through the redaction of
:mod:`services.history`). It takes ``(match, round, viewer, now)``: ``viewer`` is a seat
0..3 (a :class:`SeatView`) or None for a spectator (a :class:`PublicView`, which holds no
hand at all). What a seat sees (R33):

* its own hand (during the paced deal, the cards drawn by ``now``, R16/R17);
* the bottom (底牌) only while it is the seat to bury them or once it has buried them
  (R21; under 炒底 an overcaller sees the cards it takes, R20);
* every card once it is played (R22), every declaration and overcall (R17, R20), the
  bottom's 3rd card when R19 names trump from it, and failed throws (R22);
* the deal's commitment (R35) from the start; once ``RoundScored`` exists, everything:
  the seed, the four hands as dealt, the dealt bottom and the buried one (R33, R35) —
  except on a tournament table whose tournament round is not complete
  (:mod:`services.embargo`, R36): then ``result`` is None, ``embargo`` says why, and a
  seat sees what it saw during play. ``embargo`` is decided by the caller
  (:func:`services.embargo.view_embargo`); a caller that does not decide gets the
  worst case for a tournament table (withheld).

Views are the frozen msgspec Structs of :mod:`services.view_types` (camelCase JSON, the
API's payloads as they are). ``version`` is the match's version (:meth:`Match.sequence`, the
API's ETag); ``versions`` the aggregates' own.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Sequence
from datetime import datetime, timedelta
from functools import lru_cache
from typing import Any, cast, overload
from uuid import UUID

from domain.game.match import Match
from domain.game.round import DRAWS, Round, RoundPhase
from domain.game.timers import turn_clock
from domain.rules.cards import RANKS, SUITS, Card, card_names
from domain.rules.errors import InvalidInputError
from domain.rules.shows import Show
from services.embargo import UNCHECKED, Embargo, Unchecked, resolve
from services.legal import legal_actions, round_context, sorted_names
from services.view_play import attacking_team, deal_view, play_fields
from services.view_types import (
    Expected,
    ExpectedAction,
    Outcome,
    PublicView,
    RecordedView,
    RoundResultView,
    SeatKind,
    SeatPlayer,
    SeatView,
    ShowView,
    Strength,
    Suit,
    Versions,
    board_view,
    origin_view,
    recorded_view,
    rules_view,
)

__all__ = [
    "PublicView",
    "SeatView",
    "clock_marker",
    "match_version",
    "stored_view",
    "table_view",
]


@overload
def table_view(
    match: Match,
    round_: Round | None,
    viewer: int,
    now: datetime,
    *,
    embargo: Embargo | Unchecked | None = ...,
) -> SeatView: ...
@overload
def table_view(
    match: Match,
    round_: Round | None,
    viewer: None,
    now: datetime,
    *,
    embargo: Embargo | Unchecked | None = ...,
) -> PublicView: ...
def table_view(
    match: Match,
    round_: Round | None,
    viewer: int | None,
    now: datetime,
    *,
    embargo: Embargo | Unchecked | None = UNCHECKED,
) -> SeatView | PublicView:
    """The table as ``viewer`` (a seat 0..3, None = spectator) sees it at ``now`` (R33);
    ``embargo``: the tournament embargo on its scored deals (R36), None when there is none."""
    _check_viewer(match, round_, viewer)
    withheld = resolve(match, embargo)
    return _view(match, round_, viewer, now, withheld, _public_once(match, round_, now, withheld))


def _check_viewer(match: Match, round_: Round | None, viewer: int | None) -> None:
    if viewer is not None and (type(viewer) is not int or not 0 <= viewer <= 3):
        raise InvalidInputError(f"a viewer is a seat 0..3 or None, got {viewer!r}", rule="R1")
    if round_ is not None and round_.match_id != match.id:
        raise InvalidInputError(f"round {round_.id} is not a round of match {match.id}")


def _view(
    match: Match,
    round_: Round | None,
    viewer: int | None,
    now: datetime,
    withheld: Embargo | None,
    public: dict[str, Any],
) -> SeatView | PublicView:
    """The view of ``viewer`` with the public part ``public`` (:func:`_public`)."""
    if viewer is None:
        return PublicView(**public)
    hand = _hand(round_, viewer, now)
    bottom = _visible_bottom(round_, viewer, revealed=withheld is None)
    if (
        withheld is None
        and round_ is not None
        and round_.result is not None
        and round_.dealt is not None
    ):
        seen: list[Card] = [c for h in round_.dealt.hands for c in h] + list(round_.dealt.bottom)
    else:
        played = list(round_.play.played) if round_ is not None and round_.play else []
        seen = [*hand, *(bottom or ()), *played]
    ctx = round_context(round_)
    return SeatView(
        **public,
        seat=viewer,
        hand=sorted_names(hand, ctx),
        bottom=None if bottom is None else sorted_names(bottom, ctx),
        visible=sorted_names(seen, ctx),
        legal=legal_actions(match, round_, viewer, now, ctx),
    )


_STORED_KEPT = 256
_PUBLIC = "public"
_stored: weakref.WeakKeyDictionary[object, OrderedDict[tuple[Any, ...], dict[Any, Any]]] = (
    weakref.WeakKeyDictionary()
)
_stored_lock = threading.Lock()


@overload
def stored_view(
    owner: object,
    match: Match,
    round_: Round | None,
    viewer: int,
    at: datetime,
    *,
    embargo: Embargo | Unchecked | None = ...,
) -> SeatView: ...
@overload
def stored_view(
    owner: object,
    match: Match,
    round_: Round | None,
    viewer: None,
    at: datetime,
    *,
    embargo: Embargo | Unchecked | None = ...,
) -> PublicView: ...
def stored_view(
    owner: object,
    match: Match,
    round_: Round | None,
    viewer: int | None,
    at: datetime,
    *,
    embargo: Embargo | Unchecked | None = UNCHECKED,
) -> SeatView | PublicView:
    """:func:`table_view` of a match as stored at one version, built once per viewer for
    every caller of ``owner`` (the service) that shows that version at the same moment:
    the answer of the command that made it (from the aggregates the command saved) and
    the live streams' frames (from the follower's own copy) share the public part and the
    acting seat's view (docs/decisions.md D-path3).

    Kept by what decides a view of a stored state: the aggregates' ids and versions (a
    version is one stored event), ``at``, the embargo as resolved and the seats' names
    (opened from sealed fields: an erased player's name changes with no new version).
    A state with events not yet saved (a command deciding, a dry run's copy) is never
    kept: its version may never be stored as it is."""
    return stored_views(owner, match, round_, (viewer,), at, embargo=embargo)[0]


def stored_views(
    owner: object,
    match: Match,
    round_: Round | None,
    viewers: Sequence[int | None],
    at: datetime,
    *,
    embargo: Embargo | Unchecked | None = UNCHECKED,
) -> list[SeatView | PublicView]:
    """:func:`stored_view` of each of ``viewers`` (in their order), the state's key made
    and looked up once for all of them: the live follower's frames of one version, every
    viewer watching (docs/decisions.md D-path4)."""
    if match.pending_events or (round_ is not None and round_.pending_events):
        return [table_view(match, round_, v, at, embargo=embargo) for v in viewers]
    for viewer in viewers:
        _check_viewer(match, round_, viewer)
    withheld = resolve(match, embargo)
    key = (
        match.id,
        match.version,
        None if round_ is None else round_.id,
        None if round_ is None else round_.version,
        at,
        withheld,
        tuple(None if seat is None else seat.name for seat in match.seats),
    )
    with _stored_lock:
        kept = _stored.get(owner)
        if kept is None:
            kept = _stored[owner] = OrderedDict()
        views = kept.get(key)
        if views is None:
            views = kept[key] = {}
            while len(kept) > _STORED_KEPT:
                kept.popitem(last=False)
        else:
            kept.move_to_end(key)
        found: list[SeatView | PublicView | None] = [views.get(v) for v in viewers]
        public: dict[str, Any] | None = views.get(_PUBLIC)
    if all(view is not None for view in found):
        return cast("list[SeatView | PublicView]", found)
    if public is None:
        public = _public(match, round_, at, withheld)
    built = [
        _view(match, round_, v, at, withheld, public) if view is None else view
        for v, view in zip(viewers, found, strict=True)
    ]
    with _stored_lock:
        views.setdefault(_PUBLIC, public)
        return [views.setdefault(v, view) for v, view in zip(viewers, built, strict=True)]


def match_version(match: Match, round_: Round | None) -> int:
    """The match version a view of ``match`` with ``round_`` stands at: with its current
    round (or none) :meth:`Match.sequence`; with an earlier, recorded round, the position
    of that round's last event."""
    if round_ is None or round_.number == match.round_number:
        return match.sequence(0 if round_ is None else round_.version)
    done = match.results[: round_.number]
    if len(done) < round_.number:  # not a round of this match's past: as it stands
        return match.sequence(round_.version)
    return done[-1].originator_version - 1 + sum(r.round_events for r in done)


def clock_marker(round_: Round | None, now: datetime) -> str:
    """ "" when a view depends on the version only; else what ``now`` changes in it: the
    cards drawn so far of a paced deal (``d37``, R16) and ``c`` once a deadline has passed
    that no command has claimed yet (the drawing R17, the overcall window R20)."""
    if round_ is None or round_.dealt is None:
        return ""
    marker = ""
    phase = round_.phase
    if phase is RoundPhase.DEALING:
        drawn = round_.drawn_at(now)
        if drawn < DRAWS:
            marker = f"d{drawn}"
        elif now > round_.drawing_deadline():
            marker = "c"
    elif phase is RoundPhase.OVERCALLING and round_.pacing.window_ms:
        opened = round_.window_opened_at
        if opened is not None and now > opened + timedelta(milliseconds=round_.pacing.window_ms):
            marker = "c"
    return marker


# -- the one place that decides who sees the bottom (R21, R20 炒底, R33) --------------------


def _visible_bottom(
    round_: Round | None, viewer: int, *, revealed: bool = True
) -> tuple[Card, ...] | None:
    """The bottom if ``viewer`` may see it: the seat burying now (it takes these 8 cards:
    the dealt bottom, or under 炒底 the cards buried before), the seat that buried them,
    and everyone once the round is scored (unless ``revealed`` is False: the tournament
    embargo, R36)."""
    if round_ is None or round_.dealt is None:
        return None
    burying_now = round_.phase is RoundPhase.BURYING and round_.bidding.burier == viewer
    scored = revealed and round_.result is not None
    if scored or burying_now or round_.buried_by == viewer:
        return tuple(round_.bottom)
    return None


def hand_sizes(round_: Round, now: datetime) -> list[int]:
    """How many cards each seat holds (R33: sizes only): the cards drawn so far during the
    paced deal (R16); the burier holds its hand and the 8 it takes while burying (R21, and
    the 炒底 overcaller re-burying, R20)."""
    sizes = [len(_hand(round_, s, now)) for s in range(4)]
    if round_.phase is RoundPhase.BURYING and round_.bidding.burier is not None:
        sizes[round_.bidding.burier] += len(round_.bottom)
    return sizes


def _team_levels(match: Match, round_: Round) -> tuple[int, int]:
    """The teams' levels now (R5, R30): the round's until the match records it, then the
    match's (the next round's, or the final ones at match end, R32)."""
    recorded = round_.number <= len(match.results) and match.round_number == round_.number
    return match.levels if recorded else round_.levels


def _hand(round_: Round | None, seat: int, now: datetime) -> tuple[Card, ...]:
    """The seat's own cards (R33); during the paced deal the cards drawn by ``now``."""
    if round_ is None or round_.dealt is None:
        return ()
    return round_.hand_at(seat, now)


# -- public parts ---------------------------------------------------------------------------

_PUBLIC_KEPT = 64
_public_parts: OrderedDict[tuple[Any, ...], tuple[Match, Round | None, dict[str, Any]]] = (
    OrderedDict()
)
_public_lock = threading.Lock()


def _public_once(
    match: Match, round_: Round | None, now: datetime, embargo: Embargo | None
) -> dict[str, Any]:
    """:func:`_public`, built once for the viewers of one state: the live feed builds the
    frame of a version for four seats and the spectators from the same match and round
    objects at the same instant, and the public part is the same for all of them (it
    depends on no viewer). Kept by the objects themselves (held here, so their ids stay
    theirs) and their versions: an aggregate changes only by an event, which moves its
    version; a dry run's state is another object. The fields are never changed after."""
    key = (
        id(match),
        match.version,
        id(round_),
        None if round_ is None else round_.version,
        now,
        embargo,
    )
    with _public_lock:
        kept = _public_parts.get(key)
        if kept is not None and kept[0] is match and kept[1] is round_:
            _public_parts.move_to_end(key)
            return kept[2]
    fields = _public(match, round_, now, embargo)
    with _public_lock:
        _public_parts[key] = (match, round_, fields)
        while len(_public_parts) > _PUBLIC_KEPT:
            _public_parts.popitem(last=False)
    return fields


def _public(
    match: Match, round_: Round | None, now: datetime, embargo: Embargo | None = None
) -> dict[str, Any]:
    """The public view's fields (a seat's view has them too, with its own)."""
    seats = [
        None
        if info is None
        else SeatPlayer(
            seat=seat,
            name=info.name,
            kind=cast("SeatKind", info.kind),
            left=seat in match.left,
        )
        for seat, info in enumerate(match.seats)
    ]
    common: dict[str, Any] = {
        "match_id": id_text(match.id),
        "version": match_version(match, round_),
        "versions": Versions(
            match_version=match.version, round_version=None if round_ is None else round_.version
        ),
        "seats": seats,
        "match_finished": match.finished,
        "winner": match.winner if match.finished else None,
        "last_result": _recorded(match),
        "origin": origin_view(match),
    }
    if round_ is None:
        return common | {
            "rules": rules_view(match.rules),
            "team_levels": [RANKS[lv] for lv in match.levels],
            "dealer": match.dealer,
            "round_number": match.round_number,  # begun, no round event yet
        }
    bidding = round_.bidding
    play = round_.play
    known = bidding.trump_known
    trump = bidding.trump if known else None
    fields = common | {
        "rules": rules_view(round_.rules),
        "round_id": id_text(round_.id),
        "round_number": round_.number,
        "phase": str(round_.phase),
        "team_levels": [RANKS[lv] for lv in _team_levels(match, round_)],
        "dealer": bidding.dealer,
        "level_rank": RANKS[bidding.level],
        "trump": None if trump is None else SUITS[trump],
        "trump_decided": known,
        "declarations": [_show(s, i > 0) for i, s in enumerate(bidding.shows)],
        "fallback_card": _fallback(round_),
        "commitment": round_.commitment or None,
        "deadline": _deadline(round_),
        "turn_deadline": None if match.finished else _turn_deadline(match, round_),
        "expected": None if match.finished else _expected(round_),
        "hand_sizes": hand_sizes(round_, now),
        "attackers": attacking_team(round_),
        "deal": deal_view(round_, now),
        "board": board_view(round_.board),
    }
    fields |= _result_fields(round_, embargo)
    if play is not None:
        fields |= play_fields(play)
    return fields


@lru_cache(maxsize=8192)
def id_text(value: UUID) -> str:
    """An id as the views write it (``str`` of a UUID formats 32 hex digits each time;
    the ids of live matches and rounds are asked for on every view)."""
    return str(value)


def _recorded(match: Match) -> RecordedView | None:
    return recorded_view(match.results[-1]) if match.results else None


def _show(show: Show, overcall: bool) -> ShowView:
    trump = None if show.trump is None else SUITS[show.trump]
    return ShowView(
        seat=show.seat,
        cards=card_names(show.cards),
        trump=cast("Suit | None", trump),
        strength=cast("Strength", show.strength.name.lower()),
        overcall=overcall,
    )


def _fallback(round_: Round) -> str | None:
    bidding = round_.bidding
    if bidding.fallback and bidding.bottom_card is not None:
        return card_names([bidding.bottom_card])[0]
    return None


def _deadline(round_: Round) -> str | None:
    phase = round_.phase
    if phase is RoundPhase.DEALING and round_.dealt is not None:
        return round_.drawing_deadline().isoformat()
    opened = round_.window_opened_at
    if phase is RoundPhase.OVERCALLING and round_.pacing.window_ms and opened is not None:
        return (opened + timedelta(milliseconds=round_.pacing.window_ms)).isoformat()
    return None


def _turn_deadline(match: Match, round_: Round) -> str | None:
    clock = turn_clock(match.timers, round_)  # turn timers (docs/timers.md)
    return None if clock is None else clock.deadline.isoformat()


def _expected(round_: Round) -> Expected | None:
    phase = round_.phase
    if phase is RoundPhase.DEALING:
        return Expected(seat=None, action="declare_or_pass") if round_.dealt is not None else None
    if phase is RoundPhase.REDEAL:
        return Expected(seat=None, action="redeal")
    if phase in (RoundPhase.SCORED, RoundPhase.ABANDONED):
        return None
    seat = round_.to_act()
    if phase is RoundPhase.PLAYING and seat is None:
        return None  # a trick being won, or every card played and the round not yet scored
    action = {
        RoundPhase.DECLARING: "declare_or_pass",
        RoundPhase.OVERCALLING: "overcall_or_pass",
        RoundPhase.BURYING: "bury",
        RoundPhase.PLAYING: "play",
    }[phase]
    return Expected(seat=seat, action=cast("ExpectedAction", action))


def _result_fields(round_: Round, embargo: Embargo | None) -> dict[str, Any]:
    """``result`` (R26–R31 with everything revealed, R33, R35), or — on a tournament
    table whose tournament round is not complete — none, and ``embargo`` saying why (R36)."""
    if embargo is not None and round_.result is not None:
        return {"result": None, "embargo": embargo.reason}
    return {"result": _result(round_)}


def _result(round_: Round) -> RoundResultView | None:
    r = round_.result
    if r is None or round_.dealt is None:
        return None
    return RoundResultView(
        trick_points=r.trick_points,
        bottom_cards=card_names(r.bottom_cards),
        bottom_points=r.bottom_points,
        multiplier=r.multiplier,
        bottom_bonus=r.bottom_bonus,
        penalties=list(r.penalties),
        attackers_total=r.attackers_total,
        outcome=cast("Outcome", r.outcome),
        levels_gained=r.levels_gained,
        band=r.band,
        defenders_keep=r.defenders_keep,
        dealer=r.dealer,
        next_dealer=r.next_dealer,
        seed=r.seed,
        commitment=r.commitment,
        dealt_hands=[card_names(h) for h in round_.dealt.hands],
        dealt_bottom=card_names(round_.dealt.bottom),
    )

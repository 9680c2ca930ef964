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
  the seed, the four hands as dealt, the dealt bottom and the buried one (R33, R35).

Views are frozen dataclasses of plain values (cards in R4 notation, ranks ``"2"``..``"A"``,
suits ``"S" "H" "C" "D"``), so they encode to JSON as they are; ``versions`` carries the
match and round versions for ETags.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from datetime import datetime, timedelta
from itertools import islice
from typing import Any, overload

from domain.game.match import Match
from domain.game.round import BOTTOM, DRAWS, Round, RoundPhase
from domain.rules.bidding import Phase
from domain.rules.cards import RANKS, SUITS, Card, card_names
from domain.rules.context import TrumpContext, trump_context
from domain.rules.errors import IllegalMoveError, InvalidInputError
from domain.rules.follow import legal_plays
from domain.rules.play import TrickPlay
from domain.rules.shows import Show

FOLLOW_HINTS = 5
"""How many legal follows (R23) a seat is offered as hints; the generator can be huge."""

LEAD_NOTE = (
    "lead any single, pair, tractor (拖拉机) or throw (甩牌) of one suit category (R12-R15, R22)"
)


@dataclass(frozen=True, slots=True)
class SeatPlayer:
    """Who sits in a seat (R1): a display name and ``human`` or a bot kind."""

    seat: int
    name: str
    kind: str


@dataclass(frozen=True, slots=True)
class ShowView:
    """A declaration (R17) or an overcall (R20), public once made."""

    seat: int
    cards: list[str]
    trump: str | None
    """The suit letter it makes trump; None = no-trump (R9)."""
    strength: str
    overcall: bool


@dataclass(frozen=True, slots=True)
class PlayView:
    seat: int
    cards: list[str]


@dataclass(frozen=True, slots=True)
class TrickView:
    """A completed trick: its leader, the plays in order, the winner (R24)."""

    leader: int
    plays: list[PlayView]
    winner: int


@dataclass(frozen=True, slots=True)
class FailedThrow:
    """R22: a throw that could be beaten; the attempted cards were shown to the table."""

    seat: int
    attempted: list[str]


@dataclass(frozen=True, slots=True)
class Expected:
    """Whose action the round waits for (``seat`` None: any seat) and which."""

    seat: int | None
    action: str
    """declare_or_pass, overcall_or_pass, bury, play, redeal (the service deals again)."""


@dataclass(frozen=True, slots=True)
class ResultView:
    """``RoundScored`` (R26–R31) with everything revealed (R33, R35)."""

    trick_points: int
    bottom_cards: list[str]
    bottom_points: int
    multiplier: int
    bottom_bonus: int
    penalties: list[int]
    attackers_total: int
    outcome: str
    levels_gained: int
    band: str
    defenders_keep: bool
    dealer: int
    next_dealer: int
    seed: str
    commitment: str
    dealt_hands: list[list[str]]
    """The four hands as dealt from the seed (R16), in draw order."""
    dealt_bottom: list[str]
    """The bottom as dealt, before any burying (R16)."""


@dataclass(frozen=True, slots=True)
class Versions:
    """Aggregate versions the view was built from (the API's ETag)."""

    match_version: int
    round_version: int | None


@dataclass(frozen=True, slots=True)
class LegalActions:
    """What the service accepts from this seat right now (validated by the domain)."""

    actions: list[str]
    """Action names of :data:`services.game.ACTIONS` this seat may send now."""
    shows: list[list[str]]
    """declare / overcall: every show this seat can make (R17, R20), weakest first."""
    bury_from: list[str]
    """bury: choose ``bury_count`` of these cards (hand + bottom, R21)."""
    bury_count: int
    lead: str | None
    """play, leading: what a lead may be (R22)."""
    follows: list[list[str]]
    """play, following: some legal plays (R23), at most :data:`FOLLOW_HINTS`."""
    follow_count: int
    more_follows: bool


NO_ACTIONS = LegalActions([], [], [], 0, None, [], 0, False)


@dataclass(frozen=True, slots=True, kw_only=True)
class PublicView:
    """The table as a spectator sees it: no hand, no bottom before the end (R33).
    Before round 1 (seats still free) the round's fields keep their defaults."""

    match_id: str
    versions: Versions
    rules: dict[str, bool | int | str | None]
    seats: list[SeatPlayer | None]
    match_finished: bool
    team_levels: list[str]
    """Levels of team {0,2} and team {1,3} this round is played at (R5)."""
    dealer: int | None
    round_id: str | None = None
    round_number: int = 0
    phase: str = "seating"
    """A :class:`~domain.game.round.RoundPhase` value, or ``seating`` before round 1."""
    level_rank: str | None = None
    trump: str | None = None
    """Suit letter; None = no-trump (R9) or not decided yet (see ``trump_decided``)."""
    trump_decided: bool = False
    declarations: list[ShowView] = field(default_factory=list)
    fallback_card: str | None = None
    """R19: the bottom's 3rd card, shown to all when it named trump."""
    commitment: str | None = None
    """R35: sha256 of the deal's seed, published before the first card is drawn."""
    deadline: str | None = None
    """When the drawing (R16) or the overcall window (R20) closes by itself, ISO 8601."""
    expected: Expected | None = None
    hand_sizes: list[int] = field(default_factory=lambda: [0, 0, 0, 0])
    trick_leader: int | None = None
    trick: list[PlayView] = field(default_factory=list)
    last_trick: TrickView | None = None
    tricks_done: int = 0
    played: list[str] = field(default_factory=list)
    """Every card played so far, in play order (R33: public once played)."""
    attacker_points: int = 0
    failed_throws: list[FailedThrow] = field(default_factory=list)
    result: ResultView | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class SeatView(PublicView):
    """The table as ``seat`` sees it (R33)."""

    seat: int
    hand: list[str]
    """Sorted by trump order (suits S H C D low to high, then trump, R7–R10)."""
    bottom: list[str] | None
    """The bottom / buried cards when this seat may see them (R21, R20 炒底), else None."""
    visible: list[str]
    """Every card this seat can see: hand, bottom if shown, every card played; all 108
    once the round is scored (R33)."""
    legal: LegalActions


@overload
def table_view(match: Match, round_: Round | None, viewer: int, now: datetime) -> SeatView: ...
@overload
def table_view(match: Match, round_: Round | None, viewer: None, now: datetime) -> PublicView: ...
def table_view(
    match: Match, round_: Round | None, viewer: int | None, now: datetime
) -> SeatView | PublicView:
    """The table as ``viewer`` (a seat 0..3, None = spectator) sees it at ``now`` (R33)."""
    if viewer is not None and (type(viewer) is not int or not 0 <= viewer <= 3):
        raise InvalidInputError(f"a viewer is a seat 0..3 or None, got {viewer!r}", rule="R1")
    if round_ is not None and round_.match_id != match.id:
        raise InvalidInputError(f"round {round_.id} is not a round of match {match.id}")
    public = _public(match, round_, now)
    if viewer is None:
        return public
    hand = _hand(round_, viewer, now)
    bottom = _visible_bottom(round_, viewer)
    if round_ is not None and round_.result is not None and round_.dealt is not None:
        seen: list[Card] = [c for h in round_.dealt.hands for c in h] + list(round_.dealt.bottom)
    else:
        played = list(round_.play.played) if round_ is not None and round_.play else []
        seen = [*hand, *(bottom or ()), *played]
    ctx = _context(round_)
    return SeatView(
        **{f.name: getattr(public, f.name) for f in fields(PublicView)},
        seat=viewer,
        hand=_names(hand, ctx),
        bottom=None if bottom is None else _names(bottom, ctx),
        visible=_names(seen, ctx),
        legal=_legal(match, round_, viewer, now, ctx),
    )


# -- the one place that decides who sees the bottom (R21, R20 炒底, R33) --------------------


def _visible_bottom(round_: Round | None, viewer: int) -> tuple[Card, ...] | None:
    """The bottom if ``viewer`` may see it: the seat burying now (it takes these 8 cards:
    the dealt bottom, or under 炒底 the cards buried before), the seat that buried them,
    and everyone once the round is scored."""
    if round_ is None or round_.dealt is None:
        return None
    burying_now = round_.phase is RoundPhase.BURYING and round_.bidding.burier == viewer
    if round_.result is not None or burying_now or round_.buried_by == viewer:
        return tuple(round_.bottom)
    return None


def _hand(round_: Round | None, seat: int, now: datetime) -> tuple[Card, ...]:
    """The seat's own cards (R33); during the paced deal the cards drawn by ``now``."""
    if round_ is None or round_.dealt is None:
        return ()
    return round_.hand_at(seat, now)


# -- public parts ---------------------------------------------------------------------------


def _public(match: Match, round_: Round | None, now: datetime) -> PublicView:
    seats = [
        None if info is None else SeatPlayer(seat, info.name, info.kind)
        for seat, info in enumerate(match.seats)
    ]
    versions = Versions(match.version, None if round_ is None else round_.version)
    if round_ is None:
        return PublicView(
            match_id=str(match.id),
            versions=versions,
            rules=match.rules.to_mapping(),
            seats=seats,
            match_finished=match.finished,
            team_levels=[RANKS[lv] for lv in match.levels],
            dealer=match.dealer,
        )
    bidding = round_.bidding
    play = round_.play
    known = bidding.trump_known
    trump = bidding.trump if known else None
    return PublicView(
        match_id=str(match.id),
        versions=versions,
        rules=round_.rules.to_mapping(),
        seats=seats,
        match_finished=match.finished,
        round_id=str(round_.id),
        round_number=round_.number,
        phase=str(round_.phase),
        team_levels=[RANKS[lv] for lv in round_.levels],
        dealer=bidding.dealer,
        level_rank=RANKS[bidding.level],
        trump=None if trump is None else SUITS[trump],
        trump_decided=known,
        declarations=[_show(s, i > 0) for i, s in enumerate(bidding.shows)],
        fallback_card=_fallback(round_),
        commitment=round_.commitment or None,
        deadline=_deadline(round_),
        expected=None if match.finished else _expected(round_),
        hand_sizes=[len(_hand(round_, s, now)) for s in range(4)],
        result=_result(round_),
        **({} if play is None else _play_fields(play)),
    )


def _play_fields(play: TrickPlay) -> dict[str, Any]:
    """The tricks (R22–R24) and the attackers' points (R27): public as they are played."""
    last = None
    if play.last_trick is not None:
        leader, plays, winner = play.last_trick
        last = TrickView(leader, _plays(leader, plays), winner)
    return {
        "trick_leader": play.leader if play.trick else None,
        "trick": _plays(play.leader, play.trick),
        "last_trick": last,
        "tricks_done": play.tricks_done,
        "played": card_names(play.played),
        "attacker_points": play.attacker_points,
        "failed_throws": [FailedThrow(s, card_names(c)) for s, c in play.failed_throws],
    }


def _plays(leader: int, plays: Sequence[Sequence[Card]]) -> list[PlayView]:
    return [PlayView((leader + i) % 4, card_names(p)) for i, p in enumerate(plays)]


def _show(show: Show, overcall: bool) -> ShowView:
    trump = None if show.trump is None else SUITS[show.trump]
    return ShowView(show.seat, card_names(show.cards), trump, show.strength.name.lower(), overcall)


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


def _expected(round_: Round) -> Expected | None:
    phase = round_.phase
    if phase is RoundPhase.DEALING:
        return Expected(None, "declare_or_pass") if round_.dealt is not None else None
    if phase is RoundPhase.REDEAL:
        return Expected(None, "redeal")
    if phase is RoundPhase.SCORED:
        return None
    action = {
        RoundPhase.DECLARING: "declare_or_pass",
        RoundPhase.OVERCALLING: "overcall_or_pass",
        RoundPhase.BURYING: "bury",
        RoundPhase.PLAYING: "play",
    }[phase]
    return Expected(round_.to_act(), action)


def _result(round_: Round) -> ResultView | None:
    r = round_.result
    if r is None or round_.dealt is None:
        return None
    return ResultView(
        trick_points=r.trick_points,
        bottom_cards=card_names(r.bottom_cards),
        bottom_points=r.bottom_points,
        multiplier=r.multiplier,
        bottom_bonus=r.bottom_bonus,
        penalties=list(r.penalties),
        attackers_total=r.attackers_total,
        outcome=r.outcome,
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


# -- the seat's own parts -------------------------------------------------------------------


def _context(round_: Round | None) -> TrumpContext:
    """The trump order to sort by (R7–R10); no-trump order until trump is known."""
    if round_ is None:
        return trump_context(0, None)
    bidding = round_.bidding
    return trump_context(bidding.level, bidding.trump if bidding.trump_known else None)


def _names(cards: tuple[Card, ...] | list[Card], ctx: TrumpContext) -> list[str]:
    key = ctx.rank_key
    return card_names(sorted(cards, key=lambda c: (key[c], c)))


def _legal(
    match: Match, round_: Round | None, seat: int, now: datetime, ctx: TrumpContext
) -> LegalActions:
    """What the service would accept from ``seat`` now: computed on a copy of the round
    with any passed deadline claimed, as the next command would claim it (R16, R20)."""
    if round_ is None or round_.dealt is None or match.finished:
        return NO_ACTIONS
    r = round_
    if r.phase in (RoundPhase.DEALING, RoundPhase.OVERCALLING):
        r = copy.deepcopy(round_)
        r.claim_deadlines(now)
    phase = r.phase
    actions: list[str] = []
    shows: list[list[str]] = []
    if phase in (RoundPhase.DEALING, RoundPhase.DECLARING, RoundPhase.OVERCALLING):
        hand = r.hand_at(seat, now)
        found = r.bidding.legal_shows(seat, hand)
        shows = [card_names(s.cards) for s in found]
        if found:
            actions.append("overcall" if phase is RoundPhase.OVERCALLING else "declare")
        if phase is RoundPhase.DEALING:
            if r.drawn_at(now) >= DRAWS and seat not in r.deal_passes:
                actions.append("pass")
        elif r.bidding.to_speak == seat:
            actions.append("pass")
    if _may_ask_redeal(r, seat):
        actions.append("redeal")
    if phase is RoundPhase.BURYING and r.bidding.burier == seat:
        full = [*r.hands[seat], *r.bottom]
        return LegalActions(["bury", *actions], [], _names(full, ctx), BOTTOM, None, [], 0, False)
    play = r.play
    if phase is RoundPhase.PLAYING and play is not None and play.turn == seat:
        if not play.trick:
            return LegalActions(["play"], [], [], 0, LEAD_NOTE, [], 0, False)
        lead = play.lead_shape
        assert lead is not None
        found_plays = list(islice(legal_plays(play.ctx, lead, play.hands[seat]), FOLLOW_HINTS + 1))
        hints = [_names(p, ctx) for p in found_plays[:FOLLOW_HINTS]]
        more = len(found_plays) > FOLLOW_HINTS
        return LegalActions(["play"], [], [], 0, None, hints, lead.size, more)
    return LegalActions(actions, shows, [], 0, None, [], 0, False)


def _may_ask_redeal(round_: Round, seat: int) -> bool:
    """§10 暴动: after the deal, before the first bury, a hand under N points."""
    if round_.rules.weak_hand_redeal is None or round_.bidding.phase is Phase.DEALING:
        return False
    if round_.phase not in (RoundPhase.DECLARING, RoundPhase.OVERCALLING, RoundPhase.BURYING):
        return False
    try:
        round_.bidding.check_weak_hand_redeal(seat, round_.dealt_hand(seat))
    except IllegalMoveError:
        return False
    return True

"""The view types (RULES R33): frozen msgspec Structs of plain values that encode to
camelCase JSON, the API's payloads as they are (cards in R4 notation, ranks
``"2"``..``"A"``, suits ``"S" "H" "C" "D"``). :mod:`services.views` builds them.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal, cast

import msgspec

from domain.game.match_events import RoundRecorded

if TYPE_CHECKING:
    from domain.game.match import Match
from domain.rules.board import Board
from domain.rules.cards import RANKS, SUITS
from domain.rules.ruleset import RuleSet
from services.legal import LegalActions

Rank = Literal["2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"]
"""A rank (R3, R5): a level, a level rank."""
Suit = Literal["S", "H", "C", "D"]
"""A suit letter (R4)."""
Phase = Literal[
    "seating",
    "dealing",
    "declaring",
    "overcalling",
    "burying",
    "playing",
    "scored",
    "abandoned",
    "redeal",
]
"""A round's phase (``seating`` before round 1): :class:`~domain.game.round.RoundPhase`."""
ExpectedAction = Literal["declare_or_pass", "overcall_or_pass", "bury", "play", "redeal"]
SeatKind = Literal["human", "random", "heuristic", "strong"]
Outcome = Literal["defenders_up", "attackers_take_over", "attackers_take_over_and_up"]
Strength = Literal["single", "level_pair", "sj_pair", "bj_pair"]


class RulesView(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """The match's rule set (RULES §10), fixed when the match was created."""

    declare_with_joker: bool
    self_overcall: bool
    bottom_multiplier: Literal["linear", "exponential"]
    no_declaration: Literal["bottom_third_card", "redeal"]
    throw_penalty_points: int
    level_cap: int | None
    match_end: str
    weak_hand_redeal: int | None


@lru_cache(maxsize=256)  # rule sets are frozen (and few): one view each
def rules_view(rules: RuleSet) -> RulesView:
    m = rules.to_mapping()
    return RulesView(
        declare_with_joker=bool(m["declare_with_joker"]),
        self_overcall=bool(m["self_overcall"]),
        bottom_multiplier=cast("Any", str(m["bottom_multiplier"])),
        no_declaration=cast("Any", str(m["no_declaration"])),
        throw_penalty_points=rules.throw_penalty_points,
        level_cap=rules.level_cap,
        match_end=str(m["match_end"]),
        weak_hand_redeal=rules.weak_hand_redeal,
    )


class SeatPlayer(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """Who sits in a seat (R1): a display name and ``human`` or a bot kind."""

    seat: int
    name: str
    kind: SeatKind
    left: bool = False
    """The person who sat here left the table: the bot ``kind`` plays the seat now."""


class ShowView(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """A declaration (R17) or an overcall (R20), public once made."""

    seat: int
    cards: list[str]
    trump: Suit | None
    """The suit letter it makes trump; None = no-trump (R9)."""
    strength: Strength
    overcall: bool


class PlayView(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """One seat's play in a trick (R22, R23), public once played (R33)."""

    seat: int
    cards: list[str]


class TrickView(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """A completed trick: its leader, the plays in order, the winner (R24) and the points
    it carried (R26)."""

    leader: int
    plays: list[PlayView]
    winner: int
    points: int = 0
    """The points of its cards (R26); the attackers keep them if they won it (R27)."""


class WonTrick(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """A completed trick in brief: its number, leader, winner and points (R24, R26, R27)."""

    number: int
    """1 for the round's first trick."""
    leader: int
    winner: int
    points: int
    """The points of its cards (R26)."""
    attackers_won: bool
    """True when the attackers won it, so its points count for them (R27)."""


class DealView(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """The paced deal (R16, R17): one card drawn every ``intervalMs`` from ``startedAt``,
    seat by seat from ``firstSeat``; a client can animate it and knows when it may
    declare. ``drawn`` is the count at the view's time."""

    started_at: str
    """When the first card was drawn, ISO 8601."""
    interval_ms: int
    """Milliseconds between two cards (0: all 100 at once)."""
    first_seat: int
    """The seat the first card goes to (R16: the dealer; round 1: seat 0)."""
    drawn: int
    """Cards drawn so far, 0..100 (card k goes to seat (firstSeat + k) mod 4)."""
    total: int = 100
    """Cards drawn in all: 25 to each seat (R16); the last 8 are the bottom."""
    ends_at: str
    """When the last card is drawn, ISO 8601."""


class BoardView(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """The board the round plays in a duplicate event of boards (R36, docs/tournaments.md,
    "Boards"): its dealer, level rank and trump, the same at every table of the round and
    fixed before the deal — nobody declares or overcalls (R17–R20 give way)."""

    number: int
    """The deal it is played as (the match's round 1, 2, …)."""
    dealer: int
    """The dealer's seat (R6): the dealer's team defends."""
    level_rank: Rank
    """The rank in play (R5)."""
    trump: Suit | None
    """The trump suit; None: no-trump (R9)."""


class FailedThrow(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """R22: a throw that could be beaten; the attempted cards were shown to the table."""

    seat: int
    attempted: list[str]


class Expected(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """Whose action the round waits for (``seat`` None: any seat) and which."""

    seat: int | None
    action: ExpectedAction
    """declare_or_pass, overcall_or_pass, bury, play, redeal (the service deals again)."""


class RoundResultView(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """``RoundScored`` (R26–R31) with everything revealed (R33, R35)."""

    trick_points: int
    bottom_cards: list[str]
    bottom_points: int
    multiplier: int
    bottom_bonus: int
    penalties: list[int]
    attackers_total: int
    outcome: Outcome
    levels_gained: int
    band: str
    defenders_keep: bool
    dealer: int
    next_dealer: int
    seed: str
    """The deal's seed, revealed (R35): check it against ``commitment``."""
    commitment: str
    dealt_hands: list[list[str]]
    """The four hands as dealt from the seed (R16), in draw order."""
    dealt_bottom: list[str]
    """The bottom as dealt, before any burying (R16)."""


class RecordedView(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """A round's result as the match recorded it (``RoundRecorded``, R29–R32)."""

    number: int
    dealer: int
    attackers_total: int
    outcome: Outcome
    levels_gained: int
    team_up: int
    """The team (0: seats 0 and 2, 1: seats 1 and 3) that defends next (R30)."""
    team_levels: list[Rank]
    """The two teams' levels after the round (R30, R32)."""
    next_dealer: int


class OriginView(msgspec.Struct, frozen=True, kw_only=True, rename="camel", omit_defaults=True):
    """Where a match comes from: ``played`` here, or ``imported`` from a record (``POST
    /v1/records?store=true``) at ``imported_at``, the record's ``digest`` — its seeds and
    moves are the importer's, consistent (R35) but not drawn or played here."""

    kind: Literal["played", "imported"]
    imported_at: str | None = None
    digest: str | None = None


PLAYED = OriginView(kind="played")


def origin_view(match: Match) -> OriginView:
    imported = match.imported
    if imported is None:
        return PLAYED
    return OriginView(
        kind="imported", imported_at=imported.timestamp.isoformat(), digest=imported.digest
    )


class Versions(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """Aggregate versions the view was built from."""

    match_version: int
    round_version: int | None


class PublicView(
    msgspec.Struct, frozen=True, kw_only=True, rename="camel", tag_field="kind", tag="public"
):
    """The table as a spectator sees it: no hand, no bottom before the end (R33).
    Before round 1 (seats still free) the round's fields keep their defaults. ``kind``
    (``public`` / ``seat``) tells the two views apart."""

    match_id: str
    version: int
    """The match's version (events of the match and its rounds): the ETag."""
    versions: Versions
    rules: RulesView
    seats: list[SeatPlayer | None]
    match_finished: bool
    team_levels: list[Rank]
    """Levels of team {0,2} and team {1,3} now (R5, R30): the levels the round is played
    at, until the match records its result; then the levels after it — as the match
    summary says (``levelRank`` stays the round's)."""
    dealer: int | None
    round_id: str | None = None
    round_number: int = 0
    phase: Phase = "seating"
    """A :class:`~domain.game.round.RoundPhase` value, or ``seating`` before round 1."""
    level_rank: Rank | None = None
    trump: Suit | None = None
    """Suit letter; None = no-trump (R9) or not decided yet (see ``trump_decided``)."""
    trump_decided: bool = False
    declarations: list[ShowView] = []
    fallback_card: str | None = None
    """R19: the bottom's 3rd card, shown to all when it named trump."""
    commitment: str | None = None
    """R35: sha256 of the deal's seed, published before the first card is drawn."""
    deadline: str | None = None
    """When the drawing (R16) or the overcall window (R20) closes by itself, ISO 8601."""
    turn_deadline: str | None = None
    """When the seat to act (``expected.seat``) runs out of time, ISO 8601: its turn began
    at the event that made it its turn, plus the match's limit (``docs/timers.md``);
    None when no limit runs. After it, anyone at the table may claim the timeout."""
    expected: Expected | None = None
    hand_sizes: list[int] = msgspec.field(default_factory=lambda: [0, 0, 0, 0])
    """Cards each seat holds (R33: sizes only): during the paced deal the cards drawn so
    far (R16); while burying the burier holds 33, its hand and the 8 it takes (R21)."""
    trick_leader: int | None = None
    trick: list[PlayView] = []
    last_trick: TrickView | None = None
    trick_winning: int | None = None
    """The seat winning the trick in progress so far (R24; None when no trick is open)."""
    trick_points: int = 0
    """The points in the trick in progress (R26)."""
    won_tricks: list[WonTrick] = []
    """Every completed trick of the round with its points (R26, R27), in play order."""
    attackers: int | None = None
    """The attacking team (R6): 0 for seats 0 and 2, 1 for seats 1 and 3; None while the
    dealer is not known (round 1 before the first declaration, R18)."""
    board: BoardView | None = None
    """The board this round plays (R36), in a duplicate event of boards; None otherwise."""
    deal: DealView | None = None
    """The deal's timing and progress (R16) once the round is dealt: a paced deal draws
    one card per ``intervalMs``; after the drawing ``drawn`` is 100."""
    tricks_done: int = 0
    played: list[str] = []
    """Every card played so far, in play order (R33: public once played)."""
    attacker_points: int = 0
    failed_throws: list[FailedThrow] = []
    result: RoundResultView | None = None
    embargo: str | None = None
    """Why ``result`` is None although the round is scored: a tournament table's deals are
    ``embargoed until tournament round N completes`` (R36, docs/tournaments.md); a seat
    then sees what it saw during play (R33). None otherwise."""
    winner: int | None = None
    """Once the match is finished: the winning team (0: seats 0 and 2, 1: seats 1 and 3),
    None for a tie (R32) — as the match summary says."""
    last_result: RecordedView | None = None
    """The last round the match recorded (a scored round's view gives way to the next
    deal at once, so its result is repeated here)."""
    origin: OriginView = PLAYED
    """Played here, or an imported record (its time and digest)."""


class SeatView(PublicView, frozen=True, kw_only=True, tag="seat"):
    """The table as ``seat`` sees it (R33)."""

    seat: int
    hand: list[str]
    """Sorted by trump order (suits S H C D low to high, then trump, R7–R10)."""
    bottom: list[str] | None
    """The bottom / buried cards when this seat may see them (R21, R20 炒底), else None."""
    visible: list[str]
    """Every card this seat can see: hand, bottom if shown, every card played; all 108
    once the round is scored (R33), unless ``embargo`` withholds them (R36)."""
    legal: LegalActions


def board_view(board: Board | None) -> BoardView | None:
    """A round's board (R36), public from the start of the round."""
    if board is None:
        return None
    return BoardView(
        number=board.number,
        dealer=board.dealer,
        level_rank=cast("Rank", RANKS[board.level]),
        trump=None if board.trump is None else cast("Suit", SUITS[board.trump]),
    )


def recorded_view(r: RoundRecorded) -> RecordedView:
    """A round's result as the match recorded it (R29–R32), public."""
    return RecordedView(
        number=r.number,
        dealer=r.dealer,
        attackers_total=r.attackers_total,
        outcome=cast("Outcome", r.outcome),
        levels_gained=r.levels_gained,
        team_up=r.team_up,
        team_levels=[cast("Rank", RANKS[lv]) for lv in r.levels],
        next_dealer=r.next_dealer,
    )

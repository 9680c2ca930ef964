"""The view types (RULES R33): frozen msgspec Structs of plain values that encode to
camelCase JSON, the API's payloads as they are (cards in R4 notation, ranks
``"2"``..``"A"``, suits ``"S" "H" "C" "D"``). :mod:`services.views` builds them.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Annotated, Any, Literal, cast

import msgspec
from msgspec import Meta

from domain.game.match_events import RoundRecorded
from services import field_docs

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


class RulesView(msgspec.Struct, frozen=True, gc=False, kw_only=True, rename="camel"):
    """The match's rule set (RULES §10), fixed when the match was created."""

    declare_with_joker: Annotated[
        bool,
        Meta(
            description=(
                "§10 declare_with_joker: declaring needs a level card and the matching joker (R17)"
            )
        ),
    ]
    self_overcall: Annotated[
        bool,
        Meta(
            description=(
                "§10 self_overcall: the declarer may reinforce or switch its own declaration (R20)"
            )
        ),
    ]
    bottom_multiplier: Annotated[
        Literal["linear", "exponential"],
        Meta(
            description=(
                "§10 bottom_multiplier: linear (x4n for a tractor) or exponential (x2^(n+1)) (R28)"
            )
        ),
    ]
    no_declaration: Annotated[
        Literal["bottom_third_card", "redeal"],
        Meta(description="§10 no_declaration: bottom_third_card (R19) or redeal"),
    ]
    throw_penalty_points: Annotated[
        int, Meta(description="§10 throw_penalty_points: points per card of a failed throw (R22)")
    ]
    level_cap: Annotated[
        int | None,
        Meta(description="§10 level_cap: most levels one round can gain (R30); null for none"),
    ]
    match_end: Annotated[
        str,
        Meta(description="§10 match_end: wrap (R32), finish_at_A, or rounds:N", examples=["wrap"]),
    ]
    weak_hand_redeal: Annotated[
        int | None,
        Meta(
            description=(
                "§10 weak_hand_redeal (暴动): a hand under N points may ask "
                "for a redeal; null when off"
            )
        ),
    ]


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


class SeatPlayer(msgspec.Struct, frozen=True, gc=False, kw_only=True, rename="camel"):
    """Who sits in a seat (R1): a display name and ``human`` or a bot kind."""

    seat: Annotated[int, field_docs.SEAT]
    name: Annotated[str, field_docs.NAME]
    kind: Annotated[
        SeatKind, Meta(description="`human`, or the bot policy: random, heuristic or strong")
    ]
    left: Annotated[
        bool,
        Meta(
            description="The person who sat here left the table: the bot `kind` plays the seat now."
        ),
    ] = False


class ShowView(msgspec.Struct, frozen=True, gc=False, kw_only=True, rename="camel"):
    """A declaration (R17) or an overcall (R20), public once made."""

    seat: Annotated[int, Meta(description="The seat that showed them")]
    cards: Annotated[
        list[str],
        Meta(description="The cards shown (R17, R20)", examples=[field_docs.EXAMPLE_CARDS]),
    ]
    trump: Annotated[
        Suit | None,
        Meta(description="The suit letter it makes trump; None = no-trump (R9).", examples=["H"]),
    ]
    strength: Annotated[
        Strength, Meta(description="single, level_pair, sj_pair or bj_pair, weakest first (R20)")
    ]
    overcall: Annotated[
        bool, Meta(description="True for an overcall (R20), false for the declaration (R17)")
    ]


class PlayView(msgspec.Struct, frozen=True, gc=False, kw_only=True, rename="camel"):
    """One seat's play in a trick (R22, R23), public once played (R33)."""

    seat: Annotated[int, Meta(description="The seat that played")]
    cards: Annotated[
        list[str], Meta(description="The cards it played (R4)", examples=[field_docs.EXAMPLE_CARDS])
    ]


class TrickView(msgspec.Struct, frozen=True, gc=False, kw_only=True, rename="camel"):
    """A completed trick: its leader, the plays in order, the winner (R24) and the points
    it carried (R26)."""

    leader: Annotated[int, Meta(description="The seat that led it")]
    plays: Annotated[list[PlayView], Meta(description="Each seat's play, in order")]
    winner: Annotated[int, Meta(description="The seat that won it (R24)")]
    points: Annotated[
        int,
        Meta(
            description=(
                "The points of its cards (R26); the attackers keep them if they won it (R27)."
            )
        ),
    ] = 0


class WonTrick(msgspec.Struct, frozen=True, gc=False, kw_only=True, rename="camel"):
    """A completed trick in brief: its number, leader, winner and points (R24, R26, R27)."""

    number: Annotated[int, Meta(description="1 for the round's first trick.")]
    leader: Annotated[int, Meta(description="The seat that led it")]
    winner: Annotated[int, Meta(description="The seat that won it (R24); it leads next")]
    points: Annotated[int, Meta(description="The points of its cards (R26).")]
    attackers_won: Annotated[
        bool,
        Meta(description="True when the attackers won it, so its points count for them (R27)."),
    ]


class DealView(msgspec.Struct, frozen=True, gc=False, kw_only=True, rename="camel"):
    """The paced deal (R16, R17): one card drawn every ``intervalMs`` from ``startedAt``,
    seat by seat from ``firstSeat``; a client can animate it and knows when it may
    declare. ``drawn`` is the count at the view's time."""

    started_at: Annotated[
        str,
        Meta(
            description="When the first card was drawn, ISO 8601.",
            examples=[field_docs.EXAMPLE_TIME],
        ),
    ]
    interval_ms: Annotated[
        int, Meta(description="Milliseconds between two cards (0: all 100 at once).")
    ]
    first_seat: Annotated[
        int,
        Meta(description="The seat the first card goes to (R16: the dealer; round 1: seat 0)."),
    ]
    drawn: Annotated[
        int,
        Meta(description="Cards drawn so far, 0..100 (card k goes to seat (firstSeat + k) mod 4)."),
    ]
    total: Annotated[
        int,
        Meta(description="Cards drawn in all: 25 to each seat (R16); the last 8 are the bottom."),
    ] = 100
    ends_at: Annotated[
        str,
        Meta(
            description="When the last card is drawn, ISO 8601.",
            examples=["2026-12-01T20:00:04.950000+00:00"],
        ),
    ]


class BoardView(msgspec.Struct, frozen=True, gc=False, kw_only=True, rename="camel"):
    """The board the round plays in a duplicate event of boards (R36, docs/tournaments.md,
    "Boards"): its dealer, level rank and trump, the same at every table of the round and
    fixed before the deal — nobody declares or overcalls (R17–R20 give way)."""

    number: Annotated[
        int, Meta(description="The deal it is played as (the match's round 1, 2, …).")
    ]
    dealer: Annotated[int, Meta(description="The dealer's seat (R6): the dealer's team defends.")]
    level_rank: Annotated[Rank, Meta(description="The rank in play (R5).", examples=["2"])]
    trump: Annotated[
        Suit | None, Meta(description="The trump suit; None: no-trump (R9).", examples=["H"])
    ]


class FailedThrow(msgspec.Struct, frozen=True, gc=False, kw_only=True, rename="camel"):
    """R22: a throw that could be beaten; the attempted cards were shown to the table."""

    seat: Annotated[int, Meta(description="The seat that tried to throw")]
    attempted: Annotated[
        list[str],
        Meta(
            description="The cards of the throw it tried (shown to the table, R22)",
            examples=[field_docs.EXAMPLE_CARDS],
        ),
    ]


class Expected(msgspec.Struct, frozen=True, gc=False, kw_only=True, rename="camel"):
    """Whose action the round waits for (``seat`` None: any seat) and which."""

    seat: Annotated[
        int | None, Meta(description="The seat to act; null when any seat may (the deal, R17)")
    ]
    action: Annotated[
        ExpectedAction,
        Meta(
            description=(
                "declare_or_pass, overcall_or_pass, bury, play, redeal (the service deals again)."
            )
        ),
    ]


class RoundResultView(msgspec.Struct, frozen=True, gc=False, kw_only=True, rename="camel"):
    """``RoundScored`` (R26–R31) with everything revealed (R33, R35)."""

    trick_points: Annotated[int, Meta(description="Points the attackers took in tricks (R27)")]
    bottom_cards: Annotated[list[str], Meta(description="The buried cards (R21), revealed")]
    bottom_points: Annotated[int, Meta(description="Points in the buried cards (R26)")]
    multiplier: Annotated[
        int,
        Meta(
            description=(
                "The bottom multiplier of the last lead (R28); 0 when the "
                "defenders won the last trick"
            )
        ),
    ]
    bottom_bonus: Annotated[
        int,
        Meta(
            description=(
                "Bottom points times the multiplier, when the attackers won the last trick (R28)"
            )
        ),
    ]
    penalties: Annotated[list[int], Meta(description="Failed-throw penalties (§10), in order")]
    attackers_total: Annotated[
        int, Meta(description="Trick points + bottom bonus +/- penalties (R29)")
    ]
    outcome: Annotated[Outcome, field_docs.OUTCOME]
    levels_gained: Annotated[int, field_docs.LEVELS_GAINED]
    band: Annotated[str, Meta(description="The row of R30's table the total falls in")]
    defenders_keep: Annotated[
        bool, Meta(description="The defenders keep the deal (total under 80, R30)")
    ]
    dealer: Annotated[int, Meta(description="The round's dealer")]
    next_dealer: Annotated[int, field_docs.NEXT_DEALER]
    seed: Annotated[
        str,
        Meta(
            description="The deal's seed, revealed (R35): check it against `commitment`.",
            examples=[field_docs.EXAMPLE_HEX64],
        ),
    ]
    commitment: Annotated[
        str,
        Meta(
            description="sha256 of the seed, published before the deal (R35)",
            examples=[field_docs.EXAMPLE_HEX64],
        ),
    ]
    dealt_hands: Annotated[
        list[list[str]],
        Meta(description="The four hands as dealt from the seed (R16), in draw order."),
    ]
    dealt_bottom: Annotated[
        list[str], Meta(description="The bottom as dealt, before any burying (R16).")
    ]


class RecordedView(msgspec.Struct, frozen=True, gc=False, kw_only=True, rename="camel"):
    """A round's result as the match recorded it (``RoundRecorded``, R29–R32)."""

    number: Annotated[int, Meta(description="The round's number")]
    dealer: Annotated[int, Meta(description="The round's dealer")]
    attackers_total: Annotated[int, Meta(description="The attackers' total (R29)")]
    outcome: Annotated[Outcome, field_docs.OUTCOME]
    levels_gained: Annotated[int, field_docs.LEVELS_GAINED]
    team_up: Annotated[
        int,
        Meta(description="The team (0: seats 0 and 2, 1: seats 1 and 3) that defends next (R30)."),
    ]
    team_levels: Annotated[
        list[Rank], Meta(description="The two teams' levels after the round (R30, R32).")
    ]
    next_dealer: Annotated[int, field_docs.NEXT_DEALER]


class OriginView(
    msgspec.Struct, frozen=True, gc=False, kw_only=True, rename="camel", omit_defaults=True
):
    """Where a match comes from: ``played`` here, or ``imported`` from a record (``POST
    /v1/records?store=true``) at ``imported_at``, the record's ``digest`` — its seeds and
    moves are the importer's, consistent (R35) but not drawn or played here."""

    kind: Annotated[
        Literal["played", "imported"],
        Meta(description="`played` here, or `imported` from a record"),
    ]
    imported_at: Annotated[
        str | None,
        Meta(
            description="When the record was imported, ISO 8601", examples=[field_docs.EXAMPLE_TIME]
        ),
    ] = None
    digest: Annotated[
        str | None,
        Meta(
            description="The imported record's digest (sha256 of its canonical JSON)",
            examples=[field_docs.EXAMPLE_DIGEST],
        ),
    ] = None


PLAYED = OriginView(kind="played")


def origin_view(match: Match) -> OriginView:
    imported = match.imported
    if imported is None:
        return PLAYED
    return OriginView(
        kind="imported", imported_at=imported.timestamp.isoformat(), digest=imported.digest
    )


class Versions(msgspec.Struct, frozen=True, gc=False, kw_only=True, rename="camel"):
    """Aggregate versions the view was built from."""

    match_version: Annotated[int, Meta(description="The Match aggregate's version")]
    round_version: Annotated[
        int | None, Meta(description="The Round aggregate's version; null before round 1")
    ]


class PublicView(
    msgspec.Struct,
    frozen=True,
    gc=False,
    kw_only=True,
    rename="camel",
    tag_field="kind",
    tag="public",
):
    """The table as a spectator sees it: no hand, no bottom before the end (R33).
    Before round 1 (seats still free) the round's fields keep their defaults. ``kind``
    (``public`` / ``seat``) tells the two views apart."""

    match_id: Annotated[str, field_docs.MATCH_ID]
    version: Annotated[
        int,
        Meta(description="The match's version (events of the match and its rounds): the ETag."),
    ]
    versions: Annotated[Versions, field_docs.VERSIONS]
    rules: Annotated[RulesView, field_docs.RULES]
    seats: Annotated[list[SeatPlayer | None], field_docs.SEATS]
    match_finished: Annotated[bool, field_docs.MATCH_FINISHED]
    team_levels: Annotated[
        list[Rank],
        Meta(
            description=(
                "Levels of team {0,2} and team {1,3} now (R5, R30): the "
                "levels the round is played at, until the match records "
                "its result; then the levels after it — as the match "
                "summary says (`levelRank` stays the round's)."
            )
        ),
    ]
    dealer: Annotated[int | None, field_docs.DEALER]
    round_id: Annotated[str | None, field_docs.ROUND_ID] = None
    round_number: Annotated[int, field_docs.ROUND_NUMBER] = 0
    phase: Annotated[
        Phase,
        Meta(description="A `domain.game.round.RoundPhase` value, or `seating` before round 1."),
    ] = "seating"
    level_rank: Annotated[Rank | None, field_docs.LEVEL_RANK] = None
    trump: Annotated[
        Suit | None,
        Meta(
            description=(
                "Suit letter; None = no-trump (R9) or not decided yet (see `trump_decided`)."
            ),
            examples=["H"],
        ),
    ] = None
    trump_decided: Annotated[bool, field_docs.TRUMP_DECIDED] = False
    declarations: Annotated[list[ShowView], field_docs.DECLARATIONS] = []
    fallback_card: Annotated[
        str | None,
        Meta(description="R19: the bottom's 3rd card, shown to all when it named trump."),
    ] = None
    commitment: Annotated[
        str | None,
        Meta(
            description="R35: sha256 of the deal's seed, published before the first card is drawn.",
            examples=[field_docs.EXAMPLE_HEX64],
        ),
    ] = None
    deadline: Annotated[
        str | None,
        Meta(
            description=(
                "When the drawing (R16) or the overcall window (R20) closes by itself, ISO 8601."
            ),
            examples=["2026-12-01T20:00:35+00:00"],
        ),
    ] = None
    turn_deadline: Annotated[
        str | None,
        Meta(
            description=(
                "When the seat to act (`expected.seat`) runs out of time, "
                "ISO 8601: its turn began at the event that made it its "
                "turn, plus the match's limit (`docs/timers.md`); None "
                "when no limit runs. After it, anyone at the table may "
                "claim the timeout."
            ),
            examples=["2026-12-01T20:01:00+00:00"],
        ),
    ] = None
    expected: Annotated[Expected | None, field_docs.EXPECTED] = None
    hand_sizes: Annotated[
        list[int],
        Meta(
            description=(
                "Cards each seat holds (R33: sizes only): during the "
                "paced deal the cards drawn so far (R16); while burying "
                "the burier holds 33, its hand and the 8 it takes (R21)."
            )
        ),
    ] = msgspec.field(default_factory=lambda: [0, 0, 0, 0])
    trick_leader: Annotated[int | None, field_docs.TRICK_LEADER] = None
    trick: Annotated[list[PlayView], field_docs.TRICK] = []
    last_trick: Annotated[TrickView | None, field_docs.LAST_TRICK] = None
    trick_winning: Annotated[
        int | None,
        Meta(
            description=(
                "The seat winning the trick in progress so far (R24; None when no trick is open)."
            )
        ),
    ] = None
    trick_points: Annotated[int, Meta(description="The points in the trick in progress (R26).")] = 0
    won_tricks: Annotated[
        list[WonTrick],
        Meta(
            description=(
                "Every completed trick of the round with its points (R26, R27), in play order."
            )
        ),
    ] = []
    attackers: Annotated[
        int | None,
        Meta(
            description=(
                "The attacking team (R6): 0 for seats 0 and 2, 1 for "
                "seats 1 and 3; None while the dealer is not known (round "
                "1 before the first declaration, R18)."
            )
        ),
    ] = None
    board: Annotated[
        BoardView | None,
        Meta(
            description=(
                "The board this round plays (R36), in a duplicate event of boards; None otherwise."
            )
        ),
    ] = None
    deal: Annotated[
        DealView | None,
        Meta(
            description=(
                "The deal's timing and progress (R16) once the round is "
                "dealt: a paced deal draws one card per `intervalMs`; "
                "after the drawing `drawn` is 100."
            )
        ),
    ] = None
    tricks_done: Annotated[int, field_docs.TRICKS_DONE] = 0
    played: Annotated[
        list[str],
        Meta(
            description="Every card played so far, in play order (R33: public once played).",
            examples=[field_docs.EXAMPLE_CARDS],
        ),
    ] = []
    attacker_points: Annotated[int, field_docs.ATTACKER_POINTS] = 0
    failed_throws: Annotated[list[FailedThrow], field_docs.FAILED_THROWS] = []
    result: Annotated[RoundResultView | None, field_docs.RESULT] = None
    embargo: Annotated[
        str | None,
        Meta(
            description=(
                "Why `result` is None although the round is scored: a "
                "tournament table's deals are `embargoed until tournament "
                "round N completes` (R36, docs/tournaments.md); a seat "
                "then sees what it saw during play (R33). None otherwise."
            )
        ),
    ] = None
    winner: Annotated[
        int | None,
        Meta(
            description=(
                "Once the match is finished: the winning team (0: seats 0 "
                "and 2, 1: seats 1 and 3), None for a tie (R32) — as the "
                "match summary says."
            )
        ),
    ] = None
    last_result: Annotated[
        RecordedView | None,
        Meta(
            description=(
                "The last round the match recorded (a scored round's view "
                "gives way to the next deal at once, so its result is "
                "repeated here)."
            )
        ),
    ] = None
    origin: Annotated[
        OriginView, Meta(description="Played here, or an imported record (its time and digest).")
    ] = PLAYED


class SeatView(PublicView, frozen=True, kw_only=True, tag="seat"):
    """The table as ``seat`` sees it (R33)."""

    seat: Annotated[int, field_docs.SEAT]
    hand: Annotated[
        list[str],
        Meta(
            description="Sorted by trump order (suits S H C D low to high, then trump, R7–R10).",
            examples=[field_docs.EXAMPLE_CARDS],
        ),
    ]
    bottom: Annotated[
        list[str] | None,
        Meta(
            description=(
                "The bottom / buried cards when this seat may see them (R21, R20 炒底), else None."
            ),
            examples=[field_docs.EXAMPLE_CARDS],
        ),
    ]
    visible: Annotated[
        list[str],
        Meta(
            description=(
                "Every card this seat can see: hand, bottom if shown, "
                "every card played; all 108 once the round is scored "
                "(R33), unless `embargo` withholds them (R36)."
            )
        ),
    ]
    legal: Annotated[LegalActions, field_docs.LEGAL]


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

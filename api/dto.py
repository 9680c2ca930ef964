"""Request and response bodies of the REST core: msgspec Structs in camelCase.

Request bodies forbid unknown fields (422 ``validation-failed`` naming the field). Cards
are a JSON array of RULES R4 tokens (``["5C", "5C"]``), never one string. The views
themselves (:mod:`services.views`, :mod:`services.history`,
:mod:`services.summaries`) are the response payloads as they are.
"""

from __future__ import annotations

from typing import Annotated, Final, Literal

import msgspec
from litestar.datastructures import ResponseHeader
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import QueryParameter
from msgspec import Meta

from api.problems import PROBLEM_MEDIA_TYPE, Problem
from domain.game.timers import MAX_LIMIT_MS, MIN_LIMIT_MS, Timers
from domain.talk.options import TalkOptions
from services import field_docs

CARD_TOKEN = r"(?:10|[2-9JQKA])[SHCD]|[SB]J"
"""One card in RULES R4 notation: rank then suit (``10H``, ``AS``, ``2C``), jokers ``SJ``,
``BJ``; upper case, as the API writes them."""
CardToken = Annotated[
    str,
    msgspec.Meta(
        pattern=f"^(?:{CARD_TOKEN})$", description="A card in R4 notation (10H, AS, 2C, SJ, BJ)"
    ),
]
Cards = Annotated[list[CardToken], msgspec.Meta(max_length=108)]
"""Cards: a JSON array of R4 tokens (at most the 108 of two decks, R3), one type in the
contract so that every generated client sends them alike (docs/decisions.md
D-contract-native)."""
SomeCards = Annotated[list[CardToken], msgspec.Meta(min_length=1, max_length=108)]
"""Cards where at least one is needed (a lead, a play, a throw: R12, R22)."""
Name = Annotated[str, msgspec.Meta(min_length=1, max_length=100)]
Seat = Annotated[int, msgspec.Meta(ge=0, le=3)]
Preset = Literal["standard", "tuolaji", "duijia"]
Action = Literal["declare", "overcall", "pass", "bury", "play", "redeal"]
BotKind = Literal["random", "heuristic", "strong"]
"""Bot policies, weakest first (docs/bots.md): random legal moves, rules of thumb, search."""
Hex64 = Annotated[str, msgspec.Meta(pattern="^[0-9a-fA-F]{64}$")]
NOT_BLANK = r"[^\t-\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"
"""A text's pattern: at least one character that is not white space as Python's ``strip``
counts it (``str.isspace``), spelled out rather than ``\\S``: msgspec (Python's ``re``)
and a JSON Schema reader (ECMA-262) differ on what ``\\s`` covers (U+001C..U+001F are
white space only to Python), so a generator would send text the server refuses."""


class _Request(
    msgspec.Struct, frozen=True, kw_only=True, rename="camel", forbid_unknown_fields=True
):
    """Base of request bodies: camelCase, unknown fields refused."""


class TableRulesRequest(_Request, frozen=True, kw_only=True):
    """RULES §10 fields but ``matchEnd``; absent ones come from the preset (or the standard
    rules). A tournament's tables take these: their match length sets ``matchEnd``."""

    declare_with_joker: Annotated[
        bool | msgspec.UnsetType,
        Meta(
            description=(
                "§10 declare_with_joker: declaring needs a level card and "
                "the matching joker (R17) (absent: the preset's)"
            )
        ),
    ] = msgspec.UNSET
    self_overcall: Annotated[
        bool | msgspec.UnsetType,
        Meta(
            description=(
                "§10 self_overcall: the declarer may reinforce or switch "
                "its own declaration (R20) (absent: the preset's)"
            )
        ),
    ] = msgspec.UNSET
    bottom_multiplier: Annotated[
        Literal["linear", "exponential"] | msgspec.UnsetType,
        Meta(
            description=(
                "§10 bottom_multiplier: linear (x4n for a tractor) or "
                "exponential (x2^(n+1)) (R28) (absent: the preset's)"
            )
        ),
    ] = msgspec.UNSET
    no_declaration: Annotated[
        Literal["bottom_third_card", "redeal"] | msgspec.UnsetType,
        Meta(
            description=(
                "§10 no_declaration: bottom_third_card (R19) or redeal (absent: the preset's)"
            )
        ),
    ] = msgspec.UNSET
    throw_penalty_points: Annotated[
        Annotated[int, msgspec.Meta(ge=0, le=1000)] | msgspec.UnsetType,
        Meta(
            description=(
                "§10 throw_penalty_points: points per card of a failed "
                "throw (R22) (absent: the preset's)"
            )
        ),
    ] = msgspec.UNSET
    level_cap: Annotated[
        Annotated[int, msgspec.Meta(ge=1, le=12)] | msgspec.UnsetType | None,
        Meta(
            description=(
                "§10 level_cap: most levels one round can gain (R30); "
                "null for none (absent: the preset's)"
            )
        ),
    ] = msgspec.UNSET
    weak_hand_redeal: Annotated[
        Annotated[int, msgspec.Meta(ge=1, le=50)] | msgspec.UnsetType | None,
        Meta(
            description=(
                "§10 weak_hand_redeal (暴动): a hand under N points may ask "
                "for a redeal; null when off (absent: the preset's)"
            )
        ),
    ] = msgspec.UNSET

    def fields(self) -> dict[str, object]:
        """The fields given, snake_case (``RuleSet.from_mapping`` reads them)."""
        return {
            name: value
            for name in self.__struct_fields__
            if (value := getattr(self, name)) is not msgspec.UNSET
        }


class RulesRequest(TableRulesRequest, frozen=True, kw_only=True):
    """RULES §10 fields; absent ones come from the preset (or the standard rules)."""

    match_end: Annotated[
        Annotated[str, msgspec.Meta(pattern="^(wrap|finish_at_A|rounds:[1-9][0-9]{0,5})$")]
        | msgspec.UnsetType,
        Meta(
            description=(
                "§10 match_end: wrap (R32), finish_at_A, or rounds:N (absent: the preset's)"
            ),
            examples=["wrap"],
        ),
    ] = msgspec.UNSET


TimerMs = Annotated[int, msgspec.Meta(ge=MIN_LIMIT_MS, le=MAX_LIMIT_MS)]


class TimersRequest(_Request, frozen=True, kw_only=True):
    """Turn time limits in ms (docs/timers.md); an absent one is no limit."""

    declare_ms: Annotated[
        TimerMs | None,
        Meta(
            description="The late declaring turn (R18) and each turn of the overcall window (R20)."
        ),
    ] = None
    bury_ms: Annotated[TimerMs | None, Meta(description="Burying (R21, 炒底 R20).")] = None
    play_ms: Annotated[TimerMs | None, Meta(description="Leading or following (R22, R23).")] = None

    def value(self) -> Timers:
        return Timers(self.declare_ms or 0, self.bury_ms or 0, self.play_ms or 0)


class TalkRequest(_Request, frozen=True, kw_only=True):
    """What the table allows of table talk (R37), fixed at creation."""

    free_text: Annotated[
        bool,
        Meta(
            description="The seats may write free text (never at a tournament table in play, "
            "R37); otherwise quick chat only"
        ),
    ] = False
    spectators: Annotated[
        bool, Meta(description="Spectators read the talk and may send quick chat")
    ] = True

    def value(self) -> TalkOptions:
        return TalkOptions(self.free_text, self.spectators)


class CreateMatchRequest(_Request, frozen=True, kw_only=True):
    """A new match: its name, rule preset, §10 fields, turn timers and table talk."""

    name: Annotated[
        Annotated[str, msgspec.Meta(max_length=200)],
        Meta(description="The match's name (may be empty)", examples=["Alice"]),
    ] = ""
    preset: Annotated[
        Preset | None, Meta(description="A named rule set (§10); `rules` fields override it.")
    ] = None
    rules: Annotated[
        RulesRequest | None, Meta(description="§10 fields that override the preset")
    ] = None
    timers: Annotated[
        TimersRequest | None,
        Meta(
            description=(
                "Optional turn time limits; a seat over its time may be timed out (docs/timers.md)."
            )
        ),
    ] = None
    visibility: Annotated[
        Literal["public", "private"],
        Meta(
            description=(
                "`private`: never listed; its seats are taken only with "
                "an invite code or by the organiser (docs/decisions.md "
                "D-table-life)."
            )
        ),
    ] = "public"
    talk: Annotated[
        TalkRequest | None,
        Meta(description="What the table allows of table talk (absent: quick chat only, R37)"),
    ] = None


class ClaimSeatRequest(_Request, frozen=True, kw_only=True):
    """The name of the person taking a seat."""

    name: Annotated[Name, Meta(description="The player's display name", examples=["Alice"])]


class SeatBotRequest(_Request, frozen=True, kw_only=True):
    """The bot to seat: its policy and display name."""

    kind: Annotated[
        BotKind, Meta(description="The bot policy, weakest first: random, heuristic, strong")
    ]
    name: Annotated[
        Name | None,
        Meta(
            description="The bot's display name (default: its kind and seat).", examples=["Alice"]
        ),
    ] = None


class ActionRequest(_Request, frozen=True, kw_only=True):
    """The body of a round command: the cards it shows, buries or plays."""

    cards: Annotated[
        Cards,
        Meta(
            description=(
                "declare / overcall: the show (R17, R20); bury: 8 cards "
                "(R21); play: the cards (R22, R23); pass and redeal: "
                "none."
            ),
            examples=[field_docs.EXAMPLE_CARDS],
        ),
    ] = msgspec.field(default_factory=list)


class FinishRequest(_Request, frozen=True, kw_only=True):
    """Why the organiser ends the match."""

    reason: Annotated[
        Annotated[str, msgspec.Meta(min_length=1, max_length=100)], field_docs.REASON
    ] = "organiser"


class VerifyRequest(_Request, frozen=True, kw_only=True):
    """A revealed seed against its commitment (R35), optionally the recorded deal."""

    seed: Annotated[
        Hex64,
        Meta(
            description="The revealed seed, 64 hex digits (R35)",
            examples=[field_docs.EXAMPLE_HEX64],
        ),
    ]
    commitment: Annotated[
        Hex64,
        Meta(
            description="The commitment published before the deal (R35)",
            examples=[field_docs.EXAMPLE_HEX64],
        ),
    ]
    first_seat: Annotated[
        Seat,
        Meta(description="The seat the deal started from (R16: the dealer; round 1: seat 0)."),
    ] = 0
    hands: Annotated[
        Annotated[list[Cards], msgspec.Meta(min_length=4, max_length=4)] | None,
        Meta(description="The four hands as recorded, to compare (in any order within each)"),
    ] = None
    bottom: Annotated[
        Cards | None,
        Meta(description="The bottom as recorded, to compare", examples=[field_docs.EXAMPLE_CARDS]),
    ] = None


# -- responses ---------------------------------------------------------------------------------


class _Response(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    pass


class DealVerified(_Response, frozen=True, kw_only=True):
    """The outcome of checking a seed against its commitment (R35), with the deal the
    seed gives (R16)."""

    ok: Annotated[
        bool,
        Meta(
            description=(
                "True when sha256(seed) is the commitment and the recorded cards, if given, match."
            )
        ),
    ]
    mismatch: Annotated[
        str | None,
        Meta(
            description="When `ok` is false: what differs (the commitment, or the first card, R35)."
        ),
    ] = None
    seed: Annotated[str, field_docs.SEED]
    commitment: Annotated[str, field_docs.COMMITMENT]
    first_seat: Annotated[int, field_docs.FIRST_SEAT]
    hands: Annotated[
        list[list[str]],
        Meta(description="The four hands recomputed from the seed, in draw order (R16)."),
    ]
    bottom: Annotated[
        list[str],
        Meta(
            description="The bottom recomputed from the seed (R16)",
            examples=[field_docs.EXAMPLE_CARDS],
        ),
    ]


class RoundVerified(_Response, frozen=True, kw_only=True):
    """A scored round checked against its commitment and events (R35)."""

    ok: Annotated[bool, field_docs.OK]
    round_id: Annotated[str, Meta(description="The round's id", examples=[field_docs.EXAMPLE_ID])]
    number: Annotated[int, Meta(description="The round's number")]
    seed: Annotated[str, field_docs.SEED]
    commitment: Annotated[str, field_docs.COMMITMENT]
    deals: Annotated[
        int, Meta(description="Deals of the round (more than one after a redeal, R19)")
    ]
    events: Annotated[int, Meta(description="The round's events replayed")]
    seeds_from: Annotated[
        Literal["server", "record"],
        Meta(
            description=(
                "`server`: drawn here and committed before the first card "
                "(R35); `record`: the match is an imported record, so the "
                "seeds are the importer's — the check proves the record "
                "consistent, not the deal fair."
            )
        ),
    ]


# -- parameters ---------------------------------------------------------------------------------

After = Annotated[int, QueryParameter(ge=0, le=10**15, description="`next` of the previous page")]
"""A list's page: after this position."""
Limit = Annotated[int, QueryParameter(ge=1, le=100)]
"""A list's page: at most this many items."""


# -- OpenAPI: the problems each route may answer -----------------------------------------------

PROBLEM_DOCS: dict[int, str] = {
    400: "Malformed request (the body is not JSON, or the request cannot be parsed), or a "
    "query parameter the route does not take (`unknown-parameter`, named in `detail`)",
    401: "No token, one that is not a token of this service, or one that is not (or no longer) "
    "valid: unknown, rotated, revoked, or a player session expired",
    403: "A token of another match, or of the wrong role (a player token where the organiser's "
    "is needed), or a private table's seat without an invite code",
    404: "No such match, round or version",
    409: "A rule forbids it (the problem names the R-number), a version conflict with "
    "another command, or the Idempotency-Key still in flight or used for another request",
    412: "If-Match is not the match's current version; the `ETag` header carries the current "
    "one (send it as If-Match after reading the new state)",
    413: "Request body too large",
    415: "The request body is not JSON (Content-Type)",
    422: "Invalid input: a field, card token or rule set (the problem names it)",
    429: "Too many requests from this client (`rate-limited`), over an hourly quota — of "
    "matches made (a tournament round's tables too), creations, imports or exports built "
    "(`quota-exceeded`) — or too many live streams open (`too-many-streams`); see "
    "Retry-After",
    500: "Server fault (nothing was changed)",
    503: "As many exports are being built as may be at once (`exports-busy`, "
    "`EXPORT_CONCURRENCY`); see Retry-After",
}


_ROUND_RULES = (
    "not-dealt",
    "still-dealing",
    "already-passed",
    "not-playing-yet",
    "already-declared",
    "not-eligible-to-declare",
    "not-your-turn-to-declare",
    "declaring-closed",
    "jokers-cannot-declare",
    "deal-already-ended",
    "not-a-show",
    "not-a-level-card",
    "no-joker-of-matching-colour",
    "declaration-too-weak",
    "self-overcall-not-allowed",
    "not-your-turn-to-overcall",
    "overcall-window-closed",
    "weak-hand-redeal-off",
    "weak-hand-too-strong",
    "redeal-request-closed",
    "not-burying-now",
    "not-your-turn-to-bury",
    "bury-eight",
    "illegal-bury",
    "not-your-turn",
    "cards-not-in-hand",
    "empty-play",
    "illegal-follow",
    "mixed-lead",
    "round-over",
    "no-round",
    "match-finished",
)
PROBLEM_CODES: Final[dict[int, tuple[str, ...]]] = {
    400: ("bad-request", "unknown-parameter"),
    401: ("unauthorized",),
    403: ("forbidden", "table-closed", "account-required"),
    404: ("not-found",),
    405: ("method-not-allowed",),
    409: (
        "illegal-move",
        "version-conflict",
        "idempotency-in-flight",
        "idempotency-key-reused",
    ),
    412: ("precondition-failed",),
    413: ("payload-too-large",),
    415: ("unsupported-media-type",),
    422: ("validation-failed", "invalid-input", "invalid-card", "invalid-rule-set", "invalid-name"),
    429: ("rate-limited", "quota-exceeded", "too-many-streams"),
    500: ("internal-error",),
}
"""The problem ``type`` codes (``…/problems/<code>``) each status can carry anywhere."""

TAG_PROBLEM_CODES: Final[dict[str, dict[int, tuple[str, ...]]]] = {
    "commands": {
        409: (*_ROUND_RULES, "not-timed-out", "no-turn-timer"),
    },
    "matches": {
        409: (
            "seat-taken",
            "seats-free",
            "round-in-progress",
            "match-finished",
            "not-begun",
            "already-resigned",
            "match-not-finished",
            "rematch-exists",
            "rematch-confirmed",
            "tournament-table",
            "already-seated",
            "left-match",
        ),
    },
    "views": {409: ("round-not-scored", "deal-embargoed"), 422: ("verification-failed",)},
    "talk": {
        409: ("free-text-off", "no-such-message", "illegal-move"),
        422: ("invalid-text",),
        429: ("talk-rate-limited", "reports-exceeded"),
    },
    "live": {422: ("last-event-id-ahead",)},
    "rules oracle": {409: ("impossible-position",)},
    "records": {
        409: ("record-unavailable", "deal-embargoed"),
        422: ("record-invalid", "record-tampered"),
        503: ("exports-busy",),
    },
    "tournaments": {
        409: (
            "round-in-play",
            "tournament-over",
            "round-not-scheduled",
            "round-not-current",
            "no-such-table",
            "table-not-seated",
            "result-recorded",
            "result-not-recorded",
            "match-finished",
            # the organiser's controls (domain/tournament/controls.py)
            "registration-open",
            "registration-closed",
            "no-such-team",
            "team-name-taken",
            "tournament-full",
            "team-withdrawn",
            "too-few-teams",
            "pairing-invalid",
            "swiss-only",
            "not-forbidden",
            "round-started",
            "seat-free",
            # the director's tools (domain/tournament/director.py)
            "round-paused",
            "round-not-paused",
            "team-not-active",
            "table-taken",
        ),
        422: ("last-event-id-ahead",),
    },
    "players": {
        409: (
            "already-seated",
            "seat-taken",
            "no-free-seat",
            "seat-free",
            "match-finished",
            "too-many-sessions",
            "no-such-session",
            "invite-expired",
            "already-queued",
            "ticket-closed",
            "player-erased",
            "not-seated",
            "left-match",
        ),
        422: ("last-event-id-ahead",),
    },
    "webhooks": {409: ("no-subscription",)},
    "archive": {422: ("last-event-id-ahead",), 503: ("exports-busy",)},
    "health": {503: ("not-ready",)},
}
"""More codes a status carries in the operations of a tag."""


PARAMETER_DOCS: Final[dict[str, str]] = {
    "subscription_id": "A webhook subscription's id (as registerWebhook answered it)",
    "session_id": "A session's id (as listSessions shows it)",
    "ticket_id": "A lobby ticket's id (a UUID, as queueForMatch answered it)",
    "match_id": "The match's id (a UUID, as `createMatch` answered it)",
    "tournament_id": "The tournament's id (a UUID, as `createTournament` answered it)",
    "action": "The round command: declare, overcall, pass, bury, play or redeal",
    "seat": "A seat 0..3 (R1); seats 0 and 2 are one team, 1 and 3 the other (R2)",
    "number": "A round number, from 1",
    "table": "A table of the tournament round, from 0",
    "name": "The name of a preset or a variant (RULES §10)",
    "limit": "At most this many items in the page",
    "player_id": "The other player's id (a UUID)",
    "invitation_id": "A table invitation's id (a UUID, as the `table-invitation` frame names it)",
}
"""Path and query parameters by name, where the route declares no description."""


def problems(*statuses: int, body: bool = False) -> dict[int, ResponseSpec]:
    """The problem+json responses of a route: ``statuses``, plus 400 (unparsable), 422
    (a parameter), 429 and 500 always, and 413 and 415 for a route with a request body."""
    wanted = sorted({*statuses, 400, 422, 429, 500, *((413, 415) if body else ())})
    return {
        status: ResponseSpec(
            data_container=Problem,
            media_type=PROBLEM_MEDIA_TYPE,
            description=PROBLEM_DOCS[status],
            generate_examples=False,
        )
        for status in wanted
    }


NOT_MODIFIED = ResponseSpec(
    data_container=None,
    description="Not Modified: If-None-Match matches the current ETag (no body)",
    generate_examples=False,
)


ETAG_HEADER = ResponseHeader(
    name="ETag",
    value='"12"',
    description='The match version, quoted: "<version>" (a "-dNN" or "-c" suffix when the '
    "view also changes with the clock)",
    documentation_only=True,
)
REPLAYED_HEADER = ResponseHeader(
    name="Idempotent-Replayed",
    value="true",
    description="true when this is the stored answer to an earlier request with the same "
    "Idempotency-Key (nothing was done again)",
    required=False,
    documentation_only=True,
)
LOCATION_HEADER = ResponseHeader(
    name="Location",
    value="/v1/matches/{matchId}",
    description="The new match's URL",
    documentation_only=True,
)

"""Request and response bodies of the REST core: msgspec Structs in camelCase.

Request bodies forbid unknown fields (422 ``validation-failed`` naming the field). Cards
are a JSON array of RULES R4 tokens (``["5C", "5C"]``), never one string. The views
themselves (:mod:`services.views`, :mod:`services.history`,
:mod:`services.summaries`) are the response payloads as they are.
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec
from litestar.datastructures import ResponseHeader
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import QueryParameter

from api.problems import PROBLEM_MEDIA_TYPE, Problem
from domain.game.timers import MAX_LIMIT_MS, MIN_LIMIT_MS, Timers

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

    declare_with_joker: bool | msgspec.UnsetType = msgspec.UNSET
    self_overcall: bool | msgspec.UnsetType = msgspec.UNSET
    bottom_multiplier: Literal["linear", "exponential"] | msgspec.UnsetType = msgspec.UNSET
    no_declaration: Literal["bottom_third_card", "redeal"] | msgspec.UnsetType = msgspec.UNSET
    throw_penalty_points: Annotated[int, msgspec.Meta(ge=0, le=1000)] | msgspec.UnsetType = (
        msgspec.UNSET
    )
    level_cap: Annotated[int, msgspec.Meta(ge=1, le=12)] | msgspec.UnsetType | None = msgspec.UNSET
    weak_hand_redeal: Annotated[int, msgspec.Meta(ge=1, le=50)] | msgspec.UnsetType | None = (
        msgspec.UNSET
    )

    def fields(self) -> dict[str, object]:
        """The fields given, snake_case (``RuleSet.from_mapping`` reads them)."""
        return {
            name: value
            for name in self.__struct_fields__
            if (value := getattr(self, name)) is not msgspec.UNSET
        }


class RulesRequest(TableRulesRequest, frozen=True, kw_only=True):
    """RULES §10 fields; absent ones come from the preset (or the standard rules)."""

    match_end: (
        Annotated[str, msgspec.Meta(pattern="^(wrap|finish_at_A|rounds:[1-9][0-9]{0,5})$")]
        | msgspec.UnsetType
    ) = msgspec.UNSET


TimerMs = Annotated[int, msgspec.Meta(ge=MIN_LIMIT_MS, le=MAX_LIMIT_MS)]


class TimersRequest(_Request, frozen=True, kw_only=True):
    """Turn time limits in ms (docs/timers.md); an absent one is no limit."""

    declare_ms: TimerMs | None = None
    """The late declaring turn (R18) and each turn of the overcall window (R20)."""
    bury_ms: TimerMs | None = None
    """Burying (R21, 炒底 R20)."""
    play_ms: TimerMs | None = None
    """Leading or following (R22, R23)."""

    def value(self) -> Timers:
        return Timers(self.declare_ms or 0, self.bury_ms or 0, self.play_ms or 0)


class CreateMatchRequest(_Request, frozen=True, kw_only=True):
    """A new match: its name, rule preset, §10 fields and turn timers."""

    name: Annotated[str, msgspec.Meta(max_length=200)] = ""
    preset: Preset | None = None
    """A named rule set (§10); ``rules`` fields override it."""
    rules: RulesRequest | None = None
    timers: TimersRequest | None = None
    """Optional turn time limits; a seat over its time may be timed out (docs/timers.md)."""
    visibility: Literal["public", "private"] = "public"
    """`private`: never listed; its seats are taken only with an invite code or by the
    organiser (docs/decisions.md D-table-life)."""


class ClaimSeatRequest(_Request, frozen=True, kw_only=True):
    """The name of the person taking a seat."""

    name: Name


class SeatBotRequest(_Request, frozen=True, kw_only=True):
    """The bot to seat: its policy and display name."""

    kind: BotKind
    name: Name | None = None
    """The bot's display name (default: its kind and seat)."""


class ActionRequest(_Request, frozen=True, kw_only=True):
    """The body of a round command: the cards it shows, buries or plays."""

    cards: Cards = msgspec.field(default_factory=list)
    """declare / overcall: the show (R17, R20); bury: 8 cards (R21); play: the cards
    (R22, R23); pass and redeal: none."""


class FinishRequest(_Request, frozen=True, kw_only=True):
    """Why the organiser ends the match."""

    reason: Annotated[str, msgspec.Meta(min_length=1, max_length=100)] = "organiser"


class VerifyRequest(_Request, frozen=True, kw_only=True):
    """A revealed seed against its commitment (R35), optionally the recorded deal."""

    seed: Hex64
    commitment: Hex64
    first_seat: Seat = 0
    """The seat the deal started from (R16: the dealer; round 1: seat 0)."""
    hands: Annotated[list[Cards], msgspec.Meta(min_length=4, max_length=4)] | None = None
    bottom: Cards | None = None


# -- responses ---------------------------------------------------------------------------------


class _Response(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    pass


class DealVerified(_Response, frozen=True, kw_only=True):
    """The outcome of checking a seed against its commitment (R35), with the deal the
    seed gives (R16)."""

    ok: bool
    """True when sha256(seed) is the commitment and the recorded cards, if given, match."""
    mismatch: str | None = None
    """When ``ok`` is false: what differs (the commitment, or the first card, R35)."""
    seed: str
    commitment: str
    first_seat: int
    hands: list[list[str]]
    """The four hands recomputed from the seed, in draw order (R16)."""
    bottom: list[str]


class RoundVerified(_Response, frozen=True, kw_only=True):
    """A scored round checked against its commitment and events (R35)."""

    ok: bool
    round_id: str
    number: int
    seed: str
    commitment: str
    deals: int
    events: int
    seeds_from: Literal["server", "record"]
    """``server``: drawn here and committed before the first card (R35); ``record``: the
    match is an imported record, so the seeds are the importer's — the check proves the
    record consistent, not the deal fair."""


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
    429: "Too many requests from this client (`rate-limited`), over the hourly quota of "
    "creations and imports (`quota-exceeded`), or too many live streams open "
    "(`too-many-streams`); see Retry-After",
    500: "Server fault (nothing was changed)",
}


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

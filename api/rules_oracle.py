"""The stateless rules oracle: referees, tutorials and client hints ask the engine.

``POST /v1/rules/{trick,follow,shape,throw,bottom-multiplier,settle}``. JSON in camelCase,
cards in RULES R4 notation (a JSON array of tokens), ``level`` a
rank "2".."A", ``trumpSuit`` "S" "H" "C" "D" or null for no-trump, optional ``rules`` with
RULES §10 fields in camelCase. Malformed input is a 422 problem naming the field or token.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any, Literal

import msgspec
from litestar import Controller, Request, post
from msgspec import Meta

from api.dto import Cards, RulesRequest, SomeCards, problems
from api.routes import STATELESS, RouteDecorator, route
from api.strict import json_body, read_body
from domain.rules.cards import Card, card_names, parse_cards, parse_rank, parse_suit
from domain.rules.context import TRUMP, TrumpContext, trump_context
from domain.rules.errors import IllegalMoveError, InvalidInputError
from domain.rules.follow import check_follow
from domain.rules.ruleset import RuleSet
from domain.rules.scoring import bottom_multiplier, settle
from domain.rules.shapes import Shape, ShapeKind, decompose
from domain.rules.throws import check_throw
from domain.rules.trick import trick_points, trick_winner
from services import field_docs

Level = Literal["2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"]
Suit = Literal["S", "H", "C", "D"]


class _Base(msgspec.Struct, rename="camel", forbid_unknown_fields=True, kw_only=True):
    rules: Annotated[
        RulesRequest | None,
        Meta(
            description=(
                "RULES §10 fields in camelCase; absent ones take the standard rules' values."
            )
        ),
    ] = None


class _Contextual(_Base, kw_only=True):
    level: Annotated[Level, field_docs.LEVEL]
    trump_suit: Annotated[Suit | None, field_docs.TRUMP_SUIT]


class TrickRequest(_Contextual, kw_only=True):
    """A trick's plays to judge (R24)."""

    plays: Annotated[
        Annotated[list[SomeCards], msgspec.Meta(min_length=2, max_length=4)],
        Meta(description="The plays in order, the lead first (R24)"),
    ]


class TrickResponse(msgspec.Struct, rename="camel"):
    """Who won the trick (R24) and its points (R26)."""

    winner: Annotated[int, Meta(description="The index in `plays` of the winning play (R24)")]
    points: Annotated[int, Meta(description="The trick's points (R26)")]


class FollowRequest(_Contextual, kw_only=True):
    """A lead, a hand and a follow to judge (R23)."""

    lead: Annotated[SomeCards, Meta(description="The lead (R22)")]
    hand: Annotated[
        SomeCards,
        Meta(description="The follower's hand before playing", examples=[field_docs.EXAMPLE_CARDS]),
    ]
    play: Annotated[SomeCards, Meta(description="The follow to judge (R23)")]


class FollowResponse(msgspec.Struct, rename="camel"):
    """Whether the follow is legal (R23), and if not which rule and why."""

    legal: Annotated[bool, Meta(description="The follow is legal (R23)")]
    rule: Annotated[str | None, Meta(description="The rule it breaks; null when legal")]
    detail: Annotated[
        str | None,
        Meta(description="Why it is not legal; null when legal", examples=["what happened"]),
    ]


class ShapeRequest(_Contextual, kw_only=True):
    """Cards to classify (R12-R15)."""

    cards: Annotated[
        SomeCards, Meta(description="The cards to classify", examples=[field_docs.EXAMPLE_CARDS])
    ]


class ShapeResponse(msgspec.Struct, rename="camel"):
    """What the cards are as a combination (R12-R15) and their components."""

    kind: Annotated[
        Literal["single", "pair", "tractor", "throw", "mixed"],
        Meta(description="single, pair, tractor, throw, or mixed (never a lead) (R12-R15)"),
    ]
    components: Annotated[list[list[str]], Meta(description="Its components, largest first (R15)")]


class ThrowRequest(_Contextual, kw_only=True):
    """A throw and the other three hands, to judge it (R22)."""

    throw: Annotated[
        SomeCards, Meta(description="The throw (R15)", examples=[field_docs.EXAMPLE_CARDS])
    ]
    other_hands: Annotated[
        Annotated[list[Cards], msgspec.Meta(min_length=3, max_length=3)],
        Meta(description="The three other hands (R22 looks at them)"),
    ]


class ThrowResponse(msgspec.Struct, rename="camel"):
    """Whether the throw stands (R22), and if not what is played instead."""

    valid: Annotated[bool, Meta(description="The throw stands (R22)")]
    forced_play: Annotated[
        list[str] | None,
        Meta(description="What is played instead when it fails (R22); null when valid"),
    ]


class BottomMultiplierRequest(_Contextual, kw_only=True):
    """The last trick's lead, to find the bottom multiplier (R28)."""

    last_lead: Annotated[SomeCards, Meta(description="The last trick's lead (R28)")]


class BottomMultiplierResponse(msgspec.Struct, rename="camel"):
    """The bottom multiplier of a last lead (R28)."""

    multiplier: Annotated[int, Meta(description="The multiplier (R28)")]


class SettleRequest(_Base, kw_only=True):
    """The attackers' total, to settle a round (R30)."""

    attacker_points: Annotated[
        Annotated[int, msgspec.Meta(ge=0, le=100_000)],
        Meta(description="The attackers' total (R29)"),
    ]


class SettleResponse(msgspec.Struct, rename="camel"):
    """The level change an attackers' total brings (R30)."""

    outcome: Annotated[
        Literal["defenders_up", "attackers_take_over", "attackers_take_over_and_up"],
        Meta(description="The outcome (R30)"),
    ]
    levels: Annotated[int, Meta(description="Levels gained (R30)")]


def _cards(value: Cards, field: str) -> list[Card]:
    try:
        cards = parse_cards(value)
    except InvalidInputError as e:
        raise InvalidInputError(f"{field}: {e.detail}", code=e.code, rule=e.rule) from None
    if not cards:
        raise InvalidInputError(f"{field}: at least one card is needed")
    return cards


def _context(req: _Contextual) -> TrumpContext:
    return trump_context(parse_rank(req.level), parse_suit(req.trump_suit))


def _position(req: _Contextual) -> TrumpContext:
    """The position's trump context, its rule set checked (an unknown field is refused)."""
    ctx = _context(req)
    _rules(req)
    return ctx


def _rules(req: _Base) -> RuleSet:
    return RuleSet() if req.rules is None else RuleSet.from_mapping(req.rules.fields())


def _lead(ctx: TrumpContext, cards: list[Card], field: str) -> Shape:
    shape = decompose(ctx, cards)
    if shape.kind is ShapeKind.MIXED:
        raise InvalidInputError(f"{field}: a lead must be of one suit category (R15, R22)")
    return shape


def _components(ctx: TrumpContext, cards: list[Card], shape: Shape) -> list[list[str]]:
    if shape.kind is not ShapeKind.MIXED:
        return [card_names(c.cards) for c in shape.components]
    out: list[list[str]] = []
    for category in (TRUMP, 0, 1, 2, 3):  # mixed: each category's own components
        part = [c for c in cards if ctx.category[c] == category]
        if part:
            out += [card_names(c.cards) for c in decompose(ctx, part).components]
    return out


ERRORS = problems(409, body=True)
"""409: cards that cannot occur under the rules (``impossible-position``); 422: malformed
input (a field, a card token); 400: unparsable JSON; 413, 415, 429, 500."""


@contextmanager
def impossible_positions() -> Iterator[None]:
    """Well-formed cards the rules say cannot occur — three copies of a card (R3), a lead
    of two suit categories (R15, R22), plays of unequal size (R23), a follow not in the
    hand — are the rules' answer to the question: 409 ``impossible-position`` naming the
    rule, as an illegal move is; malformed input stays a 422."""
    try:
        yield
    except InvalidInputError as e:
        if e.code != "invalid-input":
            raise
        cited = e.rule or next(iter(_CITED.findall(e.detail)), None)
        raise IllegalMoveError(e.detail, rule=cited, code="impossible-position") from None


_CITED = re.compile(r"\((R[0-9]+)")


def oracle(path: str, body: Any) -> RouteDecorator:
    """A question to the rules engine: ``POST /v1/rules{path}`` with a ``body``, answered
    200, or refused for an impossible position or input (:data:`ERRORS`)."""
    return route(
        path,
        handler=post,
        status_code=200,
        responses=ERRORS,
        opt={STATELESS: True, **json_body(body)},
    )


class RulesOracleController(Controller):
    path = "/v1/rules"
    tags = ["rules oracle"]  # noqa: RUF012 - Litestar declares it an instance attribute

    @oracle("/trick", TrickRequest)
    async def judge_trick(self, request: Request[Any, Any, Any]) -> TrickResponse:
        """Who wins a trick, and its points (R24, R11, R26)

        The winning play of a trick (R24, ties R11) and its points (R26). Stateless.
        """
        data = await read_body(request)
        with impossible_positions():
            ctx = _position(data)
            plays = [_cards(p, f"plays[{i}]") for i, p in enumerate(data.plays)]
            lead = _lead(ctx, plays[0], "plays[0]")
            for i, p in enumerate(plays[1:], start=1):
                if len(p) != len(plays[0]):
                    raise InvalidInputError(
                        f"plays[{i}]: {len(p)} cards; every play has as many cards as the lead "
                        f"({len(plays[0])}) (R23)"
                    )
            return TrickResponse(trick_winner(ctx, plays, lead), trick_points(plays))

    @oracle("/follow", FollowRequest)
    async def check_follow(self, request: Request[Any, Any, Any]) -> FollowResponse:
        """Is a follow legal, and which rule it breaks (R23)

        Whether a follow is legal for a lead and a hand (R23), and if not the rule
        it breaks and why. Stateless.
        """
        data = await read_body(request)
        with impossible_positions():
            ctx = _position(data)
            lead = _lead(ctx, _cards(data.lead, "lead"), "lead")
            hand = _cards(data.hand, "hand")
            play = _cards(data.play, "play")
            verdict = check_follow(ctx, lead, hand, play)
            return FollowResponse(verdict.legal, verdict.rule, verdict.detail)

    @oracle("/shape", ShapeRequest)
    async def check_shape(self, request: Request[Any, Any, Any]) -> ShapeResponse:
        """Classify cards and split a throw (R12–R15)

        What cards are as a lead (single, pair, tractor, throw or mixed, R12-R15)
        and their components, largest first. Stateless.
        """
        data = await read_body(request)
        with impossible_positions():
            ctx = _position(data)
            cards = _cards(data.cards, "cards")
            shape = decompose(ctx, cards)
            return ShapeResponse(shape.kind.value, _components(ctx, cards, shape))

    @oracle("/throw", ThrowRequest)
    async def check_throw(self, request: Request[Any, Any, Any]) -> ThrowResponse:
        """Is a throw valid; if not, the forced play (R22)

        Whether a throw stands against the other three hands (R22), and if not the
        component played instead. Stateless.
        """
        data = await read_body(request)
        with impossible_positions():
            ctx = _position(data)
            shape = _lead(ctx, _cards(data.throw, "throw"), "throw")
            others = [
                _cards(h, f"otherHands[{i}]") if h else [] for i, h in enumerate(data.other_hands)
            ]
            verdict = check_throw(ctx, shape, others)
            forced = None if verdict.forced is None else card_names(verdict.forced)
            return ThrowResponse(verdict.valid, forced)

    @oracle("/bottom-multiplier", BottomMultiplierRequest)
    async def check_bottom_multiplier(
        self, request: Request[Any, Any, Any]
    ) -> BottomMultiplierResponse:
        """The bottom multiplier of a last lead (R28)

        The bottom multiplier (R28) of a last trick's lead under the rules given:
        single x2, pair x4, a tractor by `bottom_multiplier`, a throw by its largest
        component. Stateless.
        """
        data = await read_body(request)
        with impossible_positions():
            ctx = _context(data)
            shape = _lead(ctx, _cards(data.last_lead, "lastLead"), "lastLead")
            return BottomMultiplierResponse(bottom_multiplier(shape, _rules(data)))

    @oracle("/settle", SettleRequest)
    async def settle_round(self, request: Request[Any, Any, Any]) -> SettleResponse:
        """Level change for the attackers' points (R30)

        The level change an attackers' total brings (R30, §10 level_cap). Stateless.
        """
        data = await read_body(request)
        with impossible_positions():
            s = settle(data.attacker_points, _rules(data))
            return SettleResponse(s.outcome.value, s.levels)

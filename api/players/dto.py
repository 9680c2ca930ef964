"""Request and response bodies of the players' routes (camelCase msgspec Structs)."""

from __future__ import annotations

from typing import Annotated, Literal
from uuid import UUID

import msgspec
from msgspec import Meta

from api.dto import NOT_BLANK, RulesRequest, _Request, _Response
from services import field_docs

DisplayName = Annotated[
    str,
    msgspec.Meta(
        min_length=1,
        max_length=100,
        pattern=NOT_BLANK,
        examples=["Mei"],
        description="Shown at tables; not only white space",
    ),
]
Label = Annotated[
    str, msgspec.Meta(max_length=100, examples=["Mei's phone"], description="Names a device")
]
Locale = Literal["en", "zh-CN"]


class CreatePlayerRequest(_Request, frozen=True, kw_only=True):
    """A new player (a device account, docs/players.md): the name shown at tables, the
    language, the first device's name."""

    display_name: Annotated[
        DisplayName,
        Meta(
            description=(
                "The name shown at tables; personal data, stored "
                "encrypted under the player's own key and erased with the "
                "player."
            )
        ),
    ]
    locale: Annotated[
        Locale,
        Meta(description="The player's language for texts meant for them: `en` or `zh-CN`."),
    ] = "en"
    label: Annotated[Label, Meta(description="The first session's device name.")] = ""


class EditProfileRequest(_Request, frozen=True, kw_only=True):
    """The player's new display name and/or language; an absent field is unchanged."""

    display_name: Annotated[
        DisplayName | None,
        Meta(description="The name shown at tables from now on (seats already taken keep theirs)."),
    ] = None
    locale: Annotated[
        Locale | None,
        Meta(
            description=(
                "The language of texts for the player: problems answered without `Accept-Language`."
            )
        ),
    ] = None


class OpenSessionRequest(_Request, frozen=True, kw_only=True):
    """Sign in another device from this one: the new session's device name."""

    label: Label = ""


class SessionItem(_Response, frozen=True, kw_only=True):
    """One of the player's sessions (a device); the token itself is never shown again."""

    session_id: Annotated[
        str,
        Meta(description="The session's id (end it with `DELETE /v1/players/me/sessions/{id}`)."),
    ]
    label: Annotated[str, Meta(description="The device's name, as given when the session opened.")]
    opened_at: Annotated[str, Meta(description="When the session opened, ISO 8601.")]
    current: Annotated[bool, Meta(description="The session of the token used for this call.")]
    expires_at: Annotated[
        str,
        Meta(
            description=(
                "When the session stops signing in unless refreshed, ISO 8601 (`SESSION_IDLE_S`)."
            )
        ),
    ]


class SessionList(_Response, frozen=True, kw_only=True):
    """The player's open sessions, oldest first."""

    items: Annotated[list[SessionItem], field_docs.ITEMS]


class ClaimRequest(_Request, frozen=True, kw_only=True):
    """Sit in a seat of a match as this player (R1: one seat per match)."""

    match_id: Annotated[UUID, field_docs.MATCH_ID]
    seat: Annotated[int, msgspec.Meta(ge=0, le=3, description="Seat 0..3 (R1)")]


class CreateInviteRequest(_Request, frozen=True, kw_only=True):
    """An invite code to this private table."""

    ttl_seconds: Annotated[
        Annotated[int, msgspec.Meta(ge=60, le=30 * 86400, examples=[86400])],
        Meta(description="How long the code works (1 minute to 30 days; a week by default)."),
    ] = 7 * 86400


class InviteInfo(_Response, frozen=True, kw_only=True):
    """What an invite code leads to: the match, its name and its free seats."""

    match_id: Annotated[str, field_docs.MATCH_ID]
    name: Annotated[str, field_docs.NAME]
    expires_at: Annotated[str, Meta(description="When the code stops working, ISO 8601.")]
    free_seats: Annotated[
        list[int], Meta(description="The seats still free (R1): joining takes the first of them.")
    ]


class JoinRequest(_Request, frozen=True, kw_only=True):
    """Join the invite's match: in ``seat`` (so a friend sits as partner, R2), or in its
    first free seat."""

    seat: Annotated[
        Annotated[int, msgspec.Meta(ge=0, le=3, description="Seat 0..3 (R1)")] | None,
        Meta(
            description=(
                "The seat to take (409 `seat-taken` when someone sits "
                "there); none: the lowest free."
            )
        ),
    ] = None

    name: Annotated[
        Annotated[str, msgspec.Meta(min_length=1, max_length=100)] | None,
        Meta(
            description=(
                "The name at the table without a player token (`guest` by "
                "default); a player sits under their display name."
            ),
            examples=["Alice"],
        ),
    ] = None


class TicketRequestBody(_Request, frozen=True, kw_only=True):
    """A quick-play ticket: the rule set to play, an optional partner, and whether bots may
    fill the table."""

    preset: Annotated[Literal["standard", "tuolaji", "duijia"] | None, field_docs.PRESET] = None
    rules: Annotated[
        RulesRequest | None,
        Meta(
            description=(
                "§10 fields over the preset; tickets are matched only with the same rule set."
            )
        ),
    ] = None
    partner: Annotated[
        UUID | None,
        Meta(
            description=(
                "A friend's player id: you sit opposite (R2) once their ticket names you too."
            )
        ),
    ] = None
    bots_after_seconds: Annotated[
        Annotated[int, msgspec.Meta(ge=0, le=3600, examples=[30])] | None,
        Meta(
            description=(
                "Fill the free seats with bots once this ticket has "
                "waited so long; none: wait for people."
            )
        ),
    ] = None
    bot_kind: Annotated[
        Literal["random", "heuristic", "strong"],
        Meta(description="The bot policy for seats filled by bots: random, heuristic or strong."),
    ] = "heuristic"


class RankedTicketRequestBody(_Request, frozen=True, kw_only=True):
    """A ranked quick-play ticket: the family to be rated in (its preset is played)."""

    family: Annotated[
        Literal["standard", "tuolaji", "duijia"],
        Meta(
            description=("The rule-set family: its preset is played, and the match is rated there.")
        ),
    ] = "standard"


class RegisterWebhook(_Request, frozen=True, kw_only=True):
    """A webhook subscription (operator): where to post, the signing secret, and which kinds
    of deliveries."""

    url: Annotated[
        Annotated[
            str,
            msgspec.Meta(
                pattern="^https?://", max_length=2000, examples=["https://push.example/shengji"]
            ),
        ],
        Meta(description="Where deliveries are posted (http or https)."),
    ]
    secret: Annotated[
        Annotated[str, msgspec.Meta(min_length=16, max_length=200)],
        Meta(
            description="Signs every delivery (HMAC-SHA256, docs/webhooks.md); never shown again.",
            examples=[field_docs.EXAMPLE_HEX64],
        ),
    ]
    kinds: Annotated[
        Annotated[
            list[
                Literal[
                    "your-turn",
                    "match-found",
                    "match-finished",
                    "rating-changed",
                    "tournament-round-ready",
                    "friend-request",
                    "friend-accepted",
                    "table-invitation",
                    "friend-online",
                ]
            ],
            msgspec.Meta(min_length=1, max_length=9),
        ],
        Meta(
            description=(
                "The kinds of deliveries wanted: your-turn, match-found, "
                "match-finished, rating-changed, tournament-round-ready, friend-request, "
                "friend-accepted, table-invitation, friend-online "
                "(docs/webhooks.md)."
            )
        ),
    ]

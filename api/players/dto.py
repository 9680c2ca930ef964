"""Request and response bodies of the players' routes (camelCase msgspec Structs)."""

from __future__ import annotations

from typing import Annotated, Literal
from uuid import UUID

import msgspec

from api.dto import RulesRequest, _Request, _Response

DisplayName = Annotated[
    str, msgspec.Meta(min_length=1, max_length=100, examples=["Mei"], description="Shown at tables")
]
Label = Annotated[
    str, msgspec.Meta(max_length=100, examples=["Mei's phone"], description="Names a device")
]
Locale = Literal["en", "zh-CN"]


class CreatePlayerRequest(_Request, frozen=True, kw_only=True):
    display_name: DisplayName
    locale: Locale = "en"
    label: Label = ""
    """The first session's device name."""


class NewPlayer(_Response, frozen=True, kw_only=True):
    player_id: str
    session_id: str
    token: str | None = msgspec.field(default=None)
    """The player token (long-lived; rotate or end its session to stop it)."""
    display_name: str
    locale: str
    token_withheld: bool = False


class Profile(_Response, frozen=True, kw_only=True):
    player_id: str
    display_name: str
    locale: str
    session_id: str
    """The session of the token used for this call."""


class OpenSessionRequest(_Request, frozen=True, kw_only=True):
    label: Label = ""


class SessionToken(_Response, frozen=True, kw_only=True):
    session_id: str
    token: str | None
    token_withheld: bool = False


class SessionItem(_Response, frozen=True, kw_only=True):
    session_id: str
    label: str
    opened_at: str
    current: bool
    """The session of the token used for this call."""


class SessionList(_Response, frozen=True, kw_only=True):
    items: list[SessionItem]


class ClaimRequest(_Request, frozen=True, kw_only=True):
    match_id: UUID
    seat: Annotated[int, msgspec.Meta(ge=0, le=3, description="Seat 0..3 (R1)")]


class PlayerSeat(_Response, frozen=True, kw_only=True):
    match_id: str
    seat: int
    token: str | None
    """A seat token for this seat (the player token acts for it too)."""
    version: int
    token_withheld: bool = False


class CreateInviteRequest(_Request, frozen=True, kw_only=True):
    ttl_seconds: Annotated[int, msgspec.Meta(ge=60, le=30 * 86400, examples=[86400])] = 7 * 86400
    """How long the code works (1 minute to 30 days; a week by default)."""


class NewInvite(_Response, frozen=True, kw_only=True):
    code: str
    """Give it to a friend: ``POST /v1/invites/{code}`` takes a seat."""
    match_id: str
    expires_at: str


class InviteInfo(_Response, frozen=True, kw_only=True):
    match_id: str
    name: str
    expires_at: str
    free_seats: list[int]


class JoinRequest(_Request, frozen=True, kw_only=True):
    name: Annotated[str, msgspec.Meta(min_length=1, max_length=100)] | None = None
    """The name at the table without a player token (``guest`` by default); a player sits
    under their display name."""


class TicketRequestBody(_Request, frozen=True, kw_only=True):
    preset: Literal["standard", "tuolaji", "duijia"] | None = None
    rules: RulesRequest | None = None
    """§10 fields over the preset; tickets are matched only with the same rule set."""
    partner: UUID | None = None
    """A friend's player id: you sit opposite (R2) once their ticket names you too."""
    bots_after_seconds: Annotated[int, msgspec.Meta(ge=0, le=3600, examples=[30])] | None = None
    """Fill the free seats with bots once this ticket has waited so long; none: wait for
    people."""
    bot_kind: Literal["random", "heuristic", "strong"] = "heuristic"


class TicketView(_Response, frozen=True, kw_only=True):
    ticket_id: str
    status: Literal["waiting", "matched", "cancelled"]
    version: int
    """The ticket's version (the stream's event id)."""
    preset: str | None
    partner: str | None
    bots_after_seconds: int | None
    queued_at: str
    match_id: str | None
    """The match made (``matched``): play with the player token."""
    seat: int | None


class RegisterWebhook(_Request, frozen=True, kw_only=True):
    url: Annotated[
        str,
        msgspec.Meta(
            pattern="^https?://", max_length=2000, examples=["https://push.example/shengji"]
        ),
    ]
    secret: Annotated[str, msgspec.Meta(min_length=16, max_length=200)]
    """Signs every delivery (HMAC-SHA256, docs/webhooks.md); never shown again."""
    kinds: Annotated[
        list[Literal["your-turn", "match-found", "match-finished", "tournament-round-ready"]],
        msgspec.Meta(min_length=1, max_length=4),
    ]

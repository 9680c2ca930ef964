"""Request and response bodies of the players' routes (camelCase msgspec Structs)."""

from __future__ import annotations

from typing import Annotated, Literal
from uuid import UUID

import msgspec

from api.dto import NOT_BLANK, RulesRequest, _Request, _Response

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

    display_name: DisplayName
    """The name shown at tables; personal data, stored encrypted under the player's own key
    and erased with the player."""
    locale: Locale = "en"
    """The player's language for texts meant for them: `en` or `zh-CN`."""
    label: Label = ""
    """The first session's device name."""


class NewPlayer(_Response, frozen=True, kw_only=True):
    """The player created, with the player token (shown once)."""

    player_id: str
    """The player's id (a UUID): name it as a partner in quick play."""
    session_id: str
    """The first session's id (this device)."""
    token: str | None = msgspec.field(default=None)
    """The player token (long-lived; rotate or end its session to stop it)."""
    display_name: str
    """The name shown at tables."""
    locale: str
    """`en` or `zh-CN`."""
    token_withheld: bool = False
    """An idempotent replay: the token minted by the first request is not shown again
    (`token` is null)."""


class Profile(_Response, frozen=True, kw_only=True):
    """The player as the token's owner sees it."""

    player_id: str
    """The player's id (a UUID)."""
    display_name: str
    """The name shown at tables."""
    locale: str
    """`en` or `zh-CN`."""
    session_id: str
    """The session of the token used for this call."""
    session_expires_at: str
    """When this session stops signing in unless refreshed (`POST
    /v1/players/me/sessions/current/refresh`), ISO 8601: its idle limit (`SESSION_IDLE_S`)
    after it was opened, its token rotated or it was last refreshed."""


class EditProfileRequest(_Request, frozen=True, kw_only=True):
    """The player's new display name and/or language; an absent field is unchanged."""

    display_name: DisplayName | None = None
    """The name shown at tables from now on (seats already taken keep theirs)."""
    locale: Locale | None = None
    """The language of texts for the player: problems answered without `Accept-Language`."""


class SessionRefreshed(_Response, frozen=True, kw_only=True):
    """The session was refreshed: its idle limit counts from now."""

    session_id: str
    """The session refreshed (the one of the token used)."""
    expires_at: str
    """When the session stops signing in unless refreshed again, ISO 8601."""


class OpenSessionRequest(_Request, frozen=True, kw_only=True):
    """Sign in another device from this one: the new session's device name."""

    label: Label = ""


class SessionToken(_Response, frozen=True, kw_only=True):
    """A session and its player token (shown once): a new device's session, or the rotated
    token of this one."""

    session_id: str
    """The session's id."""
    token: str | None
    """The player token of this session; null in an idempotent replay (`tokenWithheld`)."""
    token_withheld: bool = False
    """An idempotent replay: the token minted by the first request is not shown again
    (`token` is null)."""


class SessionItem(_Response, frozen=True, kw_only=True):
    """One of the player's sessions (a device); the token itself is never shown again."""

    session_id: str
    """The session's id (end it with `DELETE /v1/players/me/sessions/{id}`)."""
    label: str
    """The device's name, as given when the session opened."""
    opened_at: str
    """When the session opened, ISO 8601."""
    current: bool
    """The session of the token used for this call."""
    expires_at: str
    """When the session stops signing in unless refreshed, ISO 8601 (`SESSION_IDLE_S`)."""


class SessionList(_Response, frozen=True, kw_only=True):
    """The player's open sessions, oldest first."""

    items: list[SessionItem]


class ClaimRequest(_Request, frozen=True, kw_only=True):
    """Sit in a seat of a match as this player (R1: one seat per match)."""

    match_id: UUID
    seat: Annotated[int, msgspec.Meta(ge=0, le=3, description="Seat 0..3 (R1)")]


class CreateInviteRequest(_Request, frozen=True, kw_only=True):
    """An invite code to this private table."""

    ttl_seconds: Annotated[int, msgspec.Meta(ge=60, le=30 * 86400, examples=[86400])] = 7 * 86400
    """How long the code works (1 minute to 30 days; a week by default)."""


class InviteInfo(_Response, frozen=True, kw_only=True):
    """What an invite code leads to: the match, its name and its free seats."""

    match_id: str
    name: str
    expires_at: str
    """When the code stops working, ISO 8601."""
    free_seats: list[int]
    """The seats still free (R1): joining takes the first of them."""


class JoinRequest(_Request, frozen=True, kw_only=True):
    """Join the invite's match: in ``seat`` (so a friend sits as partner, R2), or in its
    first free seat."""

    seat: Annotated[int, msgspec.Meta(ge=0, le=3, description="Seat 0..3 (R1)")] | None = None
    """The seat to take (409 `seat-taken` when someone sits there); none: the lowest free."""

    name: Annotated[str, msgspec.Meta(min_length=1, max_length=100)] | None = None
    """The name at the table without a player token (``guest`` by default); a player sits
    under their display name."""


class TicketRequestBody(_Request, frozen=True, kw_only=True):
    """A quick-play ticket: the rule set to play, an optional partner, and whether bots may
    fill the table."""

    preset: Literal["standard", "tuolaji", "duijia"] | None = None
    rules: RulesRequest | None = None
    """§10 fields over the preset; tickets are matched only with the same rule set."""
    partner: UUID | None = None
    """A friend's player id: you sit opposite (R2) once their ticket names you too."""
    bots_after_seconds: Annotated[int, msgspec.Meta(ge=0, le=3600, examples=[30])] | None = None
    """Fill the free seats with bots once this ticket has waited so long; none: wait for
    people."""
    bot_kind: Literal["random", "heuristic", "strong"] = "heuristic"
    """The bot policy for seats filled by bots: random, heuristic or strong."""


class TicketView(_Response, frozen=True, kw_only=True):
    """A quick-play ticket: waiting in its lobby, matched (its match and seat) or cancelled."""

    ticket_id: str
    """The ticket's id."""
    status: Literal["waiting", "matched", "cancelled"]
    """`waiting` in the lobby, `matched` (see `matchId` and `seat`) or `cancelled`."""
    version: int
    """The ticket's version (the stream's event id)."""
    preset: str | None
    partner: str | None
    """The partner's player id (they sit opposite, R2); null for none."""
    bots_after_seconds: int | None
    """Bots fill the free seats after the ticket has waited so long; null: wait for people."""
    queued_at: str
    """When the ticket was queued, ISO 8601."""
    match_id: str | None
    """The match made (``matched``): play with the player token."""
    seat: int | None
    match_end: str
    """How the match made ends (R32): the rule set's `finish_at_A` or `rounds:N`; a rule set
    that would never end (`wrap`) plays quick play's preset length `rounds:N`
    (`QUICK_PLAY_ROUNDS`)."""
    turn_limits: TurnLimits
    """The turn limits of the match made: always on in quick play; a seat over its time is
    played by the timeout bot (docs/timers.md)."""


class TurnLimits(_Response, frozen=True, kw_only=True):
    """Turn time limits in ms (docs/timers.md); 0: none."""

    declare_ms: int
    """Each declaring or overcalling turn (R18, R20)."""
    bury_ms: int
    """Burying the bottom (R21)."""
    play_ms: int
    """Each lead or follow (R22, R23)."""


class RegisterWebhook(_Request, frozen=True, kw_only=True):
    """A webhook subscription (operator): where to post, the signing secret, and which kinds
    of deliveries."""

    url: Annotated[
        str,
        msgspec.Meta(
            pattern="^https?://", max_length=2000, examples=["https://push.example/shengji"]
        ),
    ]
    """Where deliveries are posted (http or https)."""
    secret: Annotated[str, msgspec.Meta(min_length=16, max_length=200)]
    """Signs every delivery (HMAC-SHA256, docs/webhooks.md); never shown again."""
    kinds: Annotated[
        list[Literal["your-turn", "match-found", "match-finished", "tournament-round-ready"]],
        msgspec.Meta(min_length=1, max_length=4),
    ]
    """The kinds of deliveries wanted: your-turn, match-found, match-finished, tournament-
    round-ready (docs/webhooks.md)."""

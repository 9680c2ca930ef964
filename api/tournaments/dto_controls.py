"""Request and response bodies of the organiser's controls (issue 16,
:mod:`api.tournaments.registration`, :mod:`api.tournaments.control`): camelCase msgspec
Structs; requests refuse unknown fields (422 naming the field)."""

from __future__ import annotations

from typing import Annotated

import msgspec

from api.tournaments.dto import SeatTokenView, TeamRequest
from services.tournaments.views import TournamentView

TeamNumber = Annotated[int, msgspec.Meta(ge=0, le=63, examples=[3])]
Reason = Annotated[str, msgspec.Meta(min_length=1, max_length=500, examples=["a player fell ill"])]
By = Annotated[str, msgspec.Meta(min_length=1, max_length=100, examples=["Tournament director"])]


class _Request(
    msgspec.Struct, frozen=True, kw_only=True, rename="camel", forbid_unknown_fields=True
):
    pass


class RegisterTeamRequest(TeamRequest, frozen=True, kw_only=True):
    """A team: its name and two players (R2). Without a token the team registers itself
    (registration open); with the organiser token it is added by the organiser (also as a
    late entry of a Swiss tournament that has started)."""


class WithdrawRequest(_Request, frozen=True, kw_only=True):
    reason: Reason
    """Why (recorded in ``TeamWithdrew``)."""


class ForbidRequest(_Request, frozen=True, kw_only=True):
    teams: Annotated[list[TeamNumber], msgspec.Meta(min_length=2, max_length=2, examples=[[0, 4]])]
    """The two teams (their numbers) never to pair."""
    reason: Reason


class PairingRequest(_Request, frozen=True, kw_only=True):
    first_team: TeamNumber
    second_team: TeamNumber


class OverrideRequest(_Request, frozen=True, kw_only=True):
    tables: Annotated[
        list[PairingRequest],
        msgspec.Meta(
            min_length=1,
            max_length=32,
            examples=[[{"firstTeam": 0, "secondTeam": 5}, {"firstTeam": 1, "secondTeam": 4}]],
        ),
    ]
    """Table 1 first; each active team once."""
    bye: TeamNumber | None = None
    """The team that sits out (only for an odd count)."""
    reason: Reason
    by: By


class AdjustmentRequest(_Request, frozen=True, kw_only=True):
    team: TeamNumber
    match_points: Annotated[int, msgspec.Meta(ge=-100, le=100, examples=[-1, 2])]
    """Match points to add (negative: a penalty); not 0."""
    reason: Reason
    by: By


class _Response(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    pass


class RegisteredTeam(_Response, frozen=True, kw_only=True):
    team: int
    team_token: str | None
    """Shown once, to a team that registered itself: its check-in and withdrawal
    (``Authorization: Bearer``). Null when the organiser added the team, or in a replay."""
    tournament: TournamentView
    token_withheld: bool = False


class PreviewTable(_Response, frozen=True, kw_only=True):
    table: int
    first_team: int
    first_name: str
    second_team: int
    second_name: str


class PairingPreview(_Response, frozen=True, kw_only=True):
    number: int
    """The round this pairing is for (not scheduled yet)."""
    tables: list[PreviewTable]
    bye: int | None
    awarded_byes: list[int]
    overridden: bool
    """The organiser's override will be used."""


class ReissuedTokens(_Response, frozen=True, kw_only=True):
    seat_tokens: list[SeatTokenView]
    """The people's new seat tokens (shown once); the old ones no longer work."""
    token_withheld: bool = False

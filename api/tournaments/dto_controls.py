"""Request and response bodies of the organiser's controls (T16,
:mod:`api.tournaments.registration`, :mod:`api.tournaments.control`): camelCase msgspec
Structs; requests refuse unknown fields (422 naming the field)."""

from __future__ import annotations

from typing import Annotated

import msgspec
from msgspec import Meta

from api.dto import NOT_BLANK
from api.tournaments.dto import SeatTokenView, TeamRequest
from services import field_docs
from services.tournaments.views import TournamentView

TeamNumber = Annotated[int, msgspec.Meta(ge=0, le=63, examples=[3])]
Reason = Annotated[
    str,
    msgspec.Meta(min_length=1, max_length=500, pattern=NOT_BLANK, examples=["a player fell ill"]),
]
By = Annotated[
    str,
    msgspec.Meta(min_length=1, max_length=100, pattern=NOT_BLANK, examples=["Tournament director"]),
]


class _Request(
    msgspec.Struct, frozen=True, kw_only=True, rename="camel", forbid_unknown_fields=True
):
    pass


class RegisterTeamRequest(TeamRequest, frozen=True, kw_only=True):
    """A team: its name and two players (R2). Without a token the team registers itself
    (registration open); with the organiser token it is added by the organiser (also as a
    late entry of a Swiss tournament that has started)."""


class WithdrawRequest(_Request, frozen=True, kw_only=True):
    """A team leaves the tournament: it is paired no more from the next round on (R36)."""

    reason: Annotated[Reason, Meta(description="Why (recorded in `TeamWithdrew`).")]


class ForbidRequest(_Request, frozen=True, kw_only=True):
    """Two teams that must never meet (two teams of one club); Swiss tournaments only."""

    teams: Annotated[
        Annotated[list[TeamNumber], msgspec.Meta(min_length=2, max_length=2, examples=[[0, 4]])],
        Meta(description="The two teams (their numbers) never to pair."),
    ]
    reason: Annotated[Reason, field_docs.REASON]


class PairingRequest(_Request, frozen=True, kw_only=True):
    """One table of a pairing: the two teams that meet."""

    first_team: Annotated[TeamNumber, Meta(description="The first team's number (seats 0 and 2).")]
    second_team: Annotated[
        TeamNumber, Meta(description="The second team's number (seats 1 and 3).")
    ]


class OverrideRequest(_Request, frozen=True, kw_only=True):
    """The organiser's pairing of the next round, set by hand before it is scheduled (R36),
    and why."""

    tables: Annotated[
        Annotated[
            list[PairingRequest],
            msgspec.Meta(
                min_length=1,
                max_length=32,
                examples=[[{"firstTeam": 0, "secondTeam": 5}, {"firstTeam": 1, "secondTeam": 4}]],
            ),
        ],
        Meta(description="Table 1 first; each active team once."),
    ]
    bye: Annotated[
        TeamNumber | None, Meta(description="The team that sits out (only for an odd count).")
    ] = None
    reason: Annotated[Reason, field_docs.REASON]
    by: Annotated[By, Meta(description="Who made the decision (recorded with it).")]


class AdjustmentRequest(_Request, frozen=True, kw_only=True):
    """A score adjustment or a penalty, in match points, with why and by whom."""

    team: Annotated[TeamNumber, field_docs.TEAM]
    match_points: Annotated[
        Annotated[int, msgspec.Meta(ge=-100, le=100, examples=[-1, 2])],
        Meta(description="Match points to add (negative: a penalty); not 0."),
    ]
    reason: Annotated[Reason, field_docs.REASON]
    by: Annotated[By, Meta(description="Who made the decision (recorded with it).")]


class _Response(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    pass


class RegisteredTeam(_Response, frozen=True, kw_only=True):
    """The team entered, and the tournament as it now stands."""

    team: Annotated[int, field_docs.TEAM]
    team_token: Annotated[
        str | None,
        Meta(
            description=(
                "Shown once, to a team that registered itself: its "
                "check-in and withdrawal (`Authorization: Bearer`). Null "
                "when the organiser added the team, or in a replay."
            )
        ),
    ]
    tournament: Annotated[
        TournamentView, Meta(description="The tournament after the registration.")
    ]
    token_withheld: Annotated[
        bool,
        Meta(
            description=(
                "An idempotent replay: the token minted by the first "
                "request is not shown again (`token` is null)."
            )
        ),
    ] = False


class PreviewTable(_Response, frozen=True, kw_only=True):
    """A table of the pairing the next round would get."""

    table: Annotated[int, Meta(description="The table's number, from 1.")]
    first_team: Annotated[int, Meta(description="The first team's number (seats 0 and 2).")]
    first_name: Annotated[str, Meta(description="The first team's name.")]
    second_team: Annotated[int, Meta(description="The second team's number (seats 1 and 3).")]
    second_name: Annotated[str, Meta(description="The second team's name.")]


class PairingPreview(_Response, frozen=True, kw_only=True):
    """The pairing the next round would get if scheduled now (nothing is saved)."""

    number: Annotated[int, Meta(description="The round this pairing is for (not scheduled yet).")]
    tables: Annotated[list[PreviewTable], Meta(description="The tables, table 1 first.")]
    bye: Annotated[
        int | None, Meta(description="The team that would sit out (an odd count); null for none.")
    ]
    awarded_byes: Annotated[
        list[int],
        Meta(
            description="Round robin: teams whose scheduled opponent withdrew (each scores a bye)."
        ),
    ]
    overridden: Annotated[bool, Meta(description="The organiser's override will be used.")]
    published: Annotated[
        bool,
        Meta(
            description=(
                "The organiser published this pairing: anyone may see it, "
                "and scheduling uses it. Until then the preview is the "
                "organiser's only."
            )
        ),
    ] = False
    warnings: Annotated[
        list[str],
        Meta(
            description=(
                "What the pairing does that the computed one avoids: "
                "forbidden pairings, rematches (an override's)."
            )
        ),
    ] = []


class ReissuedTokens(_Response, frozen=True, kw_only=True):
    """A table's new seat tokens (the old ones stop working at once)."""

    seat_tokens: Annotated[
        list[SeatTokenView],
        Meta(description="The people's new seat tokens (shown once); the old ones no longer work."),
    ]
    token_withheld: Annotated[
        bool,
        Meta(
            description=(
                "An idempotent replay: the token minted by the first "
                "request is not shown again (`token` is null)."
            )
        ),
    ] = False

"""Request bodies of the organiser's controls (T16,
:mod:`api.tournaments.registration`, :mod:`api.tournaments.control`): camelCase msgspec
Structs; requests refuse unknown fields (422 naming the field)."""

from __future__ import annotations

from typing import Annotated

import msgspec
from msgspec import Meta

from api.dto import NOT_BLANK
from api.tournaments.dto import TeamRequest
from services import field_docs

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

"""Request bodies of the director's tools (:mod:`api.tournaments.director`):
camelCase msgspec Structs; requests refuse unknown fields (422 naming the field)."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec
from msgspec import Meta

from api.dto import NOT_BLANK, TimersRequest
from api.tournaments.dto_controls import By, Reason, TeamNumber
from services import field_docs

DeadlineS = Annotated[int, msgspec.Meta(ge=1, le=7 * 86_400, examples=[5400])]
Levels = Annotated[
    list[Annotated[int, msgspec.Meta(ge=0, le=100_000)]],
    msgspec.Meta(min_length=2, max_length=2, examples=[[3, 1]]),
]


class _Request(
    msgspec.Struct, frozen=True, kw_only=True, rename="camel", forbid_unknown_fields=True
):
    pass


class EnterResultRequest(_Request, frozen=True, kw_only=True):
    """A table's result entered by the organiser (a paper result), with why."""

    levels: Annotated[
        Levels, Meta(description="Levels gained by the table's first and second team (R30).")
    ]
    winner: Annotated[
        TeamNumber | None,
        Meta(
            description=(
                "The winning team's number; absent: the team that gained "
                "more levels (a draw when level)."
            )
        ),
    ] = None
    points: Annotated[
        Levels | None,
        Meta(description="Attackers' points taken by the first and second team (R29), if known."),
    ] = None
    reason: Annotated[Reason, field_docs.REASON]
    by: Annotated[By, Meta(description="Who entered it (recorded with it).")]


class ScheduleRequest(_Request, frozen=True, kw_only=True):
    """The round's own time control (optional: without it, the tournament's)."""

    deadline_s: Annotated[
        DeadlineS | None,
        Meta(description="Seconds the round may last (from now) before its deadline rule applies."),
    ] = None
    timers: Annotated[
        TimersRequest | None, Meta(description="Its tables' turn time limits (docs/timers.md).")
    ] = None


class TimeControlRequest(_Request, frozen=True, kw_only=True):
    """The time control of the rounds not scheduled yet; an absent field keeps its value."""

    timers: Annotated[
        TimersRequest | msgspec.UnsetType | None,
        Meta(description="Tables' turn limits (null: none)."),
    ] = msgspec.UNSET
    round_deadline_s: Annotated[
        DeadlineS | msgspec.UnsetType | None,
        Meta(description="Seconds a round may last (null: no deadline)."),
    ] = msgspec.UNSET
    deadline_rule: Annotated[
        Literal["flag", "finish"] | msgspec.UnsetType,
        Meta(
            description=(
                "`flag` the tables past the deadline for the organiser, or `finish` them (R32)."
            )
        ),
    ] = msgspec.UNSET
    requested_bye_points: Annotated[
        Literal[0, 1] | msgspec.UnsetType,
        Meta(description="Match points of a requested bye: 0, or 1 (half a win)."),
    ] = msgspec.UNSET


class RoundClockRequest(_Request, frozen=True, kw_only=True):
    """The round in play's own deadline (seconds from its scheduling; null: none) and
    the turn timers of its tables seated from now on."""

    deadline_s: Annotated[
        DeadlineS | None,
        Meta(
            description=(
                "Seconds from the round's scheduling (paused time added); null: no deadline."
            )
        ),
    ]
    timers: Annotated[
        TimersRequest | None,
        Meta(description="Turn limits of its tables seated from now on (docs/timers.md)."),
    ] = None


class ExtensionRequest(_Request, frozen=True, kw_only=True):
    """More time for one table past the round's deadline."""

    seconds: Annotated[
        Annotated[int, msgspec.Meta(ge=1, le=86_400, examples=[600])],
        Meta(description="Seconds added to this table's deadline."),
    ]
    reason: Annotated[Reason, field_docs.REASON]
    by: Annotated[By, Meta(description="Who gave it (recorded with it).")]


class PauseRequest(_Request, frozen=True, kw_only=True):
    """Why the round's clock stops (recorded in ``RoundPaused``)."""

    reason: Annotated[Reason, field_docs.REASON]


class CancelRequest(_Request, frozen=True, kw_only=True):
    """Why the round in play is cancelled, and who decided."""

    reason: Annotated[Reason, field_docs.REASON]
    by: Annotated[By, Meta(description="Who decided (recorded with it).")]


class ByeRequest(_Request, frozen=True, kw_only=True):
    """A team sits out a round not scheduled yet, at its request."""

    team: Annotated[TeamNumber, field_docs.TEAM]
    round: Annotated[
        Annotated[int, msgspec.Meta(ge=1, le=63)],
        Meta(description="The round (not scheduled yet) the team sits out."),
    ]
    reason: Annotated[Reason, field_docs.REASON]


class SubstituteRequest(_Request, frozen=True, kw_only=True):
    """A player replaced for one round not scheduled yet."""

    round: Annotated[
        Annotated[int, msgspec.Meta(ge=1, le=63)],
        Meta(description="The round (not scheduled yet) the substitute plays."),
    ]
    team: Annotated[TeamNumber, field_docs.TEAM]
    player: Annotated[Literal[0, 1], Meta(description="The team's first (0) or second (1) player.")]
    name: Annotated[
        Annotated[str, msgspec.Meta(min_length=1, max_length=100, pattern=NOT_BLANK)],
        field_docs.NAME,
    ]
    kind: Annotated[Literal["human", "random", "heuristic", "strong"], field_docs.KIND] = "human"
    reason: Annotated[Reason, field_docs.REASON]


class RenameRequest(_Request, frozen=True, kw_only=True):
    """A team's new name (unique in the tournament), and why."""

    name: Annotated[
        Annotated[str, msgspec.Meta(min_length=1, max_length=100, pattern=NOT_BLANK)],
        field_docs.NAME,
    ]
    reason: Annotated[Reason, field_docs.REASON]


class FixedTableRequest(_Request, frozen=True, kw_only=True):
    """A team's fixed table (its home table, accessibility), from the next round."""

    team: Annotated[TeamNumber, field_docs.TEAM]
    table: Annotated[
        Annotated[int, msgspec.Meta(ge=1, le=32)] | None,
        Meta(description="The table's number (from 1); null: no fixed table any more."),
    ]
    reason: Annotated[Reason, field_docs.REASON]

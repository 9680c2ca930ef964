"""Request and response bodies of the director's tools (:mod:`api.tournaments.director`):
camelCase msgspec Structs; requests refuse unknown fields (422 naming the field)."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from api.dto import NOT_BLANK, TimersRequest
from api.tournaments.dto_controls import By, PairingPreview, Reason, TeamNumber
from services.tournaments.views import TournamentView

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

    levels: Levels
    """Levels gained by the table's first and second team (R30)."""
    winner: TeamNumber | None = None
    """The winning team's number; absent: the team that gained more levels (a draw when
    level)."""
    points: Levels | None = None
    """Attackers' points taken by the first and second team (R29), if known."""
    reason: Reason
    by: By
    """Who entered it (recorded with it)."""


class ScheduleRequest(_Request, frozen=True, kw_only=True):
    """The round's own time control (optional: without it, the tournament's)."""

    deadline_s: DeadlineS | None = None
    """Seconds the round may last (from now) before its deadline rule applies."""
    timers: TimersRequest | None = None
    """Its tables' turn time limits (docs/timers.md)."""


class TimeControlRequest(_Request, frozen=True, kw_only=True):
    """The time control of the rounds not scheduled yet; an absent field keeps its value."""

    timers: TimersRequest | msgspec.UnsetType | None = msgspec.UNSET
    """Tables' turn limits (null: none)."""
    round_deadline_s: DeadlineS | msgspec.UnsetType | None = msgspec.UNSET
    """Seconds a round may last (null: no deadline)."""
    deadline_rule: Literal["flag", "finish"] | msgspec.UnsetType = msgspec.UNSET
    """``flag`` the tables past the deadline for the organiser, or ``finish`` them (R32)."""
    requested_bye_points: Literal[0, 1] | msgspec.UnsetType = msgspec.UNSET
    """Match points of a requested bye: 0, or 1 (half a win)."""


class RoundClockRequest(_Request, frozen=True, kw_only=True):
    """The round in play's own deadline (seconds from its scheduling; null: none) and
    the turn timers of its tables seated from now on."""

    deadline_s: DeadlineS | None
    """Seconds from the round's scheduling (paused time added); null: no deadline."""
    timers: TimersRequest | None = None
    """Turn limits of its tables seated from now on (docs/timers.md)."""


class ExtensionRequest(_Request, frozen=True, kw_only=True):
    """More time for one table past the round's deadline."""

    seconds: Annotated[int, msgspec.Meta(ge=1, le=86_400, examples=[600])]
    """Seconds added to this table's deadline."""
    reason: Reason
    by: By
    """Who gave it (recorded with it)."""


class PauseRequest(_Request, frozen=True, kw_only=True):
    """Why the round's clock stops (recorded in ``RoundPaused``)."""

    reason: Reason


class CancelRequest(_Request, frozen=True, kw_only=True):
    """Why the round in play is cancelled, and who decided."""

    reason: Reason
    by: By
    """Who decided (recorded with it)."""


class ByeRequest(_Request, frozen=True, kw_only=True):
    """A team sits out a round not scheduled yet, at its request."""

    team: TeamNumber
    round: Annotated[int, msgspec.Meta(ge=1, le=63)]
    """The round (not scheduled yet) the team sits out."""
    reason: Reason


class SubstituteRequest(_Request, frozen=True, kw_only=True):
    """A player replaced for one round not scheduled yet."""

    round: Annotated[int, msgspec.Meta(ge=1, le=63)]
    """The round (not scheduled yet) the substitute plays."""
    team: TeamNumber
    player: Literal[0, 1]
    """The team's first (0) or second (1) player."""
    name: Annotated[str, msgspec.Meta(min_length=1, max_length=100, pattern=NOT_BLANK)]
    kind: Literal["human", "random", "heuristic", "strong"] = "human"
    reason: Reason


class RenameRequest(_Request, frozen=True, kw_only=True):
    """A team's new name (unique in the tournament), and why."""

    name: Annotated[str, msgspec.Meta(min_length=1, max_length=100, pattern=NOT_BLANK)]
    reason: Reason


class FixedTableRequest(_Request, frozen=True, kw_only=True):
    """A team's fixed table (its home table, accessibility), from the next round."""

    team: TeamNumber
    table: Annotated[int, msgspec.Meta(ge=1, le=32)] | None
    """The table's number (from 1); null: no fixed table any more."""
    reason: Reason


class _Response(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    pass


class Published(_Response, frozen=True, kw_only=True):
    """The pairing published, and the tournament as it now stands."""

    pairing: PairingPreview
    """The pairing as published (GET …/preview shows it to anyone now)."""
    tournament: TournamentView
    """The tournament after the publication."""

"""What the tournament commands answer (:mod:`services.tournaments.commands`,
:mod:`services.tournaments.control_commands`, :mod:`services.tournaments.director_commands`):
camelCase msgspec Structs, built by each handler's ``answer`` from its outcome and the
tournament as of the recorded version (docs/decisions.md D-bus). Most answer the tournament
itself (:class:`~services.tournaments.views.TournamentView`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Literal

import msgspec
from msgspec import Meta

from domain.tournament.tournament import Tournament
from services import field_docs
from services.tournaments.views import RoundView, TournamentView


class _Answer(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    pass


class NewTournament(_Answer, frozen=True, kw_only=True):
    """The tournament created, with the organiser token (shown once)."""

    tournament_id: Annotated[
        str, Meta(description="The tournament's id (a UUID)", examples=[field_docs.EXAMPLE_ID])
    ]
    organiser_token: Annotated[
        str | None,
        Meta(
            description=(
                "Shown once: schedules rounds, runs bots, corrects "
                "results. Stored only hashed; null in an idempotent "
                "replay (`token_withheld`)."
            ),
            examples=["o-3f9c2a…"],
        ),
    ]
    tournament: Annotated[TournamentView, Meta(description="The tournament created")]
    token_withheld: Annotated[bool, field_docs.TOKEN_WITHHELD] = False


class SeatTokenView(_Answer, frozen=True, kw_only=True):
    """A person's seat at a tournament table and its token (shown once)."""

    table: Annotated[int, Meta(description="The table's number")]
    match_id: Annotated[str, field_docs.MATCH_ID]
    seat: Annotated[int, field_docs.SEAT]
    team: Annotated[int, Meta(description="The player's team")]
    player: Annotated[str, Meta(description="The player's name")]
    token: Annotated[
        str,
        Meta(
            description="Shown once: the player's seat token for that match.",
            examples=["s-8e1d47…"],
        ),
    ]


class ScheduledRound(_Answer, frozen=True, kw_only=True):
    """A tournament round scheduled, with the people's seat tokens (shown once)."""

    round: Annotated[RoundView, Meta(description="The round scheduled")]
    seat_tokens: Annotated[
        list[SeatTokenView],
        Meta(
            description=(
                "Tokens of the people's seats (bots need none), for the "
                "organiser to hand out; empty in an idempotent replay "
                "(`token_withheld`)."
            )
        ),
    ]
    token_withheld: Annotated[bool, field_docs.TOKEN_WITHHELD] = False


class TableRunView(_Answer, frozen=True, kw_only=True):
    """One tournament table: finished, or playing."""

    table: Annotated[int, Meta(description="The table's number")]
    match_id: Annotated[str, field_docs.MATCH_ID]
    status: Annotated[
        Literal["finished", "playing"],
        Meta(description="finished, or playing (its bots were woken; they move on their own)"),
    ]


class RoundRun(_Answer, frozen=True, kw_only=True):
    """A tournament round's bots woken: each table finished or playing."""

    number: Annotated[int, Meta(description="The tournament round's number")]
    completed: Annotated[
        bool, Meta(description="Every table has its result (the round's secret is revealed).")
    ]
    tables: Annotated[list[TableRunView], Meta(description="Each table: finished, or playing")]
    round: Annotated[
        RoundView,
        Meta(description="The tournament round, its finished tables' results collected"),
    ]


class RegisteredTeam(_Answer, frozen=True, kw_only=True):
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
    token_withheld: Annotated[bool, field_docs.TOKEN_WITHHELD] = False


class PreviewTable(_Answer, frozen=True, kw_only=True):
    """A table of the pairing the next round would get."""

    table: Annotated[int, Meta(description="The table's number, from 1.")]
    first_team: Annotated[int, Meta(description="The first team's number (seats 0 and 2).")]
    first_name: Annotated[str, Meta(description="The first team's name.")]
    second_team: Annotated[int, Meta(description="The second team's number (seats 1 and 3).")]
    second_name: Annotated[str, Meta(description="The second team's name.")]


class PairingPreview(_Answer, frozen=True, kw_only=True):
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
    requested_byes: Annotated[
        list[int], Meta(description="The teams that asked to sit out this round (not paired).")
    ] = []
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


class ReissuedTokens(_Answer, frozen=True, kw_only=True):
    """A table's new seat tokens (the old ones stop working at once)."""

    seat_tokens: Annotated[
        list[SeatTokenView],
        Meta(description="The people's new seat tokens (shown once); the old ones no longer work."),
    ]
    token_withheld: Annotated[bool, field_docs.TOKEN_WITHHELD] = False


class Published(_Answer, frozen=True, kw_only=True):
    """The pairing published, and the tournament as it now stands."""

    pairing: Annotated[
        PairingPreview,
        Meta(description="The pairing as published (GET …/preview shows it to anyone now)."),
    ]
    tournament: Annotated[TournamentView, Meta(description="The tournament after the publication.")]


def preview_answer(t: Tournament, seeding: Sequence[int] | None = None) -> PairingPreview:
    """The next round's pairing as the preview and the publication answer it (R36): its
    tables with the teams' names, the bye, whether it is the organiser's override or
    published, and its warnings (forbidden pairings, rematches); ``seeding``: round 1's
    order by rating as it stands now (not fixed yet, docs/decisions.md D-career)."""
    number, pairing, awarded = t.preview(seeding)
    return PairingPreview(
        number=number,
        tables=[
            PreviewTable(
                table=i + 1,
                first_team=a,
                first_name=t.teams[a].name,
                second_team=b,
                second_name=t.teams[b].name,
            )
            for i, (a, b) in enumerate(pairing.tables)
        ],
        bye=pairing.bye,
        awarded_byes=awarded,
        requested_byes=sorted(team for n, team in t.requested_byes if n == number),
        overridden=number in t.overrides,
        published=number in t.published,
        warnings=t.pairing_warnings(pairing.tables),
    )

"""Request and response bodies of the tournament API (:mod:`api.tournaments.controller`,
:mod:`api.tournaments.results`): msgspec Structs in camelCase; request bodies refuse unknown
fields (422 naming the field). Its path parameters too: a round (404 unless scheduled) and
a table."""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Literal
from uuid import UUID

import msgspec
from litestar import Request, Response
from litestar.openapi.datastructures import ResponseSpec
from litestar.openapi.spec import OpenAPIMediaType, OpenAPIResponse, OpenAPIType, Operation, Schema
from litestar.params import PathParameter, QueryParameter
from msgspec import Meta

from api.calls import Read
from api.dto import Name, Preset, TableRulesRequest, TimersRequest, problems
from domain.rules.ruleset import STANDARD, RuleSet, preset
from domain.tournament.events import RoundState, TeamEntry
from domain.tournament.tournament import Tournament
from services import field_docs
from services.errors import NotFoundError
from services.tournaments.commands import CreateTournament
from services.tournaments.loading import get_tournament

Count = Annotated[int, msgspec.Meta(ge=0, le=100_000)]
RoundParam = Annotated[int, PathParameter(ge=1, le=10_000, description="Tournament round, 1-based")]
TableParam = Annotated[int, PathParameter(ge=1, le=10_000, description="Table, 1-based")]


class _Request(
    msgspec.Struct, frozen=True, kw_only=True, rename="camel", forbid_unknown_fields=True
):
    pass


class PlayerRequest(_Request, frozen=True, kw_only=True):
    """A player of a team: a person or a bot."""

    name: Annotated[Name, Meta(description="The player's display name", examples=["Alice"])]
    kind: Annotated[
        Literal["human", "random", "heuristic", "strong"],
        Meta(description="`human` (gets a seat token when a round is scheduled) or a bot policy."),
    ] = "human"
    player_id: Annotated[
        UUID | None,
        Meta(
            description=(
                "The person's account: their rating in the tournament's family is shown, and "
                "seeds a tournament seeded by rating (docs/tournaments.md). It seats no "
                "account and rates nothing."
            )
        ),
    ] = None


class TeamRequest(_Request, frozen=True, kw_only=True):
    """A team of a tournament: a name and two players."""

    name: Annotated[Name, Meta(description="The team's name", examples=["Alice"])]
    players: Annotated[
        Annotated[list[PlayerRequest], msgspec.Meta(min_length=2, max_length=2)],
        Meta(description="Two partners (R2: they sit opposite)."),
    ]


class CreateTournamentRequest(_Request, frozen=True, kw_only=True):
    """A new tournament: teams, format, match length, rules."""

    name: Annotated[Annotated[str, msgspec.Meta(min_length=1, max_length=200)], field_docs.NAME]
    preset: Annotated[Preset | None, field_docs.PRESET] = None
    rules: Annotated[
        TableRulesRequest | None,
        Meta(description="§10 fields over the preset (no `matchEnd`: the match length sets it)."),
    ] = None
    teams: Annotated[
        Annotated[list[TeamRequest], msgspec.Meta(max_length=64)],
        Meta(description="2..64 teams; any number (none too) with `registration`."),
    ] = []
    format: Annotated[Literal["round_robin", "swiss"], field_docs.FORMAT]
    swiss_rounds: Annotated[
        Annotated[int, msgspec.Meta(ge=1, le=64)] | None,
        Meta(description="Rounds of a swiss tournament"),
    ] = None
    match_length: Annotated[
        Annotated[int, msgspec.Meta(ge=1, le=100)] | Literal["finish_at_A"],
        Meta(description="Deals per match (`rounds:N`) or `finish_at_A` (R32)."),
    ]
    timers: Annotated[
        TimersRequest | None,
        Meta(
            description=(
                "Turn time limits of every table, as a match's "
                "(docs/timers.md): the sweeper times out a seat over its "
                "time."
            )
        ),
    ] = None
    round_deadline_s: Annotated[
        Annotated[int, msgspec.Meta(ge=1, le=604_800, examples=[5400])] | None,
        Meta(description="A round must be over this many seconds after it is scheduled."),
    ] = None
    deadline_rule: Annotated[
        Literal["flag", "finish"],
        Meta(
            description="Past the deadline: `flag` the unfinished tables, or `finish` them (R32)."
        ),
    ] = "flag"
    tiebreaks: Annotated[
        Annotated[
            list[
                Literal["buchholz", "head_to_head", "levels_gained", "point_differential", "wins"]
            ],
            msgspec.Meta(max_length=5, examples=[["buchholz", "head_to_head", "levels_gained"]]),
        ]
        | None,
        Meta(
            description=(
                "The tiebreak order after match points (default by format, docs/tournaments.md)."
            )
        ),
    ] = None
    registration: Annotated[
        bool,
        Meta(
            description=(
                "Open a registration phase: teams register (themselves or "
                "by the organiser) until `POST …/start`."
            )
        ),
    ] = False
    checkin_required: Annotated[
        bool, Meta(description="With registration: only the teams that checked in play.")
    ] = False
    seeding: Annotated[
        Literal["registration", "rating"],
        Meta(
            description=(
                "Round 1's seeding: the `registration` order, or by `rating` (Swiss only): the "
                "teams by the mean of their players' ratings in the rule set's family "
                "(docs/tournaments.md, GET …/seeding)."
            )
        ),
    ] = "registration"
    deals: Annotated[
        Literal["seeds", "boards"],
        Meta(
            description=(
                "How a round's tables share their deals (R36, "
                "docs/tournaments.md): `seeds` — the same cards, each "
                "table's own dealer, level and trump; `boards` — a "
                "duplicate event of boards: every deal's dealer, level "
                "and trump fixed for every table as well (needs a number "
                "of deals as `matchLength`)."
            )
        ),
    ] = "seeds"


class FinishTableRequest(_Request, frozen=True, kw_only=True):
    """Why the organiser ends a tournament table."""

    reason: Annotated[
        Annotated[str, msgspec.Meta(min_length=1, max_length=100)],
        Meta(description="Why the table is ended (recorded in the match's `MatchFinished`)."),
    ]


class CorrectionRequest(_Request, frozen=True, kw_only=True):
    """The organiser's correction of a table's result, with its reason."""

    winner: Annotated[
        Annotated[int, msgspec.Meta(ge=0, le=63)] | None,
        Meta(description="The winning team's number (one of the table's two), null for a draw."),
    ]
    levels: Annotated[
        Annotated[list[Count], msgspec.Meta(min_length=2, max_length=2)],
        Meta(description="Levels gained by the first and the second team (R30)."),
    ]
    points: Annotated[
        Annotated[list[Count], msgspec.Meta(min_length=2, max_length=2)],
        Meta(description="Attackers' points taken by the first and the second team (R29)."),
    ]
    by: Annotated[Name, Meta(description="Who corrects (recorded).")]
    reason: Annotated[Annotated[str, msgspec.Meta(min_length=1, max_length=500)], field_docs.REASON]


# -- answers also offered as CSV ------------------------------------------------------------------

CSV_MEDIA_TYPE = "text/csv"
"""Litestar adds ``; charset=utf-8`` to a ``text/`` type itself (one charset)."""
Format = Annotated[
    Literal["json", "csv"] | None,
    QueryParameter(description="csv for text/csv (as does Accept: text/csv)"),
]
SheetFormat = Annotated[
    Literal["text", "csv"] | None,
    QueryParameter(description="text (default) or csv (as does Accept: text/csv)"),
]


def wants_csv(request: Request[Any, Any, Any], fmt: str | None) -> bool:
    """CSV by ``?format=csv``, or without ``format`` by ``Accept: text/csv``."""
    if fmt is not None:
        return fmt == "csv"
    return "text/csv" in request.headers.get("accept", "")


async def json_or_csv(
    read: Read,
    tournament_id: UUID,
    fmt: str | None,
    as_json: Callable[[Tournament], Any],
    as_csv: Callable[[Tournament], str],
) -> Response[Any]:
    """A tournament's export, as JSON or as CSV (:func:`wants_csv`)."""
    t = await read.call(get_tournament, read.service, tournament_id)
    if wants_csv(read.request, fmt):
        return Response(as_csv(t), media_type=CSV_MEDIA_TYPE)
    return Response(as_json(t))


def csv_doc(container: type[msgspec.Struct], what: str) -> dict[int, ResponseSpec]:
    return {
        200: ResponseSpec(
            data_container=container,
            description=f"{what} as JSON; as CSV (RFC 4180, a header row) with "
            "`Accept: text/csv` or `?format=csv`",
            generate_examples=False,
        ),
        **problems(404),
    }


@dataclass
class CsvOperation(Operation):
    """An operation whose 200 answer is also offered as ``text/csv`` (RFC 4180)."""

    def __post_init__(self) -> None:
        ok = (self.responses or {}).get("200")
        if isinstance(ok, OpenAPIResponse) and ok.content is not None:
            ok.content["text/csv"] = OpenAPIMediaType(
                schema=Schema(type=OpenAPIType.STRING, description="RFC 4180, a header row")
            )


# -- requests → domain, service results → responses ------------------------------------------


def rule_set(data: CreateTournamentRequest) -> RuleSet:
    """The preset (standard by default) with the given §10 fields over it."""
    base = preset(data.preset) if data.preset is not None else STANDARD
    if data.rules is None:
        return base
    fields = data.rules.fields()
    return RuleSet.from_mapping({**base.to_mapping(), **fields})


def nfc(name: str) -> str:
    return unicodedata.normalize("NFC", name)


def team_accounts(team: TeamRequest) -> tuple[UUID | None, UUID | None]:
    """The accounts a team's players name (docs/decisions.md D-career)."""
    return team.players[0].player_id, team.players[1].player_id


def team_entry(team: TeamRequest) -> TeamEntry:
    return TeamEntry(
        nfc(team.name),
        (nfc(team.players[0].name), nfc(team.players[1].name)),
        (team.players[0].kind, team.players[1].kind),
    )


def create_command(data: CreateTournamentRequest) -> CreateTournament:
    """The create request as its command (:mod:`services.tournaments.commands`)."""
    return CreateTournament(
        name=data.name,
        rules=rule_set(data),
        teams=tuple(team_entry(team) for team in data.teams),
        fmt=data.format,
        match_length=data.match_length,
        preset=data.preset,
        swiss_rounds=data.swiss_rounds,
        timers=None if data.timers is None else data.timers.value().to_mapping(),
        round_deadline_s=data.round_deadline_s,
        deadline_rule=data.deadline_rule,
        tiebreaks=data.tiebreaks,
        registration=data.registration,
        checkin_required=data.checkin_required,
        deals=data.deals,
        seeding=data.seeding,
        accounts=tuple(team_accounts(team) for team in data.teams),
    )


def scheduled_round(t: Tournament, number: int) -> RoundState:
    """Round ``number`` of ``t``; 404 unless it is scheduled."""
    if number > len(t.rounds):
        raise NotFoundError(f"tournament {t.id} has {len(t.rounds)} rounds scheduled, not {number}")
    return t.round_state(number)

"""Tournaments over REST (R36): create a tournament, read it and its rounds, schedule the
next round and run a round's bots. Tables, results and standings are in
:mod:`api.tournaments.results`. Every write is a command through the bus
(:mod:`services.tournaments.commands`; the organiser token, :mod:`services.access`).

A round that still has tables in play refuses the next one (409 ``round-in-play``). Reads
are public: no card is ever shown here (the tables are matches with their own redacted
views, R33), and a round's secret only once the round is completed (R35).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Literal, TypeVar
from uuid import UUID

import msgspec
from litestar import Controller, MediaType, Response, patch
from litestar.datastructures import ResponseHeader
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import FromPath, QueryParameter

from api.calls import CHECKED, Reading, Writing, write_route
from api.dto import After, Limit, problems
from api.routes import route
from api.tournaments.dto import CreateTournamentRequest, RoundParam, create_command, scheduled_round
from api.tournaments.dto_director import ScheduleRequest, TimeControlRequest
from services.readmodels.lists import list_tournaments
from services.tournaments.answers import NewTournament, RoundRun, ScheduledRound
from services.tournaments.commands import RunRoundBots, ScheduleRound
from services.tournaments.director_commands import KEEP, ChangeTimeControl, Keep
from services.tournaments.listing import TournamentList
from services.tournaments.loading import get_tournament
from services.tournaments.views import RoundView, TournamentView, round_view, tournament_view

T = TypeVar("T")
StatusFilter = Annotated[
    Literal["registration", "ready", "in_play", "finished"] | None,
    QueryParameter(description="Only the tournaments in this state now"),
]
TO_PAGE = ResponseSpec(
    data_container=None,
    description="See Other: a browser's request (Accept prefers text/html) goes to the "
    "display page, /tournaments/{id} (Location)",
    generate_examples=False,
)
LOCATION = ResponseHeader(
    name="Location", value="/v1/tournaments/{tournamentId}", documentation_only=True
)


class TournamentController(Controller):
    path = "/v1/tournaments"
    tags = ["tournaments"]  # noqa: RUF012 - Litestar declares it an instance attribute

    @write_route("/", 201, 409, security=None, headers=(LOCATION,), body=CreateTournamentRequest)
    async def create_tournament(self, write: Writing) -> Response[NewTournament]:
        """Create a tournament (organiser); answers the organiser token once

        Teams of two (people or bots), round_robin or swiss (swissRounds), the match length (deals,
        or finish_at_A) and the rule set (§10).
        """
        data = await write.body()
        return await write.send(
            create_command(data), location=lambda n: f"/v1/tournaments/{n.tournament_id}"
        )

    @route("/")
    async def list_tournaments(
        self, read: Reading, after: After = 0, limit: Limit = 50, status: StatusFilter = None
    ) -> TournamentList:
        """List tournaments, oldest first (paged; filter by status)

        Every tournament's id, name, format, status, teams and rounds; `status` keeps those in that
        state now; page with `after` = the previous `next`.
        """
        return await read.call(
            lambda: list_tournaments(read.runtime.lists, after=after, limit=limit, status=status)
        )

    @route("/{tournament_id:uuid}", responses={303: TO_PAGE, **problems(404)})
    async def get_tournament(
        self, read: Reading, tournament_id: FromPath[UUID]
    ) -> Response[TournamentView]:
        """A tournament: teams, settings, rounds with pairings, tables, results

        The detail: teams (with their status: registered, checked in, playing, withdrawn), the
        settings (timers, deadline, tiebreaks), forbidden pairings, adjustments, and each round's
        pairing, bye, tables (match, seating, result). A browser (`Accept` preferring text/html to
        JSON) is sent to the display page, /tournaments/{id} (303).
        """
        t = await read.call(get_tournament, read.service, tournament_id)
        accept = read.request.accept
        if accept.best_match([MediaType.JSON, MediaType.HTML], MediaType.JSON) == MediaType.HTML:
            page = f"/tournaments/{t.id}"
            return Response(tournament_view(t), status_code=303, headers={"Location": page})
        return Response(tournament_view(t))

    @write_route("/{tournament_id:uuid}", 200, *CHECKED, body=TimeControlRequest, handler=patch)
    async def change_time_control(
        self, write: Writing, tournament_id: FromPath[UUID]
    ) -> Response[TournamentView]:
        """Change the time control of the rounds to come (organiser)

        The tables' turn timers, the round deadline and its rule, and a requested bye's match
        points (0, or 1: half a win); an absent field keeps its value. Recorded as
        TimeControlChanged. The round in play keeps its own (POST …/rounds/{n}/clock).
        """
        data = await write.body()
        timers: Mapping[str, int] | Keep | None = KEEP
        if data.timers is not msgspec.UNSET:
            timers = None if data.timers is None else data.timers.value().to_mapping()
        command = ChangeTimeControl(
            tournament_id,
            timers=timers,
            round_deadline_s=_given(data.round_deadline_s),
            deadline_rule=_given(data.deadline_rule),
            requested_bye_points=_given(data.requested_bye_points),
        )
        return await write.send(command)

    @route("/{tournament_id:uuid}/rounds", 404)
    async def list_tournament_rounds(
        self, read: Reading, tournament_id: FromPath[UUID]
    ) -> list[RoundView]:
        """The scheduled rounds with their tables

        The scheduled tournament rounds, each with its tables and results.
        """
        t = await read.call(get_tournament, read.service, tournament_id)
        return [round_view(t, r) for r in t.rounds]

    @route("/{tournament_id:uuid}/rounds/{number:int}", 404)
    async def get_tournament_round(
        self, read: Reading, tournament_id: FromPath[UUID], number: RoundParam
    ) -> RoundView:
        """One round: commitment (R35), secret once completed, tables and results

        One tournament round: its commitment (R35), its secret once completed (R36),
        its tables and their results.
        """
        t = await read.call(get_tournament, read.service, tournament_id)
        return round_view(t, scheduled_round(t, number))

    @write_route("/{tournament_id:uuid}/rounds", 201, *CHECKED, body=ScheduleRequest | None)
    async def schedule_tournament_round(
        self, write: Writing, tournament_id: FromPath[UUID]
    ) -> Response[ScheduledRound]:
        """Schedule the next round (organiser)

        Collects the finished tables' results, pairs the next round, publishes its seeds' commitment
        (R35, R36), creates and seats the tables (bots as their kind, people with a seat token
        answered here once). 409 round-in-play while a table of the current round has no result; 409
        tournament-over after the last round. An optional body sets the round's own time control
        (deadlineS from now, the tables' turn timers), else the tournament's applies.
        """
        data = await write.body() or ScheduleRequest()
        timers = None if data.timers is None else data.timers.value().to_mapping()
        return await write.send(ScheduleRound(tournament_id, data.deadline_s, timers))

    @write_route("/{tournament_id:uuid}/rounds/{number:int}/bots/run", 202, *CHECKED)
    async def run_tournament_bots(
        self, write: Writing, tournament_id: FromPath[UUID], number: RoundParam
    ) -> Response[RoundRun]:
        """Wake the round's bots (organiser) and collect the finished tables

        Bots move on their own, off the request path, as soon as they are to act; this wakes the bot
        driver for every table of the round in play, collects the finished tables' results and
        answers at once (202): each table `finished` or `playing`. A bots-only round completes by
        itself; ask again (or read the round) to see it.
        """
        return await write.send(RunRoundBots(tournament_id, number))


def _given(value: T | msgspec.UnsetType) -> T | Keep:
    """A PATCH's field: its value, or :data:`KEEP` when absent."""
    return KEEP if isinstance(value, msgspec.UnsetType) else value

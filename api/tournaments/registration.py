"""Registration over REST (docs/tournaments.md): teams register themselves or
are added by the organiser, check in, withdraw; the organiser starts the tournament.

* ``POST …/teams`` — without a token a team registers itself while registration is open
  (201, its team token answered once); with the organiser token the organiser adds it —
  during registration, or as a late entry of a started Swiss tournament (from the next
  round). 409 ``registration-closed`` otherwise.
* ``POST …/teams/{team}/checkin`` and ``…/withdraw`` — the organiser, or the team with its
  own token. A withdrawal during a round forfeits the team's unfinished table (the
  opponent scores a bye) and pairs the team no more.
* ``POST …/start`` — the organiser closes registration.
"""

from __future__ import annotations

from typing import Annotated
from uuid import UUID

from litestar import Controller, Response
from litestar.params import FromPath, PathParameter

from api.calls import CHECKED, OPTIONAL_BEARER, Writing, write_route
from api.tournaments.dto import team_accounts, team_entry
from api.tournaments.dto_controls import RegisterTeamRequest, WithdrawRequest
from services.tournaments.answers import RegisteredTeam
from services.tournaments.control_commands import CheckIn, RegisterTeam, Start, Withdraw
from services.tournaments.views import TournamentView

TeamParam = Annotated[int, PathParameter(ge=0, le=63, description="A team's number, from 0")]


class RegistrationController(Controller):
    path = "/v1/tournaments"
    tags = ["tournaments"]  # noqa: RUF012 - Litestar declares it an instance attribute

    @write_route(
        "/{tournament_id:uuid}/teams",
        201,
        *CHECKED,
        security=OPTIONAL_BEARER,
        body=RegisterTeamRequest,
    )
    async def register_team(
        self, write: Writing, tournament_id: FromPath[UUID]
    ) -> Response[RegisteredTeam]:
        """Register a team (itself, or the organiser; late entries for Swiss)

        No token: the team registers itself while registration is open and gets its team token once.
        The organiser token: the organiser adds the team, also after the start in a Swiss tournament
        (a late entry, paired from the next round, with 0 match points). A player may name their
        account (`playerId`): their rating is shown (GET …/seeding) and seeds a tournament seeded
        by rating. 409 registration-closed, team-name-taken, tournament-full.
        """
        data = await write.body()
        return await write.send(RegisterTeam(tournament_id, team_entry(data), team_accounts(data)))

    @write_route("/{tournament_id:uuid}/teams/{team:int}/checkin", 200, *CHECKED)
    async def check_in_team(
        self, write: Writing, tournament_id: FromPath[UUID], team: TeamParam
    ) -> Response[TournamentView]:
        """Check a team in before the start (the team's token or the organiser's)

        A registered team confirms it is present, before the start (its team token
        or the organiser's); with check-in required, teams that did not are out.
        """
        return await write.send(CheckIn(tournament_id, team))

    @write_route(
        "/{tournament_id:uuid}/teams/{team:int}/withdraw", 200, *CHECKED, body=WithdrawRequest
    )
    async def withdraw_team(
        self, write: Writing, tournament_id: FromPath[UUID], team: TeamParam
    ) -> Response[TournamentView]:
        """Withdraw a team (the team's token or the organiser's), with the reason

        Before the start the team is simply out. During the event it is paired no more from the next
        round; its table of the round in play, if it has no result, is forfeited: the opponent
        scores a bye (2 match points, no levels, no points) and the table's match is ended. 409
        team-withdrawn, tournament-over.
        """
        data = await write.body()
        return await write.send(Withdraw(tournament_id, team, data.reason))

    @write_route("/{tournament_id:uuid}/start", 200, *CHECKED)
    async def start_tournament(
        self, write: Writing, tournament_id: FromPath[UUID]
    ) -> Response[TournamentView]:
        """Close registration and start (organiser)

        The entrants are the registered teams not withdrawn (with check-in required, those checked
        in; the others are marked absent). A round robin's rounds follow from them; Swiss rounds
        must fit (409 too-few-teams).
        """
        return await write.send(Start(tournament_id))

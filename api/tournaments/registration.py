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

from typing import Annotated, Any
from uuid import UUID

from litestar import Controller, Response
from litestar.params import FromPath, PathParameter

from api.calls import CHECKED, OPTIONAL_BEARER, Writing, write_route
from api.tournaments.dto import team_entry
from api.tournaments.dto_controls import RegisteredTeam, RegisterTeamRequest, WithdrawRequest
from api.tournaments.organiser import organiser_write, team_check, view_answer, view_replay
from domain.tournament.tournament import Tournament
from services.access import tournament_organiser
from services.idempotency import Receipt, Stamp
from services.sources import ORGANISER_ROLE
from services.tournaments.organise import Organiser
from services.tournaments.views import TournamentView, tournament_view

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
        (a late entry, paired from the next round, with 0 match points). 409 registration-closed,
        team-name-taken, tournament-full.
        """
        data = await write.body()
        cred, organiser = write.credential, Organiser(write.runtime.service)

        def authorize() -> bool:
            """By the organiser (its token), or the team itself (no token)."""
            if cred is not None:
                tournament_organiser(organiser.get(tournament_id), cred)
            return cred is not None

        def work(by_organiser: bool, stamp: Stamp) -> tuple[int, RegisteredTeam]:
            made: list[RegisteredTeam] = []

            def attach(t: Tournament) -> list[Any]:
                team = len(t.teams) - 1
                made.append(
                    RegisteredTeam(team=team, team_token=None, tournament=tournament_view(t))
                )
                return stamp.records(Receipt(201, t.id, t.version, facts={"team": team}))

            done = organiser.register(
                tournament_id, team_entry(data), by_organiser=by_organiser, attach=attach
            )
            answer = RegisteredTeam(
                team=done.team, team_token=done.token, tournament=made[0].tournament
            )
            return 201, answer

        def replay(_: bool, outcome: Receipt) -> RegisteredTeam:
            t = organiser.get(outcome.subject, version=outcome.version)
            return RegisteredTeam(
                team=int(outcome.facts.get("team") or 0),
                team_token=None,
                tournament=tournament_view(t),
                token_withheld=True,
            )

        return await write.run(authorize, work, replay)

    @write_route("/{tournament_id:uuid}/teams/{team:int}/checkin", 200, *CHECKED)
    async def check_in_team(
        self, write: Writing, tournament_id: FromPath[UUID], team: TeamParam
    ) -> Response[TournamentView]:
        """Check a team in before the start (the team's token or the organiser's)

        A registered team confirms it is present, before the start (its team token
        or the organiser's); with check-in required, teams that did not are out.
        """

        def act(o: Organiser, stamp: Stamp) -> tuple[int, TournamentView]:
            return view_answer(o, stamp, o.check_in(tournament_id, team))

        return await organiser_write(write, tournament_id, act, view_replay, team_check(team))

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
        cred = write.credential
        by = "organiser" if cred is not None and cred.role == ORGANISER_ROLE else f"team {team}"

        def act(o: Organiser, stamp: Stamp) -> tuple[int, TournamentView]:
            t = o.withdraw(tournament_id, team, reason=data.reason, by=by)
            return view_answer(o, stamp, o.get(t.id))

        return await organiser_write(write, tournament_id, act, view_replay, team_check(team))

    @write_route("/{tournament_id:uuid}/start", 200, *CHECKED)
    async def start_tournament(
        self, write: Writing, tournament_id: FromPath[UUID]
    ) -> Response[TournamentView]:
        """Close registration and start (organiser)

        The entrants are the registered teams not withdrawn (with check-in required, those checked
        in; the others are marked absent). A round robin's rounds follow from them; Swiss rounds
        must fit (409 too-few-teams).
        """

        def act(o: Organiser, stamp: Stamp) -> tuple[int, TournamentView]:
            return view_answer(o, stamp, o.start(tournament_id))

        return await organiser_write(write, tournament_id, act, view_replay)

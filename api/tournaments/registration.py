"""Registration over REST (issue 16, docs/tournaments.md): teams register themselves or
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

from litestar import Controller, Request, Response, post
from litestar.di import NamedDependency
from litestar.params import FromPath, PathParameter

from api.auth import bearer, scope_of
from api.dto import REPLAYED_HEADER, problems
from api.idempotency import Answer, Key, run
from api.runtime import Runtime
from api.strict import json_body, read_body
from api.tournaments.dto import team_entry
from api.tournaments.dto_controls import RegisteredTeam, RegisterTeamRequest, WithdrawRequest
from api.tournaments.organiser import (
    BEARER,
    IdempotencyKey,
    organiser_write,
    require_organiser,
    saved,
    team_or_organiser,
)
from domain.tournament.tournament import Tournament
from services.idempotency import Outcome
from services.sources import ORGANISER_ROLE
from services.tournaments.organise import Organiser
from services.tournaments.views import TournamentView, tournament_view

TeamParam = Annotated[int, PathParameter(ge=0, le=63, description="A team's number, from 0")]
OPTIONAL_BEARER: list[dict[str, list[str]]] = [{}, {"bearer": []}]


class RegistrationController(Controller):
    path = "/v1/tournaments"
    tags = ["tournaments"]  # noqa: RUF012 - Litestar declares it an instance attribute

    @post(
        "/{tournament_id:uuid}/teams",
        status_code=201,
        summary="Register a team (itself, or the organiser; late entries for Swiss)",
        description="No token: the team registers itself while registration is open and "
        "gets its team token once. The organiser token: the organiser adds the team, also "
        "after the start in a Swiss tournament (a late entry, paired from the next round, "
        "with 0 match points). 409 registration-closed, team-name-taken, tournament-full.",
        responses=problems(401, 403, 404, 409, body=True),
        security=OPTIONAL_BEARER,
        response_headers=[REPLAYED_HEADER],
        opt=json_body(RegisterTeamRequest),
    )
    async def register(
        self,
        request: Request[Any, Any, Any],
        runtime: NamedDependency[Runtime],
        tournament_id: FromPath[UUID],
        idempotency_key: IdempotencyKey = None,
    ) -> Response[RegisteredTeam]:
        data = await read_body(request, RegisterTeamRequest)
        token = bearer(request)
        organiser = Organiser(runtime.service)

        def work(key: Key) -> Answer[RegisteredTeam]:
            if token is not None:
                require_organiser(organiser, organiser.get(tournament_id), token)
            made: list[RegisteredTeam] = []

            def attach(t: Tournament) -> list[Any]:
                team = len(t.teams) - 1
                made.append(
                    RegisteredTeam(team=team, team_token=None, tournament=tournament_view(t))
                )
                return key.records(Outcome(201, t.id, t.version, facts={"team": team}))

            done = organiser.register(
                tournament_id, team_entry(data), by_organiser=token is not None, attach=attach
            )
            answer = RegisteredTeam(
                team=done.team, team_token=done.token, tournament=made[0].tournament
            )
            return Answer(201, answer)

        def replay(outcome: Outcome) -> RegisteredTeam:
            t = organiser.get(outcome.subject, version=outcome.version)
            return RegisteredTeam(
                team=int(outcome.facts.get("team") or 0),
                team_token=None,
                tournament=tournament_view(t),
                token_withheld=True,
            )

        def authorize() -> None:
            if token is not None:
                require_organiser(organiser, organiser.get(tournament_id), token)

        scope = scope_of(token, request.client.host if request.client else None)
        return await run(runtime, request, idempotency_key, scope, work, replay, authorize)

    @post(
        "/{tournament_id:uuid}/teams/{team:int}/checkin",
        status_code=200,
        summary="Check a team in before the start (the team's token or the organiser's)",
        responses=problems(401, 403, 404, 409, body=True),
        security=BEARER,
        response_headers=[REPLAYED_HEADER],
    )
    async def check_in(
        self,
        request: Request[Any, Any, Any],
        runtime: NamedDependency[Runtime],
        tournament_id: FromPath[UUID],
        team: TeamParam,
        idempotency_key: IdempotencyKey = None,
    ) -> Response[TournamentView]:
        def act(o: Organiser, key: Key) -> Answer[TournamentView]:
            t = o.check_in(tournament_id, team)
            return _answer(runtime, key, t)

        return await organiser_write(
            runtime, request, tournament_id, idempotency_key, act, _replay, team_or_organiser(team)
        )

    @post(
        "/{tournament_id:uuid}/teams/{team:int}/withdraw",
        status_code=200,
        summary="Withdraw a team (the team's token or the organiser's), with the reason",
        description="Before the start the team is simply out. During the event it is paired "
        "no more from the next round; its table of the round in play, if it has no result, "
        "is forfeited: the opponent scores a bye (2 match points, no levels, no points) and "
        "the table's match is ended. 409 team-withdrawn, tournament-over.",
        responses=problems(401, 403, 404, 409, body=True),
        security=BEARER,
        response_headers=[REPLAYED_HEADER],
        opt=json_body(WithdrawRequest),
    )
    async def withdraw(
        self,
        request: Request[Any, Any, Any],
        runtime: NamedDependency[Runtime],
        tournament_id: FromPath[UUID],
        team: TeamParam,
        idempotency_key: IdempotencyKey = None,
    ) -> Response[TournamentView]:
        data = await read_body(request, WithdrawRequest)
        token = bearer(request) or ""
        by = "organiser" if token.startswith(ORGANISER_ROLE + ".") else f"team {team}"

        def act(o: Organiser, key: Key) -> Answer[TournamentView]:
            t = o.withdraw(tournament_id, team, reason=data.reason, by=by)
            return _answer(runtime, key, o.get(t.id))

        return await organiser_write(
            runtime, request, tournament_id, idempotency_key, act, _replay, team_or_organiser(team)
        )

    @post(
        "/{tournament_id:uuid}/start",
        status_code=200,
        summary="Close registration and start (organiser)",
        description="The entrants are the registered teams not withdrawn (with check-in "
        "required, those checked in; the others are marked absent). A round robin's rounds "
        "follow from them; Swiss rounds must fit (409 too-few-teams).",
        responses=problems(401, 403, 404, 409, body=True),
        security=BEARER,
        response_headers=[REPLAYED_HEADER],
    )
    async def start(
        self,
        request: Request[Any, Any, Any],
        runtime: NamedDependency[Runtime],
        tournament_id: FromPath[UUID],
        idempotency_key: IdempotencyKey = None,
    ) -> Response[TournamentView]:
        def act(o: Organiser, key: Key) -> Answer[TournamentView]:
            return _answer(runtime, key, o.start(tournament_id))

        return await organiser_write(runtime, request, tournament_id, idempotency_key, act, _replay)


def _answer(runtime: Runtime, key: Key, t: Tournament) -> Answer[TournamentView]:
    return saved(runtime, key, Outcome(200, t.id, t.version), tournament_view(t))


def _replay(t: Tournament, _: Outcome) -> TournamentView:
    return tournament_view(t)

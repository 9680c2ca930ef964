"""Tournaments over REST (R36): create, read, schedule rounds, run a round's bots, collect
results, standings and results (JSON or CSV), and the organiser's corrections.

``POST /v1/tournaments`` answers the organiser token once: ``o.<tournament id hex>.<secret>``
(stored only as its sha256). Every write needs it (401 without a valid token of this
tournament; 403 for a token of something else). A round that still has tables in play
refuses the next one (409 ``round-in-play``). Reads are public: no card is ever shown
here (the tables are matches with their own redacted views, R33), and a round's secret
only once the round is completed (R35).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal, TypeVar
from uuid import UUID, uuid4

import msgspec
from litestar import Controller, Request, Response, get, post
from litestar.datastructures import ResponseHeader
from litestar.di import NamedDependency
from litestar.params import FromPath, HeaderParameter, PathParameter, QueryParameter

from api.auth import ForbiddenError, UnauthorizedError, bearer, scope_of
from api.dto import REPLAYED_HEADER, problems
from api.idempotency import KEY_DOC, Answer, Key, field_of, run
from api.runtime import Runtime
from api.strict import json_body, read_body
from api.tournaments.dto import (
    CorrectionRequest,
    CreateTournamentRequest,
    CsvOperation,
    FinishTableRequest,
    NewTournament,
    RoundRun,
    RunRoundRequest,
    ScheduledRound,
    TableRunView,
    csv_doc,
    rule_set,
    run_answer,
    scheduled_answer,
    team_entries,
)
from domain.rules.errors import IllegalMoveError
from domain.tournament.events import RoundState
from domain.tournament.tournament import Tournament
from services.errors import NotFoundError
from services.game import ORGANISER_ROLE, new_token, token_hash
from services.idempotency import Fact, Outcome
from services.tournaments.service import TournamentService
from services.tournaments.views import (
    ResultsExport,
    RoundView,
    StandingsView,
    TableView,
    TournamentView,
    results_csv,
    results_export,
    round_view,
    standings_csv,
    standings_view,
    table_view,
    tournament_view,
)

CSV_MEDIA_TYPE = "text/csv; charset=utf-8"
BEARER: list[dict[str, list[str]]] = [{"bearer": []}]
IdempotencyKey = Annotated[
    str | None,
    HeaderParameter(name="Idempotency-Key", min_length=1, max_length=255, description=KEY_DOC),
]
RoundParam = Annotated[int, PathParameter(ge=1, le=10_000, description="Tournament round, 1-based")]
TableParam = Annotated[int, PathParameter(ge=1, le=10_000, description="Table, 1-based")]
Format = Annotated[
    Literal["json", "csv"] | None,
    QueryParameter(description="csv for text/csv (as does Accept: text/csv)"),
]

LOCATION = ResponseHeader(
    name="Location", value="/v1/tournaments/{tournamentId}", documentation_only=True
)

T = TypeVar("T")


def _wants_csv(request: Request[Any, Any, Any], fmt: str | None) -> bool:
    if fmt is not None:
        return fmt == "csv"
    return "text/csv" in request.headers.get("accept", "")


def require_organiser(service: TournamentService, t: Tournament, token: str | None) -> None:
    """``token`` must be the organiser token of tournament ``t``."""
    if token is None:
        raise UnauthorizedError("the organiser token is needed: Authorization: Bearer <token>")
    parts = token.split(".")
    if len(parts) != 3 or len(parts[1]) != 32:
        raise UnauthorizedError("this is not an organiser token")
    if parts[1] != t.id.hex:
        raise ForbiddenError(f"this token belongs to something else, not tournament {t.id}")
    if parts[0] != ORGANISER_ROLE:
        raise ForbiddenError("a seat token cannot be used here: the organiser token is needed")
    if not service.is_organiser(t, token):
        raise UnauthorizedError("the token is not the organiser token of this tournament")


class TournamentController(Controller):
    path = "/v1/tournaments"
    tags = ["tournaments"]  # noqa: RUF012 - Litestar declares it an instance attribute

    @post(
        "/",
        status_code=201,
        summary="Create a tournament (organiser); answers the organiser token once",
        description="Teams of two (people or bots), round_robin or swiss (swissRounds), "
        "the match length (deals, or finish_at_A) and the rule set (§10).",
        responses=problems(409, body=True),
        response_headers=[LOCATION, REPLAYED_HEADER],
        opt=json_body(CreateTournamentRequest),
    )
    async def create(
        self,
        request: Request[Any, Any, Any],
        runtime: NamedDependency[Runtime],
        idempotency_key: IdempotencyKey = None,
    ) -> Response[NewTournament]:
        data = await read_body(request, CreateTournamentRequest)
        tournaments = TournamentService(runtime.service)

        def work(key: Key) -> Answer[NewTournament]:
            tid = uuid4()
            token = new_token(tid, ORGANISER_ROLE)
            made: list[NewTournament] = []

            def attach(t: Tournament) -> list[Any]:
                made.append(
                    NewTournament(
                        tournament_id=str(t.id),
                        organiser_token=token,
                        tournament=tournament_view(t),
                    )
                )
                return key.records(Outcome(201, t.id, t.version))

            tournaments.create(
                name=data.name,
                rules=rule_set(data),
                teams=team_entries(data),
                fmt=data.format,
                match_length=data.match_length,
                preset=data.preset,
                swiss_rounds=data.swiss_rounds,
                organiser_token_hash=token_hash(token),
                tournament_id=tid,
                attach=attach,
            )
            return Answer(201, made[0])

        def replay(outcome: Outcome) -> NewTournament:
            t = tournaments.get(outcome.subject, version=outcome.version)
            return NewTournament(
                tournament_id=str(t.id),
                organiser_token=None,
                tournament=tournament_view(t),
                token_withheld=True,
            )

        scope = scope_of(bearer(request), request.client.host if request.client else None)
        response = await run(runtime, request, idempotency_key, scope, work, replay)
        response.headers["Location"] = f"/v1/tournaments/{field_of(response, 'tournamentId')}"
        return response

    @get("/{tournament_id:uuid}", summary="A tournament: teams, rounds, tables, results")
    async def get_tournament(
        self, runtime: NamedDependency[Runtime], tournament_id: FromPath[UUID]
    ) -> TournamentView:
        t = await runtime.call(TournamentService(runtime.service).get, tournament_id)
        return tournament_view(t)

    @get("/{tournament_id:uuid}/rounds", summary="The scheduled rounds with their tables")
    async def rounds(
        self, runtime: NamedDependency[Runtime], tournament_id: FromPath[UUID]
    ) -> list[RoundView]:
        t = await runtime.call(TournamentService(runtime.service).get, tournament_id)
        return [round_view(t, r) for r in t.rounds]

    @get(
        "/{tournament_id:uuid}/rounds/{number:int}",
        summary="One round: commitment (R35), secret once completed, tables and results",
        responses=problems(404),
    )
    async def one_round(
        self, runtime: NamedDependency[Runtime], tournament_id: FromPath[UUID], number: RoundParam
    ) -> RoundView:
        t = await runtime.call(TournamentService(runtime.service).get, tournament_id)
        return round_view(t, _scheduled(t, number))

    @get(
        "/{tournament_id:uuid}/rounds/{number:int}/tables",
        summary="A round's tables: pairing, seating (R36), match and result",
        responses=problems(404),
    )
    async def tables(
        self, runtime: NamedDependency[Runtime], tournament_id: FromPath[UUID], number: RoundParam
    ) -> list[TableView]:
        t = await runtime.call(TournamentService(runtime.service).get, tournament_id)
        return [table_view(t, number, table) for table in _scheduled(t, number).tables]

    @post(
        "/{tournament_id:uuid}/rounds",
        status_code=201,
        summary="Schedule the next round (organiser)",
        description="Collects the finished tables' results, pairs the next round, publishes "
        "its seeds' commitment (R35, R36), creates and seats the tables (bots as their kind, "
        "people with a seat token answered here once). 409 round-in-play while a table of "
        "the current round has no result; 409 tournament-over after the last round.",
        responses=problems(401, 403, 404, 409, body=True),
        security=BEARER,
        response_headers=[REPLAYED_HEADER],
    )
    async def schedule(
        self,
        request: Request[Any, Any, Any],
        runtime: NamedDependency[Runtime],
        tournament_id: FromPath[UUID],
        idempotency_key: IdempotencyKey = None,
    ) -> Response[ScheduledRound]:
        def act(tournaments: TournamentService, key: Key) -> Answer[ScheduledRound]:
            done = tournaments.schedule_next(tournament_id)
            t = tournaments.get(tournament_id)
            state = t.round_state(done.number)
            answer = scheduled_answer(t, state, done.seat_tokens)
            return _saved(
                runtime, key, Outcome(201, t.id, t.version, facts={"number": done.number}), answer
            )

        def replay(t: Tournament, outcome: Outcome) -> ScheduledRound:
            state = t.round_state(int(outcome.facts.get("number") or len(t.rounds)))
            answer = scheduled_answer(t, state, ())
            return ScheduledRound(round=answer.round, seat_tokens=[], token_withheld=True)

        return await organiser_write(runtime, request, tournament_id, idempotency_key, act, replay)

    @post(
        "/{tournament_id:uuid}/rounds/{number:int}/bots/run",
        status_code=200,
        summary="Run the round's bots to completion (organiser)",
        description="Plays every table's pending bot moves (the same commands as people) "
        "until each match is over or waits for a person or the clock, then collects the "
        "results; a bots-only round completes in one call (four-bot tables deal unpaced).",
        responses=problems(401, 403, 404, 409, body=True),
        security=BEARER,
        response_headers=[REPLAYED_HEADER],
        opt=json_body(RunRoundRequest | None),
    )
    async def run_bots(
        self,
        request: Request[Any, Any, Any],
        runtime: NamedDependency[Runtime],
        tournament_id: FromPath[UUID],
        number: RoundParam,
        idempotency_key: IdempotencyKey = None,
    ) -> Response[RoundRun]:
        data = await read_body(request, RunRoundRequest | None)
        steps = (data.max_steps if data else None) or runtime.bot_steps

        def act(tournaments: TournamentService, key: Key) -> Answer[RoundRun]:
            t = tournaments.get(tournament_id)
            t.round_state(number)
            if number != len(t.rounds):
                raise _not_current(number, len(t.rounds))
            done = tournaments.run_round(tournament_id, steps)
            after = tournaments.get(tournament_id)
            answer = run_answer(after, done)
            tables = msgspec.json.encode(answer.tables).decode()
            facts: dict[str, Fact] = {"completed": done.completed, "tables": tables}
            return _saved(runtime, key, Outcome(200, after.id, after.version, facts=facts), answer)

        def replay(t: Tournament, outcome: Outcome) -> RoundRun:
            tables = str(outcome.facts.get("tables") or "[]")
            return RoundRun(
                number=number,
                completed=bool(outcome.facts.get("completed")),
                tables=msgspec.json.decode(tables, type=list[TableRunView]),
                round=round_view(t, t.round_state(number)),
            )

        return await organiser_write(runtime, request, tournament_id, idempotency_key, act, replay)

    @post(
        "/{tournament_id:uuid}/results/collect",
        status_code=200,
        summary="Pull the finished tables' results into the tournament (organiser)",
        responses=problems(401, 403, 404, body=True),
        security=BEARER,
        response_headers=[REPLAYED_HEADER],
    )
    async def collect(
        self,
        request: Request[Any, Any, Any],
        runtime: NamedDependency[Runtime],
        tournament_id: FromPath[UUID],
        idempotency_key: IdempotencyKey = None,
    ) -> Response[TournamentView]:
        def act(tournaments: TournamentService, key: Key) -> Answer[TournamentView]:
            t = tournaments.collect(tournament_id)
            return _saved(runtime, key, Outcome(200, t.id, t.version), tournament_view(t))

        def replay(t: Tournament, outcome: Outcome) -> TournamentView:
            return tournament_view(t)

        return await organiser_write(runtime, request, tournament_id, idempotency_key, act, replay)

    @post(
        "/{tournament_id:uuid}/rounds/{number:int}/tables/{table:int}/finish",
        status_code=200,
        summary="End a table's match (organiser, R32) and collect its result",
        description="For a table that cannot go on: a deal in play is abandoned unscored and "
        "the team ahead on levels wins (R32); the result is then recorded as any other.",
        responses=problems(401, 403, 404, 409, body=True),
        security=BEARER,
        response_headers=[REPLAYED_HEADER],
        opt=json_body(FinishTableRequest),
    )
    async def finish_table(
        self,
        request: Request[Any, Any, Any],
        runtime: NamedDependency[Runtime],
        tournament_id: FromPath[UUID],
        number: RoundParam,
        table: TableParam,
        idempotency_key: IdempotencyKey = None,
    ) -> Response[TableView]:
        data = await read_body(request, FinishTableRequest)

        def act(tournaments: TournamentService, key: Key) -> Answer[TableView]:
            t = tournaments.finish_table(tournament_id, number, table - 1, data.reason)
            answer = table_view(t, number, t.table(number, table - 1))
            return _saved(runtime, key, Outcome(200, t.id, t.version), answer)

        def replay(t: Tournament, outcome: Outcome) -> TableView:
            return table_view(t, number, t.table(number, table - 1))

        return await organiser_write(runtime, request, tournament_id, idempotency_key, act, replay)

    @post(
        "/{tournament_id:uuid}/rounds/{number:int}/tables/{table:int}/correction",
        status_code=200,
        summary="Correct a table's result (organiser; recorded with who and why)",
        responses=problems(401, 403, 404, 409, body=True),
        security=BEARER,
        response_headers=[REPLAYED_HEADER],
        opt=json_body(CorrectionRequest),
    )
    async def correct(
        self,
        request: Request[Any, Any, Any],
        runtime: NamedDependency[Runtime],
        tournament_id: FromPath[UUID],
        number: RoundParam,
        table: TableParam,
        idempotency_key: IdempotencyKey = None,
    ) -> Response[TableView]:
        data = await read_body(request, CorrectionRequest)

        def act(tournaments: TournamentService, key: Key) -> Answer[TableView]:
            answer: list[TableView] = []

            def attach(t: Tournament) -> list[Any]:
                # the key's record is saved with the correction (one save, IETF draft)
                answer.append(table_view(t, number, t.table(number, table - 1)))
                return key.records(Outcome(200, t.id, t.version))

            tournaments.correct(
                tournament_id,
                number,
                table - 1,
                winner=data.winner,
                levels=(data.levels[0], data.levels[1]),
                points=(data.points[0], data.points[1]),
                by=data.by,
                reason=data.reason,
                attach=attach,
            )
            return Answer(200, answer[0])

        def replay(t: Tournament, outcome: Outcome) -> TableView:
            return table_view(t, number, t.table(number, table - 1))

        return await organiser_write(runtime, request, tournament_id, idempotency_key, act, replay)

    @get(
        "/{tournament_id:uuid}/standings",
        summary="Standings with their tiebreaks (JSON, or CSV)",
        responses=csv_doc(StandingsView, "The standings"),
        operation_class=CsvOperation,
    )
    async def standings(
        self,
        request: Request[Any, Any, Any],
        runtime: NamedDependency[Runtime],
        tournament_id: FromPath[UUID],
        format: Format = None,
    ) -> Response[Any]:
        t = await runtime.call(TournamentService(runtime.service).get, tournament_id)
        if _wants_csv(request, format):
            return Response(standings_csv(t), media_type=CSV_MEDIA_TYPE)
        return Response(standings_view(t))

    @get(
        "/{tournament_id:uuid}/results",
        summary="Results export: rounds, tables, results, commitments, secrets (JSON or CSV)",
        responses=csv_doc(ResultsExport, "The results"),
        operation_class=CsvOperation,
    )
    async def results(
        self,
        request: Request[Any, Any, Any],
        runtime: NamedDependency[Runtime],
        tournament_id: FromPath[UUID],
        format: Format = None,
    ) -> Response[Any]:
        t = await runtime.call(TournamentService(runtime.service).get, tournament_id)
        if _wants_csv(request, format):
            return Response(results_csv(t), media_type=CSV_MEDIA_TYPE)
        return Response(results_export(t))


def _scheduled(t: Tournament, number: int) -> RoundState:
    if number > len(t.rounds):
        raise NotFoundError(f"tournament {t.id} has {len(t.rounds)} rounds scheduled, not {number}")
    return t.round_state(number)


def _not_current(number: int, current: int) -> IllegalMoveError:
    return IllegalMoveError(
        f"round {number} is not the current round ({current}); only its bots can be run",
        rule="R36",
        code="round-not-current",
    )


def _saved(runtime: Runtime, key: Key, outcome: Outcome, answer: T) -> Answer[T]:
    """``answer``, once the key's record is saved: after the command, whose several saves
    are done already (docs/tournaments.md)."""
    records = key.records(outcome)
    if records:
        runtime.service.save(*records)
    return Answer(outcome.status, answer)


async def organiser_write(
    runtime: Runtime,
    request: Request[Any, Any, Any],
    tournament_id: UUID,
    idempotency_key: str | None,
    act: Callable[[TournamentService, Key], Answer[T]],
    replay: Callable[[Tournament, Outcome], T],
) -> Response[T]:
    """An organiser's POST on a tournament: the organiser token is checked first (401/403,
    also before the Idempotency-Key is looked up), then ``act`` runs in a worker thread
    under the key's semantics; ``act`` saves the key's record (:func:`_saved`, or with
    its command in one save). A replay rebuilds the answer from the tournament as of the
    recorded version."""
    tournaments = TournamentService(runtime.service)
    token = bearer(request)

    def authorize() -> None:
        require_organiser(tournaments, tournaments.get(tournament_id), token)

    def work(key: Key) -> Answer[T]:
        authorize()
        return act(tournaments, key)

    def again(outcome: Outcome) -> T:
        return replay(tournaments.get(tournament_id, version=outcome.version), outcome)

    return await run(runtime, request, idempotency_key, scope_of(token), work, again, authorize)

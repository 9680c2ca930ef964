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

from litestar import Controller, Request, Response, get, post
from litestar.datastructures import ResponseHeader
from litestar.di import NamedDependency
from litestar.params import FromPath, HeaderParameter, JSONBody, PathParameter, QueryParameter

from api.auth import ForbiddenError, UnauthorizedError, bearer, scope_of
from api.dto import REPLAYED_HEADER, problems
from api.idempotency import KEY_DOC, Key, Reply, body_of, reply, run
from api.runtime import Runtime
from api.tournaments_dto import (
    CorrectionRequest,
    CreateTournamentRequest,
    CsvOperation,
    FinishTableRequest,
    NewTournament,
    RoundRun,
    RunRoundRequest,
    ScheduledRound,
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
from services.tournaments import TournamentService
from services.tournaments_views import (
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
    )
    async def create(
        self,
        request: Request[Any, Any, Any],
        runtime: NamedDependency[Runtime],
        data: JSONBody[CreateTournamentRequest],
        idempotency_key: IdempotencyKey = None,
    ) -> Response[NewTournament]:
        tournaments = TournamentService(runtime.service)

        def work(key: Key) -> Reply:
            tid = uuid4()
            token = new_token(tid, ORGANISER_ROLE)
            answer: list[Reply] = []

            def attach(t: Tournament) -> list[Any]:
                made = NewTournament(
                    tournament_id=str(t.id), organiser_token=token, tournament=tournament_view(t)
                )
                answer.append(reply(201, made))
                return key.records(answer[0])

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
            return answer[0]

        scope = scope_of(bearer(request), request.client.host if request.client else None)
        response = await run(runtime, request, idempotency_key, scope, work, NewTournament)
        created = body_of(response, NewTournament)
        response.headers["Location"] = f"/v1/tournaments/{created.tournament_id}"
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
        def act(tournaments: TournamentService, key: Key) -> Reply:
            done = tournaments.schedule_next(tournament_id)
            t = tournaments.get(tournament_id)
            state = t.round_state(done.number)
            return _saved(runtime, key, reply(201, scheduled_answer(t, state, done.seat_tokens)))

        return await organiser_write(
            runtime, request, tournament_id, idempotency_key, ScheduledRound, act
        )

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
    )
    async def run_bots(
        self,
        request: Request[Any, Any, Any],
        runtime: NamedDependency[Runtime],
        tournament_id: FromPath[UUID],
        number: RoundParam,
        data: JSONBody[RunRoundRequest | None] = None,
        idempotency_key: IdempotencyKey = None,
    ) -> Response[RoundRun]:
        steps = (data.max_steps if data else None) or runtime.bot_steps

        def act(tournaments: TournamentService, key: Key) -> Reply:
            t = tournaments.get(tournament_id)
            t.round_state(number)
            if number != len(t.rounds):
                raise _not_current(number, len(t.rounds))
            done = tournaments.run_round(tournament_id, steps)
            after = tournaments.get(tournament_id)
            return _saved(runtime, key, reply(200, run_answer(after, done)))

        return await organiser_write(
            runtime, request, tournament_id, idempotency_key, RoundRun, act
        )

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
        def act(tournaments: TournamentService, key: Key) -> Reply:
            collected = tournaments.collect(tournament_id)
            return _saved(runtime, key, reply(200, tournament_view(collected)))

        return await organiser_write(
            runtime, request, tournament_id, idempotency_key, TournamentView, act
        )

    @post(
        "/{tournament_id:uuid}/rounds/{number:int}/tables/{table:int}/finish",
        status_code=200,
        summary="End a table's match (organiser, R32) and collect its result",
        description="For a table that cannot go on: a deal in play is abandoned unscored and "
        "the team ahead on levels wins (R32); the result is then recorded as any other.",
        responses=problems(401, 403, 404, 409, body=True),
        security=BEARER,
        response_headers=[REPLAYED_HEADER],
    )
    async def finish_table(
        self,
        request: Request[Any, Any, Any],
        runtime: NamedDependency[Runtime],
        tournament_id: FromPath[UUID],
        number: RoundParam,
        table: TableParam,
        data: JSONBody[FinishTableRequest],
        idempotency_key: IdempotencyKey = None,
    ) -> Response[TableView]:
        def act(tournaments: TournamentService, key: Key) -> Reply:
            t = tournaments.finish_table(tournament_id, number, table - 1, data.reason)
            return _saved(
                runtime, key, reply(200, table_view(t, number, t.table(number, table - 1)))
            )

        return await organiser_write(
            runtime, request, tournament_id, idempotency_key, TableView, act
        )

    @post(
        "/{tournament_id:uuid}/rounds/{number:int}/tables/{table:int}/correction",
        status_code=200,
        summary="Correct a table's result (organiser; recorded with who and why)",
        responses=problems(401, 403, 404, 409, body=True),
        security=BEARER,
        response_headers=[REPLAYED_HEADER],
    )
    async def correct(
        self,
        request: Request[Any, Any, Any],
        runtime: NamedDependency[Runtime],
        tournament_id: FromPath[UUID],
        number: RoundParam,
        table: TableParam,
        data: JSONBody[CorrectionRequest],
        idempotency_key: IdempotencyKey = None,
    ) -> Response[TableView]:
        def act(tournaments: TournamentService, key: Key) -> Reply:
            answer: list[Reply] = []

            def attach(t: Tournament) -> list[Any]:
                # the key's record is saved with the correction (one save, IETF draft)
                answer.append(reply(200, table_view(t, number, t.table(number, table - 1))))
                return key.records(answer[0])

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
            return answer[0]

        return await organiser_write(
            runtime, request, tournament_id, idempotency_key, TableView, act
        )

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


def _saved(runtime: Runtime, key: Key, answer: Reply) -> Reply:
    """``answer``, once the key's record is saved: after the command, whose several saves
    are done already (docs/tournaments.md)."""
    records = key.records(answer)
    if records:
        runtime.service.save(*records)
    return answer


async def organiser_write(
    runtime: Runtime,
    request: Request[Any, Any, Any],
    tournament_id: UUID,
    idempotency_key: str | None,
    response_type: type[T],
    act: Callable[[TournamentService, Key], Reply],
) -> Response[T]:
    """An organiser's POST on a tournament: the organiser token is checked first (401/403,
    also before the Idempotency-Key is looked up), then ``act`` runs in a worker thread
    under the key's semantics; ``act`` saves the key's record (:func:`_saved`, or with
    its command in one save)."""
    tournaments = TournamentService(runtime.service)
    token = bearer(request)

    def authorize() -> None:
        require_organiser(tournaments, tournaments.get(tournament_id), token)

    def work(key: Key) -> Reply:
        authorize()
        return act(tournaments, key)

    return await run(
        runtime, request, idempotency_key, scope_of(token), work, response_type, authorize
    )

"""A tournament's tables and results over REST (R36): the tables of a round, ending a table
(R32) and correcting its result (organiser), collecting the finished tables' results,
standings and the results export (JSON or CSV). Reads are public and show no card (R33).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal
from uuid import UUID

from litestar import Controller, Request, Response, get, post
from litestar.di import NamedDependency
from litestar.params import FromPath, QueryParameter

from api.dto import REPLAYED_HEADER, problems
from api.idempotency import Answer, Key
from api.runtime import Runtime
from api.strict import json_body, read_body
from api.tournaments.dto import (
    CorrectionRequest,
    CsvOperation,
    FinishTableRequest,
    RoundParam,
    TableParam,
    csv_doc,
    scheduled_round,
)
from api.tournaments.organiser import BEARER, IdempotencyKey, organiser_write, saved
from domain.tournament.tournament import Tournament
from services.idempotency import Outcome
from services.tournaments.exports import results_csv, standings_csv
from services.tournaments.service import TournamentService
from services.tournaments.views import (
    ResultsExport,
    StandingsView,
    TableView,
    TournamentView,
    results_export,
    standings_view,
    table_view,
    tournament_view,
)

CSV_MEDIA_TYPE = "text/csv"
"""Litestar adds ``; charset=utf-8`` to a ``text/`` type itself (one charset, issue 12)."""
Format = Annotated[
    Literal["json", "csv"] | None,
    QueryParameter(description="csv for text/csv (as does Accept: text/csv)"),
]


class ResultController(Controller):
    path = "/v1/tournaments"
    tags = ["tournaments"]  # noqa: RUF012 - Litestar declares it an instance attribute

    @get(
        "/{tournament_id:uuid}/rounds/{number:int}/tables",
        summary="A round's tables: pairing, seating (R36), match and result",
        responses=problems(404),
    )
    async def tables(
        self, runtime: NamedDependency[Runtime], tournament_id: FromPath[UUID], number: RoundParam
    ) -> list[TableView]:
        t = await runtime.call(TournamentService(runtime.service).get, tournament_id)
        return [table_view(t, number, table) for table in scheduled_round(t, number).tables]

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
            return saved(runtime, key, Outcome(200, t.id, t.version), tournament_view(t))

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
            answer = table_answer(number, table)(t, None)
            return saved(runtime, key, Outcome(200, t.id, t.version), answer)

        replay = table_answer(number, table)
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
                answer.append(table_answer(number, table)(t, None))
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

        replay = table_answer(number, table)
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


def _wants_csv(request: Request[Any, Any, Any], fmt: str | None) -> bool:
    if fmt is not None:
        return fmt == "csv"
    return "text/csv" in request.headers.get("accept", "")


def table_answer(number: int, table: int) -> Callable[[Tournament, Outcome | None], TableView]:
    """The answer of an organiser's write on table ``table`` (1-based) of round ``number``:
    the table as the tournament ``t`` has it (after the write, or as of a replayed key's
    version)."""

    def answer(t: Tournament, _: Outcome | None) -> TableView:
        return table_view(t, number, t.table(number, table - 1))

    return answer

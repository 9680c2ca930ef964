"""A tournament's tables and results over REST (R36): the tables of a round, ending a table
(R32) and correcting its result (organiser), collecting the finished tables' results,
standings and the results export (JSON or CSV). Reads are public and show no card (R33).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal
from uuid import UUID

from litestar import Controller, Request, Response, get
from litestar.di import NamedDependency
from litestar.params import FromPath, QueryParameter

from api.dto import problems
from api.runtime import Runtime
from api.tournaments.dto import (
    CorrectionRequest,
    CsvOperation,
    FinishTableRequest,
    RoundParam,
    TableParam,
    csv_doc,
    scheduled_round,
)
from api.tournaments.organiser import organiser_write, saved, view_answer, view_replay
from api.writes import Write, write_route
from domain.tournament.tournament import Tournament
from services.idempotency import Outcome, Stamp
from services.tournaments.exports import results_csv, standings_csv
from services.tournaments.organise import Organiser
from services.tournaments.service import TournamentService
from services.tournaments.views import (
    ResultsExport,
    StandingsView,
    TableView,
    TournamentView,
    results_export,
    standings_view,
    table_view,
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

    @write_route(
        "/{tournament_id:uuid}/results/collect",
        summary="Pull the finished tables' results into the tournament (organiser)",
        statuses=(401, 403, 404),
    )
    async def collect(
        self, write: NamedDependency[Write], tournament_id: FromPath[UUID]
    ) -> Response[TournamentView]:
        def act(o: Organiser, stamp: Stamp) -> tuple[int, TournamentView]:
            return view_answer(o, stamp, o.collect(tournament_id))

        return await organiser_write(write, tournament_id, act, view_replay)

    @write_route(
        "/{tournament_id:uuid}/rounds/{number:int}/tables/{table:int}/finish",
        summary="End a table's match (organiser, R32) and collect its result",
        description="For a table that cannot go on: a deal in play is abandoned unscored and "
        "the team ahead on levels wins (R32); the result is then recorded as any other.",
        statuses=(401, 403, 404, 409),
        body=FinishTableRequest,
    )
    async def finish_table(
        self,
        write: NamedDependency[Write],
        tournament_id: FromPath[UUID],
        number: RoundParam,
        table: TableParam,
    ) -> Response[TableView]:
        data = await write.body(FinishTableRequest)
        answer = table_answer(number, table)

        def act(o: Organiser, stamp: Stamp) -> tuple[int, TableView]:
            t = o.finish_table(tournament_id, number, table - 1, data.reason)
            return saved(o, stamp, Outcome(200, t.id, t.version), answer(t, None))

        return await organiser_write(write, tournament_id, act, answer)

    @write_route(
        "/{tournament_id:uuid}/rounds/{number:int}/tables/{table:int}/correction",
        summary="Correct a table's result (organiser; recorded with who and why)",
        statuses=(401, 403, 404, 409),
        body=CorrectionRequest,
    )
    async def correct(
        self,
        write: NamedDependency[Write],
        tournament_id: FromPath[UUID],
        number: RoundParam,
        table: TableParam,
    ) -> Response[TableView]:
        data = await write.body(CorrectionRequest)
        answer = table_answer(number, table)

        def act(o: Organiser, stamp: Stamp) -> tuple[int, TableView]:
            made: list[TableView] = []

            def attach(t: Tournament) -> list[Any]:
                # the key's record is saved with the correction (one save, IETF draft)
                made.append(answer(t, None))
                return stamp.records(Outcome(200, t.id, t.version))

            o.correct(
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
            return 200, made[0]

        return await organiser_write(write, tournament_id, act, answer)

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

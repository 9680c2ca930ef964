"""A tournament's tables and results over REST (R36): the tables of a round, ending a table
(R32) and correcting its result (organiser), collecting the finished tables' results,
standings and the results export (JSON or CSV). Reads are public and show no card (R33),
and a round's results once it completes (R36).
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

import msgspec
from litestar import Controller, Response
from litestar.params import FromPath

from api.calls import CHECKED, Reading, Writing, write_route
from api.routes import route
from api.tournaments.dto import (
    CSV_MEDIA_TYPE,
    CorrectionRequest,
    CsvOperation,
    FinishTableRequest,
    Format,
    RoundParam,
    TableParam,
    csv_doc,
    json_or_csv,
    scheduled_round,
    wants_csv,
)
from services.tournaments.commands import CollectResults, CorrectResult, FinishTable
from services.tournaments.exports import results_csv, standings_answer
from services.tournaments.loading import get_tournament
from services.tournaments.views import (
    ResultsExport,
    StandingsView,
    TableView,
    TournamentView,
    results_export,
    table_view,
)

TABLE_PATH = "/{tournament_id:uuid}/rounds/{number:int}/tables/{table:int}"


def csv_read(view: type[msgspec.Struct], what: str) -> dict[str, Any]:
    """The route arguments of a read answered in JSON (``view``, ``what`` it is) or CSV,
    documented both ways."""
    return {"responses": csv_doc(view, what), "operation_class": CsvOperation}


class ResultController(Controller):
    path = "/v1/tournaments"
    tags = ["tournaments"]  # noqa: RUF012 - Litestar declares it an instance attribute

    @route("/{tournament_id:uuid}/rounds/{number:int}/tables", 404)
    async def list_tables(
        self, read: Reading, tournament_id: FromPath[UUID], number: RoundParam
    ) -> list[TableView]:
        """A round's tables: pairing, seating (R36), match and result

        A tournament round's tables: the pairing, the duplicate seating (R36), the
        match and the result (once the round completes: `embargo` says why until then, R36).
        """
        t = await read.call(get_tournament, read.service, tournament_id)
        return [table_view(t, number, table) for table in scheduled_round(t, number).tables]

    @write_route("/{tournament_id:uuid}/results/collect", 200, 401, 403, 404)
    async def collect_results(
        self, write: Writing, tournament_id: FromPath[UUID]
    ) -> Response[TournamentView]:
        """Pull the finished tables' results into the tournament (organiser)

        Organiser: pull the results of the finished tables into the tournament (each
        once), so the standings count them.
        """
        return await write.send(CollectResults(tournament_id))

    @write_route(f"{TABLE_PATH}/finish", 200, *CHECKED, body=FinishTableRequest)
    async def finish_table(
        self, write: Writing, tournament_id: FromPath[UUID], number: RoundParam, table: TableParam
    ) -> Response[TableView]:
        """End a table's match (organiser, R32) and collect its result

        For a table that cannot go on: a deal in play is abandoned unscored and the team ahead on
        levels wins (R32); the result is then recorded as any other.
        """
        data = await write.body()
        return await write.send(FinishTable(tournament_id, number, table - 1, data.reason))

    @write_route(f"{TABLE_PATH}/correction", 200, *CHECKED, body=CorrectionRequest)
    async def correct_table_result(
        self, write: Writing, tournament_id: FromPath[UUID], number: RoundParam, table: TableParam
    ) -> Response[TableView]:
        """Correct a table's result (organiser; recorded with who and why)

        Organiser: replace a table's result; recorded with who and why.
        """
        data = await write.body()
        command = CorrectResult(
            tournament_id,
            number,
            table - 1,
            winner=data.winner,
            levels=(data.levels[0], data.levels[1]),
            points=(data.points[0], data.points[1]),
            by=data.by,
            reason=data.reason,
        )
        return await write.send(command)

    @route("/{tournament_id:uuid}/standings", **csv_read(StandingsView, "The standings"))
    async def get_standings(
        self, read: Reading, tournament_id: FromPath[UUID], format: Format = None
    ) -> Response[Any]:
        """Standings with their tiebreaks (JSON, or CSV)

        The standings, best first, with the tie-breaks used, by the results of the completed
        rounds (a round's results count once it completes, R36); JSON, or CSV with
        `?format=csv` or `Accept: text/csv`.
        """
        as_csv = wants_csv(read.request, format)
        answer = await read.call(standings_answer, read.service, tournament_id, as_csv)
        if isinstance(answer, str):
            return Response(answer, media_type=CSV_MEDIA_TYPE)
        return Response(answer)

    @route("/{tournament_id:uuid}/results", **csv_read(ResultsExport, "The results"))
    async def get_tournament_results(
        self, read: Reading, tournament_id: FromPath[UUID], format: Format = None
    ) -> Response[Any]:
        """Results export: rounds, tables, results, commitments, secrets (JSON or CSV)

        Everything needed to check and rank the tournament: rounds, tables, results,
        commitments and (once revealed) secrets (R36) — a round's results once it completes;
        JSON, or CSV with `?format=csv` or `Accept: text/csv`.
        """
        return await json_or_csv(read, tournament_id, format, results_export, results_csv)

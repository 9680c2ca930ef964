"""``GET /v1/exports/{table}.parquet`` and ``.csv``: one tidy table of the finished
matches as one file (docs/analysis.md), streamed.

The file is built as it is sent (docs/decisions.md D-analysis): the rows of
:data:`services.analysis.dump.CHUNK_MATCHES` matches at a time are made in a worker
thread under the store's limiter (the store is synchronous) and sent as a Parquet row
group (or CSV lines), so the response never holds more than one chunk whatever the
history's size, and the request never computes anything but the file it sends. Its
``day`` column is the partition of ``shengji export``'s folders.

**Readers.** Without a token: the public's dump (R33, R35, R36: the redaction,
docs/analysis.md). ``Authorization: Bearer <OPERATOR_TOKEN>``: everything. Any other
token is a 401, as on the events feed.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Annotated, Any, Final, Literal, get_args

from litestar import Request, get
from litestar.di import NamedDependency
from litestar.openapi.spec import OpenAPIMediaType, OpenAPIResponse, OpenAPIType, Operation, Schema
from litestar.params import PathParameter
from litestar.response import Stream

from api.dto import problems
from api.feed import OPERATOR, Archive
from api.runtime import in_thread
from services.analysis.dump import table_chunks
from services.analysis.schema import TABLES

PARQUET: Final = "application/vnd.apache.parquet"
CSV: Final = "text/csv"
ExportFile = Literal[
    "matches.parquet",
    "rounds.parquet",
    "declarations.parquet",
    "tricks.parquet",
    "plays.parquet",
    "results.parquet",
    "tournament_tables.parquet",
    "matches.csv",
    "rounds.csv",
    "declarations.csv",
    "tricks.csv",
    "plays.csv",
    "results.csv",
    "tournament_tables.csv",
]
assert {f.rsplit(".", 1)[0] for f in get_args(ExportFile)} == set(TABLES)


@dataclass
class ExportOperation(Operation):
    """The export's 200 in the OpenAPI document: a Parquet file or CSV."""

    def __post_init__(self) -> None:
        responses = dict(self.responses or {})
        binary = Schema(type=OpenAPIType.STRING, format="binary")  # type: ignore[arg-type]
        responses["200"] = OpenAPIResponse(
            description="The table as one file, streamed (docs/analysis.md: its columns)",
            content={
                PARQUET: OpenAPIMediaType(schema=binary),
                CSV: OpenAPIMediaType(schema=Schema(type=OpenAPIType.STRING)),
            },
        )
        self.responses = responses


async def _body(archive: Archive, chunks: Iterator[bytes]) -> AsyncIterator[bytes]:
    while (chunk := await in_thread(archive.limiter, next, chunks, None)) is not None:
        yield chunk


@get(
    "/v1/exports/{table_file:str}",
    tags=["archive"],
    summary="One tidy table of the finished matches: Parquet or CSV (streamed)",
    description="`matches`, `rounds`, `declarations`, `tricks`, `plays`, `results` or "
    "`tournament_tables`, as `.parquet` or `.csv`: every finished match's rows, with the "
    "`day` column `shengji export` partitions by (docs/analysis.md: the columns, units "
    "and what is redacted). Without a token, what the public may read: a round's seed "
    "and bottom only once scored (R33, R35), no accounts, no private table, and a "
    "tournament table only once its tournament round completes (R36). The operator token "
    "reads everything; any other token is a 401. Built as it streams, one chunk of "
    "matches at a time.",
    responses=problems(401),
    security=OPERATOR,
    operation_class=ExportOperation,
)
async def export_table(
    request: Request[Any, Any, Any],
    archive: NamedDependency[Archive],
    table_file: Annotated[
        ExportFile,
        PathParameter(description="The table and the format: `plays.parquet`, `rounds.csv`, …"),
    ],
) -> Stream:
    reader = "operator" if archive.is_operator(request) else "public"
    table, fmt = table_file.rsplit(".", 1)
    chunks = table_chunks(archive.service, table, fmt, reader)  # type: ignore[arg-type]
    return Stream(
        _body(archive, chunks),
        media_type=PARQUET if fmt == "parquet" else CSV,
        headers={
            "Content-Disposition": f'attachment; filename="{table_file}"',
            "Cache-Control": "no-store",
        },
    )

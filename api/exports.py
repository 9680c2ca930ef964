"""``GET /v1/exports/{table}.parquet`` and ``.csv``: one tidy table of the finished
matches as one file (docs/analysis.md), streamed — or one day's partition of it
(``?day=``), kept once its day is settled.

The file is built as it is sent (docs/decisions.md D-analysis): the rows of
:data:`services.analysis.dump.CHUNK_MATCHES` matches at a time are made in a worker
thread under the store's limiter (the store is synchronous) and sent as a Parquet row
group (or CSV lines), so the response never holds more than one chunk whatever the
history's size. Its ``day`` column is the partition of ``shengji export``'s folders.

**What it may cost** (:mod:`api.export_gate`, docs/decisions.md D-bounded): at most
``EXPORT_CONCURRENCY`` exports are built at once (503 ``exports-busy``), a client may have
``EXPORT_QUOTA_PER_HOUR`` built an hour (429 ``quota-exceeded``). A **settled** day's
partition (its day ended an hour ago or more, :mod:`services.analysis.partitions`) is built
once and kept: answered with a strong ``ETag`` and ``Last-Modified``, 304 to
``If-None-Match`` / ``If-Modified-Since``, at no cost, until an event that could change it
(a record imported, a player erased, a tournament's result) happens.

**Readers.** Without a token: the public's dump (R33, R35, R36: the redaction,
docs/analysis.md). ``Authorization: Bearer <OPERATOR_TOKEN>``: everything. Any other
token is a 401, as on the events feed.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date
from email.utils import format_datetime, parsedate_to_datetime
from typing import Annotated, Any, Final, Literal, get_args

from litestar import Request, Response, get
from litestar.di import NamedDependency
from litestar.openapi.spec import (
    Example,
    OpenAPIHeader,
    OpenAPIMediaType,
    OpenAPIResponse,
    OpenAPIType,
    Operation,
    Reference,
    Schema,
)
from litestar.params import HeaderParameter, PathParameter, QueryParameter
from litestar.response import Stream

from api.dto import problems
from api.etag import not_modified
from api.export_gate import Exports
from api.feed import OPERATOR
from api.records.bulk import reject_repeated
from services.analysis.dump import table_chunks
from services.analysis.partitions import Built, settled
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
    "ratings.parquet",
    "matches.csv",
    "rounds.csv",
    "declarations.csv",
    "tricks.csv",
    "plays.csv",
    "results.csv",
    "tournament_tables.csv",
    "ratings.csv",
]
assert {f.rsplit(".", 1)[0] for f in get_args(ExportFile)} == set(TABLES)
Day = Annotated[
    date | None,
    QueryParameter(
        description='Only the partition of this UTC day (docs/analysis.md, "Partitions"); '
        "once the day is settled (ended an hour ago) it is kept and answered with its "
        "`ETag` and `Last-Modified`",
        examples=[Example(value="2026-12-02")],
    ),
]
IfNoneMatch = Annotated[
    str | None,
    HeaderParameter(
        name="If-None-Match",
        description="The `ETag` of a settled day's partition fetched before: 304 if current",
    ),
]
IfModifiedSince = Annotated[
    str | None,
    HeaderParameter(
        name="If-Modified-Since",
        description="An HTTP date: 304 if a settled day's partition has not changed since "
        "(ignored with If-None-Match)",
    ),
]


@dataclass
class ExportOperation(Operation):
    """The export's 200 (and a settled partition's 304) in the OpenAPI document."""

    def __post_init__(self) -> None:
        responses = dict(self.responses or {})
        binary = Schema(type=OpenAPIType.STRING, format="binary")  # type: ignore[arg-type]
        validators: dict[str, OpenAPIHeader | Reference] = {
            "ETag": OpenAPIHeader(
                description="A settled day's partition: the file's sha256 (strong)",
                schema=Schema(type=OpenAPIType.STRING),
            ),
            "Last-Modified": OpenAPIHeader(
                description="A settled day's partition: when it may last have changed",
                schema=Schema(type=OpenAPIType.STRING),
            ),
        }
        responses["200"] = OpenAPIResponse(
            description="The table as one file, streamed (docs/analysis.md: its columns); a "
            "settled day's partition with its validators",
            content={
                PARQUET: OpenAPIMediaType(schema=binary),
                CSV: OpenAPIMediaType(schema=Schema(type=OpenAPIType.STRING)),
            },
            headers=validators,
        )
        responses["304"] = OpenAPIResponse(
            description="Not Modified: a settled day's partition is still what the "
            "validator names (no body)",
            headers=validators,
        )
        self.responses = responses


@get(
    "/v1/exports/{table_file:str}",
    tags=["archive"],
    summary="One tidy table of the finished matches: Parquet or CSV (streamed)",
    description="`matches`, `rounds`, `declarations`, `tricks`, `plays`, `results` or "
    "`tournament_tables`, as `.parquet` or `.csv`: every finished match's rows, with the "
    "`day` column `shengji export` partitions by (docs/analysis.md: the columns, units "
    "and what is redacted); `day`: that day's partition only. Without a token, what the "
    "public may read: a round's seed and bottom only once scored (R33, R35), no accounts, "
    "no private table, and a tournament table only once its tournament round completes "
    "(R36). The operator token reads everything; any other token is a 401. Built as it "
    "streams, one chunk of matches at a time; at most `EXPORT_CONCURRENCY` at once (503 "
    "`exports-busy`), `EXPORT_QUOTA_PER_HOUR` a client (429). A settled day's partition is "
    "kept: `ETag`, `Last-Modified`, 304, and free.",
    responses=problems(401, 503),
    security=OPERATOR,
    operation_class=ExportOperation,
)
async def export_table(
    request: Request[Any, Any, Any],
    exports: NamedDependency[Exports],
    table_file: Annotated[
        ExportFile,
        PathParameter(description="The table and the format: `plays.parquet`, `rounds.csv`, …"),
    ],
    day: Day = None,
    if_none_match: IfNoneMatch = None,
    if_modified_since: IfModifiedSince = None,
) -> Response[Any]:
    reject_repeated(request, "day")  # `day=null` is no day left out
    reader = exports.reader(request)
    table, fmt = table_file.rsplit(".", 1)
    media = PARQUET if fmt == "parquet" else CSV
    disposition = f'attachment; filename="{_filename(table_file, day)}"'
    if day is not None and settled(day, exports.service.clock()):
        built = await exports.partition(request, table, fmt, reader, day)  # type: ignore[arg-type]
        headers = {
            "Content-Disposition": disposition,
            "ETag": built.etag,
            "Last-Modified": format_datetime(built.modified.astimezone(UTC), usegmt=True),
            "Cache-Control": "private, no-cache" if reader == "operator" else "no-cache",
            "Vary": "Authorization",
        }
        if _fresh(built, if_none_match, if_modified_since):
            return Response(None, status_code=304, headers=headers)
        return Response(built.body, media_type=media, headers=headers)
    chunks = table_chunks(
        exports.service,
        table,
        fmt,  # type: ignore[arg-type]
        reader,
        day,
        exports.ratings,
    )
    return Stream(
        await exports.stream(request, chunks),
        media_type=media,
        headers={"Content-Disposition": disposition, "Cache-Control": "no-store"},
    )


def _filename(table_file: str, day: date | None) -> str:
    if day is None:
        return table_file
    table, fmt = table_file.rsplit(".", 1)
    return f"{table}-{day.isoformat()}.{fmt}"


def _fresh(built: Built, if_none_match: str | None, if_modified_since: str | None) -> bool:
    """RFC 9110 §13.2.2: If-None-Match when sent, else If-Modified-Since."""
    if if_none_match is not None:
        return not_modified(if_none_match, built.etag)
    if if_modified_since is None:
        return False
    try:
        since = parsedate_to_datetime(if_modified_since)
    except (TypeError, ValueError):
        return False  # not an HTTP date: ignored (RFC 9110 §13.1.3)
    if since.tzinfo is None:
        since = since.replace(tzinfo=UTC)
    return built.modified.replace(microsecond=0) <= since

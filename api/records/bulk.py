"""``GET /v1/records``: the records of finished matches as ND-JSON
(docs/records.md, "Bulk export").

The body is streamed: lines come from :func:`services.records.bulk.finished_records`, a
generator, read about :data:`CHUNK` bytes per trip to a worker thread (the store is
synchronous, docs/decisions.md F2), so the response never holds more than a chunk
whatever the number of matches. ``Accept-Encoding: gzip`` compresses it as it streams
(``Content-Encoding: gzip``; one ``zlib`` stream, flushed per chunk). Each line is the
exact bytes of ``GET /v1/matches/{id}/record`` for that match.
"""

from __future__ import annotations

import zlib
from collections.abc import AsyncGenerator, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, Literal
from uuid import UUID

import msgspec
from litestar import Request, get
from litestar.di import NamedDependency
from litestar.openapi.spec import (
    Example,
    OpenAPIMediaType,
    OpenAPIResponse,
    OpenAPIType,
    Operation,
    Schema,
)
from litestar.params import QueryParameter
from litestar.response import Stream

from api.compression import OWN_ENCODING
from api.dto import problems
from api.export_gate import Exports
from api.runtime import Runtime
from domain.rules.errors import InvalidInputError
from services.access import read_authorization, signed_player
from services.errors import ForbiddenError
from services.game import GameService
from services.records.bulk import BulkFilter, finished_records, take

ND_JSON = "application/x-ndjson"
_MOMENT = msgspec.json.Decoder(datetime)
CHUNK = 256 * 1024
"""Bytes of records read per trip to a worker thread (and per gzip flush)."""


@dataclass
class BulkOperation(Operation):
    """The bulk export's 200 in the OpenAPI document: ND-JSON lines of records."""

    def __post_init__(self) -> None:
        responses = dict(self.responses or {})
        responses["200"] = OpenAPIResponse(
            description="One finished match's record per line (docs/records.md), gzip "
            "when Accept-Encoding allows it",
            content={
                ND_JSON: OpenAPIMediaType(
                    schema=Schema(type=OpenAPIType.STRING),
                    example='{"format":"shengji-record/1","kind":"match",…}\n'
                    '{"format":"shengji-record/1","kind":"match",…}\n',
                )
            },
        )
        self.responses = responses


def moment_parameter(name: str, what: str) -> QueryParameter:
    """A query parameter that is a moment (RFC 3339 with a time zone)."""
    return QueryParameter(
        name=name,
        description=f"{what} (ISO 8601 with a time zone)",
        examples=[Example(value="2026-01-01T00:00:00Z")],
    )


def reject_repeated(
    request: Request[Any, Any, Any], *names: str, moments: tuple[str, ...] = ()
) -> None:
    """422 when an optional query parameter is given more than once, or as ``null``, or
    — for ``moments`` — as anything but an RFC 3339 time: the parser would keep one value,
    read ``null`` as absent, or a number as a Unix time, silently."""
    for name in (*names, *moments):
        values = request.query_params.getall(name, [])
        if len(values) > 1:
            raise InvalidInputError(f"{name} is given more than once")
        if values and values[0] in ("null", ""):
            raise InvalidInputError(f"{name} needs a value; leave it out instead of {values[0]!r}")
        if values and name in moments:
            try:
                _MOMENT.decode(msgspec.json.encode(values[0]))
            except msgspec.DecodeError:
                raise InvalidInputError(
                    f"{name} is an RFC 3339 time (2026-01-01T12:00:00Z), got {values[0][:40]!r}"
                ) from None


def wants_gzip(accept_encoding: str) -> bool:
    """``gzip`` is acceptable (listed with a q-value above 0, RFC 9110 §12.5.3)."""
    for part in accept_encoding.split(","):
        name, _, params = part.strip().partition(";")
        if name.strip().lower() not in ("gzip", "x-gzip"):
            continue
        q = params.strip().removeprefix("q=").strip() if "q=" in params else "1"
        try:
            return float(q) > 0
        except ValueError:
            return False
    return False


def own_records(service: GameService, authorization: str | None, player: UUID) -> None:
    """``player=``: the caller is that player (its player token), else 401/403."""
    signed = signed_player(service, read_authorization(authorization))
    if signed.account.id != player:
        raise ForbiddenError("player: a player's records are asked for with its own token")


async def _body(runtime: Runtime, lines: Iterator[bytes], gzip: bool) -> AsyncGenerator[bytes]:
    packer = zlib.compressobj(6, zlib.DEFLATED, 31) if gzip else None
    while chunk := await runtime.call(take, lines, CHUNK):
        data = b"".join(chunk)
        yield data if packer is None else packer.compress(data) + packer.flush(zlib.Z_SYNC_FLUSH)
    if packer is not None:
        yield packer.flush()


@get(
    "/v1/records",
    tags=["records"],
    media_type=ND_JSON,
    summary="The records of finished matches, one per line (ND-JSON, streamed)",
    description="Every finished match (in the order they finished) whose end is in "
    "[`finishedFrom`, `finishedTo`), whose preset is `preset` and, with `tournamentId`, "
    "that are that tournament's tables: one line each, the same "
    "bytes as `GET /v1/matches/{id}/record`. Streamed without holding the export in "
    "memory; `Accept-Encoding: gzip` compresses it. A tournament table appears once its "
    "tournament round completes (R36). `tournamentId` keeps one tournament's tables; "
    "`player` one player's matches, with that player's token (401/403 otherwise). "
    "422 for a time without a time zone, "
    "`finishedFrom` after `finishedTo` or an unknown preset. An export: at most "
    "`EXPORT_CONCURRENCY` are built at once (503 `exports-busy`), "
    "`EXPORT_QUOTA_PER_HOUR` a client (429).",
    responses=problems(401, 403, 503),
    security=[{}, {"bearer": []}],
    operation_class=BulkOperation,
    opt={OWN_ENCODING: True},  # gzip of its own, flushed per chunk of records
)
async def export_records(
    request: Request[Any, Any, Any],
    runtime: NamedDependency[Runtime],
    exports: NamedDependency[Exports],
    finished_from: Annotated[
        datetime | None, moment_parameter("finishedFrom", "Matches that finished at or after it")
    ] = None,
    finished_to: Annotated[
        datetime | None, moment_parameter("finishedTo", "Matches that finished before it")
    ] = None,
    preset: Annotated[
        Literal["standard", "tuolaji", "duijia"] | None,
        QueryParameter(description="Only matches of this rule-set preset (§10)"),
    ] = None,
    tournament_id: Annotated[
        UUID | None,
        QueryParameter(name="tournamentId", description="Only the tables of this tournament"),
    ] = None,
    player: Annotated[
        UUID | None,
        QueryParameter(
            description="Only the matches this player sat in: send that player's token "
            "(an account links a person's matches, so only its player may ask)"
        ),
    ] = None,
) -> Stream:
    reject_repeated(
        request, "preset", "tournamentId", "player", moments=("finishedFrom", "finishedTo")
    )
    if player is not None:
        await runtime.call(
            own_records, runtime.service, request.headers.get("authorization"), player
        )
    where = BulkFilter(finished_from, finished_to, preset, tournament_id, player)
    gzip = wants_gzip(request.headers.get("accept-encoding", ""))
    headers = {"Vary": "Accept-Encoding", "Cache-Control": "no-store"}
    if gzip:
        headers["Content-Encoding"] = "gzip"
    lines = finished_records(runtime.service, where)
    body = await exports.held(request, _body(runtime, lines, gzip))
    return Stream(body, media_type=ND_JSON, headers=headers)

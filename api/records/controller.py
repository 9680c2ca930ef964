"""Portable game records over REST (the format: docs/records.md).

* ``GET /v1/matches/{id}/record`` — a finished match's record: canonical JSON, or the text
  notation with ``?format=text`` or ``Accept: text/plain``. 409 ``record-unavailable``
  while the match is played (a record reveals every card, R33).
* ``GET /v1/matches/{id}/rounds/{n}/record`` — one scored round's record.
* ``POST /v1/records`` — import a record (``application/json`` or ``text/plain``): it is
  replayed through the rules engine; 422 ``record-invalid`` when it cannot be read, 422
  ``record-tampered`` naming the first bad move (its number, round, field and the rule
  the replay refused). ``?store=true`` keeps a match record as a new, finished match
  (201, ``Location``); its id derives from the record's digest, so importing the same
  record again answers 200 with the match stored first (``Idempotency-Key`` is accepted
  and not needed).

Records are public, like a finished match's history: no token is needed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal
from uuid import UUID

from litestar import Controller, Request, Response, post
from litestar.openapi.spec import (
    OpenAPIMediaType,
    OpenAPIResponse,
    OpenAPIType,
    Operation,
    RequestBody,
    Schema,
)
from litestar.params import FromPath, QueryParameter

from api.calls import OPTIONAL_BEARER, Reading, Writing
from api.dto import LOCATION_HEADER, REPLAYED_HEADER, problems
from api.errors import chinese_for, problem_response, status_for
from api.problems import make_problem
from api.reads import RoundNumber
from api.routes import WRITE, route
from services.access import Credential, check_visible
from services.game import GameService
from services.records.export import export_match, export_round
from services.records.format import (
    GameRecord,
    RecordInvalidError,
    RecordTamperedError,
    decode,
    encode,
)
from services.records.replay import ImportRecord, RecordImported
from services.records.text import read_text, write_text

MAX_RECORD_BYTES = 1024 * 1024
"""A record's body limit: about a hundred rounds in JSON (more in the text notation)."""
JSON = "application/json"
TEXT = "text/plain"
Format = Annotated[
    Literal["json", "text"] | None,
    QueryParameter(description="`json` (canonical, the default) or `text` (the notation)"),
]


def match_record(service: GameService, cred: Credential | None, match_id: UUID) -> GameRecord:
    """A finished match's record (blocking); a private table's to the people of the table
    only — 404 to anyone else (:func:`services.access.check_visible`)."""
    check_visible(service, service.get_match(match_id), cred)
    return export_match(service, match_id)


def round_record(
    service: GameService, cred: Credential | None, match_id: UUID, number: int
) -> GameRecord:
    """A scored round's record (blocking), as :func:`match_record`."""
    check_visible(service, service.get_match(match_id), cred)
    return export_round(service, match_id, number)


def _wants_text(request: Request[Any, Any, Any], fmt: str | None) -> bool:
    if fmt is not None:
        return fmt == "text"
    accept = request.headers.get("accept", "")
    best = request.accept.best_match([JSON, "text/plain"], default=JSON) if accept else JSON
    return best == "text/plain"


def _answer(record: GameRecord, text: bool) -> Response[bytes]:
    if text:
        return Response(content=write_text(record).encode(), media_type=TEXT)
    return Response(content=encode(record), media_type=JSON)


def record_tampered_handler(
    request: Request[Any, Any, Any], exc: RecordTamperedError
) -> Response[bytes]:
    """The problem of a record that does not replay names its first bad move (``errors``)."""
    problem = make_problem(
        exc.code,
        exc.detail,
        status=status_for(exc),
        rule=exc.rule,
        chinese=chinese_for(request),
        instance=request.url.path,
        errors=[exc.facts()],
    )
    return problem_response(request, problem)


def read_body(body: bytes, content_type: str) -> GameRecord:
    """A record from a request body: JSON or the text notation, by ``Content-Type``."""
    media = content_type.split(";", 1)[0].strip().lower()
    if media == "text/plain":
        try:
            return read_text(body.decode("utf-8"))
        except UnicodeDecodeError:
            raise RecordInvalidError("the text record is not UTF-8") from None
    if media in ("application/json", ""):
        return decode(body)
    raise RecordInvalidError(f"a record is application/json or text/plain, not {media!r}")


@dataclass
class ImportOperation(Operation):
    """The import's body in the OpenAPI document: it is read raw (JSON or the notation),
    so Litestar's signature model never sees it."""

    def __post_init__(self) -> None:
        self.request_body = RequestBody(
            description="A record as exported (docs/records.md)",
            required=True,
            content={
                JSON: OpenAPIMediaType(
                    schema=Schema(
                        type=OpenAPIType.OBJECT,
                        description="The JSON record (docs/records.md): its `format` and "
                        "`kind` first, then the rules, seats, rounds and moves",
                        required=["format", "kind"],
                        properties={
                            "format": Schema(
                                type=OpenAPIType.STRING,
                                enum=["shengji-record/1"],
                                description="The record format and its version",
                            ),
                            "kind": Schema(
                                type=OpenAPIType.STRING,
                                enum=["match", "round"],
                                description="A whole finished match, or one scored round",
                            ),
                        },
                    )
                ),
                TEXT: OpenAPIMediaType(
                    schema=Schema(type=OpenAPIType.STRING, description="The text notation")
                ),
            },
        )
        responses = dict(self.responses or {})
        ok = responses.get("200")
        if isinstance(ok, OpenAPIResponse):
            responses["201"] = OpenAPIResponse(
                description="Stored as a new, finished match (store=true)",
                content=ok.content,
                headers=ok.headers,
            )
        self.responses = responses


@dataclass
class RecordOperation(Operation):
    """An export's 200 in the OpenAPI document: the JSON record or the text notation."""

    def __post_init__(self) -> None:
        responses = dict(self.responses or {})
        responses["200"] = OpenAPIResponse(
            description="The record (docs/records.md)",
            content={
                JSON: OpenAPIMediaType(
                    schema=Schema(
                        type=OpenAPIType.OBJECT,
                        description="The canonical JSON record (`format`: `shengji-record/1`)",
                    )
                ),
                TEXT: OpenAPIMediaType(
                    schema=Schema(type=OpenAPIType.STRING, description="The text notation")
                ),
            },
        )
        self.responses = responses


EXPORTED: dict[str, Any] = {"media_type": JSON, "operation_class": RecordOperation}
"""The route arguments of a record's export (404, 409 besides): JSON, or the text notation."""


class RecordController(Controller):
    tags = ["records"]  # noqa: RUF012 - Litestar declares it an instance attribute
    exception_handlers = {RecordTamperedError: record_tampered_handler}  # noqa: RUF012

    @route("/v1/matches/{match_id:uuid}/record", 404, 409, security=OPTIONAL_BEARER, **EXPORTED)
    async def get_match_record(
        self, read: Reading, match_id: FromPath[UUID], format: Format = None
    ) -> Response[bytes]:
        """A finished match's record: canonical JSON or the text notation

        Rule set, seats, every deal's seed and commitment (R35), every move in order with its
        time, every result. Only once the match is over (409 `record-unavailable`, R33) and, for
        a tournament table, its tournament round complete (409 `deal-embargoed`, R36).
        `?format=text` or `Accept: text/plain` for the text notation (docs/records.md).
        """
        record = await read.call(match_record, read.service, read.credential, match_id)
        return _answer(record, _wants_text(read.request, format))

    @route(
        "/v1/matches/{match_id:uuid}/rounds/{number:int}/record",
        404,
        409,
        security=OPTIONAL_BEARER,
        **EXPORTED,
    )
    async def get_round_record(
        self, read: Reading, match_id: FromPath[UUID], number: RoundNumber, format: Format = None
    ) -> Response[bytes]:
        """A scored round's record: canonical JSON or the text notation

        The round's seats, levels, deals (seeds revealed, R35), moves and result; 409
        `record-unavailable` until the round is scored (R33), 409 `deal-embargoed` for a
        tournament table until its tournament round completes (R36).
        """
        record = await read.call(round_record, read.service, read.credential, match_id, number)
        return _answer(record, _wants_text(read.request, format))

    @post(
        "/v1/records",
        status_code=200,
        summary="Import a record: replay it through the rules engine (and store it)",
        description="The body is a record as exported: `application/json` or `text/plain` "
        "(the notation). 422 `record-invalid` when it cannot be read; 422 `record-tampered` "
        "names the first bad move (`errors[0]`: move, round, field, rule). With "
        "`store=true` a match record is kept as a new finished match (201 and `Location`); "
        "the same record again answers 200 with that match.",
        responses=problems(body=True),
        response_headers=[LOCATION_HEADER, REPLAYED_HEADER],
        request_max_body_size=MAX_RECORD_BYTES,
        operation_class=ImportOperation,
        opt={WRITE: True},
    )
    async def import_record(
        self,
        write: Writing,
        store: Annotated[
            bool, QueryParameter(description="Keep a match record as a new, finished match")
        ] = False,
    ) -> Response[RecordImported]:
        record = await write.call(
            read_body, await write.request.body(), write.request.headers.get("content-type", "")
        )
        return await write.send(ImportRecord(record, store), location=_stored_at)


def _stored_at(done: RecordImported) -> str:
    """Where a stored record's match is (none for a record only validated)."""
    return "" if done.match_id is None else f"/v1/matches/{done.match_id}"

"""Exception handlers: every error becomes one problem+json (see ``api.problems``)."""

from __future__ import annotations

import logging
import re
from typing import Any
from uuid import UUID

import msgspec
from litestar import Request, Response
from litestar.exceptions import (
    HTTPException,
    MethodNotAllowedException,
    NotFoundException,
    ValidationException,
)

from api.etag import etag
from api.i18n import field_message
from api.problems import PROBLEM_MEDIA_TYPE, Problem, make_problem, wants_chinese
from domain.rules.errors import IllegalMoveError, InvalidInputError, ShengjiError
from services.access import player_locale, read_authorization
from services.errors import (
    NotFoundError,
    PreconditionFailedError,
    VerificationError,
    VersionConflictError,
)

log = logging.getLogger("api.errors")

_STATUS_BY_CLASS: tuple[tuple[type[ShengjiError], int], ...] = (
    (InvalidInputError, 422),
    (IllegalMoveError, 409),
    (NotFoundError, 404),
    (VersionConflictError, 409),  # of two conflicting commands, the one that lost
    (PreconditionFailedError, 412),  # If-Match
    (VerificationError, 422),  # R35: the deal does not match its commitment or record
)
_CODE_BY_STATUS = {
    400: "bad-request",
    401: "unauthorized",
    403: "forbidden",
    404: "not-found",
    405: "method-not-allowed",
    413: "payload-too-large",
    415: "unsupported-media-type",
    429: "rate-limited",
}


def problem_response(
    request: Request[Any, Any, Any], problem: Problem, extra: dict[str, str] | None = None
) -> Response[bytes]:
    """The problem+json answer: its language said (``Content-Language``) and what chose it
    (``Vary``: ``Accept-Language``, and ``Authorization``, whose player's locale is used
    when the request names no language)."""
    headers = {
        "Content-Language": "zh-CN" if chinese_for(request) else "en",
        "Vary": "Accept-Language, Authorization",
        **(extra or {}),
    }
    if problem.status == 429:
        headers.setdefault("Retry-After", "1")
    if problem.status == 401:
        headers["WWW-Authenticate"] = 'Bearer realm="shengji"'  # RFC 6750
    return Response(
        content=msgspec.json.encode(problem),
        status_code=problem.status,
        media_type=PROBLEM_MEDIA_TYPE,
        headers=headers,
    )


def chinese_for(request: Request[Any, Any, Any]) -> bool:
    """Problems in Chinese: as ``Accept-Language`` asks; without it, as the locale of the
    player whose token the request carries (``PATCH /v1/players/me``); else English.
    Worked out once per request (an error's path only: one account read, usually cached)."""
    known = request.state.get("chinese")
    if isinstance(known, bool):
        return known
    asked = request.headers.get("accept-language")
    chinese = wants_chinese(asked) if asked else _stored_chinese(request)
    request.state["chinese"] = chinese
    return chinese


def _stored_chinese(request: Request[Any, Any, Any]) -> bool:
    try:
        cred = read_authorization(request.headers.get("authorization"))
    except ShengjiError:
        return False
    runtime = getattr(request.app.state, "runtime", None)
    if cred is None or runtime is None:
        return False
    try:
        return player_locale(runtime.service, cred) == "zh-CN"
    except Exception:  # the store is unreachable: answer in English rather than fail
        log.warning("the player's locale could not be read", exc_info=True)
        return False


def status_for(exc: ShengjiError) -> int:
    explicit = getattr(exc, "status", None)
    if isinstance(explicit, int):
        return explicit
    for cls, status in _STATUS_BY_CLASS:
        if isinstance(exc, cls):
            return status
    return 400


def domain_error_handler(request: Request[Any, Any, Any], exc: ShengjiError) -> Response[bytes]:
    problem = make_problem(
        exc.code,
        exc.detail,
        status=status_for(exc),
        rule=exc.rule,
        chinese=chinese_for(request),
        instance=request.url.path,
    )
    extra = {}
    if isinstance(exc, PreconditionFailedError) and exc.current is not None:
        extra["ETag"] = etag(exc.current)  # the version to send as If-Match now
    retry_after = getattr(exc, "retry_after", None)
    if isinstance(retry_after, int):  # a quota, busy exports, a table's talk (R37)
        extra["Retry-After"] = str(retry_after)
    return problem_response(request, problem, extra)


def validation_handler(
    request: Request[Any, Any, Any], exc: ValidationException
) -> Response[bytes]:
    errors: list[dict[str, Any]] = []
    if isinstance(exc.extra, list):
        errors = [_on_the_wire(request, e) for e in exc.extra if isinstance(e, dict)]
    detail = exc.detail or "the request is not valid"
    if errors:
        detail = "; ".join(
            f"{e.get('key', 'body')}: {e.get('message', '')}".strip() for e in errors
        )
    chinese = chinese_for(request)
    facts = None
    if chinese and errors:  # every message in Chinese too (api/i18n.py)
        errors = [
            {**e, "message": field_message(str(e["message"]), chinese=True)}
            if isinstance(e.get("message"), str)
            else e
            for e in errors
        ]
        facts = "；".join(f"{e.get('key', 'body')}：{e.get('message', '')}" for e in errors)
    problem = make_problem(
        "validation-failed",
        detail,
        chinese=chinese,
        instance=request.url.path,
        errors=errors or None,
        facts_zh=facts,
    )
    return problem_response(request, problem)


def _on_the_wire(request: Request[Any, Any, Any], error: dict[str, Any]) -> dict[str, Any]:
    """Litestar names a bad parameter by its Python name (``last_event_id``); the client
    knows it by its name in the request (``Last-Event-ID``, ``lastEventId``)."""
    key = error.get("key")
    if not isinstance(key, str) or error.get("source") == "body":
        return error
    try:
        field = request.route_handler.parsed_fn_signature.parameters.get(key)
    except Exception:  # no handler resolved: keep Litestar's name
        return error
    kwarg = getattr(field, "kwarg_definition", None)
    wire = getattr(kwarg, "name", None) or getattr(kwarg, "header", None)
    wire = wire or getattr(kwarg, "query", None)
    return {**error, "key": wire} if isinstance(wire, str) and wire else error


def http_error_handler(request: Request[Any, Any, Any], exc: HTTPException) -> Response[bytes]:
    status = exc.status_code
    if status >= 500:
        log.error("http error %s on %s", status, request.url.path, exc_info=exc)
    code = _CODE_BY_STATUS.get(status, "bad-request" if status < 500 else "internal-error")
    if isinstance(exc, NotFoundException):
        code = "not-found"
    elif isinstance(exc, MethodNotAllowedException):
        code = "method-not-allowed"
    text = str(exc.detail)
    if code == "not-found":
        text = _bad_id(request.url.path) or text
    problem = make_problem(
        code, text, status=status, chinese=chinese_for(request), instance=request.url.path
    )
    extra = {}
    allow = (exc.headers or {}).get("allow") or (exc.headers or {}).get("Allow")
    if allow:  # RFC 9110 §15.5.6: a 405 lists the methods the resource has
        extra["Allow"] = allow
    return problem_response(request, problem, extra)


_IDS = re.compile(r"^/v1/(matches|tournaments)/([^/]+)")
_NUMBERS = re.compile(r"/(rounds|seats|tables)/([^/]+)")
_NAMES = {
    "matches": "match",
    "tournaments": "tournament",
    "rounds": "round",
    "seats": "seat",
    "tables": "table",
}


def _bad_id(path: str) -> str | None:
    """For a path no route matches because an id is not a UUID, or a round, seat or table
    number is not a whole number: the detail naming it."""
    m = _IDS.match(path)
    if m is None:
        return None
    what, value = _NAMES[m.group(1)], m.group(2)
    try:
        UUID(value)
    except ValueError:
        return f"no {what} {_shown(value)}: a {what} id is a UUID"
    for found in _NUMBERS.finditer(path):
        kind, number = _NAMES[found.group(1)], found.group(2)
        if not number.isdigit():
            return f"no {kind} {_shown(number)}: a {kind} is a whole number"
    return None


def _shown(value: str) -> str:
    return "'" + (value if len(value) <= 60 else value[:60] + "…") + "'"


def internal_error_handler(request: Request[Any, Any, Any], exc: Exception) -> Response[bytes]:
    log.error("unhandled error on %s", request.url.path, exc_info=exc)
    problem = make_problem(
        "internal-error",
        "the server could not handle this request; nothing was changed",
        chinese=chinese_for(request),
        instance=request.url.path,
    )
    return problem_response(request, problem)


EXCEPTION_HANDLERS: dict[Any, Any] = {
    ShengjiError: domain_error_handler,
    ValidationException: validation_handler,
    HTTPException: http_error_handler,
    Exception: internal_error_handler,
}

"""The edge: the one wrapper every routed request passes (docs/decisions.md D-edge).

:class:`EdgeMiddleware` is the outermost of the app's Litestar middleware and the only one
that wraps ``send``. Its wrapper touches the ``http.response.start`` message alone — the
``X-Request-ID`` echo, ``Allow`` on ``OPTIONS``, what a browser may do with the answer
(:mod:`api.content_policy`), the status and ``Idempotent-Replayed`` for the metrics —
and hands every body chunk (an SSE stream's included) straight on; it
reads a body only when the status is 409, for the conflict's ``code`` in the metrics.
Around the request it does what needs no ``send`` at all: the request id (the client's
``X-Request-ID`` when well-formed, else a new one), the structlog context (``request_id``,
and ``match_id`` / ``seat`` from the path parameters), one access line
(:mod:`api.logging`), and one observation in the metrics (:mod:`api.metrics`).

Admission (rate limits, quotas, stream caps) is one check before the handler,
:mod:`api.admission`, inside this one: a request it refuses gets its request id and its
access line here, and is counted by the admission's own counters, not as a request.
Requests no route took (404, 405) pass no route middleware: the ``before_send`` hook
:func:`api.logging.unrouted` gives them theirs.
"""

from __future__ import annotations

import re
import time
from typing import Any, Final

import structlog
from litestar import Litestar
from litestar.enums import ScopeType
from litestar.types import ASGIApp, Message, Receive, Scope, Send

from api.content_policy import policy_headers
from api.logging import (
    REQUEST_ID_STATE_KEY,
    SEAT_STATE_KEY,
    Observe,
    access_log,
    request_id_from,
)
from api.metrics import conflict_code
from api.ratelimit import send_problem

_REQUEST_ID: Final = b"x-request-id"
_REPLAYED: Final = b"idempotent-replayed"
_ALLOW: Final = b"allow"
REFUSED_STATE_KEY: Final = "admission_refused"
"""``scope["state"]`` key the admission sets on a request it refused (not a request the
metrics count: the refusal has counters of its own)."""


class EdgeMiddleware:
    """``Litestar(middleware=[DefineMiddleware(EdgeMiddleware, observe=metrics.observe_request),
    …])``; without ``observe`` nothing is counted (the request id and the access line stay)."""

    def __init__(self, app: ASGIApp, observe: Observe | None = None) -> None:
        self.app = app
        self.observe = observe
        self.routes: list[tuple[re.Pattern[str], str]] | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != ScopeType.HTTP:
            await self.app(scope, receive, send)
            return
        raw_id = None
        for key, value in scope.get("headers", ()):
            if key.lower() == _REQUEST_ID:
                raw_id = value
                break
        request_id = request_id_from(raw_id)
        state = scope.setdefault("state", {})
        state[REQUEST_ID_STATE_KEY] = request_id
        echoed = request_id.encode("ascii")
        structlog.contextvars.clear_contextvars()
        structlog.contextvars.bind_contextvars(request_id=request_id, **_route_context(scope))
        allow = self._allow(scope) if scope.get("method") == "OPTIONS" else None
        reply = Reply(send, echoed, allow, scope.get("path", ""))
        started = time.perf_counter()
        try:
            try:
                await self.app(scope, receive, reply.send)
            finally:
                if self.observe is not None and not state.get(REFUSED_STATE_KEY):
                    self.observe(
                        scope.get("method", ""),
                        scope.get("path_template"),
                        scope.get("path_params") or {},
                        reply.status,
                        time.perf_counter() - started,
                        code=reply.code,
                        replayed=reply.replayed,
                    )
        except Exception:
            access_log.error("unhandled error", exc_info=True)
            if reply.status:
                raise
            await send_problem(
                scope,
                reply.send,
                code="internal-error",
                status=500,
                detail="the server could not handle this request; nothing was changed",
            )
        finally:
            _log(scope, reply.status, started)
            structlog.contextvars.clear_contextvars()
        _finished(state)

    def _allow(self, scope: Scope) -> bytes | None:
        """Every method of the resource (RFC 9110 §10.2.1): Litestar builds a path's
        OPTIONS answer from the first handler registered on it, so a path with GET and
        POST in one controller would answer ``Allow: OPTIONS, POST``. The table of every
        path's methods is read from the app's routes on the first OPTIONS request."""
        if self.routes is None:
            self.routes = allow_table(Litestar.from_scope(scope))
        path = scope.get("path", "")
        allow = next((m for pattern, m in self.routes if pattern.match(path)), None)
        return None if allow is None else allow.encode()


def _finished(state: dict[str, Any]) -> None:
    """The request is done (its answer sent, nothing raised): what handling it left in its
    scope's state is dropped — the request id, the seat, and Litestar's connection state
    (the parsed headers, the exception handlers' map, …). The server keeps an idle
    keep-alive connection's last scope until its next request, seconds later, and the
    garbage collector's young collections walked all of it (docs/decisions.md D-young)."""
    state.clear()


class Reply:
    """One request's ``send``, wrapped (the module docstring): the request id echoed, the
    ``Allow`` of an ``OPTIONS``, the content policy's headers (:mod:`api.content_policy`),
    and what the answer said — its status, whether it was a replay, a 409's problem
    ``code``."""

    __slots__ = ("_send", "allow", "code", "echoed", "path", "replayed", "status")

    def __init__(self, send: Send, echoed: bytes, allow: bytes | None, path: str) -> None:
        self._send = send
        self.echoed = echoed
        self.allow = allow
        self.path = path
        self.status = 0
        self.replayed = False
        self.code = ""

    async def send(self, message: Message) -> None:
        allow = self.allow
        if message["type"] == "http.response.start":
            self.status = message["status"]
            headers = []
            for key, value in message.get("headers", ()):
                lower = key.lower()
                if lower == _REQUEST_ID or (allow is not None and lower == _ALLOW):
                    continue
                if lower == _REPLAYED:
                    self.replayed = True
                headers.append((key, value))
            headers.append((_REQUEST_ID, self.echoed))
            headers += policy_headers(self.path, headers)
            if allow is not None:
                headers.append((_ALLOW, allow))
            message["headers"] = headers
        elif self.status == 409 and not self.code and message["type"] == "http.response.body":
            self.code = conflict_code(message.get("body", b""))
        await self._send(message)


def _route_context(scope: Scope) -> dict[str, Any]:
    """``match_id`` (and a ``seat`` path parameter) for every line logged in the request."""
    params: dict[str, Any] = scope.get("path_params") or {}
    context: dict[str, Any] = {}
    match_id = params.get("match_id")
    if match_id is not None:
        context["match_id"] = str(match_id)
    seat = params.get("seat")
    if isinstance(seat, int) and not isinstance(seat, bool):
        context["seat"] = seat
    return context


def _log(scope: Scope, status: int, started: float) -> None:
    fields: dict[str, Any] = {
        "method": scope.get("method"),
        "path": scope.get("path_template") or None,
        "status": status or 499,  # 499: the client left before any response
        "duration_ms": round((time.perf_counter() - started) * 1000, 2),
    }
    seat = (scope.get("state") or {}).get(SEAT_STATE_KEY)
    if isinstance(seat, int) and "seat" not in structlog.contextvars.get_contextvars():
        fields["seat"] = seat
    if status >= 500:
        access_log.error("request", **fields)
    else:
        access_log.info("request", **fields)


def allow_table(app: Litestar) -> list[tuple[re.Pattern[str], str]]:
    """Each route's path pattern and its methods."""
    table = []
    for route in app.routes:
        methods = getattr(route, "methods", None)
        if methods:
            pattern = re.sub(r"\\{[^}]+\\}", "[^/]+", re.escape(route.path_format or route.path))
            table.append((re.compile(f"^{pattern}/?$"), ", ".join(sorted(methods))))
    return table

"""Request context and the access log (the JSON setup is ``infra.logging``).

Three pieces:

* :class:`RequestContextMiddleware`, the outermost of the app's Litestar middleware. It
  takes the client's ``X-Request-ID`` when it is 1–128 characters of ``[A-Za-z0-9._-]``,
  else makes one (uuid4 hex), binds it as ``request_id`` in structlog's context
  variables, echoes it on the response, and logs one access line per request: method,
  route template (never the raw path or the query string), status, duration_ms, and the
  ``match_id`` / ``seat`` bound during the request.
* :func:`unrouted`, a ``before_send`` hook: a request the router answers itself (404 no
  such route, 405 no such method) passes no route middleware, so the hook gives it its
  request id, its access line and its count in the metrics.
* :func:`route_context_middleware` is an ordinary (per-route) Litestar middleware: after
  routing it binds ``match_id`` (and a ``seat`` path parameter) from the path parameters,
  so every line logged while the handler runs carries them. Auth calls :func:`bind_seat`
  when a seat token is recognised.

Secrets stay secret: bodies, headers (Authorization above all), hands, the bottom and
cards are never logged here. An exception escaping the app (Litestar's handlers normally
turn every one into a problem) is the only thing logged with ``exc_info``.
"""

from __future__ import annotations

import re
import time
from collections.abc import Awaitable, Callable
from typing import Any, Final
from uuid import uuid4

import structlog
from litestar.connection import ASGIConnection
from litestar.enums import ScopeType
from litestar.types import ASGIApp, Message, Receive, Scope, Send

from api.ratelimit import send_problem

_REQUEST_ID_KEY: Final = b"x-request-id"
_REQUEST_ID: Final = re.compile(r"[A-Za-z0-9._-]{1,128}")
REQUEST_ID_STATE_KEY: Final = "request_id"
"""``scope["state"]`` key of the request id (set by the middleware of a routed request)."""
SEAT_STATE_KEY: Final = "seat"
"""``request.state`` key auth sets to the caller's seat (read for the access line)."""

access_log = structlog.get_logger("api.access")


def request_id_from(raw: bytes | None) -> str:
    """The client's request id when well-formed, else a new one (uuid4 hex)."""
    if raw is not None and len(raw) <= 128:
        text = raw.decode("latin-1")
        if _REQUEST_ID.fullmatch(text):
            return text
    return uuid4().hex


def _header(scope: Scope, name: bytes) -> bytes | None:
    for key, value in scope.get("headers", ()):
        if key.lower() == name:
            return value
    return None


def bind_seat(connection: ASGIConnection[Any, Any, Any, Any], seat: int) -> None:
    """Record the authenticated ``seat`` for the logs (context variables and state)."""
    connection.scope["state"][SEAT_STATE_KEY] = seat
    structlog.contextvars.bind_contextvars(seat=seat)


def route_context_middleware(app: ASGIApp) -> ASGIApp:
    """Litestar middleware: bind ``match_id`` (and ``seat``) from the path parameters."""

    async def bind_route_context(scope: Scope, receive: Receive, send: Send) -> None:
        params: dict[str, Any] = scope.get("path_params") or {}
        context: dict[str, Any] = {}
        match_id = params.get("match_id")
        if match_id is not None:
            context["match_id"] = str(match_id)
        seat = params.get("seat")
        if isinstance(seat, int) and not isinstance(seat, bool):
            context["seat"] = seat
        if context:
            structlog.contextvars.bind_contextvars(**context)
        await app(scope, receive, send)

    return bind_route_context


class RequestContextMiddleware:
    """The outermost ASGI wrapper: request id, ``X-Request-ID`` echo, the access line.

    ``Litestar(middleware=[RequestContextMiddleware, …])``."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != ScopeType.HTTP:
            await self.app(scope, receive, send)
            return
        request_id = request_id_from(_header(scope, _REQUEST_ID_KEY))
        scope.setdefault("state", {})[REQUEST_ID_STATE_KEY] = request_id
        echoed = request_id.encode("ascii")
        structlog.contextvars.clear_contextvars()
        structlog.contextvars.bind_contextvars(request_id=request_id)
        status = 0
        started = time.perf_counter()

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                headers = [
                    (k, v) for k, v in message.get("headers", ()) if k.lower() != _REQUEST_ID_KEY
                ]
                headers.append((_REQUEST_ID_KEY, echoed))
                message["headers"] = headers
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        except Exception:
            access_log.error("unhandled error", exc_info=True)
            if status:
                raise
            await send_problem(
                scope,
                send_with_id,
                code="internal-error",
                status=500,
                detail="the server could not handle this request; nothing was changed",
            )
        finally:
            self._log(scope, status, started)
            structlog.contextvars.clear_contextvars()

    @staticmethod
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


Observe = Callable[..., None]
"""``Metrics.observe_request(method, template, params, status, seconds)``."""


def unrouted(observe: Observe) -> Callable[[Message, Scope], Awaitable[None]]:
    """The ``before_send`` hook for requests no route took (404, 405): the request id,
    the access line (route ``None``) and the request's count (route ``unmatched``)."""

    async def hook(message: Message, scope: Scope) -> None:
        if message["type"] != "http.response.start" or scope["type"] != ScopeType.HTTP:
            return
        state = scope.setdefault("state", {})
        if REQUEST_ID_STATE_KEY in state:
            return  # a route's middleware has it
        request_id = request_id_from(_header(scope, _REQUEST_ID_KEY))
        state[REQUEST_ID_STATE_KEY] = request_id
        headers = [(k, v) for k, v in message.get("headers", ()) if k.lower() != _REQUEST_ID_KEY]
        headers.append((_REQUEST_ID_KEY, request_id.encode("ascii")))
        message["headers"] = headers
        status = message["status"]
        method = scope.get("method", "")
        access_log.info("request", method=method, path=None, status=status, request_id=request_id)
        observe(method, None, {}, status, 0.0)

    return hook

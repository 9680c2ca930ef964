"""Request context and the access log (the JSON setup is ``infra.logging``).

The pieces (the middleware that uses them is :mod:`api.edge`):

* :func:`request_id_from`: the client's ``X-Request-ID`` when it is 1–128 characters of
  ``[A-Za-z0-9._-]``, else a new one (uuid4 hex). The edge binds it as ``request_id`` in
  structlog's context variables with ``match_id`` (and a ``seat`` path parameter), echoes
  it on the response, and logs one access line per request on :data:`access_log`: method,
  route template (never the raw path or the query string), status, duration_ms, and the
  ``seat`` bound during the request.
* :func:`unrouted`, a ``before_send`` hook: a request the router answers itself (404 no
  such route, 405 no such method) passes no route middleware, so the hook gives it its
  request id, its access line and its count in the metrics.
* :func:`bind_seat`: auth calls it when a seat token is recognised.

Secrets stay secret: bodies, headers (Authorization above all), hands, the bottom and
cards are never logged here. An exception escaping the app (Litestar's handlers normally
turn every one into a problem) is the only thing logged with ``exc_info``.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import Any, Final
from uuid import uuid4

import structlog
from litestar.connection import ASGIConnection
from litestar.enums import ScopeType
from litestar.types import Message, Scope

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


Observe = Callable[..., None]
"""``Metrics.observe_request(method, template, params, status, seconds)``."""


def unrouted(observe: Observe) -> Callable[[Message, Scope], Awaitable[None]]:
    """The ``before_send`` hook for requests no route took (404, 405): the request id,
    the access line (route ``None``) and the request's count (route ``unmatched``)."""
    return Unrouted(observe).hook


class Unrouted:
    """:func:`unrouted`'s hook, counting with ``observe``."""

    def __init__(self, observe: Observe) -> None:
        self.observe = observe

    async def hook(self, message: Message, scope: Scope) -> None:
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
        self.observe(method, None, {}, status, 0.0)

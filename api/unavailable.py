"""The store is unreachable: 503 ``store-unavailable`` with ``Retry-After``
(docs/observability.md).

When PostgreSQL is down or restarting (or SQLite's file is locked beyond its timeout), the
eventsourcing library raises its ``OperationalError`` / ``InterfaceError`` (psycopg's
connection errors and the pool's ``PoolTimeout`` are wrapped into them by the library's
datastore); a raw psycopg connection error may also surface. None of these says the
request was wrong, and nothing was acknowledged, so the answer is the problem
``https://shengji.example/problems/store-unavailable`` (status 503) with ``Retry-After``:
the client retries — with the same ``Idempotency-Key`` for a POST, which makes the retry
safe even when the commit happened just before the connection broke.

The service recovers by itself, with no restart: the psycopg pool discards broken
connections and opens new ones in the background (``psycopg_pool``'s reconnect), the
live hub's LISTEN connection reconnects with backoff (``infra.hub.PostgresHub``), and a
live stream's feed retries its reload. Register with ``UNAVAILABLE_HANDLERS`` in the
app's exception handlers (the most specific class wins over the 500 catch-all).
"""

from __future__ import annotations

import logging
from typing import Any, Final

import msgspec
import psycopg
from eventsourcing.persistence import InterfaceError, OperationalError
from litestar import Request, Response

from api.i18n import prefers_chinese
from api.problems import PROBLEM_BASE, PROBLEM_MEDIA_TYPE, Problem

CODE: Final = "store-unavailable"
RETRY_AFTER_S: Final = 2
"""Seconds a client waits before retrying: the pool reconnects within about that."""
DETAIL: Final = (
    "the event store is unreachable right now (a database outage or restart, or every "
    "connection busy); nothing "
    "was changed by this request unless an earlier attempt with the same "
    "Idempotency-Key already succeeded; retry after {seconds} s"
)

TITLE: Final = ("Store unavailable", "存储暂时不可用")
SENTENCE_ZH: Final = "事件存储暂时无法访问（数据库中断或重启），请稍后重试"

log = logging.getLogger("api.unavailable")


def store_unavailable_handler(request: Request[Any, Any, Any], exc: Exception) -> Response[bytes]:
    """503 ``store-unavailable`` + ``Retry-After`` (logged as a warning, no traceback:
    an outage is an operational state, not a bug)."""
    log.warning(
        "store unavailable on %s: %s: %s",
        request.url.path,
        type(exc).__name__,
        str(exc).splitlines()[0][:200] if str(exc) else "",
    )
    chinese = prefers_chinese(request.headers.get("accept-language"))
    detail = DETAIL.format(seconds=RETRY_AFTER_S)
    if chinese:
        detail = f"{SENTENCE_ZH}。{detail}"
    problem = Problem(
        type=PROBLEM_BASE + CODE,
        title=TITLE[1] if chinese else TITLE[0],
        status=503,
        detail=detail,
        code=CODE,
        instance=request.url.path,
    )
    return Response(
        content=msgspec.json.encode(problem),
        status_code=503,
        media_type=PROBLEM_MEDIA_TYPE,
        headers={
            "Retry-After": str(RETRY_AFTER_S),
            "Content-Language": "zh-CN" if chinese else "en",
            "Vary": "Accept-Language",
        },
    )


UNAVAILABLE_HANDLERS: Final[dict[Any, Any]] = {
    OperationalError: store_unavailable_handler,
    InterfaceError: store_unavailable_handler,
    psycopg.OperationalError: store_unavailable_handler,
    psycopg.InterfaceError: store_unavailable_handler,
}
"""Exception classes → the 503 handler, to merge into the app's exception handlers."""

"""JSON access logs: one line per request, the request's context on every line logged
during it, no cards, bodies or tokens, ``exc_info`` only for 5xx.
"""

from __future__ import annotations

import asyncio
import io
import json
import logging
from typing import Any, cast

import structlog
from litestar.testing import TestClient
from litestar.types import Message, Receive, Scope, Send

from api.edge import EdgeMiddleware
from api.problems import PROBLEM_MEDIA_TYPE
from infra.logging import REDACTED
from tests.api.ops.small_app import HAND, HEX32, MATCH, SECRET_TOKEN, access_lines, lines, small_app


def test_one_json_access_line_per_request(logs: io.StringIO) -> None:
    with TestClient(small_app()) as c:
        c.get(
            f"/v1/matches/{MATCH}/seats/2/view",
            headers={"X-Request-ID": "trace-7", "Authorization": f"Bearer {SECRET_TOKEN}"},
        )
        c.get("/nowhere")
    view, missing = access_lines(logs)
    assert view["event"] == "request"
    assert view["request_id"] == "trace-7"
    assert view["method"] == "GET"
    assert view["path"] == "/v1/matches/{match_id}/seats/{seat}/view"
    assert view["status"] == 200
    assert view["match_id"] == str(MATCH)
    assert view["seat"] == 2
    assert isinstance(view["duration_ms"], float)
    assert view["level"] == "info" and "timestamp" in view
    assert missing["status"] == 404 and missing["path"] is None
    assert HEX32.fullmatch(missing["request_id"])
    assert "match_id" not in missing and "seat" not in missing


def test_lines_logged_during_a_request_carry_its_context(logs: io.StringIO) -> None:
    with TestClient(small_app()) as c:
        c.get(f"/v1/matches/{MATCH}/seats/1/view", headers={"X-Request-ID": "trace-8"})
    handler = next(r for r in lines(logs) if r["event"] == "view served")
    assert handler["request_id"] == "trace-8"
    assert handler["match_id"] == str(MATCH)
    assert handler["seat"] == 1
    assert handler["hand"] == REDACTED


def test_logs_hold_no_cards_bodies_or_tokens(logs: io.StringIO) -> None:
    auth = {"Authorization": f"Bearer {SECRET_TOKEN}"}
    with TestClient(small_app()) as c:
        c.get(f"/v1/matches/{MATCH}/seats/0/view", headers=auth)
        c.post(f"/v1/matches/{MATCH}/play", json={"cards": HAND.split()}, headers=auth)
        c.post(f"/v1/matches/{MATCH}/play", content=b"{" + HAND.encode(), headers=auth)
        c.get(f"/v1/matches/{MATCH}/seats/0/view?token={SECRET_TOKEN}")
    text = logs.getvalue()
    assert len(access_lines(logs)) == 4
    assert SECRET_TOKEN not in text
    assert "Bearer" not in text
    for card in ("BJ", "SJ", "10H", "QS"):
        assert card not in text


def test_only_5xx_are_logged_with_exc_info(logs: io.StringIO) -> None:
    with TestClient(small_app()) as c:
        c.post(f"/v1/matches/{MATCH}/play", json={"cards": ["5C"]})
        c.get("/nowhere")
        c.get("/boom")
    records = lines(logs)
    with_trace = [r for r in records if "exception" in r]
    assert len(with_trace) == 1
    assert "RuntimeError: kaboom" in with_trace[0]["exception"]
    assert with_trace[0]["request_id"]
    assert [r["status"] for r in access_lines(logs)] == [409, 404, 500]
    assert [r["level"] for r in access_lines(logs)] == ["info", "info", "error"]


def test_an_exception_escaping_the_app_is_a_500_problem(logs: io.StringIO) -> None:
    async def broken(scope: Scope, receive: Receive, send: Send) -> None:
        raise RuntimeError("escaped")

    sent: list[Message] = []

    async def send(message: Message) -> None:
        sent.append(message)

    async def receive() -> Any:
        return {"type": "http.request", "body": b"", "more_body": False}

    scope = {"type": "http", "method": "GET", "path": "/x", "headers": [], "state": {}}
    asyncio.run(EdgeMiddleware(broken)(cast("Scope", scope), receive, send))
    start, body = sent
    assert start["type"] == "http.response.start" and start["status"] == 500
    headers = dict(start["headers"])
    assert headers[b"content-type"] == PROBLEM_MEDIA_TYPE.encode()
    assert HEX32.fullmatch(headers[b"x-request-id"].decode())
    assert body["type"] == "http.response.body"
    assert json.loads(body["body"])["code"] == "internal-error"
    trace, access = lines(logs)
    assert "RuntimeError: escaped" in trace["exception"]
    assert access["status"] == 500 and access["request_id"] == trace["request_id"]


def test_stdlib_records_are_json_with_the_context(logs: io.StringIO) -> None:
    structlog.contextvars.bind_contextvars(request_id="r-1")
    try:
        logging.getLogger("some.library").warning("hello %s", "there")
    finally:
        structlog.contextvars.clear_contextvars()
    (record,) = lines(logs)
    assert record["event"] == "hello there"
    assert record["request_id"] == "r-1"
    assert record["logger"] == "some.library"
    assert record["level"] == "warning"

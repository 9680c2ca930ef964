"""A small Litestar app built with the real pieces of the API's operations (``api.logging``,
``api.ratelimit``, ``api.health``, ``api.errors``), and what the tests read back from it:
log lines, problems (the tests: :mod:`tests.api.ops`).
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any
from uuid import UUID

import msgspec
import structlog
from litestar import Litestar, Request, get, post
from litestar.middleware import DefineMiddleware
from litestar.params import FromPath, JSONBody

from api.admission import AdmissionMiddleware
from api.edge import EdgeMiddleware
from api.errors import EXCEPTION_HANDLERS
from api.health import Probe, health_handlers
from api.identity import Identities
from api.logging import bind_seat, unrouted
from api.problems import PROBLEM_BASE, PROBLEM_MEDIA_TYPE
from api.streams import MATCH as MATCH_STREAM
from api.streams import stream_route
from domain.rules.errors import IllegalMoveError
from services.limits import RateLimiter

ROOT = Path(__file__).resolve().parents[3]
HEX32 = re.compile(r"[0-9a-f]{32}")
SECRET_TOKEN = "sekret-seat-token-Zq9"
HAND = "BJ SJ 10H 10H QS"
MATCH = UUID("12345678-1234-5678-1234-567812345678")
MAX_BODY = 1024


# -- a small app with the real pieces --------------------------------------------------------


class PlayBody(msgspec.Struct):
    cards: list[str]


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def ok_probe() -> object:
    return 7


def failing_probe() -> object:
    raise OSError("connection refused")


def small_app(
    *,
    limiter: RateLimiter | None = None,
    identities: Identities | None = None,
    probe: Probe = ok_probe,
    timeout: float = 2.0,
) -> Litestar:
    log = structlog.get_logger("tests.handler")

    @get("/v1/matches/{match_id:uuid}/seats/{seat:int}/view")
    async def view(
        request: Request[Any, Any, Any], match_id: FromPath[UUID], seat: FromPath[int]
    ) -> dict[str, Any]:
        bind_seat(request, seat)
        log.info("view served", hand=HAND)  # a careless log line: redacted
        return {"hand": HAND}

    @post("/v1/matches/{match_id:uuid}/play")
    async def play(match_id: FromPath[UUID], data: JSONBody[PlayBody]) -> None:
        raise IllegalMoveError(
            f"{' '.join(data.cards)}: R23: must follow clubs", rule="R23", code="illegal-follow"
        )

    @stream_route(MATCH_STREAM, "/")  # the match stream's declaration: not rate limited
    async def stream(match_id: FromPath[UUID]) -> str:
        """A stand-in for the match stream"""
        return "data: {}\n\n"

    @get("/boom")
    async def boom() -> None:
        raise RuntimeError("kaboom")

    return Litestar(
        route_handlers=[view, play, stream, boom, *health_handlers(probe, timeout=timeout)],
        exception_handlers=EXCEPTION_HANDLERS,
        middleware=[
            EdgeMiddleware,
            DefineMiddleware(
                AdmissionMiddleware, limiter=limiter or RateLimiter(0), identities=identities
            ),
        ],
        before_send=[unrouted(lambda *_: None)],
        request_max_body_size=MAX_BODY,
        logging_config=None,
    )


def lines(stream: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stream.getvalue().splitlines() if line.strip()]


def access_lines(stream: io.StringIO) -> list[dict[str, Any]]:
    return [r for r in lines(stream) if r.get("logger") == "api.access"]


def is_problem(response: Any, code: str, status: int) -> dict[str, Any]:
    assert response.status_code == status
    assert response.headers["content-type"].startswith(PROBLEM_MEDIA_TYPE)
    body: dict[str, Any] = response.json()
    assert body["type"] == PROBLEM_BASE + code
    assert body["status"] == status
    assert body["code"] == code
    assert body["title"] and body["detail"]
    return body

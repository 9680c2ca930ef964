"""Operations of the API: request ids and JSON access logs, body and rate limits,
Chinese/English problems, health probes, ``make serve`` (issue 4: errors, logs, health).

Most tests run a small Litestar app built here with the real pieces (``api.logging``,
``api.ratelimit``, ``api.health``, ``api.errors``); the last block checks that
``api.app.create_app`` registers them.
"""

from __future__ import annotations

import ast
import asyncio
import io
import json
import logging
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast
from uuid import UUID, uuid4

import msgspec
import pytest
import structlog
from litestar import Litestar, Request, get, post
from litestar.middleware import DefineMiddleware
from litestar.params import FromPath, JSONBody
from litestar.testing import TestClient
from litestar.types import Message, Receive, Scope, Send

from api.errors import EXCEPTION_HANDLERS
from api.health import Probe, health_handlers, store_probe
from api.i18n import MESSAGES, detail, localize, prefers_chinese, title
from api.identity import Identities, address_key, bearer_of
from api.logging import (
    RequestContextMiddleware,
    bind_seat,
    request_id_from,
    route_context_middleware,
    unrouted,
)
from api.problems import PROBLEM_BASE, PROBLEM_MEDIA_TYPE, PROBLEM_TYPES
from api.ratelimit import RateLimiter, RateLimitMiddleware
from domain.rules.errors import IllegalMoveError
from infra.logging import REDACTED, configure_logging
from infra.serve import ServeOptions, main, uvicorn_config
from infra.settings import Settings, SettingsError, build_service
from services.game import GameService

ROOT = Path(__file__).resolve().parents[2]
HEX32 = re.compile(r"[0-9a-f]{32}")
SECRET_TOKEN = "sekret-seat-token-Zq9"
HAND = "BJ SJ 10H 10H QS"
MATCH = UUID("12345678-1234-5678-1234-567812345678")
MAX_BODY = 1024


# -- a small app with the real pieces --------------------------------------------------------


class PlayBody(msgspec.Struct):
    cards: str


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def ok_probe() -> object:
    return 7


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
            f"{data.cards}: R23: must follow clubs", rule="R23", code="illegal-follow"
        )

    @get("/v1/matches/{match_id:uuid}/stream")
    async def stream(match_id: FromPath[UUID]) -> str:
        return "data: {}\n\n"

    @get("/boom")
    async def boom() -> None:
        raise RuntimeError("kaboom")

    return Litestar(
        route_handlers=[view, play, stream, boom, *health_handlers(probe, timeout=timeout)],
        exception_handlers=EXCEPTION_HANDLERS,
        middleware=[
            RequestContextMiddleware,
            DefineMiddleware(
                RateLimitMiddleware, limiter=limiter or RateLimiter(0), identities=identities
            ),
            route_context_middleware,
        ],
        before_send=[unrouted(lambda *_: None)],
        request_max_body_size=MAX_BODY,
        logging_config=None,
    )


@pytest.fixture
def logs() -> Iterator[io.StringIO]:
    """JSON lines of every log record while the test runs."""
    root = logging.getLogger()
    level = root.level
    stream = io.StringIO()
    configure_logging("INFO", stream=stream)
    yield stream
    for handler in [h for h in root.handlers if getattr(h, "_shengji_json_handler", False)]:
        root.removeHandler(handler)
    root.setLevel(level)
    structlog.reset_defaults()


def lines(stream: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stream.getvalue().splitlines() if line.strip()]


def access_lines(stream: io.StringIO) -> list[dict[str, Any]]:
    return [r for r in lines(stream) if r.get("logger") == "api.access"]


@pytest.fixture
def client() -> Iterator[TestClient[Litestar]]:
    with TestClient(small_app()) as c:
        yield c


def is_problem(response: Any, code: str, status: int) -> dict[str, Any]:
    assert response.status_code == status
    assert response.headers["content-type"].startswith(PROBLEM_MEDIA_TYPE)
    body: dict[str, Any] = response.json()
    assert body["type"] == PROBLEM_BASE + code
    assert body["status"] == status
    assert body["code"] == code
    assert body["title"] and body["detail"]
    return body


# -- request ids --------------------------------------------------------------------------


def test_a_request_id_is_generated(client: TestClient[Litestar]) -> None:
    first = client.get("/healthz").headers["x-request-id"]
    second = client.get("/healthz").headers["x-request-id"]
    assert HEX32.fullmatch(first) and HEX32.fullmatch(second) and first != second


@pytest.mark.parametrize("given", ["abc", "req-1.2_3", "A" * 128, "0" * 32])
def test_a_valid_request_id_is_propagated(client: TestClient[Litestar], given: str) -> None:
    assert client.get("/healthz", headers={"X-Request-ID": given}).headers["x-request-id"] == given


@pytest.mark.parametrize("given", ["", " ", "has space", "a/b", "x" * 129, "id;drop", "ünï"])
def test_an_invalid_request_id_is_replaced(client: TestClient[Litestar], given: str) -> None:
    echoed = client.get("/healthz", headers={b"X-Request-ID": given.encode()}).headers[
        "x-request-id"
    ]
    assert HEX32.fullmatch(echoed)


@pytest.mark.parametrize(
    ("raw", "kept"),
    [(b"abc", True), (b"a" * 128, True), (b"a" * 129, False), (b"\xff", False), (None, False)],
)
def test_request_id_from(raw: bytes | None, kept: bool) -> None:
    rid = request_id_from(raw)
    assert (rid == (raw or b"").decode("latin-1")) is kept
    if not kept:
        assert HEX32.fullmatch(rid)


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [
        ("GET", "/healthz", 200),
        ("GET", "/nowhere", 404),
        ("DELETE", "/healthz", 405),
        ("POST", f"/v1/matches/{MATCH}/play", 409),
        ("POST", f"/v1/matches/{MATCH}/play", 413),
        ("GET", "/boom", 500),
    ],
)
def test_the_request_id_is_echoed_on_errors_too(method: str, path: str, status: int) -> None:
    body = b'{"cards": "5C"}' if status != 413 else b"x" * (MAX_BODY + 1)
    with TestClient(small_app()) as c:
        r = c.request(method, path, content=body, headers={"X-Request-ID": "trace-1"})
    assert r.status_code == status
    assert r.headers["x-request-id"] == "trace-1"


# -- access log ---------------------------------------------------------------------------


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
        c.post(f"/v1/matches/{MATCH}/play", json={"cards": HAND}, headers=auth)
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
        c.post(f"/v1/matches/{MATCH}/play", json={"cards": "5C"})
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
    asyncio.run(RequestContextMiddleware(broken)(cast("Scope", scope), receive, send))
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


# -- body size limit ----------------------------------------------------------------------


def test_a_body_over_the_limit_is_a_413_problem(client: TestClient[Litestar]) -> None:
    r = client.post(f"/v1/matches/{MATCH}/play", content=b"{" + b" " * MAX_BODY + b"}")
    is_problem(r, "payload-too-large", 413)


def test_a_chunked_body_over_the_limit_is_a_413_problem(client: TestClient[Litestar]) -> None:
    def chunks() -> Iterator[bytes]:
        for _ in range(8):
            yield b" " * 256

    r = client.post(f"/v1/matches/{MATCH}/play", content=chunks())
    is_problem(r, "payload-too-large", 413)


# -- rate limiting ------------------------------------------------------------------------


def test_over_the_rate_is_a_429_problem_with_retry_after() -> None:
    clock = FakeClock()
    limiter = RateLimiter(2, clock=clock)
    with TestClient(small_app(limiter=limiter)) as c:
        path = f"/v1/matches/{MATCH}/seats/0/view"
        assert [c.get(path).status_code for _ in range(2)] == [200, 200]
        r = c.get(path, headers={"X-Request-ID": "too-many"})
        body = is_problem(r, "rate-limited", 429)
        assert r.headers["retry-after"] == "30"  # 2 a minute: one token every 30 s
        assert r.headers["x-request-id"] == "too-many"
        assert body["title"] == "Too many requests"
        assert limiter.rejections == 1
        clock.now += 29
        assert c.get(path).status_code == 429
        assert c.get(path).headers["retry-after"] == "1"
        clock.now += 1
        assert c.get(path).status_code == 200
        assert limiter.rejections == 3


def test_health_and_the_stream_are_not_rate_limited() -> None:
    limiter = RateLimiter(1, clock=FakeClock())
    with TestClient(small_app(limiter=limiter)) as c:
        for path in ("/healthz", "/readyz", f"/v1/matches/{MATCH}/stream"):
            assert [c.get(path).status_code for _ in range(5)] == [200] * 5
        assert limiter.rejections == 0


def test_each_verified_token_has_its_own_bucket() -> None:
    """A token that verifies has its own bucket; any other is counted under the address."""
    limiter = RateLimiter(1, clock=FakeClock())
    identities = Identities(lambda token: token in ("one", "two", "three"))
    path = f"/v1/matches/{MATCH}/seats/0/view"
    with TestClient(small_app(limiter=limiter, identities=identities)) as c:
        for token in ("one", "two", "three"):
            headers = {"Authorization": f"Bearer {token}"}
            assert c.get(path, headers=headers).status_code == 200
            assert c.get(path, headers=headers).status_code == 429
        assert c.get(path, headers={"Authorization": "Bearer made-up"}).status_code == 200
        assert c.get(path).status_code == 429  # the made-up token took the address's
        assert c.get(path, headers={"Authorization": "Bearer other"}).status_code == 429


@pytest.mark.parametrize(
    ("headers", "query", "client", "token", "key"),
    [
        ([(b"authorization", b"Bearer abc")], b"", ("10.0.0.1", 5), "abc", "addr:10.0.0.1"),
        ([(b"Authorization", b"bearer abc")], b"token=x", None, "abc", "addr:unknown"),
        ([(b"authorization", b"Basic abc")], b"token=x", ("10.0.0.1", 5), None, "addr:10.0.0.1"),
        ([(b"authorization", b"Bearer ")], b"", ("10.0.0.1", 5), None, "addr:10.0.0.1"),
        ([], b"a=1&token=s.x.y", ("10.0.0.2", 5), "s.x.y", "addr:10.0.0.2"),
        ([], b"", None, None, "addr:unknown"),
    ],
)
def test_the_token_and_the_address_of_a_request(
    headers: list[tuple[bytes, bytes]], query: bytes, client: Any, token: str | None, key: str
) -> None:
    scope = cast(
        "Scope", {"type": "http", "headers": headers, "client": client, "query_string": query}
    )
    assert (bearer_of(scope), address_key(scope)) == (token, key)


def test_the_limiter_off_never_rejects() -> None:
    limiter = RateLimiter(0)
    assert not limiter.enabled
    assert all(limiter.acquire("k") is None for _ in range(10_000))
    assert limiter.rejections == 0


def test_the_limiter_forgets_the_least_recent_clients() -> None:
    limiter = RateLimiter(1, max_clients=2, clock=FakeClock())
    assert limiter.acquire("a") is None and limiter.acquire("a") is not None
    assert limiter.acquire("b") is None and limiter.acquire("c") is None  # "a" forgotten
    assert limiter.acquire("a") is None


@pytest.mark.parametrize(("per_minute", "burst"), [(-1, None), (60, 0)])
def test_the_limiter_refuses_impossible_settings(per_minute: int, burst: int | None) -> None:
    with pytest.raises(ValueError):
        RateLimiter(per_minute, burst=burst)


# -- English and Chinese ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("header", "chinese"),
    [
        (None, False),
        ("", False),
        ("en", False),
        ("zh", True),
        ("zh-CN", True),
        ("zh-Hans", True),
        ("zh-Hans-CN", True),
        ("ZH-cn", True),
        ("zh-SG", True),
        ("zh-TW", False),
        ("zh-Hant", False),
        ("zh-HK", False),
        ("en-US,en;q=0.9,zh-CN;q=0.8", False),
        ("zh-CN,zh;q=0.9,en;q=0.8", True),
        ("en;q=0.5,zh;q=0.8", True),
        ("en;q=0.8,zh;q=0.8", False),
        ("zh;q=0.8,en;q=0.8", True),
        ("zh;q=0", False),
        ("zh;q=0, en;q=0.1", False),
        ("fr,zh;q=0.5", True),
        ("fr,*;q=0.5,zh;q=0.4", False),
        ("zh-TW,zh-CN;q=0.5", True),
        ("zh;q=abc", False),
        ("zh;q=2", False),
        ("zh; Q=0.9, en;q=0.5", True),
    ],
)
def test_prefers_chinese(header: str | None, chinese: bool) -> None:
    assert prefers_chinese(header) is chinese


@pytest.mark.parametrize(
    ("code", "english", "rule", "title_zh", "keeps"),
    [
        ("illegal-follow", "5C 7C: R23: must follow clubs", "R23", "跟牌不合规则", "5C 7C"),
        (
            "not-your-turn",
            "it is seat 2's turn to play, not seat 1's",
            "R22",
            "还没轮到你",
            "seat 2",
        ),
        ("cards-not-in-hand", "BJ BJ: not all of these cards", "R3", "手中没有这些牌", "BJ BJ"),
        ("mixed-lead", "5C AS: a lead must be of one suit", "R22", "首家出牌混杂", "5C AS"),
        ("invalid-card", "'11H' is not a card in R4 notation", "R4", "牌面记法无效", "'11H'"),
        ("declaration-too-weak", "7H does not beat the standing 7S 7S", "R20", "亮牌不够大", "7S"),
        ("validation-failed", "level: Expected `str`", None, "请求校验失败", "level"),
    ],
)
def test_chinese_details_keep_the_rule_and_the_cards(
    code: str, english: str, rule: str | None, title_zh: str, keeps: str
) -> None:
    assert localize(code, english, chinese=False, rule=rule) == (MESSAGES[code].title_en, english)
    zh_title, zh_detail = localize(code, english, chinese=True, rule=rule)
    assert zh_title == title_zh
    assert zh_detail.startswith(MESSAGES[code].sentence_zh)
    assert zh_detail.endswith(english) and keeps in zh_detail
    if rule:
        assert f"（{rule}）" in zh_detail


def test_an_unknown_code_still_gets_text_in_both_languages() -> None:
    assert title("brand-new-thing", chinese=False) == "Brand new thing"
    assert title("brand-new-thing", chinese=True) == "请求未能完成"
    assert detail("brand-new-thing", "why", chinese=True, rule="R9") == "请求未能完成（R9）。why"


def raised_codes() -> dict[str, str]:
    """Every error code written in domain/ and services/: ``code="…"`` keywords, class
    attributes ``code = "…"``, and positional arguments of helpers with a ``code`` parameter
    (e.g. ``_illegal(detail, "not-a-show")``); both branches of ``a if c else b``."""

    def strings(node: ast.expr | None) -> list[str]:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return [node.value]
        if isinstance(node, ast.IfExp):
            return strings(node.body) + strings(node.orelse)
        return []

    found: dict[str, str] = {}
    for package in ("domain", "services"):
        for path in sorted((ROOT / package).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            where = str(path.relative_to(ROOT))
            helpers = {
                f.name: [a.arg for a in (*f.args.posonlyargs, *f.args.args)].index("code")
                for f in ast.walk(tree)
                if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)
                and "code" in [a.arg for a in (*f.args.posonlyargs, *f.args.args)]
            }
            for node in ast.walk(tree):
                values: list[ast.expr | None] = []
                if isinstance(node, ast.Call):
                    values += [k.value for k in node.keywords if k.arg == "code"]
                    func = node.func
                    name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
                    if name in helpers and len(node.args) > helpers[name]:
                        values.append(node.args[helpers[name]])
                elif isinstance(node, ast.ClassDef):
                    for stmt in node.body:
                        if (
                            isinstance(stmt, ast.Assign)
                            and any(
                                isinstance(t, ast.Name) and t.id == "code" for t in stmt.targets
                            )
                        ) or (
                            isinstance(stmt, ast.AnnAssign)
                            and isinstance(stmt.target, ast.Name)
                            and stmt.target.id == "code"
                        ):
                            values.append(stmt.value)
                for value in values:
                    for code in strings(value):
                        found.setdefault(code, where)
    return found


CJK = re.compile(r"[\u4e00-\u9fff]")


def test_every_code_raised_in_domain_and_services_has_chinese_text() -> None:
    codes = raised_codes()
    assert {"illegal-follow", "not-a-show", "round-over", "not-playing-yet"} <= set(codes)
    assert len(codes) > 40
    missing = {code: where for code, where in codes.items() if code not in MESSAGES}
    assert not missing, f"add these codes to api.i18n.MESSAGES: {missing}"


@pytest.mark.parametrize(
    "code",
    [
        "illegal-follow", "not-your-turn", "cards-not-in-hand", "mixed-lead", "round-over",
        "empty-play", "illegal-move", "invalid-card", "invalid-input", "invalid-rule-set",
        "validation-failed", "version-conflict", "precondition-failed", "not-found",
        "payload-too-large", "rate-limited", "not-ready", "internal-error",
        *sorted(PROBLEM_TYPES),
    ],
)  # fmt: skip
def test_the_api_codes_have_chinese_text(code: str) -> None:
    m = MESSAGES[code]
    assert CJK.search(m.title_zh) and CJK.search(m.sentence_zh)
    assert m.title_en and not CJK.search(m.title_en)


def test_problems_made_here_speak_chinese_when_asked() -> None:
    limiter = RateLimiter(1, clock=FakeClock())
    zh = {"Accept-Language": "zh-CN,zh;q=0.9,en;q=0.5"}
    with TestClient(small_app(limiter=limiter, probe=failing_probe)) as c:
        c.get("/healthz", headers=zh)
        c.get("/boom")
        r = c.get("/boom", headers=zh)
        body = is_problem(r, "rate-limited", 429)
        assert body["title"] == "请求过多"
        assert body["detail"].startswith("请求过于频繁")
        assert r.headers["content-language"] == "zh-CN"
        body = is_problem(c.get("/readyz", headers=zh), "not-ready", 503)
        assert body["title"] == "服务尚未就绪"
        body = is_problem(c.get("/readyz"), "not-ready", 503)
        assert body["title"] == "Service not ready"


# -- health -------------------------------------------------------------------------------


def failing_probe() -> object:
    raise OSError("connection refused")


def test_healthz_is_always_ok() -> None:
    with TestClient(small_app(probe=failing_probe)) as c:
        r = c.get("/healthz")
    assert r.status_code == 200
    assert r.json() == {"status": "ok"}


def test_readyz_is_ready_when_the_probe_answers(client: TestClient[Litestar]) -> None:
    r = client.get("/readyz")
    assert r.status_code == 200
    assert r.json() == {"status": "ready"}


def test_readyz_is_a_503_problem_when_the_probe_fails() -> None:
    with TestClient(small_app(probe=failing_probe)) as c:
        r = c.get("/readyz")
    body = is_problem(r, "not-ready", 503)
    assert r.headers["retry-after"] == "5"
    assert "OSError" in body["detail"] and "refused" not in body["detail"]


def test_readyz_is_a_503_problem_when_the_probe_hangs() -> None:
    release = threading.Event()

    def hanging() -> object:
        return release.wait(10)

    try:
        with TestClient(small_app(probe=hanging, timeout=0.05)) as c:
            r = c.get("/readyz")
            body = is_problem(r, "not-ready", 503)
            assert "0.05 s" in body["detail"]
            assert c.get("/healthz").status_code == 200
    finally:
        release.set()


def test_readyz_reads_through_the_service(tmp_path: Path) -> None:
    service = build_service(Settings(backend="sqlite", sqlite_path=tmp_path / "ok.sqlite3"))
    try:
        with TestClient(small_app(probe=store_probe(service))) as c:
            assert c.get("/readyz").json() == {"status": "ready"}
    finally:
        service.close()


def test_readyz_is_503_without_the_schema(tmp_path: Path) -> None:
    settings = Settings(
        backend="sqlite", sqlite_path=tmp_path / "bare.sqlite3", create_tables=False
    )
    service = build_service(settings)
    try:
        with TestClient(small_app(probe=store_probe(service))) as c:
            is_problem(c.get("/readyz"), "not-ready", 503)
    finally:
        service.close()


def test_readyz_is_503_when_the_recorder_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    service = GameService({"PERSISTENCE_MODULE": "eventsourcing.popo"})

    def unreachable() -> int:
        raise ConnectionError("store unreachable")

    monkeypatch.setattr(service.recorder, "max_notification_id", unreachable)
    with TestClient(small_app(probe=store_probe(service))) as c:
        is_problem(c.get("/readyz"), "not-ready", 503)


# -- serve --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("environ", "seconds"),
    [({}, 10), ({"SHUTDOWN_TIMEOUT": "30"}, 30), ({"SHUTDOWN_TIMEOUT": " 0 "}, 0)],
)
def test_serve_options(environ: dict[str, str], seconds: int) -> None:
    assert ServeOptions.from_env(environ).shutdown_timeout == seconds


@pytest.mark.parametrize("value", ["soon", "-1", "3601"])
def test_serve_options_refuse_bad_values(value: str) -> None:
    with pytest.raises(SettingsError, match="SHUTDOWN_TIMEOUT"):
        ServeOptions.from_env({"SHUTDOWN_TIMEOUT": value})


def test_serve_exits_2_on_bad_settings(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main({"PORT": "eighty"})
    assert stop.value.code == 2
    assert "PORT" in capsys.readouterr().err


def test_serve_configures_uvicorn_from_the_settings(tmp_path: Path) -> None:
    settings = Settings.from_env(
        {"HOST": "0.0.0.0", "PORT": "8123", "SQLITE_PATH": str(tmp_path / "s.sqlite3")}
    )
    config = uvicorn_config(settings, ServeOptions(shutdown_timeout=7))
    assert (config.host, config.port) == ("0.0.0.0", 8123)
    assert config.timeout_graceful_shutdown == 7
    assert config.access_log is False and config.log_config is None
    assert isinstance(config.app, Litestar)


def test_make_serve_runs_the_entry_point_on_host_and_port() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    recipe = makefile.split("\nserve:", 1)[1].split("\n\n", 1)[0]
    assert "$(STAMP)" in recipe and "-m infra.serve" in recipe
    assert "HOST='$(HOST)'" in recipe and "PORT='$(PORT)'" in recipe
    assert "HOST ?= 127.0.0.1" in makefile and "PORT ?= 8000" in makefile


# -- the real app registers these pieces ----------------------------------------------------


@pytest.fixture
def real_app() -> Iterator[TestClient[Litestar]]:
    from api.app import create_app  # noqa: PLC0415 - the app under test

    with TestClient(create_app(Settings(backend="popo"))) as c:
        yield c


def test_the_app_echoes_request_ids_everywhere(real_app: TestClient[Litestar]) -> None:
    for path in ("/healthz", "/readyz", f"/nowhere/{uuid4()}"):
        assert real_app.get(path, headers={"X-Request-ID": "app-1"}).headers["x-request-id"] == (
            "app-1"
        )


def test_the_app_probes(real_app: TestClient[Litestar]) -> None:
    assert real_app.get("/healthz").json() == {"status": "ok"}
    assert real_app.get("/readyz").json() == {"status": "ready"}


def test_the_app_answers_in_chinese(real_app: TestClient[Litestar]) -> None:
    body = {"level": "2", "trumpSuit": "S", "cards": ["11H"]}
    zh = real_app.post("/v1/rules/shape", json=body, headers={"Accept-Language": "zh-CN"})
    en = real_app.post("/v1/rules/shape", json=body, headers={"Accept-Language": "en"})
    zh_problem = is_problem(zh, "invalid-card", 422)
    en_problem = is_problem(en, "invalid-card", 422)
    assert zh_problem["title"] == "牌面记法无效"
    assert zh_problem["detail"] == detail(
        "invalid-card", en_problem["detail"], chinese=True, rule="R4"
    )
    assert "11H" in zh_problem["detail"] and "R4" in zh_problem["detail"]
    assert en_problem["title"] == "Invalid card notation"


def test_the_app_limits_bodies(real_app: TestClient[Litestar]) -> None:
    r = real_app.post(
        "/v1/rules/shape",
        content=b'{"cards": "' + b"5C " * 100_000 + b'"}',
        headers={"Accept-Language": "zh", "Content-Type": "application/json"},
    )
    body = is_problem(r, "payload-too-large", 413)
    assert body["title"] == "请求体过大"
    assert r.headers["x-request-id"]


def test_the_app_keeps_the_json_logs(logs: io.StringIO) -> None:
    from api.app import create_app  # noqa: PLC0415 - the app under test

    with TestClient(create_app(Settings(backend="popo"))) as c:  # after configure_logging
        c.get("/healthz", headers={"X-Request-ID": "app-log"})
    (line,) = access_lines(logs)
    assert (line["request_id"], line["path"], line["status"]) == ("app-log", "/healthz", 200)


def test_the_app_rate_limits_from_the_settings() -> None:
    from api.app import create_app  # noqa: PLC0415 - the app under test

    settings = Settings.from_env({"PERSISTENCE": "popo", "RATE_LIMIT_PER_MINUTE": "2"})
    assert settings.rate_limit_per_minute == 2
    assert Settings().rate_limit_per_minute == 600
    app = create_app(settings)
    body = {"attackerPoints": 40}
    with TestClient(app) as c:
        assert [c.post("/v1/rules/settle", json=body).status_code for _ in range(2)] == [200, 200]
        r = c.post("/v1/rules/settle", json=body)
        is_problem(r, "rate-limited", 429)
        assert int(r.headers["retry-after"]) >= 1
        assert c.get("/healthz").status_code == 200
    assert app.state.rate_limiter.rejections == 1

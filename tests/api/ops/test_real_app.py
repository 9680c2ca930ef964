"""``api.app.create_app`` registers the operations' pieces: request ids, probes, Chinese
problems, body and rate limits, JSON logs.
"""

from __future__ import annotations

import io
from uuid import uuid4

from litestar import Litestar
from litestar.testing import TestClient

from api.i18n import detail
from infra.bootstrap import build_app
from infra.settings import Settings
from tests.api.ops.small_app import access_lines, is_problem


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
        content=b'{"cards": [' + b'"5C", ' * 100_000 + b'"5C"]}',
        headers={"Accept-Language": "zh", "Content-Type": "application/json"},
    )
    body = is_problem(r, "payload-too-large", 413)
    assert body["title"] == "请求体过大"
    assert r.headers["x-request-id"]


def test_the_app_keeps_the_json_logs(logs: io.StringIO) -> None:
    with TestClient(build_app(Settings(backend="popo"))) as c:  # after configure_logging
        c.get("/healthz", headers={"X-Request-ID": "app-log"})
    (line,) = access_lines(logs)
    assert (line["request_id"], line["path"], line["status"]) == ("app-log", "/healthz", 200)


def test_the_app_rate_limits_from_the_settings() -> None:
    settings = Settings.from_env({"PERSISTENCE": "popo", "RATE_LIMIT_PER_MINUTE": "2"})
    assert settings.rate_limit_per_minute == 2
    assert Settings().rate_limit_per_minute == 600
    app = build_app(settings)
    body = {"attackerPoints": 40}
    with TestClient(app) as c:
        assert [c.post("/v1/rules/settle", json=body).status_code for _ in range(2)] == [200, 200]
        r = c.post("/v1/rules/settle", json=body)
        is_problem(r, "rate-limited", 429)
        assert int(r.headers["retry-after"]) >= 1
        assert c.get("/healthz").status_code == 200
    assert app.state.rate_limiter.rejections == 1

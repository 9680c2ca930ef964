"""The edge of the served app (docs/decisions.md D-edge): one wrapper echoes the request id,
answers ``Allow`` on OPTIONS with every method of the resource (RFC 9110 §10.2.1) and counts
the request; the admission check refuses before the handler, and a refusal keeps its request
id but is not counted as a request (it has its own counter).
"""

from __future__ import annotations

from typing import Any, cast

import httpx
import pytest
from litestar.testing import TestClient

from domain.rules.ruleset import RuleSet
from tests.api.rest import new_service
from tests.api.test_metrics import scrape, value
from tests.apps import make_app
from tests.commands import create_match


def test_options_answers_every_method_of_the_resource_with_the_request_id() -> None:
    with TestClient(make_app(new_service())) as c:
        r = c.options("/v1/matches", headers={"X-Request-ID": "edge-1"})
        assert r.status_code == 204
        assert {m.strip() for m in r.headers["allow"].split(",")} >= {"GET", "POST", "OPTIONS"}
        assert r.headers.get_list("allow") == [r.headers["allow"]]
        assert r.headers["x-request-id"] == "edge-1"


def test_a_refused_request_keeps_its_request_id_and_is_not_counted_as_a_request() -> None:
    with TestClient(make_app(new_service(), rate_limit_per_minute=1)) as c:
        body = {"attackerPoints": 40}
        first = c.post("/v1/rules/settle", json=body, headers={"X-Request-ID": "one"})
        second = c.post("/v1/rules/settle", json=body, headers={"X-Request-ID": "two"})
        assert (first.status_code, second.status_code) == (200, 429)
        assert second.headers["x-request-id"] == "two"
        samples = scrape(c)
    counted = value(
        samples,
        "shengji_http_requests_total",
        method="POST",
        route="/v1/rules/settle",
        status="2xx",
    )
    refused = value(
        samples,
        "shengji_http_requests_total",
        method="POST",
        route="/v1/rules/settle",
        status="4xx",
    )
    assert (counted, refused) == (1, 0)
    assert value(samples, "shengji_rate_limit_rejections_total") == 1


@pytest.mark.anyio
async def test_a_finished_request_leaves_nothing_of_its_handling_in_its_scope() -> None:
    """The server keeps an idle keep-alive connection's last scope until its next request
    (docs/decisions.md D-young): once the answer is sent, the scope's state (the request
    id, Litestar's connection state) is empty."""
    service = new_service()
    match_id = create_match(service, RuleSet())
    app = make_app(service)
    scopes: list[dict[str, Any]] = []

    async def server(scope: Any, receive: Any, send: Any) -> None:
        scopes.append(scope)  # as the server holds it
        await app(scope, receive, send)

    transport = httpx.ASGITransport(app=cast(Any, server))
    async with httpx.AsyncClient(transport=transport, base_url="http://edge") as c:
        r = await c.get(f"/v1/matches/{match_id}", headers={"X-Request-ID": "edge-2"})
    assert r.status_code == 200 and r.headers["x-request-id"] == "edge-2"
    (scope,) = scopes
    assert scope["state"] == {}

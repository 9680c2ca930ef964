"""Prometheus metrics at ``/metrics`` and the 503 ``store-unavailable`` answer (docs/deploy.md:
observability; scale-out and faults).

Apps run on POPO services with a fixed clock and seeds (``tests.api.rest``); each app has
its own registry, so the counts below are exact.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from typing import Any
from uuid import UUID

import psycopg
import pytest
from eventsourcing.persistence import InterfaceError, OperationalError
from litestar import Litestar
from litestar.testing import TestClient
from prometheus_client.parser import text_string_to_metric_families

from api.metrics import COMMANDS, OUTCOMES, Metrics, command_of, outcome_of
from api.problems import PROBLEM_BASE, PROBLEM_MEDIA_TYPE
from domain.game.match import Match
from services.game import GameService
from services.limits import RateLimiter
from tests.api.rest import Table, auth, client, new_service
from tests.apps import make_app
from tests.conftest import FakeClock, FixedSeeds

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def scrape(c: TestClient[Litestar]) -> Samples:
    r = c.get("/metrics")
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/plain; version=0.0.4")
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(r.text)
        for s in family.samples
    }


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


# -- labels: closed sets -----------------------------------------------------------------------

MATCH = "/v1/matches/{match_id}"


@pytest.mark.parametrize(
    ("method", "template", "params", "command"),
    [
        ("POST", "/v1/matches", {}, "create_match"),
        ("POST", "/v1/matches/", {}, "create_match"),
        ("POST", f"{MATCH}/seats/{{seat}}", {"seat": 2}, "take_seat"),
        ("POST", f"{MATCH}/seats/{{seat}}/bot", {"seat": 2}, "seat_bot"),
        ("POST", f"{MATCH}/bots/run", {}, "run_bots"),
        ("POST", f"{MATCH}/finish", {}, "finish_match"),
        ("POST", f"{MATCH}/timeout", {}, "claim_timeout"),
        ("POST", "/v1/tournaments", {}, "create_tournament"),
        ("POST", "/v1/tournaments/{tournament_id}/rounds", {}, "pair_round"),
        ("POST", f"{MATCH}/actions/{{action}}", {"action": "play"}, "play"),  # R22
        ("POST", f"{MATCH}/actions/{{action}}", {"action": "bury"}, "bury"),  # R21
        ("POST", f"{MATCH}/actions/{{action}}", {"action": "x" * 300}, "unknown"),
        ("GET", f"{MATCH}/view", {}, None),
        ("POST", "/v1/rules/trick", {}, None),  # the oracle changes nothing
        ("POST", None, {}, None),  # unrouted
    ],
)
def test_command_of(
    method: str, template: str | None, params: dict[str, Any], command: str | None
) -> None:
    assert command_of(method, template, params) == command
    assert command is None or command in COMMANDS


@pytest.mark.parametrize(
    ("status", "code", "replayed", "outcome"),
    [
        (200, "", False, "ok"),
        (201, "", False, "ok"),
        (200, "", True, "replayed"),
        (409, "version-conflict", False, "conflict"),  # of two conflicting commands, the loser
        (409, "idempotency-in-flight", False, "in-flight"),
        (409, "illegal-follow", False, "refused"),  # R23
        (409, "not-your-turn", False, "refused"),
        (412, "precondition-failed", False, "stale"),
        (422, "invalid-card", False, "invalid"),  # R4
        (401, "unauthorized", False, "unauthorized"),
        (403, "forbidden", False, "forbidden"),
        (404, "not-found", False, "not-found"),
        (413, "payload-too-large", False, "bad-request"),
        (429, "rate-limited", False, "rate-limited"),
        (503, "store-unavailable", False, "unavailable"),
        (500, "internal-error", False, "error"),
        (0, "", False, "aborted"),
    ],
)
def test_outcome_of(status: int, code: str, replayed: bool, outcome: str) -> None:
    assert outcome_of(status, code, replayed) == outcome
    assert outcome in OUTCOMES


# -- the endpoint -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def counted() -> Iterator[tuple[GameService, TestClient[Litestar]]]:
    """One app for the tests that count what their own commands and reads add: each scrapes
    before and after (no bot and no background work of the app counts meanwhile)."""
    service = new_service()
    with client(service) as c:
        yield service, c


def added(before: Samples, after: Samples, name: str, **labels: str) -> float:
    """What ``name`` with ``labels`` grew by between two scrapes."""
    return value(after, name, **labels) - value(before, name, **labels)


def test_metrics_are_text_0_0_4_and_not_in_the_contract(
    counted: tuple[GameService, TestClient[Litestar]],
) -> None:
    _, c = counted
    samples = scrape(c)
    schema = c.get("/schema/openapi.json").json()
    assert "/metrics" not in schema["paths"]
    for name in (
        "shengji_sse_subscribers",
        "shengji_events_replayed_total",
        "shengji_rate_limit_rejections_total",
    ):
        assert (name, ()) in samples, name


def test_commands_are_counted_by_type_and_outcome(
    counted: tuple[GameService, TestClient[Litestar]],
) -> None:
    _, c = counted
    before = scrape(c)
    table = Table.seat_four(c)
    view = table.public()
    seat = view["expected"]["seat"] or 0
    stale = table.act(seat, "pass", [], **{"If-Match": '"1"'})
    assert stale.status_code == 412
    key = {"Idempotency-Key": "k-1"}
    first = table.act(seat, "pass", [], **key)
    again = table.act(seat, "pass", [], **key)
    assert first.status_code == again.status_code == 200
    assert again.headers["idempotent-replayed"] == "true"
    refused = table.act(seat, "pass", [])  # R17: not this seat's turn any more
    assert refused.status_code == 409
    samples = scrape(c)
    text = c.get("/metrics").text
    commands = "shengji_commands_total"
    assert added(before, samples, commands, command="create_match", outcome="ok") == 1
    assert added(before, samples, commands, command="take_seat", outcome="ok") == 4
    assert added(before, samples, commands, command="pass", outcome="stale") == 1
    assert added(before, samples, commands, command="pass", outcome="ok") == 1
    assert added(before, samples, commands, command="pass", outcome="replayed") == 1
    assert added(before, samples, commands, command="pass", outcome="refused") == 1
    latency = "shengji_command_duration_seconds_count"
    assert added(before, samples, latency, command="pass") == 4
    assert added(before, samples, latency, command="take_seat") == 4
    requests = "shengji_http_requests_total"
    view_route = "/v1/matches/{match_id}/public"
    assert added(before, samples, requests, method="GET", route=view_route, status="2xx") == 1
    assert table.match_id not in text  # bounded labels: never a match id
    for token in table.tokens:
        assert token not in text


def test_store_appends_are_timed_by_outcome(
    counted: tuple[GameService, TestClient[Litestar]],
) -> None:
    _, c = counted
    before = scrape(c)
    Table.seat_four(c)
    samples = scrape(c)
    # one save per command: create + four seats (the fourth deals round 1 in its save)
    count = "shengji_store_append_duration_seconds_count"
    assert added(before, samples, count, outcome="ok") == 5
    assert added(before, samples, "shengji_store_append_duration_seconds_sum", outcome="ok") > 0


def test_events_replayed_are_counted(counted: tuple[GameService, TestClient[Litestar]]) -> None:
    service, c = counted
    table = Table.seat_four(c)
    # the lists' follower replays what it has not followed yet, on its own thread, when
    # the load lets it: caught up first, it replays nothing between the two scrapes
    c.app.state.runtime.read_models.freshness.catch_up()
    before = value(scrape(c), "shengji_events_replayed_total")
    match = service.get_match(UUID(table.match_id), version=2)  # R34: rebuilt, not cached
    after = value(scrape(c), "shengji_events_replayed_total")
    assert isinstance(match, Match)
    assert after - before == 2


def test_rate_limit_rejections_are_counted() -> None:
    app = make_app(new_service(), rate_limit_per_minute=1)
    with TestClient(app) as c:
        codes = [c.post("/v1/rules/settle", json={"attackerPoints": 40}).status_code for _ in "ab"]
        assert codes == [200, 429]
        samples = scrape(c)  # /metrics itself is never limited
        assert scrape(c)
    assert value(samples, "shengji_rate_limit_rejections_total") == 1


class _Live:
    streams = 0


def test_sse_subscribers_are_read_at_scrape_time() -> None:
    live = _Live()
    metrics = Metrics(new_service(), live, RateLimiter(0))
    live.streams = 3
    assert b"shengji_sse_subscribers 3.0" in metrics.render()
    live.streams = 0
    assert b"shengji_sse_subscribers 0.0" in metrics.render()


def test_every_app_has_its_own_registry() -> None:
    service = new_service()
    with client(service) as one, client(service) as two:
        one.post("/v1/matches", json={"name": "a"})
        assert value(scrape(one), "shengji_commands_total", command="create_match", outcome="ok")
        assert not value(
            scrape(two), "shengji_commands_total", command="create_match", outcome="ok"
        )


# -- the store is down: 503 store-unavailable with Retry-After ------------------------------


class DownService(GameService):
    """A service whose store fails the way PostgreSQL's does while it is down."""

    error: Exception = OperationalError("connection refused")

    def get_match(
        self, match_id: UUID, version: int | None = None, *, read_only: bool = False
    ) -> Match:
        raise self.error


def down_service(error: Exception) -> DownService:
    service = DownService(
        {"PERSISTENCE_MODULE": "eventsourcing.popo"}, clock=FakeClock(), seeds=FixedSeeds()
    )
    service.error = error
    return service


@pytest.fixture(scope="module")
def down() -> Iterator[tuple[DownService, TestClient[Litestar]]]:
    """One app on a store that is down: each test names how it fails (``service.error``);
    nothing can be saved, so no test leaves anything for another."""
    service = down_service(OperationalError("connection refused"))
    with client(service) as c:
        yield service, c


@pytest.mark.parametrize(
    "error",
    [
        OperationalError("connection refused"),
        InterfaceError("the connection is closed"),
        psycopg.OperationalError("server closed the connection unexpectedly"),
        psycopg.InterfaceError("connection already closed"),
    ],
    ids=["es-operational", "es-interface", "pg-operational", "pg-interface"],
)
@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/v1/matches/{id}/public"),
        ("POST", "/v1/matches/{id}/actions/pass"),
        ("POST", "/v1/matches/{id}/seats/0"),
    ],
)
def test_an_unreachable_store_is_503_with_retry_after(
    down: tuple[DownService, TestClient[Litestar]], error: Exception, method: str, path: str
) -> None:
    match_id = "12345678-1234-5678-1234-567812345678"
    service, c = down
    service.error = error
    command = "pass" if "actions" in path else "take_seat"
    counted = ("shengji_commands_total", {"command": command, "outcome": "unavailable"})
    before = value(scrape(c), counted[0], **counted[1])  # the app is shared: count this one
    r = c.request(
        method,
        path.format(id=match_id),
        json={"name": "p"} if "seats" in path else {},
        headers={**auth("s.x.y"), "Idempotency-Key": "k"} if method == "POST" else {},
    )
    samples = scrape(c)
    assert r.status_code == 503, r.text
    assert r.headers["content-type"].startswith(PROBLEM_MEDIA_TYPE)
    assert int(r.headers["retry-after"]) >= 1
    body = r.json()
    assert body["type"] == PROBLEM_BASE + "store-unavailable"
    assert body["code"] == "store-unavailable" and body["status"] == 503
    assert "Idempotency-Key" in body["detail"]
    if method == "POST":
        assert value(samples, counted[0], **counted[1]) == before + 1


def test_store_unavailable_in_chinese(down: tuple[DownService, TestClient[Litestar]]) -> None:
    service, c = down
    service.error = OperationalError("down")
    r = c.get(
        "/v1/matches/12345678-1234-5678-1234-567812345678/public",
        headers={"Accept-Language": "zh-CN"},
    )
    assert r.status_code == 503
    assert r.json()["title"] == "存储暂时不可用"
    assert r.headers["content-language"] == "zh-CN"


def test_an_outage_is_logged_with_the_request_id_and_no_traceback(
    down: tuple[DownService, TestClient[Litestar]], logs: io.StringIO
) -> None:
    service, c = down
    service.error = OperationalError("connection refused")
    r = c.get(
        "/v1/matches/12345678-1234-5678-1234-567812345678/public",
        headers={"X-Request-ID": "outage-1"},
    )
    assert r.status_code == 503 and r.headers["x-request-id"] == "outage-1"
    records = [json.loads(line) for line in logs.getvalue().splitlines() if line.strip()]
    (warning,) = [x for x in records if x.get("logger") == "api.unavailable"]
    assert warning["request_id"] == "outage-1" and warning["level"] == "warning"
    assert "exception" not in warning  # an outage is a state, not a bug: no traceback
    (access,) = [x for x in records if x.get("logger") == "api.access"]
    assert (access["request_id"], access["status"]) == ("outage-1", 503)

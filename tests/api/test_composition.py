"""One composition root (``infra.bootstrap``): the app is built from one settings object,
takes its parts, builds no OpenAPI document, and closes only what the root opened.

The OpenAPI document is built on first use, once per process: the first request to a
``/schema`` page (every page serves the completed document) or ``openapi_document``.
"""

from __future__ import annotations

from pathlib import Path
from uuid import uuid4

import pytest
from litestar.testing import TestClient

import api.openapi
from api.openapi import openapi_document
from infra.bootstrap import build_app, build_parts
from infra.settings import Settings
from infra.workers import Workers
from services.accounts.commands import SignInWithOidc
from services.game import GameService
from services.timers import ClaimTimeout
from tests.apps import TEST_SETTINGS, make_app
from tests.documents import repository_yaml
from tests.resilience.harness import drop_schema, fresh_schema

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the completions of the document, with the process's copy forgotten."""
    done: list[int] = []
    complete = api.openapi.complete_document

    def counted(*args: object, **kwargs: object) -> None:
        done.append(1)
        complete(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(api.openapi, "complete_document", counted)
    monkeypatch.setattr(api.openapi, "_documents", {})
    return done


def test_building_an_app_builds_no_document(builds: list[int]) -> None:
    apps = [make_app() for _ in range(3)]
    assert builds == []
    with TestClient(apps[0]) as one, TestClient(apps[1]) as two:
        assert builds == []  # nor does starting it
        served = one.get("/schema/openapi.json")
        assert builds == [1]
        again = two.get("/schema/openapi.json")
        assert one.get("/schema/openapi.yaml").status_code == 200
        assert one.get("/schema").status_code == 200  # the interactive docs
    assert builds == [1]  # once per process, shared by every app
    assert served.json() == again.json() == openapi_document(apps[2])
    assert builds == [1]
    checked_in = repository_yaml("openapi.yaml")
    assert served.json() == checked_in


def test_the_app_is_built_from_the_settings() -> None:
    settings = Settings(
        backend="popo",
        rate_limit_per_minute=7,
        sweep_interval_ms=250,
        timeout_bot="random",
        operator_token="operator-token-0123456789",
        oidc_issuer="https://id.example/",
        oidc_audience="shengji",
        oidc_jwks_url="https://id.example/jwks",
        webhook_interval_ms=0,
    )
    parts = build_parts(settings)
    assert parts.rate_limiter.per_minute == 7
    assert [q.setting for q in parts.allowances] == [
        "MATCH_QUOTA_PER_HOUR",  # the bus's (docs/decisions.md D-bounded)
        "EXPORT_QUOTA_PER_HOUR",  # the exports'
    ]
    assert [q.limiter.limit for q in parts.allowances] == [60, 30]
    assert parts.exports.slots.limit == 2 and parts.bots.bot_time.limit == 600_000
    assert [q.setting for q in parts.quotas] == [
        "TOURNAMENT_QUOTA_PER_HOUR",
        "IMPORT_QUOTA_PER_HOUR",
        "PLAYER_QUOTA_PER_HOUR",
        "SESSION_QUOTA_PER_HOUR",
        "FRIEND_REQUEST_QUOTA_PER_HOUR",  # docs/decisions.md D-social
    ]
    assert set(parts.caps.per_kind.values()) == {8} and parts.caps.per_address == 32
    workers = parts.background
    assert isinstance(workers, Workers)  # an ``all`` process runs the background work
    periods = {loop.name: loop.period_s for loop in workers.loops}
    assert periods == {
        "sweeper": 0.25,
        "tournament-clerk": 0.25,
        "tournament-results": 0.25,
        "lobby-sweeper": 0.25,
        "rating-notices": 0.25,  # docs/decisions.md D-career
        "read-models": 2.0,  # the lists, ratings, career, social: one pass (D-follow)
    }  # WEBHOOK_INTERVAL_MS=0: no outbox loop
    assert {loop.pace_s for loop in workers.loops} == {0.0}  # WORKER_PACE_MS: a worker's only
    assert workers.crews == (parts.bots,)
    assert getattr(parts.runtime.bus.handler(ClaimTimeout(uuid4())), "kind", None) == "random"
    assert parts.webhooks.operator.configured
    assert getattr(parts.runtime.bus.handler(SignInWithOidc("t")), "verifier", None) is not None
    # built here, closed here: the service and the outbox's store
    assert parts.on_shutdown == (parts.runtime.service.close, parts.webhooks.delivery.close)
    off = build_parts(TEST_SETTINGS)
    assert off.rate_limiter.per_minute == 0 and off.quotas == ()
    assert not off.caps.enabled
    assert isinstance(off.background, Workers)
    assert [loop.name for loop in off.background.loops] == ["read-models"]
    assert getattr(off.runtime.bus.handler(SignInWithOidc("t")), "verifier", 0) is None
    assert not off.webhooks.operator.configured


def test_each_role_runs_what_it_says() -> None:
    """``all``: the API and the background work; ``worker``: no API app at all
    (``infra.worker``)."""
    worker = Settings(
        backend="postgres", database_url="postgresql://u:p@127.0.0.1:9/db", process_role="worker"
    )
    with pytest.raises(ValueError, match="a worker process builds no API app"):
        build_parts(worker)  # refused before anything is built (nothing is reached)


def test_a_given_service_stays_open_after_the_app() -> None:
    closed: list[str] = []
    service = GameService(
        {"PERSISTENCE_MODULE": "eventsourcing.popo"}, on_close=(lambda: closed.append("given"),)
    )
    with TestClient(build_app(TEST_SETTINGS, service=service)):
        pass
    assert closed == []
    service.close()
    assert closed == ["given"]
    parts = build_parts(TEST_SETTINGS)
    assert parts.runtime.service.close in parts.on_shutdown  # built here, closed here


def test_an_api_process_on_postgres_tells_no_view_tags_of_its_saves(pg_url: str) -> None:
    """Other processes write a PostgreSQL store too, so the view tags are off there and no
    save tells them (a lock and a count per save, kept for every match, for nothing:
    docs/decisions.md D-bus2); on the embedded store every save does."""
    schema = fresh_schema(pg_url)
    try:
        settings = Settings(
            backend="postgres", database_url=pg_url, postgres_schema=schema, process_role="api"
        )
        parts = build_parts(settings)
        try:
            tags = parts.runtime.tags
            assert not tags.enabled
            assert tags.changed not in parts.runtime.service.saves.changed
        finally:
            for close in parts.on_shutdown:
                close()
    finally:
        drop_schema(pg_url, schema)
    kept = build_parts(TEST_SETTINGS)
    assert kept.runtime.tags.enabled
    assert kept.runtime.tags.changed in kept.runtime.service.saves.changed

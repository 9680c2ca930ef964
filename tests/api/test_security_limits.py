"""Limits that cannot be dodged (docs/security.md): requests are counted by a
*verified* identity (a seat or organiser token that authenticates for its match or
tournament), else by the client's address; creating matches and tournaments and importing
records have quotas of their own; live streams are capped per identity and per address;
a ``Last-Event-ID`` beyond the match's version is a 422 problem, never silence.

Every refusal is problem+json: 429 ``rate-limited`` / ``quota-exceeded`` /
``too-many-streams`` with ``Retry-After``, 422 ``last-event-id-ahead``.
"""

from __future__ import annotations

import asyncio
import uuid
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
from litestar import Litestar

from infra.settings import Settings
from services.game import GameService
from tests.api.sse_driver import stream
from tests.apps import make_app
from tests.conftest import FakeClock

PROBLEM = "application/problem+json"

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def new_app(**limits: Any) -> Litestar:
    settings = Settings(backend="popo", sweep_interval_ms=0, webhook_interval_ms=0, **limits)
    service = GameService({"PERSISTENCE_MODULE": "eventsourcing.popo"}, clock=FakeClock())
    return make_app(service, settings=settings)


@asynccontextmanager
async def client(app: Litestar, address: str = "198.51.100.7") -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=app, client=(address, 50000))  # type: ignore[arg-type]
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as c:
        yield c


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def refused(r: httpx.Response, code: str, status: int = 429) -> dict[str, Any]:
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith(PROBLEM)
    body: dict[str, Any] = r.json()
    assert body["code"] == code, body
    if status == 429:
        assert int(r.headers["retry-after"]) >= 1
    return body


def statuses(responses: list[httpx.Response]) -> Counter[int]:
    return Counter(r.status_code for r in responses)


# -- 1. the rate limit counts verified identities, else the address ---------------------------


async def test_made_up_tokens_are_counted_under_the_address() -> None:
    """The issue's first finding: a fresh `Bearer junk<uuid>` each time dodged the limit."""
    app = new_app(rate_limit_per_minute=20)
    async with app.lifespan(), client(app) as c:
        answers = [
            await c.get("/v1/matches", headers=bearer(f"junk{uuid.uuid4()}")) for _ in range(30)
        ]
    assert statuses(answers) == {200: 20, 429: 10}
    refused(answers[-1], "rate-limited")


async def test_forged_tokens_naming_a_real_match_are_counted_under_the_address() -> None:
    """A well-formed token of a real match whose secret is wrong verifies as nothing."""
    app = new_app(rate_limit_per_minute=10)
    async with app.lifespan(), client(app) as c:
        match_id = (await c.post("/v1/matches", json={})).json()["matchId"]
        hexid = uuid.UUID(match_id).hex
        answers = [
            await c.get("/v1/matches", headers=bearer(f"o.{hexid}.forged{i:026d}"))
            for i in range(12)
        ]
        assert statuses(answers) == {200: 9, 429: 3}
        # and wherever the token is checked it is refused 401
        r = await c.post(
            f"/v1/matches/{match_id}/finish", json={}, headers=bearer(f"o.{hexid}.{'x' * 32}")
        )
        assert r.status_code in (401, 429)


async def test_a_verified_token_has_its_own_bucket() -> None:
    app = new_app(rate_limit_per_minute=5)
    async with app.lifespan(), client(app) as c:
        made = (await c.post("/v1/matches", json={})).json()
        organiser = made["organiserToken"]
        seat = (await c.post(f"/v1/matches/{made['matchId']}/seats/0", json={"name": "a"})).json()
        anonymous = [await c.get("/v1/matches") for _ in range(4)]
        assert statuses(anonymous) == {200: 3, 429: 1}  # 2 POSTs + 3 GETs from the address
        for token in (organiser, seat["token"]):
            mine = [await c.get("/v1/matches", headers=bearer(token)) for _ in range(6)]
            assert statuses(mine) == {200: 5, 429: 1}


# -- 1. quotas: creating matches and tournaments, importing records ---------------------------


TOURNAMENT = {
    "name": "cup",
    "format": "round_robin",
    "matchLength": 1,
    "teams": [
        {"name": f"t{i}", "players": [{"name": "a", "kind": "random"}, {"name": "b"}]}
        for i in range(2)
    ],
}


@pytest.mark.parametrize(
    ("setting", "path", "body", "ok"),
    [
        ("match_quota_per_hour", "/v1/matches", {}, 201),
        ("tournament_quota_per_hour", "/v1/tournaments", TOURNAMENT, 201),
        ("import_quota_per_hour", "/v1/records", {"format": "nonsense"}, 422),
    ],
)
async def test_creating_has_its_own_quota_that_tokens_do_not_dodge(
    setting: str, path: str, body: dict[str, Any], ok: int
) -> None:
    app = new_app(rate_limit_per_minute=600, **{setting: 3})
    async with app.lifespan(), client(app) as c:
        made = [await c.post(path, json=body) for _ in range(3)]
        assert [r.status_code for r in made] == [ok] * 3, made[-1].text
        problem = refused(await c.post(path, json=body), "quota-exceeded")
        assert "an hour" in problem["detail"]
        assert int((await c.post(path, json=body)).headers["retry-after"]) > 60
        # neither made-up tokens nor tokens this quota minted buy more of it
        for token in (f"junk{uuid.uuid4()}", *minted(made)):
            refused(await c.post(path, json=body, headers=bearer(token)), "quota-exceeded")
        # another address has its own quota; reads are not counted against it
        assert (await c.get("/v1/matches")).status_code == 200
        async with client(app, "203.0.113.9") as other:
            assert (await other.post(path, json=body)).status_code == ok


def minted(answers: list[httpx.Response]) -> list[str]:
    return [
        r.json()["organiserToken"] for r in answers if "organiserToken" in r.text and r.is_success
    ]


async def test_limits_are_off_with_the_rate_limit_off() -> None:
    """RATE_LIMIT_PER_MINUTE=0 (benchmarks, the contract run) turns every limit off."""
    app = new_app(rate_limit_per_minute=0, match_quota_per_hour=1, sse_max_per_address=1)
    async with app.lifespan(), client(app) as c:
        assert [(await c.post("/v1/matches", json={})).status_code for _ in range(3)] == [201] * 3


# -- 5. live streams are capped per verified identity and per address ------------------------


async def seated(c: httpx.AsyncClient) -> tuple[str, list[str]]:
    made = (await c.post("/v1/matches", json={})).json()
    url = f"/v1/matches/{made['matchId']}"
    tokens = [
        (await c.post(f"{url}/seats/{s}", json={"name": f"p{s}"})).json()["token"] for s in range(4)
    ]
    return url, tokens


async def test_streams_beyond_the_cap_are_refused_and_counted() -> None:
    app = new_app(sse_max_per_address=2, sse_max_per_identity=1)
    async with app.lifespan(), client(app, "127.0.0.1") as c:
        url, tokens = await seated(c)
        path = f"{url}/stream"
        async with stream(app, path) as one, stream(app, path) as two:
            assert (one.status, two.status) == (200, 200)
            async with stream(app, path) as third:
                assert third.status == 429
                assert third.headers["content-type"].startswith(PROBLEM)
                assert int(third.headers["retry-after"]) >= 1
                assert b'"too-many-streams"' in third.body
            # a made-up token is counted under the address too
            async with stream(app, path, bearer(f"junk{uuid.uuid4()}")) as junk:
                assert junk.status == 429
            # a seat's verified token has its own cap, whichever way it is sent
            async with stream(app, path, bearer(tokens[0])) as seat:
                assert seat.status == 200
                async with stream(app, f"{path}?token={tokens[0]}") as again:
                    assert again.status == 429
                async with stream(app, path, bearer(tokens[1])) as other_seat:
                    assert other_seat.status == 200
        # closed streams free their places
        async with stream(app, path) as later:
            assert later.status == 200
        metrics = (await c.get("/metrics")).text
    assert 'shengji_sse_refusals_total{limit="address"} 2.0' in metrics
    assert 'shengji_sse_refusals_total{limit="identity"} 1.0' in metrics


# -- 6. a Last-Event-ID beyond the match's version ---------------------------------------------


@pytest.mark.parametrize("how", ["header", "query"])
async def test_a_last_event_id_beyond_the_version_is_a_422_problem(how: str) -> None:
    app = new_app(rate_limit_per_minute=0)
    async with app.lifespan(), client(app, "127.0.0.1") as c:
        url, _ = await seated(c)
        version = (await c.get(url)).json()["version"]
        ahead = version + 5
        headers = {"Last-Event-ID": str(ahead)} if how == "header" else {}
        query = f"?lastEventId={ahead}" if how == "query" else ""
        async with stream(app, f"{url}/stream{query}", headers) as s:
            assert s.status == 422
            assert s.headers["content-type"].startswith(PROBLEM)
            assert b'"last-event-id-ahead"' in s.body
            assert str(version).encode() in s.body
        async with stream(app, f"{url}/stream", {"Last-Event-ID": str(version)}) as s:
            assert s.status == 200
            await asyncio.wait_for(s.next(), 5)  # the retry hint; no frame is repeated

"""Every match any route makes is charged to the caller's match quota (docs/decisions.md
D-bounded): the bus charges what a command's unit of work creates (a tournament round's
tables, a match, a rematch, an imported record's match) or what the command says it
makes later (a quick-play ticket), to the caller's address and verified identity.

The finding: one anonymous 64-team tournament and a loop of ``POST …/rounds`` and
``POST …/rounds/1/cancel`` made 192 matches in 4 s, bounded only by the request rate.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from eventsourcing.utils import get_topic
from litestar import Litestar

from domain.game.match_events import MatchCreated
from services.game import GameService
from tests.api.limits import client_at, limited_app
from tests.api.rest import auth

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


def bots_cup(teams: int) -> dict[str, Any]:
    """A tournament of ``teams`` teams of two random bots (``teams // 2`` tables a round)."""
    return {
        "name": "bots cup",
        "format": "swiss",
        "swissRounds": 1,
        "matchLength": 1,
        "teams": [
            {
                "name": f"t{i}",
                "players": [{"name": "a", "kind": "random"}, {"name": "b", "kind": "random"}],
            }
            for i in range(teams)
        ],
    }


def matches_in(app: Litestar) -> int:
    """The matches the store holds (``MatchCreated`` events of the log)."""
    service: GameService = app.state.runtime.service
    found = service.recorder.select_notifications(0, 100_000, topics=[get_topic(MatchCreated)])
    return len(found)


def refused(r: httpx.Response) -> None:
    assert r.status_code == 429, r.text
    assert r.json()["code"] == "quota-exceeded", r.text
    assert "MATCH_QUOTA_PER_HOUR" in r.json()["detail"]
    assert int(r.headers["retry-after"]) >= 1


async def schedule_and_cancel(c: httpx.AsyncClient, url: str, token: str, loops: int) -> list[int]:
    """The finding's loop: schedule round 1, cancel it, again; the statuses of the
    schedulings."""
    statuses = []
    for _ in range(loops):
        r = await c.post(f"{url}/rounds", headers=auth(token))
        statuses.append(r.status_code)
        if r.status_code != 201:
            refused(r)
            continue
        cancel = {"reason": "again", "by": "TD"}
        r = await c.post(f"{url}/rounds/1/cancel", json=cancel, headers=auth(token))
        assert r.status_code == 200, r.text
    return statuses


async def test_a_schedule_and_cancel_loop_is_bounded_by_the_match_quota() -> None:
    """8 teams, 4 tables a round, a quota of 10: two schedulings (8 matches), then 429;
    the quota is the same one ``POST /v1/matches`` spends."""
    app = limited_app(rate_limit_per_minute=10_000, match_quota_per_hour=10)
    async with app.lifespan(), client_at(app) as c:
        made = (await c.post("/v1/tournaments", json=bots_cup(8))).json()
        url, token = f"/v1/tournaments/{made['tournamentId']}", made["organiserToken"]
        assert await schedule_and_cancel(c, url, token, 5) == [201, 201, 429, 429, 429]
        assert matches_in(app) == 8
        assert (await c.post("/v1/matches", json={})).status_code == 201
        assert (await c.post("/v1/matches", json={})).status_code == 201
        refused(await c.post("/v1/matches", json={}))
        assert matches_in(app) == 10


async def test_a_round_larger_than_the_quota_is_refused_whole() -> None:
    """32 tables against a quota of 20: nothing of the round is saved."""
    app = limited_app(rate_limit_per_minute=10_000, match_quota_per_hour=20)
    async with app.lifespan(), client_at(app) as c:
        made = (await c.post("/v1/tournaments", json=bots_cup(64))).json()
        url, token = f"/v1/tournaments/{made['tournamentId']}", made["organiserToken"]
        r = await c.post(f"{url}/rounds", headers=auth(token))
        refused(r)
        assert "32 more matches created are more than MATCH_QUOTA_PER_HOUR" in r.json()["detail"]
        assert matches_in(app) == 0
        assert (await c.get(url)).json()["rounds"] == []


async def test_the_quota_follows_the_address_whatever_token_schedules() -> None:
    """Two tournaments from one address share its quota: a new organiser token buys no
    matches of its own."""
    app = limited_app(rate_limit_per_minute=10_000, match_quota_per_hour=6)
    async with app.lifespan(), client_at(app) as c:
        statuses = []
        for _ in range(3):
            made = (await c.post("/v1/tournaments", json=bots_cup(4))).json()
            url, token = f"/v1/tournaments/{made['tournamentId']}", made["organiserToken"]
            statuses += await schedule_and_cancel(c, url, token, 2)
        assert statuses == [201, 201, 201, 429, 429, 429]
        assert matches_in(app) == 6
    async with app.lifespan(), client_at(app, "203.0.113.9") as other:
        assert (await other.post("/v1/matches", json={})).status_code == 201


async def test_a_rematch_and_an_imported_record_spend_the_match_quota() -> None:
    """Each makes a match, as ``POST /v1/matches`` does."""
    app = limited_app(rate_limit_per_minute=10_000, match_quota_per_hour=3)
    async with app.lifespan(), client_at(app) as c:
        made = (await c.post("/v1/matches", json={})).json()  # 1
        org = auth(made["organiserToken"])
        url = f"/v1/matches/{made['matchId']}"
        assert (await c.post(f"{url}/finish", json={}, headers=org)).status_code == 200
        assert (await c.post(f"{url}/rematch", headers=org)).status_code == 201  # 2
        record = (await c.get(f"{url}/record")).content
        json = {"content-type": "application/json"}
        stored = await c.post("/v1/records?store=true", content=record, headers=json)
        assert stored.status_code == 201, stored.text  # 3
        refused(await c.post("/v1/matches", json={}))
        assert matches_in(app) == 3


async def test_a_refused_command_makes_nothing_and_spends_nothing() -> None:
    """A rematch of a match that goes on is refused (409): it makes no match, so it
    spends none of the quota."""
    app = limited_app(rate_limit_per_minute=10_000, match_quota_per_hour=2)
    async with app.lifespan(), client_at(app) as c:
        made = (await c.post("/v1/matches", json={})).json()  # 1
        org = auth(made["organiserToken"])
        url = f"/v1/matches/{made['matchId']}"
        for _ in range(3):
            early = await c.post(f"{url}/rematch", headers=org)
            assert (early.status_code, early.json()["code"]) == (409, "match-not-finished")
        assert (await c.post(f"{url}/finish", json={}, headers=org)).status_code == 200
        assert (await c.post(f"{url}/rematch", headers=org)).status_code == 201  # 2
        refused(await c.post("/v1/matches", json={}))

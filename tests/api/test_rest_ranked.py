"""Ranked quick play through the served API (docs/players.md "Ranked quick play"): four
players queue on every store (POPO, SQLite, PostgreSQL), the match made is ranked, played
to its end and rated on the family's board; a guest is refused with a problem; a ticket
shows its window and the stream reports its widening; casual tickets stay as they were."""

from __future__ import annotations

from datetime import timedelta
from uuid import UUID

import msgspec
import pytest
from litestar import Litestar
from litestar.testing import TestClient

from infra.store import build_service
from tests.api.rest import Json, auth, client, new_service
from tests.api.sse_driver import stream
from tests.api.test_rest_players import new_player
from tests.apps import make_app, served
from tests.conftest import Backend
from tests.ratings.population import play_out


def ranked(c: TestClient[Litestar], token: str, status: int = 201, **body: object) -> Json:
    r = c.post("/v1/lobby/ranked", json=body or None, headers=auth(token))
    assert r.status_code == status, r.text
    assert r.headers["location"] == f"/v1/lobby/tickets/{r.json()['ticketId']}"
    found: Json = r.json()
    return found


def test_four_players_play_a_ranked_match_end_to_end(backend: Backend) -> None:
    settings = msgspec.structs.replace(
        backend.settings,
        rate_limit_per_minute=0,
        sweep_interval_ms=0,
        webhook_interval_ms=0,
        quick_play_rounds=1,
    )
    service = build_service(settings, clock=backend.clock, seeds=backend.seeds)
    try:
        with TestClient(make_app(service, settings=settings)) as c:
            players = [new_player(c, f"r{i}") for i in range(4)]
            tickets = [ranked(c, p["token"], family="standard") for p in players]
            assert [t["status"] for t in tickets] == ["waiting"] * 3 + ["matched"]
            assert tickets[0]["ranked"]["rating"] == 1500
            assert tickets[0]["ranked"]["window"]["width"] == 150  # provisional: wider
            again = ranked(c, players[0]["token"], status=200)  # a double tap
            assert again["ticketId"] == tickets[0]["ticketId"]
            assert again["status"] == "matched" and again["ranked"]["window"] is None
            match_id = again["matchId"]
            assert match_id == tickets[3]["matchId"]
            summary = c.get(f"/v1/matches/{match_id}").json()
            assert sorted(s["name"] for s in summary["seats"]) == ["r0", "r1", "r2", "r3"]
            assert service.get_match(UUID(match_id)).ranked
            play_out(service, backend.clock, UUID(match_id))
            # the ratings follow the log on their own thread, a read waits 1 s for them: on
            # a loaded machine they are further behind, so the test waits for them (bounded)
            target = service.recorder.max_notification_id() or 0
            followed = c.app.state.runtime.rating_models.freshness.reach(target, timeout=60)
            assert followed, "the ratings did not follow the log within 60 s"
            board = c.get("/v1/leaderboards/standard", params={"provisional": "true"}).json()
            entries = {e["playerId"]: e for e in board["entries"]}
            assert set(entries) == {p["playerId"] for p in players}
            assert {e["matches"] for e in entries.values()} == {1}
            # rated: the next ticket queues with the new rating
            p0 = players[0]
            now = c.get(f"/v1/players/{p0['playerId']}/ratings").json()["ratings"][0]
            assert ranked(c, p0["token"])["ranked"]["rating"] == now["rating"]
    finally:
        service.close()


def test_a_guest_is_refused_with_a_problem(c: TestClient[Litestar]) -> None:
    r = c.post("/v1/lobby/ranked", json={})
    assert (r.status_code, r.json()["code"]) == (401, "unauthorized")  # no token at all
    made = c.post("/v1/matches", json={}).json()
    seat = c.post(f"/v1/matches/{made['matchId']}/seats/0", json={"name": "guest"}).json()
    for token in (seat["token"], made["organiserToken"]):  # a guest's, an organiser's
        for language in ("en", "zh-CN"):
            headers = {**auth(token), "Accept-Language": language}
            r = c.post("/v1/lobby/ranked", json={}, headers=headers)
            assert (r.status_code, r.json()["code"]) == (403, "account-required")
            assert r.headers["content-type"].startswith("application/problem+json")
            assert r.headers["content-language"] == language
    mei = new_player(c)
    r = c.post("/v1/lobby/ranked", json={"family": "bridge"}, headers=auth(mei["token"]))
    assert (r.status_code, r.json()["code"]) == (422, "validation-failed")


def test_the_ticket_shows_its_window_as_it_widens() -> None:
    service = new_service()
    with client(service) as c:
        low, high = new_player(c, "low"), new_player(c, "high")
        first = ranked(c, low["token"])
        window = first["ranked"]["window"]
        assert (window["low"], window["high"], window["width"]) == (1350, 1650, 150)
        ranked(c, high["token"])
        service.clock.advance(timedelta(seconds=25))  # type: ignore[attr-defined]
        url = f"/v1/lobby/tickets/{first['ticketId']}"
        read = c.get(url, headers=auth(low["token"])).json()
        assert read["ranked"]["window"]["width"] == 200  # two steps of 25
        assert read["status"] == "waiting"
        assert c.get(url, headers=auth(low["token"])).json() == read  # the same moment


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_the_ticket_stream_reports_widening() -> None:
    service = new_service()
    async with served(service) as (app, c):
        made = await c.post("/v1/players", json={"displayName": "Mei"})
        token = made.json()["token"]
        first = await c.post("/v1/lobby/ranked", json={}, headers=auth(token))
        url = f"/v1/lobby/tickets/{first.json()['ticketId']}"
        async with stream(app, f"{url}/stream", auth(token)) as s:
            ticket = await s.next()
            while ticket is not None and ticket.event != "ticket":
                ticket = await s.next()
            assert ticket is not None and ticket.id == 1
            service.clock.advance(timedelta(seconds=10))  # type: ignore[attr-defined]
            widened = await s.next()
            while widened is not None and widened.event != "widened":
                widened = await s.next()
            assert widened is not None and widened.id is None  # no version: not resumable
            assert widened.json()["ranked"]["window"]["width"] == 175
            await c.delete(url, headers=auth(token))
            rest = []
            while (ev := await s.next()) is not None:
                rest.append(ev)
        kinds = [ev.event for ev in rest if ev.event is not None]
        assert kinds == ["ticket"] and rest[-1].json()["status"] == "cancelled"


def test_casual_tickets_are_as_they_were(c: TestClient[Litestar]) -> None:
    mei = new_player(c)
    r = c.post("/v1/lobby/tickets", json=None, headers=auth(mei["token"]))
    assert r.status_code == 201 and r.json()["ranked"] is None
    other = c.post("/v1/lobby/ranked", json=None, headers=auth(mei["token"]))
    assert (other.status_code, other.json()["code"]) == (409, "already-queued")

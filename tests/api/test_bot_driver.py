"""Bots move off the request path (docs/decisions.md D-bot-driver): a person's command is
answered as soon as the person's own move is saved — its version is the person's own — and
the bots' replies follow on the live stream as frames of their own; seating four ``strong``
bots runs no bot search in the request; a bots-only match ends by itself.

Every bot decision is recorded with the thread it ran on: none runs on a request's."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest

from services.bot_driver import BotDriver
from services.game import GameService
from tests.api.rest import auth, bots_match, choose, client, settle
from tests.api.sse_driver import Event, stream
from tests.apps import make_app
from tests.commands import bus_of
from tests.conftest import FakeClock, FixedSeeds
from tests.driving import Decisions, record_decisions

DECISION_CPU_S = 0.05
"""The strong bots here search at most this much CPU a decision (the tests' time)."""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def decisions(monkeypatch: pytest.MonkeyPatch) -> Decisions:
    """Every bot decision (``services.bots.next_move``), by the thread it ran on."""
    return record_decisions(monkeypatch)


def new_service() -> GameService:
    return GameService(
        {"PERSISTENCE_MODULE": "eventsourcing.popo"}, clock=FakeClock(), seeds=FixedSeeds(5)
    )


@asynccontextmanager
async def served(service: GameService) -> AsyncIterator[tuple[Any, httpx.AsyncClient]]:
    driver = BotDriver(bus_of(service), decision_cpu_s=DECISION_CPU_S)
    app = make_app(service, bots=driver)
    transport = httpx.ASGITransport(app=app)  # type: ignore[arg-type]
    async with app.lifespan(), httpx.AsyncClient(transport=transport, base_url="http://t") as c:
        yield app, c
    service.close()


async def idle(app: Any) -> None:
    assert await anyio.to_thread.run_sync(app.state.bots.idle, 120.0), "the driver is busy"


@pytest.mark.anyio
async def test_a_persons_play_is_answered_before_any_bot_decision_and_frames_follow(
    decisions: Decisions,
) -> None:
    async with served(new_service()) as (app, c), AsyncExitStack() as stack:
        made = (await c.post("/v1/matches", json={"name": "me and three strong bots"})).json()
        url = f"/v1/matches/{made['matchId']}"
        me = auth((await c.post(f"{url}/seats/0", json={"name": "me"})).json()["token"])
        for seat in (1, 2, 3):
            r = await c.post(
                f"{url}/seats/{seat}/bot",
                json={"kind": "strong"},
                headers=auth(made["organiserToken"]),
            )
            assert r.status_code == 201, r.text
        # the bidding, the burial and my plays, until it is my play with a bot still to play
        # in the trick after me (R22, R23): the strong bots' search has a CPU budget, so who
        # leads the first trick changes with the machine's load, and a play that ends a trick
        # I win leaves the bots waiting for me
        for _ in range(100):
            await idle(app)
            view = (await c.get(f"{url}/view", headers=me)).json()
            choice = choose(view)
            assert choice is not None, view["expected"]
            if choice[0] == "play" and len(view["trick"]) < 3:
                break
            r = await c.post(f"{url}/actions/{choice[0]}", json={"cards": choice[1]}, headers=me)
            assert r.status_code == 200, r.text
        else:
            raise AssertionError("never my turn to play before a bot")
        followers = 3 - len(view["trick"])  # the bots after me in this trick: seats 1, 2 …
        before = (await c.get(url)).json()["version"]
        watching = await stack.enter_async_context(
            stream(app, f"{url}/stream", {**me, "Last-Event-ID": str(before)})
        )
        app.state.bots.pause()  # no bot decision may start before the answer is read
        seen = len(decisions)
        r = await c.post(f"{url}/actions/play", json={"cards": choice[1]}, headers=me)
        assert r.status_code == 200, r.text
        mine = r.json()["version"]
        assert len(decisions) == seen  # answered before any bot decision ran
        history = (await c.get(f"{url}/history?after={before}", headers=me)).json()["items"]
        assert history[-1]["version"] == mine  # the answer's version is my own move's
        assert {i["data"].get("seat") for i in history if i["type"] == "CardPlayed"} == {0}
        app.state.bots.resume()
        await idle(app)
        last = (await c.get(url)).json()["version"]  # the bots moved as far as they can
        assert last >= mine + followers
        frames: list[Event] = []
        while not frames or (frames[-1].id or 0) < last:
            frames.append(await watching.next_view(timeout=30))
        assert [f.id for f in frames] == list(range(before + 1, last + 1))
        replies = [f.json()["event"] for f in frames if (f.id or 0) > mine]
        played = [e["data"]["seat"] for e in replies if e["type"] == "CardPlayed"]
        assert played[:followers] == list(range(1, followers + 1))
    assert decisions and all(name.startswith("bot-driver-") for name in decisions)


def test_seating_four_strong_bots_runs_no_bot_search_in_the_request(
    decisions: Decisions,
) -> None:
    with client(new_service()) as c:
        made = c.post("/v1/matches", json={"name": "four strong bots"}).json()
        url = f"/v1/matches/{made['matchId']}"
        organiser = auth(made["organiserToken"])
        c.app.state.bots.pause()
        for seat in range(4):
            r = c.post(f"{url}/seats/{seat}/bot", json={"kind": "strong"}, headers=organiser)
            assert r.status_code == 201, r.text
        seated = r.json()["version"]
        assert decisions == []  # the fourth seat dealt round 1 (R16); no bot decided
        assert c.get(url).json()["version"] == seated
        c.app.state.bots.resume()
        assert decisions.first.wait(60)  # the driver's, once resumed
        c.app.state.bots.stop()  # a few moves are enough: the match would play on
    assert decisions and all(name.startswith("bot-driver-") for name in decisions)


@pytest.mark.parametrize(("match_end", "rounds"), [("wrap", 2), ("rounds:3", 3)])
def test_a_bots_only_match_ends_by_itself(match_end: str, rounds: int) -> None:
    """A ``wrap`` match of four bots ends after ``BOTS_ONLY_ROUNDS`` (2 here) rounds; a
    match end chosen by the organiser (``rounds:3``) is played to it, past that cap."""
    service = new_service()
    with client(service, bots=BotDriver(bus_of(service), bots_only_rounds=2)) as c:
        url, _ = bots_match(c, "random", match_end)
        settle(c)
        summary = c.get(url).json()
        assert summary["finished"]
        scored = [r for r in summary["rounds"] if r["status"] == "scored"]
        assert len(scored) == rounds
        items = c.get(f"{url}/history?limit=1000").json()["items"]
        assert items[-1]["type"] == "MatchFinished"
        if match_end == "wrap":
            assert "bots only" in items[-1]["data"]["reason"]
        assert c.app.state.bots.stats.ended == (match_end == "wrap")
        scraped = c.get("/metrics").text  # the driver's work, for operators
        assert f"shengji_bots_only_ended_total {float(match_end == 'wrap')}" in scraped
        assert "shengji_bot_matches_queued 0.0" in scraped
        assert "shengji_bot_steps_total 0.0" not in scraped

"""A frame for every version at every viewer (docs/decisions.md L12): whole rounds played over
the REST API by two people and two bots (bots move several times after one command, off the
request path), watched by both seats, a spectator and the organiser. Every stream gets ids 1
apart from its first frame to the match's last version; every frame's event is the one the
history shows at that version and its view the state as of that version (R34), for that
viewer (R33). And a paced deal (R16) is live: seats see their hands grow, spectators the
sizes."""

from __future__ import annotations

import json
from contextlib import AsyncExitStack
from datetime import timedelta
from typing import Any

import anyio
import httpx
import pytest

from services.game import GameService
from tests.api.rest import auth, choose
from tests.api.sse_driver import SseStream, paced_service, stream
from tests.apps import served
from tests.conftest import FakeClock, FixedSeeds

pytestmark = pytest.mark.anyio

Json = dict[str, Any]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def seat_table(c: httpx.AsyncClient, people: int) -> tuple[str, str, list[str]]:
    made = (await c.post("/v1/matches", json={"name": "live"})).json()
    match_id, organiser = made["matchId"], made["organiserToken"]
    tokens = []
    for seat in range(4):
        if seat < people:
            r = await c.post(f"/v1/matches/{match_id}/seats/{seat}", json={"name": f"p{seat}"})
            tokens.append(r.json()["token"])
        else:
            r = await c.post(
                f"/v1/matches/{match_id}/seats/{seat}/bot",
                json={"kind": "heuristic"},
                headers=auth(organiser),
            )
        assert r.status_code == 201, r.text
    return match_id, organiser, tokens


async def version_of(c: httpx.AsyncClient, match_id: str) -> int:
    version: int = (await c.get(f"/v1/matches/{match_id}")).json()["version"]
    return version


async def frames_until(s: SseStream, version: int) -> list[Any]:
    out: list[Any] = []
    while not out or out[-1].id < version:
        out.append(await s.next_view())
    return out


async def test_every_viewer_gets_a_frame_for_every_version() -> None:
    service = GameService(
        {"PERSISTENCE_MODULE": "eventsourcing.popo"}, clock=FakeClock(), seeds=FixedSeeds(3)
    )
    async with served(service) as (app, c), AsyncExitStack() as stack:
        match_id, organiser, tokens = await seat_table(c, people=2)
        assert await anyio.to_thread.run_sync(app.state.bots.idle), "the bots did not settle"
        url = f"/v1/matches/{match_id}"
        viewers: dict[str, dict[str, str]] = {
            "seat 0": auth(tokens[0]),
            "seat 1": auth(tokens[1]),
            "spectator": {},
            "organiser": auth(organiser),
        }
        streams = {
            name: await stack.enter_async_context(stream(app, f"{url}/stream", headers))
            for name, headers in viewers.items()
        }
        first = {name: (await s.next_view()).id for name, s in streams.items()}
        start = await version_of(c, match_id)
        assert set(first.values()) == {start}
        bot_batches = 0
        for _ in range(400):
            before = await version_of(c, match_id)
            moved = False
            for seat in (0, 1):
                view = (await c.get(f"{url}/view", headers=auth(tokens[seat]))).json()
                choice = choose(view)
                if choice is not None:
                    action, cards = choice
                    r = await c.post(
                        f"{url}/actions/{action}", json={"cards": cards}, headers=auth(tokens[seat])
                    )
                    assert r.status_code == 200, r.text
                    moved = True
                    break
            assert moved, "nobody could move"
            assert await anyio.to_thread.run_sync(app.state.bots.idle), "the bots did not reply"
            bot_batches += await version_of(c, match_id) - before > 1
            summary = (await c.get(url)).json()
            if summary["roundNumber"] >= 2:
                break
        final = await version_of(c, match_id)
        assert summary["roundNumber"] >= 2, "a whole round was played"
        assert bot_batches > 0, "bots moved several times after one command"
        kinds: dict[str, list[str]] = {}
        frames: dict[str, list[Any]] = {}
        for name, s in streams.items():
            got = frames[name] = await frames_until(s, final)
            assert [f.id for f in got] == list(range(start + 1, final + 1)), name
            kinds[name] = [f.json()["event"]["type"] for f in got]
            for f in got:
                frame = f.json()
                assert frame["version"] == frame["event"]["version"] == f.id
        assert len({tuple(k) for k in kinds.values()}) == 1  # the same events for everyone
        assert {"RoundScored", "RoundRecorded", "RoundBegun", "CardPlayed"} <= set(kinds["seat 0"])
        # each frame is the state as of its version, for its viewer (R33, R34)
        for name in ("seat 0", "spectator"):
            history = (
                await c.get(
                    f"{url}/history",
                    params={"after": start, "limit": 1000},
                    headers=viewers[name],
                )
            ).json()["items"]
            for f, item in zip(frames[name], history, strict=True):
                frame = f.json()
                assert frame["event"]["type"] == item["type"]
                assert frame["event"]["data"].keys() <= item["data"].keys() | set(
                    frame["event"]["hidden"]
                )
                state = (
                    await c.get(f"{url}/state", params={"version": f.id}, headers=viewers[name])
                ).json()
                assert frame["view"] == state["view"], (name, f.id)


async def test_a_paced_deal_is_live_for_seats_and_spectators() -> None:
    clock = FakeClock()
    service = paced_service(clock)
    async with served(service) as (app, c), AsyncExitStack() as stack:
        match_id, _, tokens = await seat_table(c, people=4)
        url = f"/v1/matches/{match_id}/stream"
        seat = await stack.enter_async_context(stream(app, url, auth(tokens[2])))
        spectator = await stack.enter_async_context(stream(app, url))
        version = (await seat.next_view()).id
        await spectator.next_view()
        hands: list[int] = []
        sizes: list[list[int]] = []
        for _ in range(12):  # 108 cards at 100 ms each: ~11 s of the fake clock
            clock.advance(seconds=1)
            for s in (seat, spectator):
                ev = await next_deal(s)
                assert ev.id is None  # a deal's progress is no version
                frame = ev.json()
                assert frame["version"] == version
                view = frame["view"]
                if s is seat:
                    hands.append(len(view["hand"]))
                    assert view["handSizes"][2] == len(view["hand"])
                else:
                    assert "hand" not in view
                    sizes.append(view["handSizes"])
            if hands[-1] == 25:
                break
        assert hands == sorted(hands) and hands[0] < 25 == hands[-1]
        assert sizes[-1] == [25, 25, 25, 25] and sizes[0] != sizes[-1]
        # a stream resumed at the deal's version gets the progress so far at once
        clock.advance(timedelta(seconds=0))
        resumed = await stack.enter_async_context(
            stream(app, url, {**auth(tokens[2]), "Last-Event-ID": str(version)})
        )
        ev = await next_deal(resumed)
        assert len(ev.json()["view"]["hand"]) == 25


async def next_deal(s: SseStream) -> Any:
    while True:
        ev = await s.next()
        assert ev is not None, "the stream ended"
        if ev.event == "deal":
            return ev
        assert ev.event != "view", f"a version frame during the deal: {json.dumps(ev.data)}"


async def test_an_erased_name_leaves_the_live_streams_at_once() -> None:
    """Crypto-shredding while a match is watched: a stream opened after the
    erasure, and a resume inside the feed's ring, show `erased player`, never the name."""
    service = GameService(
        {"PERSISTENCE_MODULE": "eventsourcing.popo"}, clock=FakeClock(), seeds=FixedSeeds(7)
    )
    async with served(service) as (app, c), AsyncExitStack() as stack:
        mei = (await c.post("/v1/players", json={"displayName": "Mei Secretname"})).json()
        made = (await c.post("/v1/matches", json={"name": "erasure"})).json()
        match_id, organiser = made["matchId"], made["organiserToken"]
        body = {"matchId": match_id, "seat": 0}
        claimed = await c.post("/v1/players/me/seats", json=body, headers=auth(mei["token"]))
        assert claimed.status_code == 201, claimed.text
        for seat in (1, 2, 3):
            r = await c.post(
                f"/v1/matches/{match_id}/seats/{seat}/bot",
                json={"kind": "heuristic"},
                headers=auth(organiser),
            )
            assert r.status_code == 201, r.text
        url = f"/v1/matches/{match_id}/stream"
        watching = await stack.enter_async_context(stream(app, url))
        first = await watching.next_view()
        assert first.data is not None and "Mei Secretname" in first.data
        erased = await c.delete("/v1/players/me", headers=auth(mei["token"]))
        assert erased.status_code == 204, erased.text
        for headers in ({}, {"Last-Event-ID": "1"}):
            s = await stack.enter_async_context(stream(app, url, headers))
            frames = await frames_until(s, first.id or 0)
            assert frames
            for f in frames:
                assert f.data is not None and "Mei Secretname" not in f.data
            assert "erased player" in (frames[-1].data or "")

"""Patch frames (``?frames=patch``, docs/decisions.md D-light-frames): a client that applies
every RFC 6902 patch in order holds exactly what ``state?version=N`` shows it at every
version N (R33: its own eyes; R34: the state as of N) — over a whole round of several deals,
for every seat and a spectator, through a resume (whole again, then patches) and with gzip
on; the paced deal's patches carry only the new cards (R16). The patches are applied with
the ``jsonpatch`` library, not with the server's code."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from contextlib import AsyncExitStack
from typing import Any

import anyio
import httpx
import jsonpatch
import pytest
from litestar import Litestar
from litestar.testing import TestClient

from api.match_follower import FULL_EVERY
from domain.rules.ruleset import RuleSet
from services.game import GameService
from tests.api.rest import auth
from tests.api.sse_driver import Event, SseStream, paced_service, step, stream
from tests.apps import make_app, served
from tests.commands import create_match, take_seat
from tests.conftest import FakeClock, FixedSeeds

pytestmark = pytest.mark.anyio

Json = Any


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def canonical(value: Json) -> str:
    """JSON text with sorted keys: equal only when the values are (``true`` is not ``1``)."""
    return json.dumps(value, sort_keys=True)


class Client:
    """What a client keeps: the view at the last version, the deal's view on top of it."""

    def __init__(self) -> None:
        self.view: Json = None
        self.version: int | None = None
        self.deal: Json = None
        self.kinds: list[str] = []

    def take(self, ev: Event) -> None:
        assert ev.event is not None
        self.kinds.append(ev.event)
        frame = ev.json()
        if ev.event == "view":
            self.view, self.version, self.deal = frame["view"], ev.id, None
        elif ev.event == "patch":
            assert self.view is not None, "a patch before any view"
            assert ev.id == frame["version"] == (self.version or 0) + 1, "a version skipped"
            self.view = jsonpatch.apply_patch(self.view, frame["patch"])
            self.version, self.deal = ev.id, None
        elif ev.event == "deal":
            self.deal = frame["view"]
        elif ev.event == "deal-patch":
            before = self.view if self.deal is None else self.deal
            self.deal = jsonpatch.apply_patch(before, frame["patch"])


async def read_until(s: SseStream, client: Client, version: int) -> list[tuple[int, Json]]:
    """Frames taken until ``version``: each version and the client's view after it."""
    seen: list[tuple[int, Json]] = []
    while client.version is None or client.version < version:
        ev = await s.next()
        assert ev is not None, "the stream ended"
        if ev.event in ("view", "patch"):
            client.take(ev)
            assert client.version is not None
            seen.append((client.version, client.view))
        elif ev.event is not None:
            client.take(ev)
    return seen


async def state(c: httpx.AsyncClient, match_id: str, version: int, token: str | None) -> Json:
    headers = auth(token) if token else {}
    r = await c.get(f"/v1/matches/{match_id}/state", params={"version": version}, headers=headers)
    assert r.status_code == 200, r.text
    return r.json()["view"]


def current_version(service: GameService, match_id: Any) -> int:
    match = service.get_match(match_id)
    round_ = service.current_round(match)
    return match.sequence(0 if round_ is None else round_.version)


@pytest.mark.parametrize("seed", [11])
async def test_patches_give_the_state_at_every_version(seed: int) -> None:
    """One deal (seed) is enough: every seat's and the spectator's view is compared with
    the state at each of the round's ~140 versions (~700 reads). Each of the three deals
    once tried (3, 11, 29) caught the same broken streams — a patch against a base not
    moved on after a whole frame, an insertion at the wrong index — and missed the same
    two breakages of the patch itself (removals in the wrong order, an insertion before a
    kept tail), which tests/services/test_json_patch.py's random documents catch."""
    clock = FakeClock()
    service = GameService(
        {"PERSISTENCE_MODULE": "eventsourcing.popo"}, clock=clock, seeds=FixedSeeds(seed)
    )
    async with served(service) as (app, c), AsyncExitStack() as stack:
        match_id = create_match(service, RuleSet())
        tokens: list[str | None] = [take_seat(service, match_id, s, f"p{s}")[0] for s in range(4)]
        viewers = [*tokens, None]  # four seats and a spectator
        url = f"/v1/matches/{match_id}/stream?frames=patch"
        streams: list[SseStream] = []
        for i, token in enumerate(viewers):
            headers = auth(token) if token else {}
            if i in (1, 4):
                headers["Accept-Encoding"] = "gzip"  # patch + gzip for a seat and the spectator
            streams.append(await stack.enter_async_context(stream(app, url, headers)))
        clients = [Client() for _ in viewers]
        start = current_version(service, match_id)
        seen: list[list[tuple[int, Json]]] = [[] for _ in viewers]
        for i, s in enumerate(streams):
            seen[i] += await read_until(s, clients[i], start)
        resumed_at = None
        while service.get_match(match_id).round_number < 2:  # a whole round, the next dealt
            clock.advance(seconds=3)
            await anyio.to_thread.run_sync(step, service, match_id)
            version = current_version(service, match_id)
            if resumed_at is None and version >= start + 60:
                # seat 2 reconnects with Last-Event-ID: whole at once, then patches again
                resumed_at = version
                await streams[2].close()
                headers = {**auth(tokens[2] or ""), "Last-Event-ID": str(version - 5)}
                streams[2] = await stack.enter_async_context(stream(app, url, headers))
                first = await streams[2].next_view()
                assert first.id == version - 4
                clients[2].take(first)
                seen[2].append((version - 4, clients[2].view))
            for i, s in enumerate(streams):  # read as a client does, never a ring behind
                seen[i] += await read_until(s, clients[i], version)
        end = current_version(service, match_id)
        for i, s in enumerate(streams):
            seen[i] += await read_until(s, clients[i], end)
        assert streams[1].headers["content-encoding"] == "gzip"
        assert end - start > 100, "a whole round"
        for i, token in enumerate(viewers):
            versions = [v for v, _ in seen[i]]
            if i != 2:
                assert versions == list(range(start, end + 1)), i
            for version, view in seen[i]:
                expected = await state(c, str(match_id), version, token)
                assert canonical(view) == canonical(expected), (i, version)
            kinds = clients[i].kinds
            assert kinds[0] == "view" and kinds.count("patch") > kinds.count("view")
            fulls = kinds.count("view")
            assert fulls <= 2 + (end - start) // FULL_EVERY + (i == 2)
        assert set(clients[0].kinds) == {"view", "patch", "caught-up"}  # caught-up: live from here


async def test_a_patch_stream_resumed_at_the_last_version_is_whole_again() -> None:
    clock = FakeClock()
    service = GameService(
        {"PERSISTENCE_MODULE": "eventsourcing.popo"}, clock=clock, seeds=FixedSeeds(5)
    )
    async with served(service) as (app, c), AsyncExitStack() as stack:
        match_id = create_match(service, RuleSet())
        tokens = [take_seat(service, match_id, s, f"p{s}")[0] for s in range(4)]
        for _ in range(10):
            await anyio.to_thread.run_sync(step, service, match_id)
        version = current_version(service, match_id)
        url = f"/v1/matches/{match_id}/stream?frames=patch"
        headers = {**auth(tokens[0]), "Last-Event-ID": str(version - 1)}
        s = await stack.enter_async_context(stream(app, url, headers))
        client = Client()
        first = await s.next_view()
        assert first.id == version
        client.take(first)
        await anyio.to_thread.run_sync(step, service, match_id)
        ev = await s.next()
        while ev is not None and ev.event not in ("view", "patch"):
            ev = await s.next()
        assert ev is not None and ev.event == "patch" and ev.id == version + 1
        client.take(ev)
        assert canonical(client.view) == canonical(
            await state(c, str(match_id), version + 1, tokens[0])
        )


async def test_a_paced_deal_in_patches_sends_only_the_new_cards() -> None:
    clock = FakeClock()
    service = paced_service(clock)
    async with served(service) as (app, _), AsyncExitStack() as stack:
        match_id = create_match(service, RuleSet())
        tokens = [take_seat(service, match_id, s, f"p{s}")[0] for s in range(4)]
        path = f"/v1/matches/{match_id}/stream"
        patched = {
            "seat": await stack.enter_async_context(
                stream(app, f"{path}?frames=patch", auth(tokens[2]))
            ),
            "spectator": await stack.enter_async_context(stream(app, f"{path}?frames=patch")),
        }
        whole = {
            "seat": await stack.enter_async_context(stream(app, path, auth(tokens[2]))),
            "spectator": await stack.enter_async_context(stream(app, path)),
        }
        clients = {name: Client() for name in patched}
        for name, s in patched.items():
            clients[name].take(await s.next_view())
            await whole[name].next_view()
        version = clients["seat"].version
        latest: dict[str, Json] = {}
        totals = {name: [0, 0] for name in patched}  # patch bytes, whole views' bytes
        added: list[int] = []
        for _ in range(14):  # 100 cards at 100 ms each: ~11 s of the fake clock
            clock.advance(seconds=1)
            for name, s in patched.items():
                ev = await next_deal(whole[name])
                latest[name] = ev.json()["view"]
                # the patch stream catches up with the whole stream's latest deal frame
                while canonical(clients[name].deal) != canonical(latest[name]):
                    ev = await next_deal(s)
                    assert ev.event == "deal-patch" and ev.id is None
                    frame = ev.json()
                    assert frame["version"] == version
                    before = clients[name].deal or clients[name].view
                    clients[name].take(ev)
                    # only what changed: far less than the view it patches
                    sent = len(json.dumps(frame["patch"]))
                    whole_view = len(json.dumps(clients[name].deal))
                    assert sent < whole_view / 2, frame["patch"]
                    totals[name][0] += sent
                    totals[name][1] += whole_view
                    if name == "seat":
                        new = Counter(clients[name].deal["hand"]) - Counter(before["hand"])
                        added.append(new.total())
            if len(latest["seat"]["hand"]) == 25:
                break
        assert len(latest["seat"]["hand"]) == 25
        assert latest["spectator"]["handSizes"] == [25, 25, 25, 25]
        assert "hand" not in clients["spectator"].deal
        assert sum(added) == 25 and max(added) <= 3  # a card or so each time
        for name, (sent, whole_views) in totals.items():
            assert sent < whole_views / 5, name
        # a stream resumed at the deal's version: a whole deal frame first, then patches
        resumed = await stack.enter_async_context(
            stream(app, f"{path}?frames=patch", {**auth(tokens[2]), "Last-Event-ID": str(version)})
        )
        ev = await next_deal(resumed)
        assert ev.event == "deal" and canonical(ev.json()["view"]) == canonical(latest["seat"])


async def next_deal(s: SseStream) -> Event:
    while True:
        ev = await s.next()
        assert ev is not None, "the stream ended"
        if ev.event in ("deal", "deal-patch"):
            return ev
        assert ev.event not in ("view", "patch"), f"a version frame during the deal: {ev}"


@pytest.fixture(scope="module")
def refusing() -> Iterator[tuple[GameService, TestClient[Litestar]]]:
    """One app for the refusals: each asks for a stream of a match of its own, refused
    before any frame."""
    service = GameService(
        {"PERSISTENCE_MODULE": "eventsourcing.popo"}, clock=FakeClock(), seeds=FixedSeeds(1)
    )
    with TestClient(make_app(service)) as c:
        yield service, c
    service.close()


@pytest.mark.parametrize("frames", ["patches", "PATCH", "", "json-patch"])
def test_an_unknown_frames_value_is_refused(
    refusing: tuple[GameService, TestClient[Litestar]], frames: str
) -> None:
    service, c = refusing
    match_id = create_match(service, RuleSet())
    r = c.get(f"/v1/matches/{match_id}/stream", params={"frames": frames})
    assert r.status_code == 422, r.text
    problem = r.json()
    assert r.headers["content-type"].startswith("application/problem+json")
    assert "frames" in problem["detail"]

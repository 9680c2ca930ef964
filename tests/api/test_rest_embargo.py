"""The duplicate-deal embargo over HTTP (R33, R35, R36; docs/tournaments.md).

A round-robin tournament of four teams (two tables): the people's table (table A) is
played to its end over REST — people by the moves their views offer, bots after each
command — while the bots' table (table B), which holds the same deals seat for seat
(R36), has not moved. Every read of table A then withholds what a scored deal reveals
beyond what its viewer saw during play (R33): the views (each seat, public, the round)
with ``result`` null and ``embargo`` saying why and an ``-e`` ETag, the state as of
every version, the history pages, the SSE missed-history frame; verification and record
export answer 409 ``deal-embargoed`` (Chinese too). After ``bots/run`` completes the
tournament round, everything is revealed, and a client's embargoed ETag no longer
matches.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from api.sse import LiveStreams, StreamSettings
from domain.game.round_events import Dealt
from infra.localhub import InProcessHub
from services.game import GameService
from services.live import current_version
from tests.api.rest import Json, auth, choose, client, new_service, settle
from tests.api.sse_driver import build_app, stream
from tests.commands import run_bots

BOTS = [{"name": "h", "kind": "heuristic"}, {"name": "r", "kind": "random"}]
TEAMS = [
    {"name": "People", "players": [{"name": "Ann"}, {"name": "Bo"}]},
    *({"name": f"Bots {i}", "players": BOTS} for i in range(1, 4)),
]
EMBARGO = "embargoed until tournament round 1 completes"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # the hub is asyncio-only


@dataclass
class Scene:
    service: GameService
    tournament: str
    organiser: str
    a: str
    """The people's table: played to its end."""
    b: str
    """The bots' table: same deals (R36), not a move made."""
    tokens: dict[int, str]
    """The people's seats at table A and their tokens."""
    answers: list[Json] = field(default_factory=list)
    """Every command answer of table A (its view included)."""
    tags: dict[int | None, str] = field(default_factory=dict)
    """The /view (seat) and /public (None) ETags while embargoed."""
    client: TestClient[Litestar] | None = None
    """The app on ``service`` the tests read through (one per scene: the reads change
    nothing)."""

    @property
    def c(self) -> TestClient[Litestar]:
        assert self.client is not None, "the scene's fixture opens its client"
        return self.client

    @property
    def url(self) -> str:
        return f"/v1/matches/{self.a}"

    def version(self) -> int:
        """Table A's match version (R34)."""
        return current_version(self.service, UUID(self.a))

    def seeds(self) -> list[str]:
        match = self.service.get_match(UUID(self.a))
        return [
            e.seed
            for r in match.results
            for e in self.service.events.get(r.round_id)
            if isinstance(e, Dealt)
        ]

    def viewers(self) -> list[tuple[int | None, dict[str, str]]]:
        """The organiser (a spectator: R36 closes the table to others until the round
        completes, tests/api/test_rest_spectating.py) and each person's seat, with the
        headers to read as them."""
        spectator: dict[str, str] = auth(self.organiser)
        return [(None, spectator), *((seat, auth(t)) for seat, t in self.tokens.items())]


def _play(c: TestClient[Litestar], scene: Scene) -> None:
    """Table A to its end: its bots played here (the app's driver is paused), people by
    what their views offer (R33: only what the view shows)."""
    match_id = UUID(scene.a)
    for _ in range(1000):
        run_bots(scene.service, match_id)
        if scene.service.get_match(match_id).finished:
            return
        for token in scene.tokens.values():
            offered = choose(c.get(f"{scene.url}/view", headers=auth(token)).json())
            if offered is not None:
                action, cards = offered
                r = c.post(
                    f"{scene.url}/actions/{action}", json={"cards": cards}, headers=auth(token)
                )
                assert r.status_code == 200, r.text
                scene.answers.append(r.json())
                break
        else:
            raise AssertionError("nobody at table A is offered a move")
    raise AssertionError("table A did not finish")


@contextmanager
def half_played() -> Iterator[Scene]:
    """The scene, with its client open (the bot driver paused) while the context is."""
    service = new_service()
    with client(service) as c:
        c.app.state.bots.pause()  # table B stays unplayed; table A's bots move below
        body = {"name": "cup", "teams": TEAMS, "format": "round_robin", "matchLength": 1}
        r = c.post("/v1/tournaments", json=body)
        assert r.status_code == 201, r.text
        tid, organiser = r.json()["tournamentId"], r.json()["organiserToken"]
        r = c.post(f"/v1/tournaments/{tid}/rounds", headers=auth(organiser))
        assert r.status_code == 201, r.text
        seat_tokens = r.json()["seatTokens"]
        a = seat_tokens[0]["matchId"]
        tables = c.get(f"/v1/tournaments/{tid}/rounds/1/tables").json()
        (b,) = [t["matchId"] for t in tables if t["matchId"] != a]
        scene = Scene(service, tid, organiser, a, b, {t["seat"]: t["token"] for t in seat_tokens})
        _play(c, scene)
        table_b = service.get_match(UUID(b))
        assert not table_b.finished and not table_b.results
        for viewer, headers in scene.viewers():
            path = "/view" if viewer is not None else "/public"
            scene.tags[viewer] = c.get(scene.url + path, headers=headers).headers["etag"]
        scene.client = c
        yield scene
        scene.client = None


@pytest.fixture(scope="module")
def scene() -> Iterator[Scene]:
    with half_played() as s:
        yield s


@pytest.fixture(scope="module")
def released() -> Iterator[Scene]:
    with half_played() as s:
        c = s.c
        c.app.state.bots.resume()  # table B's bots may now play
        run = f"/v1/tournaments/{s.tournament}/rounds/1/bots/run"
        r = c.post(run, headers=auth(s.organiser))  # wakes table B's bots
        assert r.status_code == 202, r.text
        settle(c)
        r = c.post(run, headers=auth(s.organiser))
        assert r.status_code == 202, r.text
        assert r.json()["completed"] is True
        yield s


def no_seed(text: str, seeds: list[str]) -> None:
    assert seeds and not [s for s in seeds if s in text]


def problem(r: Any, code: str) -> Json:
    assert r.status_code == 409, r.text
    assert r.headers["content-type"].startswith("application/problem+json")
    body: Json = r.json()
    assert body["code"] == code and body["type"].endswith("/" + code)
    assert body["rule"] == "R36"
    return body


# -- while table B may still be playing the same deals ------------------------------------------


@pytest.mark.parametrize("path", ["/view", "/public", "/rounds/1"])
def test_views_of_table_a_withhold_the_scored_deal(scene: Scene, path: str) -> None:
    """R33/R36: result null, the embargo named, the bottom only for the seat that buried
    it, ``visible`` only what the seat saw in play; an ``-e`` ETag, never cached."""
    c = scene.c
    for viewer, headers in scene.viewers():
        if path == "/view" and viewer is None:
            continue
        r = c.get(scene.url + path, headers=headers)
        assert r.status_code == 200, r.text
        no_seed(r.text, scene.seeds())
        view = r.json()
        assert view["phase"] == "scored" and view["result"] is None
        assert EMBARGO in view["embargo"] and "R36" in view["embargo"]
        if path == "/rounds/1":
            continue
        assert r.headers["etag"].endswith('-e"')
        again = c.get(scene.url + path, headers={**headers, "If-None-Match": r.headers["etag"]})
        assert again.status_code == 304  # still embargoed: the same representation
        if path == "/view":
            buried = view["bottom"] is not None
            assert len(view["visible"]) == (108 if buried else 100)
            assert len(view["played"]) == 100


def test_command_answers_of_table_a_withhold_the_scored_deal(scene: Scene) -> None:
    """The command answers' views never carry a seed or a scored deal's hands (R36)."""
    assert scene.answers
    for answer in scene.answers:
        assert answer["view"]["result"] is None
        no_seed(str(answer), scene.seeds())


def test_the_state_as_of_every_version_has_no_revealed_section(scene: Scene) -> None:
    """R34/R36: ``revealed`` null at every version, ``embargo`` saying why."""
    c = scene.c
    public = c.get(f"{scene.url}/public", headers=auth(scene.organiser))
    last = int(public.headers["etag"].strip('"').split("-")[0])
    for viewer, headers in scene.viewers():
        for version in range(1, last + 1, 1 if viewer is None else 3):
            r = c.get(f"{scene.url}/state", params={"version": version}, headers=headers)
            assert r.status_code == 200, r.text
            no_seed(r.text, scene.seeds())
            state = r.json()
            assert state["revealed"] is None
            if state["view"]["roundId"]:  # a round's events exist (not just RoundBegun)
                assert EMBARGO in state["embargo"]


def test_history_pages_hide_seeds_and_the_bottom(scene: Scene) -> None:
    """R33/R36: Dealt.seed hidden, RoundScored without seed, bottomCards, bottomPoints;
    BottomBuried.cards only for the seat that buried them."""
    c = scene.c
    for viewer, headers in scene.viewers():
        after, items = 0, []
        while True:
            r = c.get(f"{scene.url}/history", params={"after": after, "limit": 50}, headers=headers)
            assert r.status_code == 200, r.text
            no_seed(r.text, scene.seeds())
            page = r.json()
            assert EMBARGO in page["embargo"]
            items += page["items"]
            if not page["more"]:
                break
            after = page["next"]
        kinds = {i["type"]: i for i in items}
        assert set(kinds["RoundScored"]["hidden"]) == {"seed", "bottomCards", "bottomPoints"}
        for item in items:
            if item["type"] == "Dealt":
                assert item["hidden"] == ["seed"]
            if item["type"] == "BottomBuried" and viewer != item["data"]["seat"]:
                assert item["hidden"] == ["cards"]  # round 1: no 炒底 taker (R20)


@pytest.mark.parametrize(
    ("path", "language"),
    [
        ("/rounds/1/verify", "en"),
        ("/rounds/1/verify", "zh-CN"),
        ("/record", "en"),
        ("/record?format=text", "en"),
        ("/rounds/1/record", "zh-CN"),
    ],
)
def test_verification_and_records_answer_deal_embargoed(
    scene: Scene, path: str, language: str
) -> None:
    """R35/R36: 409 ``deal-embargoed``, a stable type and, in Chinese, its sentence."""
    c = scene.c
    r = c.get(scene.url + path, headers={"Accept-Language": language})
    body = problem(r, "deal-embargoed")
    no_seed(r.text, scene.seeds())
    if language == "zh-CN":  # all Chinese, the tournament round named
        assert body["title"] == "牌局暂不公开" and body["detail"].startswith("本轮比赛")
        assert "比赛轮次：1" in body["detail"]
    else:
        assert EMBARGO in body["detail"]
        assert body["title"] == "Deal embargoed"


@pytest.mark.anyio
async def test_sse_frames_withhold_the_scored_deal(scene: Scene) -> None:
    """R33/R36 over SSE: every frame of a stream resumed from version 1 (events and
    views), for the spectator and each seat, carries no seed; the last view the embargo."""
    hub = InProcessHub()
    hub.attach(scene.service)
    live = LiveStreams(scene.service, hub, StreamSettings(heartbeat_s=30, lifetime_s=60))
    app = build_app(live)
    async with app.lifespan():
        for viewer, headers in scene.viewers():
            async with stream(app, f"{scene.url}/stream", {**headers, "Last-Event-ID": "1"}) as s:
                events: list[dict[str, Any]] = []
                while not events or events[-1]["version"] < scene.version():
                    frame = await s.next_view()
                    assert frame.data is not None and frame.id == len(events) + 2
                    no_seed(frame.data, scene.seeds())
                    events.append(frame.json()["event"])
                data = frame.view()
                assert data["result"] is None and EMBARGO in data["embargo"]
                assert data.get("seat") == viewer
                scored = next(i for i in events if i["type"] == "RoundScored")
                assert "seed" in scored["hidden"] and "bottomCards" not in scored["data"]


# -- after the tournament round completes: revealed as for any match -------------------------------


def test_after_the_round_completes_everything_is_revealed(released: Scene) -> None:
    """R33/R35: the views (an embargoed ETag no longer matches), the state, the history,
    verification and the records."""
    seeds = released.seeds()
    c = released.c
    for viewer, headers in released.viewers():
        path = "/view" if viewer is not None else "/public"
        old = released.tags[viewer]
        assert old.endswith('-e"')
        r = c.get(released.url + path, headers={**headers, "If-None-Match": old})
        assert r.status_code == 200 and not r.headers["etag"].endswith('-e"')
        view = r.json()
        assert view["embargo"] is None and view["result"]["seed"] in seeds
        assert len(view["result"]["dealtHands"]) == 4
        if viewer is not None:
            assert len(view["visible"]) == 108
        history = c.get(f"{released.url}/history", params={"limit": 1000}, headers=headers)
        assert history.json()["embargo"] is None
        assert all(s in history.text for s in seeds)
        scored = next(i for i in history.json()["items"] if i["type"] == "RoundScored")
        state = c.get(
            f"{released.url}/state", params={"version": scored["version"]}, headers=headers
        ).json()
        assert state["embargo"] is None and state["revealed"]["seed"] in seeds
    verified = c.get(f"{released.url}/rounds/1/verify")
    assert verified.status_code == 200 and verified.json()["seed"] in seeds
    for path in ("/record", "/rounds/1/record"):
        r = c.get(released.url + path)
        assert r.status_code == 200, r.text
        assert all(s in r.text for s in seeds)

"""Tournament tables are closed to spectators while their tournament round is in play
(R33, R36; api/spectating.py, docs/tournaments.md "Spectators").

A round-robin tournament of four teams of people: round 1 has two tables, every seat a
person with a seat token. Every table of the round plays the same deals seat for seat
(R36) and plays are public (R33), so while the round is in play every spectator read of a
table — ``/public``, ``/rounds/{n}``, ``/history``, ``/state``, the SSE stream — answers
403 ``table-closed`` to no token and to any token that is neither a seat token of that
table nor the organiser's; the table's seats read as their seat (R33) and the organiser
as a spectator. A table that is over stays closed while another table of its round
plays. Once the organiser has ended both tables (the round completes), the tables read
as any match. An ordinary match is read anonymously as before.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any
from uuid import UUID

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from api.sse import LiveStreams, StreamSettings
from infra.localhub import InProcessHub
from services.game import GameService
from tests.api.rest import Json, auth, client, new_service
from tests.api.sse_driver import build_app, stream

TEAMS = [
    {"name": f"Team {i}", "players": [{"name": f"p{i}a"}, {"name": f"p{i}b"}]} for i in range(4)
]
CLOSED = "tournament table: spectators may watch once tournament round 1 completes"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # the hub is asyncio-only


@dataclass
class Scene:
    """Round 1 of a tournament: tables 1 and 2, each seat's token, the organiser's."""

    service: GameService
    tournament: str
    organiser: str
    other_organiser: str
    """The organiser token of another tournament."""
    tables: dict[int, str]
    """Table number (1-based) → match id."""
    seats: dict[int, dict[int, str]]
    """Table number → seat → seat token."""
    c: TestClient[Litestar]
    """The app on ``service`` the tests read through (the module's: the reads change
    nothing)."""

    def url(self, table: int) -> str:
        return f"/v1/matches/{self.tables[table]}"

    def finish(self, c: TestClient[Litestar], table: int) -> None:
        """The organiser ends ``table`` (R32: a no-show); its result is collected."""
        r = c.post(
            f"/v1/tournaments/{self.tournament}/rounds/1/tables/{table}/finish",
            json={"reason": "no-show"},
            headers=auth(self.organiser),
        )
        assert r.status_code == 200, r.text


def tournament(c: TestClient[Litestar]) -> tuple[str, str]:
    body = {"name": "cup", "teams": TEAMS, "format": "round_robin", "matchLength": 1}
    r = c.post("/v1/tournaments", json=body)
    assert r.status_code == 201, r.text
    return r.json()["tournamentId"], r.json()["organiserToken"]


@dataclass
class World:
    """The module's one app and its store: each scene is a tournament of its own in it (the
    tables, tokens and answers of one tournament are its own; the reads change nothing)."""

    service: GameService
    client: TestClient[Litestar]


@pytest.fixture(scope="module")
def world() -> Iterator[World]:
    service = new_service()
    with client(service) as c:
        yield World(service, c)


def scene(world: World, finished: tuple[int, ...] = ()) -> Scene:
    """Round 1 of a tournament of its own scheduled in ``world``; the organiser then ends
    the tables ``finished``."""
    service, c = world.service, world.client
    tid, organiser = tournament(c)
    _, other = tournament(c)
    r = c.post(f"/v1/tournaments/{tid}/rounds", headers=auth(organiser))
    assert r.status_code == 201, r.text
    tables: dict[int, str] = {}
    seats: dict[int, dict[int, str]] = {1: {}, 2: {}}
    for s in r.json()["seatTokens"]:
        tables[s["table"]] = s["matchId"]
        seats[s["table"]][s["seat"]] = s["token"]
    assert sorted(tables) == [1, 2] and all(len(seats[t]) == 4 for t in (1, 2))
    made = Scene(service, tid, organiser, other, tables, seats, c)
    for table in finished:
        made.finish(c, table)
    completed = c.get(f"/v1/tournaments/{tid}/rounds/1").json()["status"] == "completed"
    assert completed is (set(finished) == {1, 2})
    for table in (1, 2):
        assert service.get_match(UUID(tables[table])).round_number == 1  # dealt (R16)
    return made


@pytest.fixture(scope="module")
def in_play(world: World) -> Scene:
    return scene(world)


@pytest.fixture(scope="module")
def one_over(world: World) -> Scene:
    """Table 1 is over (its result recorded); table 2 still plays the same deals."""
    return scene(world, finished=(1,))


@pytest.fixture(scope="module")
def completed(world: World) -> Scene:
    return scene(world, finished=(1, 2))


# -- who reads table 1 -------------------------------------------------------------------------

Caller = Callable[[Scene], dict[str, str]]
CALLERS: dict[str, Caller] = {
    "no token": lambda s: {},
    "another table's seat": lambda s: auth(s.seats[2][0]),
    "another tournament's organiser": lambda s: auth(s.other_organiser),
    "a forged organiser token": lambda s: auth(f"o.{UUID(s.tournament).hex}.forged"),
    "the organiser": lambda s: auth(s.organiser),
    "seat 0 of the table": lambda s: auth(s.seats[1][0]),
    "seat 3 of the table": lambda s: auth(s.seats[1][3]),
}
SEAT_OF = {"seat 0 of the table": 0, "seat 3 of the table": 3}
TOKENLESS = ("/public", "/rounds/1")
"""Reads that show the public view and look at a token only on a closed table."""
VIEWED = ("/history", "/state?version=1", f"/state?version={10**6}")
"""Reads with the eyes of the token's seat (R33)."""
READS = (*TOKENLESS, *VIEWED)

CLOSED_ANSWERS: dict[str, tuple[int, str | None]] = {
    "no token": (403, "table-closed"),
    "another table's seat": (403, "table-closed"),
    "another tournament's organiser": (403, "table-closed"),
    "a forged organiser token": (401, "unauthorized"),  # claims this tournament (api.auth)
    "the organiser": (200, None),
    "seat 0 of the table": (200, None),
    "seat 3 of the table": (200, None),
}
"""R36: while the tournament round is in play."""


def open_answer(caller: str, path: str) -> tuple[int, str | None]:
    """R33 once the round is complete: as any match — the public reads ignore tokens; the
    viewed reads refuse a token of something else (403) or a forged one (401)."""
    if path in TOKENLESS or caller in ("no token", "the organiser", *SEAT_OF):
        return 200, None
    if caller == "a forged organiser token":
        return 401, "unauthorized"
    return 403, "forbidden"


def check(r: Any, status: int, code: str | None, caller: str, path: str) -> None:
    assert r.status_code == status, (caller, path, r.text)
    if code is not None:
        assert r.headers["content-type"].startswith("application/problem+json")
        body: Json = r.json()
        assert body["code"] == code and body["type"].endswith("/" + code)
        if code == "table-closed":
            assert body["status"] == 403 and body["rule"] == "R36"
            assert body["detail"].startswith(CLOSED)
        return
    if path == "/state?version=1":
        view = r.json()["view"]
        assert view["kind"] == ("seat" if caller in SEAT_OF else "public")
        if caller in SEAT_OF:  # R33: the seat reads as its seat
            assert view["seat"] == SEAT_OF[caller]


def read(c: TestClient[Litestar], s: Scene, table: int, path: str, headers: dict[str, str]) -> Any:
    if path == f"/state?version={10**6}":  # the latest version: the current state
        latest = c.get(s.url(table), headers=headers).json()["version"]
        path = f"/state?version={latest}"
    return c.get(s.url(table) + path, headers=headers)


@pytest.mark.parametrize("path", READS)
@pytest.mark.parametrize("caller", list(CALLERS))
def test_a_table_in_play_is_closed_to_spectators(in_play: Scene, caller: str, path: str) -> None:
    """R36: 403 ``table-closed`` unless a seat token of this table or the organiser's."""
    status, code = CLOSED_ANSWERS[caller]
    c = in_play.c
    check(read(c, in_play, 1, path, CALLERS[caller](in_play)), status, code, caller, path)


@pytest.mark.parametrize("path", READS)
@pytest.mark.parametrize("caller", list(CALLERS))
def test_a_table_over_stays_closed_while_its_round_plays(
    one_over: Scene, caller: str, path: str
) -> None:
    """R36: table 1 is over, but table 2 still plays the same deals."""
    assert one_over.service.get_match(UUID(one_over.tables[1])).finished
    status, code = CLOSED_ANSWERS[caller]
    c = one_over.c
    check(read(c, one_over, 1, path, CALLERS[caller](one_over)), status, code, caller, path)


@pytest.mark.parametrize("path", READS)
@pytest.mark.parametrize("caller", list(CALLERS))
def test_once_the_round_completes_tables_read_as_any_match(
    completed: Scene, caller: str, path: str
) -> None:
    """R33: open to spectators as any match once the tournament round completes."""
    status, code = open_answer(caller, path)
    c = completed.c
    check(read(c, completed, 1, path, CALLERS[caller](completed)), status, code, caller, path)


@pytest.mark.parametrize("path", ["", "/rounds"])
def test_summaries_show_no_card_and_stay_open(in_play: Scene, path: str) -> None:
    """The match summary, its rounds and the match list show seats, levels and scores,
    never a card (R33): open while the table is closed (docs/tournaments.md)."""
    c = in_play.c
    r = c.get(in_play.url(1) + path)
    assert r.status_code == 200, r.text
    assert '"hand"' not in r.text and '"visible"' not in r.text
    listed = c.get("/v1/matches", params={"limit": 100}).json()["items"]
    assert {m["matchId"] for m in listed} >= set(in_play.tables.values())


def test_records_of_a_closed_table_stay_embargoed(one_over: Scene) -> None:
    """R36: the record of a table that is over answers 409 ``deal-embargoed`` to
    everyone — organiser and seats included — until the round completes."""
    c = one_over.c
    for caller in ("no token", "the organiser", "seat 0 of the table"):
        r = c.get(one_over.url(1) + "/record", headers=CALLERS[caller](one_over))
        assert (r.status_code, r.json()["code"]) == (409, "deal-embargoed"), r.text


def test_the_refusal_is_in_chinese_too(in_play: Scene) -> None:
    c = in_play.c
    r = c.get(in_play.url(2) + "/public", headers={"Accept-Language": "zh-CN"})
    assert r.status_code == 403, r.text
    body = r.json()
    assert body["title"] == "牌桌暂不开放观战"
    assert body["detail"].startswith("本轮比赛各桌打同样的牌")
    assert "比赛轮次：" in body["detail"]  # all Chinese, the round named (D-contract)


def test_a_seats_etag_is_no_304_for_a_spectator(one_over: Scene) -> None:
    """R36: the ETag of a seat's view of a table that is over (no clock marker: the kind
    answered from memory for an ordinary match) never answers a spectator's poll."""
    c = one_over.c
    seat = c.get(one_over.url(1) + "/view", headers=auth(one_over.seats[1][1]))
    assert seat.status_code == 200, seat.text
    tag = seat.headers["etag"]
    assert "-" not in tag  # a stable view
    for _ in range(2):
        r = c.get(one_over.url(1) + "/public", headers={"If-None-Match": tag})
        assert (r.status_code, r.json()["code"]) == (403, "table-closed")
        organiser = {**auth(one_over.organiser), "If-None-Match": tag}
        assert c.get(one_over.url(1) + "/public", headers=organiser).status_code == 304


def test_an_open_tables_public_etag_answers_304(completed: Scene) -> None:
    c = completed.c
    first = c.get(completed.url(2) + "/public")
    assert first.status_code == 200, first.text
    tag = {"If-None-Match": first.headers["etag"]}
    assert c.get(completed.url(2) + "/public", headers=tag).status_code == 304


@pytest.mark.parametrize("path", ["", "/public", "/rounds", "/rounds/1", "/history", "/state"])
def test_an_ordinary_match_is_read_anonymously_as_before(world: World, path: str) -> None:
    """R33: outside tournaments nothing changes (and /public still ignores tokens), in the
    same app and store as the tournaments' tables."""
    c = world.client
    match_id = c.post("/v1/matches", json={}).json()["matchId"]
    for seat in range(4):
        r = c.post(f"/v1/matches/{match_id}/seats/{seat}", json={"name": f"p{seat}"})
        assert r.status_code == 201, r.text
    url = f"/v1/matches/{match_id}{path}" + ("?version=1" if path == "/state" else "")
    assert c.get(url).status_code == 200
    if path in TOKENLESS:
        assert c.get(url, headers=auth("s.not-a-token.x")).status_code == 200


# -- the live stream ----------------------------------------------------------------------------


async def frames(s: Scene, table: int, headers: dict[str, str], query: str = "") -> Any:
    hub = InProcessHub()
    hub.attach(s.service)
    live = LiveStreams(s.service, hub, StreamSettings(heartbeat_s=30, lifetime_s=60))
    app = build_app(live)
    async with app.lifespan(), stream(app, f"{s.url(table)}/stream{query}", headers) as sse:
        if sse.status != 200:
            await sse.rest()
            return sse.status, sse.body
        return sse.status, (await sse.next_view()).view()


STREAM_CALLERS: list[tuple[str, str, tuple[int, str | None]]] = [
    *((caller, "", answer) for caller, answer in CLOSED_ANSWERS.items()),
    ("another table's seat", "?token=", (403, "table-closed")),  # EventSource's way
    ("seat 3 of the table", "?token=", (200, None)),
]


@pytest.mark.anyio
@pytest.mark.parametrize(("caller", "query", "answer"), STREAM_CALLERS)
async def test_the_stream_of_a_table_in_play_is_closed_to_spectators(
    in_play: Scene, caller: str, query: str, answer: tuple[int, str | None]
) -> None:
    """R36 over SSE: refused before the stream starts; a seat streams its seat (R33), the
    organiser the public view."""
    headers = CALLERS[caller](in_play)
    if query:
        query += headers.pop("Authorization").removeprefix("Bearer ")
    status, got = await frames(in_play, 1, headers, query)
    assert status == answer[0], got
    if answer[1] is not None:
        assert f'"code":"{answer[1]}"'.encode() in got
        assert in_play.seats[1][0].encode() not in got
    else:
        assert got.get("seat") == SEAT_OF.get(caller)


@pytest.mark.anyio
async def test_the_stream_opens_once_the_round_completes(completed: Scene) -> None:
    status, view = await frames(completed, 2, {})
    assert status == 200 and view["kind"] == "public"

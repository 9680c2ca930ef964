"""Travellers and the duplicate ranking of a boards event over REST (R36; docs/tournaments.md,
"Travellers", "The duplicate ranking"): hidden while the round is in play — to everyone,
the seats of the round's own tables too, though a table has finished the board —, then
each traveller agrees with the tables' records, and the standings (JSON, CSV), the
display and the crosstable carry the same ranking."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from infra.settings import Settings
from infra.store import build_service
from services.game import GameService
from tests.api.rest import Json, Table, auth, choose, client, settle
from tests.conftest import FakeClock, FixedSeeds

DEALS = 2


def team(name: str, kind: str) -> Json:
    return {"name": name, "players": [{"name": f"{name}-{i}", "kind": kind} for i in range(2)]}


@pytest.fixture
def store() -> Iterator[GameService]:
    service = build_service(Settings(backend="popo"), clock=FakeClock(), seeds=FixedSeeds())
    try:
        yield service
    finally:
        service.close()


@pytest.fixture
def c(store: GameService) -> Iterator[TestClient[Litestar]]:
    with client(store) as test_client:
        yield test_client


def step(table: Table) -> bool:
    """One move by a seat its view offers one to (the table is closed to spectators, R36)."""
    for seat in range(4):
        choice = choose(table.view(seat))
        if choice is not None:
            r = table.act(seat, *choice)
            assert r.status_code == 200, r.text
            return True
    return False


def refused(c: TestClient[Litestar], url: str, headers: dict[str, str]) -> bool:
    r = c.get(url, headers=headers)
    return r.status_code == 409 and r.json()["type"].endswith("round-in-play")


def test_r36_travellers_hidden_until_the_round_completes_then_agree_with_the_records(
    c: TestClient[Litestar],
) -> None:
    made = c.post(
        "/v1/tournaments",
        json={
            "name": "boards night",
            "teams": [
                team("P0", "human"),
                team("B1", "heuristic"),
                team("P2", "human"),
                team("B3", "heuristic"),
            ],
            "format": "swiss",
            "swissRounds": 1,
            "matchLength": DEALS,
            "deals": "boards",
        },
    )
    assert made.status_code == 201, made.text
    tid, org = made.json()["tournamentId"], auth(made.json()["organiserToken"])
    url = f"/v1/tournaments/{tid}"
    scheduled = c.post(f"{url}/rounds", headers=org).json()
    people = next(
        t for t in scheduled["round"]["tables"] if {t["firstTeam"], t["secondTeam"]} == {0, 2}
    )
    tokens = {s["seat"]: s["token"] for s in scheduled["seatTokens"]}
    assert sorted(tokens) == [0, 1, 2, 3]
    settle(c)  # the bots' table plays both boards
    c.post(f"{url}/results/collect", headers=org)
    reads = [
        f"{url}/rounds/1/boards",
        f"{url}/rounds/1/boards/1",
        f"/tournaments/{tid}/rounds/1/boards",
        f"/tournaments/{tid}/rounds/1/boards/1",
    ]
    for read in reads:  # the bots' table has played board 1; the round is in play
        for who in ({}, org, *(auth(tokens[s]) for s in range(4))):
            assert refused(c, read, who), read
    assert c.get(f"{url}/standings").json()["duplicate"]["lines"] == []

    table = Table(c, people["matchId"], "", [tokens[s] for s in range(4)])
    for _ in range(2000):
        if table.view(0)["matchFinished"]:
            break
        if not step(table):
            settle(c, timeout=5)
    else:
        raise AssertionError("the people's table did not end")
    c.post(f"{url}/results/collect", headers=org)

    index = c.get(f"{url}/rounds/1/boards")
    assert index.status_code == 200, index.text
    assert [(b["board"], b["tables"]) for b in index.json()["boards"]] == [(1, 2), (2, 2)]
    tables = c.get(f"{url}/rounds/1/tables").json()
    recorded: dict[tuple[int, int], Any] = {}
    for t in tables:
        summary = c.get(f"/v1/matches/{t['matchId']}").json()
        for r in summary["rounds"]:
            recorded[t["table"], r["number"]] = r["result"]
    totals: dict[int, int] = {}
    for board in range(1, DEALS + 1):
        v = c.get(f"{url}/rounds/1/boards/{board}")
        assert v.status_code == 200, v.text
        lines = v.json()["lines"]
        assert [x["table"] for x in lines] == [1, 2]
        for x in lines:
            result = recorded[x["table"], board]
            assert (x["points"], x["dealer"]) == (result["attackersTotal"], result["dealer"])
            assert x["dealer"] == v.json()["playedBoard"]["dealer"]
            assert x["attackersMatchpoints"] + x["defendersMatchpoints"] == x["top"] == 2
            for side in ("attackers", "defenders"):
                totals[x[side]] = totals.get(x[side], 0) + x[f"{side}Matchpoints"]
        page = c.get(f"/tournaments/{tid}/rounds/1/boards/{board}?lang=zh-CN")
        assert page.status_code == 200 and "牌局记录" in page.text
    assert c.get(f"{url}/rounds/1/boards/3").status_code == 404

    standings = c.get(f"{url}/standings").json()["duplicate"]
    assert standings["rounds"] == [1] and "share the rank" in standings["tieRule"]
    assert {x["team"]: x["matchpoints"] for x in standings["lines"]} == totals
    assert all(x["top"] == 2 * DEALS for x in standings["lines"])
    rows = list(csv.DictReader(io.StringIO(c.get(f"{url}/standings?format=csv").text)))
    assert {int(r["team"]): int(r["matchpoints"]) for r in rows} == totals
    assert all(r["percent"] and r["duplicate_rank"] for r in rows)
    display = c.get(f"{url}/display").json()["duplicate"]
    assert display == standings
    assert c.get(f"{url}/crosstable").json()["duplicate"] == standings
    cross = c.get(f"/tournaments/{tid}/crosstable").text
    assert "Ranking by matchpoints" in cross and 'data-tiebreak="buchholz"' in cross

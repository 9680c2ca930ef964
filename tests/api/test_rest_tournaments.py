"""Tournaments through REST only (R35, R36): a bots-only Swiss tournament of 8 teams over
3 rounds end to end, duplicate deals checked against the revealed secrets, standings and
results as JSON and CSV, corrections, and the problems (401/403/404/409/422)."""

from __future__ import annotations

import csv
import hashlib
import io
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from uuid import uuid4

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from domain.tournament.duplicate import deal_seed
from infra.settings import Backend as BackendName
from infra.settings import Settings
from infra.store import build_service
from services.game import GameService
from tests.api.rest import Json, auth, client, settle, without_tokens
from tests.conftest import FakeClock, FixedSeeds

BOTS = ("heuristic", "random")


def teams(n: int, kinds: tuple[str, str] = BOTS) -> list[Json]:
    return [
        {
            "name": f"T{i}",
            "players": [{"name": f"a{i}", "kind": kinds[0]}, {"name": f"b{i}", "kind": kinds[1]}],
        }
        for i in range(n)
    ]


def create(c: TestClient[Litestar], **body: Any) -> tuple[str, str]:
    body = {"name": "cup", "teams": teams(4), "format": "round_robin", "matchLength": 1, **body}
    r = c.post("/v1/tournaments", json=body)
    assert r.status_code == 201, r.text
    assert r.headers["location"] == f"/v1/tournaments/{r.json()['tournamentId']}"
    return r.json()["tournamentId"], r.json()["organiserToken"]


def problem(r: Any, status: int, code: str) -> None:
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith("application/problem+json")
    assert r.json()["code"] == code
    assert r.json()["type"].endswith("/" + code)


@pytest.fixture
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[GameService]:
    """A service on the store named by the test's ``backend`` (POPO in memory, or the
    embedded SQLite file), with a fixed clock and seeds."""
    name: BackendName = request.node.callspec.params["backend"]
    settings = Settings(backend=name, sqlite_path=tmp_path / "events.sqlite3")
    service = build_service(settings, clock=FakeClock(), seeds=FixedSeeds())
    try:
        yield service
    finally:
        service.close()


@pytest.mark.parametrize(
    ("backend", "deals"),
    # SQLite saves each bot move durably (~2600 saves): one deal a match keeps it short
    [("popo", 2), ("sqlite", 1)],
)
def test_a_bots_only_swiss_tournament_of_8_teams_over_3_rounds(
    backend: str, deals: int, store: GameService, record_property: Any
) -> None:
    with client(store) as c:
        started = time.perf_counter()
        tid, token = create(c, teams=teams(8), format="swiss", swissRounds=3, matchLength=deals)
        url = f"/v1/tournaments/{tid}"
        bodies: list[str] = []  # every answer before each round's reveal
        met: set[frozenset[int]] = set()
        for number in (1, 2, 3):
            c.app.state.bots.pause()  # the round stays in play until its checks are done
            r = c.post(f"{url}/rounds", headers=auth(token))
            assert r.status_code == 201, r.text
            bodies.append(r.text)
            scheduled = r.json()["round"]
            assert scheduled["number"] == number and scheduled["secret"] is None
            assert scheduled["status"] == "in_play" and r.json()["seatTokens"] == []
            pairs = {frozenset((t["firstTeam"], t["secondTeam"])) for t in scheduled["tables"]}
            assert len(pairs) == 4 and not pairs & met  # Swiss: no rematch
            met |= pairs
            assert [t["firstTeamSeats"] for t in scheduled["tables"]] == [[0, 2], [1, 3]] * 2
            bodies += [c.get(url).text, c.get(f"{url}/rounds/{number}").text]
            problem(c.post(f"{url}/rounds", headers=auth(token)), 409, "round-in-play")

            c.app.state.bots.resume()
            settle(c)  # the bots play off the request path
            r = c.post(f"{url}/rounds/{number}/bots/run", headers=auth(token))
            assert r.status_code == 202, r.text
            run = r.json()
            assert run["completed"] and {t["status"] for t in run["tables"]} == {"finished"}
            secret = bytes.fromhex(run["round"]["secret"])
            assert hashlib.sha256(secret).hexdigest() == scheduled["commitment"]  # R35
            assert all(secret.hex() not in body for body in bodies)  # never before the reveal
            check_duplicate_deals(c, run["round"]["tables"], secret)

        elapsed = time.perf_counter() - started
        record_property(f"bots_swiss_8x3_seconds_{backend}", round(elapsed, 3))
        print(f"\nbots-only Swiss, 8 teams x 3 rounds, rounds:{deals}, {backend}: {elapsed:.2f} s")

        summary = c.get(url).json()
        assert summary["status"] == "finished" and len(summary["rounds"]) == 3
        standings = c.get(f"{url}/standings").json()
        lines = standings["standings"]
        assert [s["rank"] for s in lines] == list(range(1, 9))
        assert sum(s["matchPoints"] for s in lines) == 2 * 12  # 12 matches, 2 points each
        assert all(s["played"] == 3 for s in lines)
        keys = [(s["matchPoints"], s["buchholz"]) for s in lines]
        assert keys == sorted(keys, reverse=True)  # Swiss: match points, then Buchholz
        assert standings["tiebreaks"][1].startswith("buchholz")
        rows = list(csv.DictReader(io.StringIO(c.get(f"{url}/standings?format=csv").text)))
        assert [int(row["team"]) for row in rows] == [s["team"] for s in lines]
        results = c.get(f"{url}/results", headers={"accept": "text/csv"})
        assert results.headers["content-type"].startswith("text/csv")
        assert len(list(csv.DictReader(io.StringIO(results.text)))) == 12
        assert c.get(f"{url}/results").json()["standings"] == lines
        problem(c.post(f"{url}/rounds", headers=auth(token)), 409, "tournament-over")
        assert elapsed < 60


def check_duplicate_deals(c: TestClient[Litestar], tables: list[Json], secret: bytes) -> None:
    """R36: every table's first deal is dealt from HMAC(secret, deal 1, dealing n): the
    same cards at every table that dealt once (n = 1), the same redeal where one was."""
    by_dealing = {hashlib.sha256(deal_seed(secret, 1, n)).hexdigest(): n for n in range(1, 9)}
    for table in tables:
        dealt = c.get(f"/v1/matches/{table['matchId']}/rounds/1").json()
        assert dealt["commitment"] in by_dealing, "the deal's seed is not the tournament's"
        verified = c.get(f"/v1/matches/{table['matchId']}/rounds/1/verify").json()
        assert verified["ok"] is True  # R35: the revealed seed deals the recorded hands


def test_people_seats_tokens_and_the_round_in_play(c: TestClient[Litestar]) -> None:
    people = teams(1, ("human", "human"))
    people[0]["name"] = "People"
    tid, token = create(c, teams=[*people, *teams(3)])
    r = c.post(f"/v1/tournaments/{tid}/rounds", headers=auth(token))
    assert r.status_code == 201, r.text
    seats = r.json()["seatTokens"]
    assert sorted((s["player"], s["team"]) for s in seats) == [("a0", 0), ("b0", 0)]
    view = c.get(f"/v1/matches/{seats[0]['matchId']}/view", headers=auth(seats[0]["token"]))
    assert view.status_code == 200 and view.json()["seat"] == seats[0]["seat"]
    settle(c)
    run = c.post(f"/v1/tournaments/{tid}/rounds/1/bots/run", headers=auth(token)).json()
    assert not run["completed"] and run["round"]["secret"] is None
    assert sorted(t["status"] for t in run["tables"]) == ["finished", "playing"]
    problem(c.post(f"/v1/tournaments/{tid}/rounds", headers=auth(token)), 409, "round-in-play")
    waiting = next(t for t in run["tables"] if t["status"] == "playing")
    finish = f"/v1/tournaments/{tid}/rounds/1/tables/{waiting['table']}/finish"
    problem(c.post(finish, json={"reason": "no show"}), 401, "unauthorized")
    r = c.post(finish, json={"reason": "no show"}, headers=auth(token))
    assert r.status_code == 200, r.text
    assert r.json()["result"] == {
        "winner": None,  # R32: no deal scored, the levels are equal: a draw
        "levels": [0, 0],
        "points": [0, 0],
        "deals": 0,
        "corrected": False,
        "correctedBy": None,
        "reason": None,
        "forfeit": False,
        "entered": False,  # ended by the organiser, not a result entered on paper
    }
    problem(c.post(finish, json={"reason": "again"}, headers=auth(token)), 409, "match-finished")
    done = c.get(f"/v1/tournaments/{tid}/rounds/1").json()
    assert done["status"] == "completed" and done["secret"] is not None
    assert c.get(f"/v1/matches/{waiting['matchId']}").json()["finished"] is True


def test_organiser_token_problems(c: TestClient[Litestar]) -> None:
    tid, token = create(c)
    url = f"/v1/tournaments/{tid}/rounds"
    other_tid, other_token = create(c)
    match = c.post("/v1/matches", json={}).json()
    problem(c.post(url), 401, "unauthorized")
    problem(c.post(url, headers=auth("nonsense")), 401, "unauthorized")
    forged = token.rsplit(".", 1)[0] + ".forged"
    problem(c.post(url, headers=auth(forged)), 401, "unauthorized")
    problem(c.post(url, headers=auth(other_token)), 403, "forbidden")
    problem(c.post(url, headers=auth(match["organiserToken"])), 403, "forbidden")
    seat = "s." + tid.replace("-", "") + ".x"
    problem(c.post(url, headers=auth(seat)), 403, "forbidden")
    assert c.get(f"/v1/tournaments/{other_tid}").json()["rounds"] == []
    problem(c.get(f"/v1/tournaments/{match['matchId']}"), 404, "not-found")  # not one
    problem(c.get(f"/v1/matches/{tid}"), 404, "not-found")


def test_the_organiser_token_is_checked_before_the_idempotency_key(c: TestClient[Litestar]) -> None:
    """A key already used by the organiser, replayed without the token (or with another
    one), is a 401/403 — never the stored answer, never a 422 about the key."""
    tid, token = create(c)
    _, other_token = create(c)
    url = f"/v1/tournaments/{tid}/rounds"
    key = {"idempotency-key": "round-1"}
    first = c.post(url, headers={**auth(token), **key})
    assert first.status_code == 201, first.text
    problem(c.post(url, headers=key), 401, "unauthorized")
    # the same key first used without a token (creating a tournament is open to all):
    # reused without a token on an organiser route, it is still a 401, not a 422
    anon = {"idempotency-key": "anon-1"}
    body = {"name": "cup", "teams": teams(4), "format": "round_robin", "matchLength": 1}
    made = c.post("/v1/tournaments", json=body, headers=anon)
    assert made.status_code == 201, made.text
    problem(c.post(url, headers=anon), 401, "unauthorized")
    problem(c.post(url, headers={**auth(other_token), **key}), 403, "forbidden")
    again = c.post(url, headers={**auth(token), **key})
    # bots only: the first answer minted no seat token, so its replay is the same answer
    assert first.json()["seatTokens"] == [] and not first.json()["tokenWithheld"]
    assert (again.status_code, again.content) == (201, first.content)


@pytest.mark.parametrize(
    ("case", "body", "code"),
    [
        ("swiss rounds past a round-robin", {"format": "swiss", "swissRounds": 4}, "invalid-input"),
        ("swiss without rounds", {"format": "swiss"}, "invalid-input"),
        ("matchEnd is the match length's", {"rules": {"matchEnd": "wrap"}}, "validation-failed"),
        ("an unknown field", {"prizes": 3}, "validation-failed"),
        (
            "three players",
            {"teams": [{"name": "x", "players": [{"name": "p"}] * 3}] * 2},
            "validation-failed",
        ),
        ("a match length of 0", {"matchLength": 0}, "validation-failed"),
        ("wrap as match length", {"matchLength": "wrap"}, "validation-failed"),
        ("one team", {"teams": teams(1)}, "invalid-input"),  # 2 teams unless registration
        ("same team names", {"teams": [teams(1)[0], teams(1)[0]]}, "invalid-input"),
        ("a robot", {"teams": teams(2, ("human", "robot"))}, "validation-failed"),
    ],
)
def test_bad_tournaments_are_422(c: TestClient[Litestar], case: str, body: Json, code: str) -> None:
    full = {"name": "cup", "teams": teams(4), "format": "round_robin", "matchLength": 1, **body}
    problem(c.post("/v1/tournaments", json=full), 422, code)


def test_reads_corrections_and_idempotent_creation(c: TestClient[Litestar]) -> None:
    key = {"Idempotency-Key": "cup-1"}
    body = {"name": "cup", "teams": teams(2), "format": "round_robin", "matchLength": 1}
    first = c.post("/v1/tournaments", json=body, headers=key)
    again = c.post("/v1/tournaments", json=body, headers=key)
    assert again.json() == without_tokens(first.json(), "organiserToken")
    assert again.headers["idempotent-replayed"] == "true"
    tid, token = first.json()["tournamentId"], first.json()["organiserToken"]
    url = f"/v1/tournaments/{tid}"
    problem(c.get(f"/v1/tournaments/{uuid4()}"), 404, "not-found")
    problem(c.get(f"{url}/rounds/1"), 404, "not-found")
    fix = {"winner": 1, "levels": [0, 2], "points": [0, 160], "by": "TD", "reason": "misdeal"}
    correction = f"{url}/rounds/1/tables/1/correction"
    problem(c.post(correction, json=fix, headers=auth(token)), 409, "round-not-scheduled")
    c.post(f"{url}/rounds", headers=auth(token))
    problem(c.post(correction, json=fix, headers=auth(token)), 409, "result-not-recorded")
    settle(c)
    c.post(f"{url}/rounds/1/bots/run", headers=auth(token))
    problem(c.post(f"{url}/rounds/2/bots/run", headers=auth(token)), 409, "round-not-scheduled")
    problem(
        c.post(correction, json={**fix, "winner": 5}, headers=auth(token)), 422, "invalid-input"
    )
    problem(c.post(correction, json=fix), 401, "unauthorized")
    r = c.post(correction, json=fix, headers=auth(token))
    assert r.status_code == 200, r.text
    table = r.json()
    assert table["result"]["corrected"] and table["result"]["correctedBy"] == "TD"
    assert c.get(f"{url}/rounds/1/tables").json() == [table]
    # a correction with an Idempotency-Key: its record is saved with the correction,
    # a retry replays the answer and records no second correction
    keyed, again_fix = {**auth(token), "idempotency-key": "fix-1"}, {**fix, "reason": "x"}
    first = c.post(correction, json=again_fix, headers=keyed)
    retry = c.post(correction, json=again_fix, headers=keyed)
    assert (first.status_code, retry.status_code) == (200, 200)
    assert retry.json() == first.json() and retry.headers["idempotent-replayed"] == "true"
    problem(c.post(correction, json=fix, headers=keyed), 409, "idempotency-key-reused")
    table = c.get(f"{url}/rounds/1/tables").json()[0]
    r = c.post(correction, json=fix, headers=auth(token))  # back to the first correction
    table = r.json()
    assert c.get(f"{url}/rounds").json()[0]["tables"] == [table]
    top = c.get(f"{url}/standings").json()["standings"][0]
    assert (top["team"], top["levelsGained"], top["pointsFor"]) == (1, 2, 160)
    row = next(csv.DictReader(io.StringIO(c.get(f"{url}/results?format=csv").text)))
    assert (row["winner"], row["corrected_by"], row["reason"]) == ("1", "TD", "misdeal")
    collected = c.post(f"{url}/results/collect", headers=auth(token))
    assert collected.status_code == 200 and collected.json()["status"] == "finished"

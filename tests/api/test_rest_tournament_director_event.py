"""The 8-team Swiss walkthrough again, the director's way (R36; docs/tournaments.md, "The
director's room"): every table plays on paper and its result is entered, round 1 has a
requested bye (a half point) beside the pairing's bye, round 2 has a substitute and is
paused with its clock stopped, round 3's pairing is published before it starts. The final
standings are checked against a table computed by hand below."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from datetime import datetime, timedelta

import pytest

from infra.settings import Settings
from infra.store import build_service
from services.game import GameService
from services.tournaments.clerk import Clerk
from tests.api.rest import Json, auth, client
from tests.commands import bus_of
from tests.conftest import FakeClock, FixedSeeds

PAIRINGS = {
    1: ([(0, 3), (1, 4), (2, 5)], 6),  # T7 asked to sit out: seven teams, T6 the bye
    2: ([(0, 1), (2, 3), (4, 5), (6, 7)], None),
    3: ([(0, 5), (1, 7), (2, 6), (3, 4)], None),
}
RESULTS = {  # levels gained (first, second) per table, as handed in on paper
    1: [(3, 1), (1, 1), (0, 2)],
    2: [(0, 2), (0, 0), (2, 1), (1, 3)],
    3: [(2, 0), (1, 1), (0, 1), (1, 0)],
}
# By hand: win 2, draw 1, loss 0, the pairing's bye 2, a requested bye 1 (half a win).
#   T0 W L W = 4   T1 D W D = 4   T2 L D L = 1   T3 L D W = 3
#   T4 D W L = 3   T5 W L L = 2   T6 bye L W = 4  T7 requested W D = 4
# Buchholz (opponents' match points): T0 3+4+2 = 9, T1 3+4+4 = 11, T2 2+3+4 = 9,
#   T3 4+1+3 = 8, T4 4+2+3 = 9, T5 1+3+4 = 8, T6 4+1 = 5, T7 4+4 = 8
# Levels: T0 3+0+2, T1 1+2+1, T2 0, T3 1+0+1, T4 1+2+0, T5 2+1+0, T6 0+1+1, T7 0+3+1
EXPECTED = [  # rank, team, matchPoints, buchholz, levelsGained, played, byes
    (1, 1, 4, 11, 4, 3, 0),
    (2, 0, 4, 9, 5, 3, 0),
    (3, 7, 4, 8, 4, 2, 1),
    (4, 6, 4, 5, 2, 2, 1),
    (5, 4, 3, 9, 3, 3, 0),
    (6, 3, 3, 8, 2, 3, 0),
    (7, 5, 2, 8, 3, 3, 0),
    (8, 2, 1, 9, 0, 3, 0),
]


def team(name: str) -> Json:
    return {
        "name": name,
        "players": [{"name": f"{name}-a", "kind": "human"}, {"name": f"{name}-b", "kind": "human"}],
    }


@pytest.fixture
def store() -> Iterator[GameService]:
    service = build_service(Settings(backend="popo"), clock=FakeClock(), seeds=FixedSeeds())
    try:
        yield service
    finally:
        service.close()


def test_an_eight_team_swiss_on_paper_with_a_requested_bye_a_substitute_and_a_pause(
    store: GameService,
) -> None:
    clock = store.clock
    assert isinstance(clock, FakeClock)
    with client(store) as c:
        r = c.post(
            "/v1/tournaments",
            json={
                "name": "Paper Swiss",
                "teams": [team(f"T{i}") for i in range(8)],
                "format": "swiss",
                "swissRounds": 3,
                "matchLength": 2,
            },
        )
        assert r.status_code == 201, r.text
        url, org = f"/v1/tournaments/{r.json()['tournamentId']}", auth(r.json()["organiserToken"])
        bye = {"team": 7, "round": 1, "reason": "a wedding"}
        assert c.post(f"{url}/byes", json=bye, headers=org).status_code == 200
        sub = {"round": 2, "team": 0, "player": 1, "name": "Sub", "reason": "T0-b is ill"}
        assert c.post(f"{url}/substitutes", json=sub, headers=org).status_code == 200

        for number in (1, 2, 3):
            tables, odd = PAIRINGS[number]
            body = {
                "tables": [{"firstTeam": a, "secondTeam": b} for a, b in tables],
                "bye": odd,
                "reason": "the director's draw",
                "by": "TD",
            }
            r = c.post(f"{url}/rounds/{number}/pairings", json=body, headers=org)
            assert r.status_code == 200, r.text
            if number == 3:  # published: anyone may see it before it starts
                assert c.get(f"{url}/preview").status_code == 401
                assert c.post(f"{url}/publish", headers=org).status_code == 200
                public = c.get(f"{url}/preview").json()
                assert [(t["firstTeam"], t["secondTeam"]) for t in public["tables"]] == tables
            timing = {"deadlineS": 600} if number == 2 else None
            r = c.post(f"{url}/rounds", json=timing, headers=org)
            assert r.status_code == 201, r.text
            state = r.json()["round"]
            assert [(t["firstTeam"], t["secondTeam"]) for t in state["tables"]] == tables
            if number == 1:
                assert state["bye"] == 6 and state["requestedByes"] == [7]
            if number == 2:
                sat = state["tables"][0]["players"]
                assert "Sub" in sat and "T0-b" not in sat  # the substitute sits down
                scheduled_at = datetime.fromisoformat(state["deadline"]) - timedelta(seconds=600)
                clock.advance(timedelta(seconds=100))
                assert c.post(f"{url}/rounds/2/pause", json={"reason": "power cut"},
                              headers=org).status_code == 200  # fmt: skip
                clock.advance(timedelta(seconds=1000))
                assert Clerk(bus_of(store)).tick().deadlines == 0  # paused: nothing is flagged
                resumed = c.post(f"{url}/rounds/2/resume", headers=org).json()["rounds"][1]
                assert not resumed["paused"]
                moved = datetime.fromisoformat(resumed["deadline"]) - scheduled_at
                assert moved == timedelta(seconds=600 + 1000)  # the pause's length added
            for t, (first, second) in enumerate(RESULTS[number], start=1):
                r = c.post(
                    f"{url}/rounds/{number}/tables/{t}/result",
                    json={"levels": [first, second], "reason": "paper sheet", "by": "TD"},
                    headers=org,
                )
                assert r.status_code == 200, r.text
            assert c.get(f"{url}/rounds/{number}").json()["status"] == "completed"

        assert c.get(url).json()["status"] == "finished"
        lines = c.get(f"{url}/standings").json()["standings"]
        got = [
            (s["rank"], s["team"], s["matchPoints"], s["buchholz"], s["levelsGained"],
             s["played"], s["byes"])
            for s in lines
        ]  # fmt: skip
        assert got == EXPECTED
        rows = list(csv.DictReader(io.StringIO(c.get(f"{url}/results?format=csv").text)))
        assert [r["row"] for r in rows] == ["table"] * 11 + ["bye", "requested"]
        assert all(r["entered"] == "True" for r in rows[:11])
        crosstable = {line["team"]: line for line in c.get(f"{url}/crosstable").json()["lines"]}
        assert [cell["outcome"] for cell in crosstable[7]["rounds"]] == ["R", "W", "D"]
        assert [cell["outcome"] for cell in crosstable[6]["rounds"]] == ["B", "L", "W"]

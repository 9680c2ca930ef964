"""The organisers' event (T16): an 8-team Swiss event run through REST end to end by an organiser
— registration with self-registered and organiser-added teams, check-in (a no-show is
left out), a forbidden pairing, the preview, one late entry, one withdrawal during a
round (its opponent scores a bye), one adjustment — while bots and turn timers do the
playing: some seats are people who never come, and the sweeper times them out
(short timers, a fake clock). The final standings and tiebreaks are checked against a
table computed here, independently, from the tables' results in the export."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator

import msgspec
import pytest
from litestar import Litestar
from litestar.testing import TestClient

from infra.settings import Settings
from infra.store import build_service
from services.game import GameService
from services.sweeper import Sweeper
from services.tournaments.clerk import Clerk
from tests.api.rest import Json, auth, client
from tests.commands import bus_of
from tests.conftest import FakeClock, FixedSeeds

BOTS = ("heuristic", "random")
ABSENT = ("human", "random")
"""A team whose first player never comes: the sweeper's timeout bot moves for them."""


def team(name: str, kinds: tuple[str, str] = BOTS) -> Json:
    return {
        "name": name,
        "players": [
            {"name": f"{name}-a", "kind": kinds[0]},
            {"name": f"{name}-b", "kind": kinds[1]},
        ],
    }


@pytest.fixture
def store() -> Iterator[GameService]:
    service = build_service(Settings(backend="popo"), clock=FakeClock(), seeds=FixedSeeds())
    try:
        yield service
    finally:
        service.close()


def play_round(c: TestClient[Litestar], store: GameService, url: str, number: int) -> None:
    """Bots and timers play until every table of the round has its result: the sweeper
    moves bots and times out the absent people; the clerk collects the results."""
    clock = store.clock
    assert isinstance(clock, FakeClock)
    sweeper = Sweeper(bus_of(store), rescan_s=0)
    clerk = Clerk(bus_of(store))
    for _ in range(400):
        sweeper.sweep()
        clerk.tick()
        if c.get(f"{url}/rounds/{number}").json()["status"] == "completed":
            return
        clock.advance(seconds=31)  # past any turn limit (1 s) and the declaring time (30 s)
    raise AssertionError(f"round {number} did not complete")


def expected_table(export: Json, order: list[str]) -> list[Json]:
    """The standings computed by hand from the export's tables, byes and adjustments
    (the teams absent at the start left out):
    win 2, draw 1, loss 0, bye (or forfeit win) 2, plus adjustments; then Buchholz (the
    opponents' match points), head-to-head among the teams still tied, levels gained,
    point differential, registration order."""
    teams = export["tournament"]["teams"]
    n = len(teams)
    mp, levels, pf, pa = [0] * n, [0] * n, [0] * n, [0] * n
    opponents: list[list[int]] = [[] for _ in range(n)]
    games: list[tuple[int, int, int | None]] = []
    for rnd in export["tournament"]["rounds"]:
        for bye in ([rnd["bye"]] if rnd["bye"] is not None else []) + rnd["awardedByes"]:
            mp[bye] += 2
        for table in rnd["tables"]:
            a, b, res = table["firstTeam"], table["secondTeam"], table["result"]
            assert res is not None
            if res["forfeit"]:
                mp[res["winner"]] += 2
                continue
            games.append((a, b, res["winner"]))
            opponents[a].append(b)
            opponents[b].append(a)
            for me, i in ((a, 0), (b, 1)):
                mp[me] += 1 if res["winner"] is None else 2 * (res["winner"] == me)
                levels[me] += res["levels"][i]
                pf[me] += res["points"][i]
                pa[me] += res["points"][1 - i]
    for adj in export["adjustments"]:
        mp[adj["team"]] += adj["matchPoints"]
    buchholz = [sum(mp[o] for o in opponents[t]) for t in range(n)]
    assert order == ["buchholz", "head_to_head", "levels_gained", "point_differential"]

    def h2h(t: int) -> int:
        tied = {u for u in range(n) if (mp[u], buchholz[u]) == (mp[t], buchholz[t])}
        if len(tied) == 1:
            return 0
        return sum(
            1 if w is None else 2 * (w == t) for a, b, w in games if t in (a, b) and {a, b} <= tied
        )

    entered = [t for t in range(n) if teams[t]["status"] != "absent"]  # absent: not ranked
    ranked = sorted(
        entered, key=lambda t: (-mp[t], -buchholz[t], -h2h(t), -levels[t], -(pf[t] - pa[t]), t)
    )
    return [
        {
            "rank": rank,
            "team": t,
            "matchPoints": mp[t],
            "buchholz": buchholz[t],
            "headToHead": h2h(t),
            "levelsGained": levels[t],
            "pointDifferential": pf[t] - pa[t],
        }
        for rank, t in enumerate(ranked, start=1)
    ]


def test_an_eight_team_swiss_event_with_a_withdrawal_a_late_entry_and_an_adjustment(
    store: GameService,
) -> None:
    with client(store) as c:
        r = c.post(
            "/v1/tournaments",
            json={
                "name": "Club Swiss",
                "format": "swiss",
                "swissRounds": 3,
                "matchLength": 1,
                "registration": True,
                "checkinRequired": True,
                "timers": {"declareMs": 1000, "buryMs": 1000, "playMs": 1000},
                "roundDeadlineS": 86_400,
                "deadlineRule": "flag",
            },
        )
        assert r.status_code == 201, r.text
        tid, organiser = r.json()["tournamentId"], r.json()["organiserToken"]
        url = f"/v1/tournaments/{tid}"
        listed = c.get("/v1/tournaments?status=registration").json()["items"]
        assert [t["tournamentId"] for t in listed] == [tid]

        # registration: four teams register themselves (team tokens), four by the organiser,
        # and a ninth that never checks in
        own: dict[int, str] = {}
        for i in range(9):
            kinds = ABSENT if i in (1, 6) else BOTS
            mine = i % 2 == 0 and i < 8
            r = c.post(
                f"{url}/teams",
                json=team(f"T{i}", kinds),
                headers={} if mine else auth(organiser),
            )
            assert r.status_code == 201, r.text
            assert r.json()["team"] == i
            assert (r.json()["teamToken"] is not None) == mine
            if mine:
                own[i] = r.json()["teamToken"]
        for i in range(8):
            who = own.get(i, organiser)
            assert c.post(f"{url}/teams/{i}/checkin", headers=auth(who)).status_code == 200
        r = c.post(f"{url}/teams/2/checkin", headers=auth(own[0]))
        assert r.status_code == 403 and r.json()["code"] == "forbidden"  # another team's token
        r = c.post(f"{url}/start", headers=auth(organiser))
        assert r.status_code == 200, r.text
        statuses = [t["status"] for t in r.json()["teams"]]
        assert statuses == ["playing"] * 8 + ["absent"]

        # T0 and T4 are one club: never paired
        forbid = {"teams": [0, 4], "reason": "one club"}
        assert c.post(f"{url}/forbidden", json=forbid, headers=auth(organiser)).status_code == 200
        preview = c.get(f"{url}/preview", headers=auth(organiser)).json()
        assert preview["number"] == 1 and preview["bye"] is None

        met: set[frozenset[int]] = set()
        for number in (1, 2, 3):
            if number == 2:  # a late entry from round 2: nine teams, so a bye
                r = c.post(f"{url}/teams", json=team("Late"), headers=auth(organiser))
                assert r.status_code == 201, r.text
                late = r.json()["team"]
                assert late == 9 and r.json()["tournament"]["teams"][late]["fromRound"] == 2
            preview = c.get(f"{url}/preview", headers=auth(organiser)).json()
            if number == 2:  # T3's table must still be in play when T3 withdraws below
                c.app.state.bots.pause()
            r = c.post(f"{url}/rounds", headers=auth(organiser))
            assert r.status_code == 201, r.text
            scheduled = r.json()["round"]
            pairs = [(t["firstTeam"], t["secondTeam"]) for t in scheduled["tables"]]
            assert pairs == [(t["firstTeam"], t["secondTeam"]) for t in preview["tables"]]
            assert scheduled["bye"] == preview["bye"]
            assert frozenset((0, 4)) not in {frozenset(p) for p in pairs}
            assert not {frozenset(p) for p in pairs} & met  # Swiss: no rematch
            met |= {frozenset(p) for p in pairs}
            if number == 2:
                assert scheduled["bye"] is not None  # nine teams
                sheet = c.get(f"{url}/rounds/2/sheet").text
                assert "Bye" in sheet and "Table  1" in sheet
                rows = list(
                    csv.DictReader(io.StringIO(c.get(f"{url}/rounds/2/sheet?format=csv").text))
                )
                assert len(rows) == len(pairs) + 1
                # T3 withdraws during round 2, before its table ends: forfeited
                r = c.post(
                    f"{url}/teams/3/withdraw", json={"reason": "ill"}, headers=auth(organiser)
                )
                assert r.status_code == 200, r.text
                table = next(
                    t for t in r.json()["rounds"][1]["tables"] if 3 in pairs[t["table"] - 1]
                )
                assert table["result"]["forfeit"] and table["result"]["winner"] != 3
                c.app.state.bots.resume()
            if number == 3:
                assert 3 not in {t for p in pairs for t in p} and scheduled["bye"] is None
                # an absent player's token is re-issued: the old one stops working
                human = r.json()["seatTokens"][0]
                match_view = f"/v1/matches/{human['matchId']}/view"
                assert c.get(match_view, headers=auth(human["token"])).status_code == 200
                again = c.post(
                    f"{url}/rounds/3/tables/{human['table']}/tokens", headers=auth(organiser)
                )
                assert again.status_code == 200, again.text
                fresh = next(s for s in again.json()["seatTokens"] if s["seat"] == human["seat"])
                assert c.get(match_view, headers=auth(human["token"])).status_code == 401
                assert c.get(match_view, headers=auth(fresh["token"])).status_code == 200
            play_round(c, store, url, number)
            if number == 2:  # a penalty after round 2
                r = c.post(
                    f"{url}/adjustments",
                    json={"team": 5, "matchPoints": -1, "reason": "late arrival", "by": "TD"},
                    headers=auth(organiser),
                )
                assert r.status_code == 200, r.text

        summary = c.get(url).json()
        assert summary["status"] == "finished"
        # the absent people were moved for by the sweeper's timeouts (the tables' timers)
        absent_tables = [
            t["matchId"]
            for rnd in summary["rounds"]
            for t in rnd["tables"]
            if {1, 6} & {t["firstTeam"], t["secondTeam"]} and not t["result"]["forfeit"]
        ]
        assert absent_tables
        for match_id in absent_tables:
            page = c.get(f"/v1/matches/{match_id}/history?limit=1000").json()
            assert "TurnTimedOut" in {item["type"] for item in page["items"]}, match_id
        assert c.get("/v1/tournaments?status=finished").json()["items"][0]["tournamentId"] == tid
        export = c.get(f"{url}/results").json()
        standings = c.get(f"{url}/standings").json()
        order = summary["settings"]["tiebreaks"]
        got = [
            {k: s[k] for k in ("rank", "team", "matchPoints", "buchholz", "headToHead",
                               "levelsGained", "pointDifferential")}
            for s in standings["standings"]
        ]  # fmt: skip
        assert got == expected_table(export, order)
        by_team = {s["team"]: s for s in standings["standings"]}
        assert by_team[5]["adjustment"] == -1 and by_team[3]["withdrawn"]
        assert 8 not in by_team  # the no-show never entered: not ranked (docs/tournaments.md)
        assert by_team[late]["played"] + by_team[late]["byes"] == 2  # rounds 2 and 3
        assert sum(s["byes"] for s in standings["standings"]) == 2  # round 2's bye + forfeit
        rows = list(csv.DictReader(io.StringIO(c.get(f"{url}/standings?format=csv").text)))
        assert [int(row["buchholz"]) for row in rows] == [s["buchholz"] for s in got]

        # the live standings: one frame (the final standings), resumable
        body = c.get(f"{url}/standings/stream").text
        frames = [f for f in body.split("\n\n") if f.startswith("event: standings")]
        assert len(frames) == 1
        head, data = frames[0].split("\ndata: ")
        assert f"id: {summary['version']}" in head
        assert msgspec.json.decode(data)["standings"] == standings["standings"]
        resumed = c.get(
            f"{url}/standings/stream", headers={"Last-Event-ID": str(summary["version"])}
        )
        assert "event: standings" not in resumed.text

        # the archive: every played table's record, each importable on its own
        archive = c.get(f"{url}/archive")
        assert archive.status_code == 200 and archive.headers["tournament-pending-tables"] == ""
        lines = archive.content.splitlines()
        assert len(lines) == sum(len(r["tables"]) for r in summary["rounds"])
        for line in lines:
            imported = c.post(
                "/v1/records", content=line, headers={"content-type": "application/json"}
            )
            assert imported.status_code == 200, imported.text

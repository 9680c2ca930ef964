"""The director's tools over REST (R32, R35, R36; docs/tournaments.md, "The director's
room"), one fact per test: paper results, the round clock (its own deadline, a table's
extension, pause and resume, PATCH of the time control), requested byes, substitutes,
renames, a cancelled round, a published pairing (the preview private until then), the
warnings of an override, fixed tables and balanced seats."""

from __future__ import annotations

import csv
import io
import json
import threading
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from api.tournaments import pages
from infra.settings import Settings
from infra.store import build_service
from services.game import GameService
from services.tournaments.clerk import Clerk
from tests.api.rest import Json, auth, client, settle
from tests.commands import bus_of
from tests.conftest import FakeClock, FixedSeeds
from tests.tournaments import Tournaments

PEOPLE = ("human", "human")
JSON = {"content-type": "application/json"}


def team(name: str, kinds: tuple[str, str] = PEOPLE) -> Json:
    return {
        "name": name,
        "players": [
            {"name": f"{name}-a", "kind": kinds[0]},
            {"name": f"{name}-b", "kind": kinds[1]},
        ],
    }


def problem(r: Any, status: int, code: str) -> None:
    assert r.status_code == status, r.text
    assert r.json()["code"] == code, r.text


def popo() -> Iterator[GameService]:
    service = build_service(Settings(backend="popo"), clock=FakeClock(), seeds=FixedSeeds())
    try:
        yield service
    finally:
        service.close()


@pytest.fixture(scope="module")
def store() -> Iterator[GameService]:
    """One store for the tests that work on a tournament of their own and never move the
    clock nor count what the clerk did across the store."""
    yield from popo()


@pytest.fixture(scope="module")
def c(store: GameService) -> Iterator[TestClient[Litestar]]:
    with client(store) as test_client:
        yield test_client


@pytest.fixture
def own_store() -> Iterator[GameService]:
    """A store of the test's own: it advances the clock and counts the clerk's deadlines."""
    yield from popo()


@pytest.fixture
def own(own_store: GameService) -> Iterator[TestClient[Litestar]]:
    with client(own_store) as test_client:
        yield test_client


def create(c: TestClient[Litestar], n: int = 4, **body: Any) -> tuple[str, dict[str, str]]:
    body = {
        "name": "club night",
        "teams": [team(f"T{i}") for i in range(n)],
        "format": "swiss",
        "swissRounds": 3,
        "matchLength": 2,
        **body,
    }
    r = c.post("/v1/tournaments", json=body)
    assert r.status_code == 201, r.text
    return f"/v1/tournaments/{r.json()['tournamentId']}", auth(r.json()["organiserToken"])


def enter(
    c: TestClient[Litestar], url: str, org: dict[str, str], n: int, t: int, levels: list[int]
) -> Json:
    r = c.post(
        f"{url}/rounds/{n}/tables/{t}/result",
        json={"levels": levels, "reason": "played on paper", "by": "TD"},
        headers=org,
    )
    assert r.status_code == 200, r.text
    view: Json = r.json()
    return view


def kinds_of(store: GameService, tid: str) -> list[str]:
    return [type(e).__name__ for e in store.events.get(UUID(tid))]


def test_a_paper_result_is_entered_as_such_in_the_tournament_and_the_match_record(
    c: TestClient[Litestar], store: GameService
) -> None:
    """R32, R36: no draw first; both records say it was entered; the record re-imports."""
    url, org = create(c, swissRounds=1)
    scheduled = c.post(f"{url}/rounds", headers=org).json()["round"]
    first = scheduled["tables"][0]
    view = enter(c, url, org, 1, 1, [3, 1])
    result = view["rounds"][0]["tables"][0]["result"]
    assert result["entered"] and result["winner"] == first["firstTeam"]
    assert result["levels"] == [3, 1] and result["reason"] == "played on paper"
    enter(c, url, org, 1, 2, [0, 0])  # a draw, entered
    after = c.get(f"{url}/rounds/1").json()
    assert after["status"] == "completed" and after["secret"] is not None  # R35
    kinds = kinds_of(store, url.rsplit("/", 1)[1])
    assert "TableResultRecorded" not in kinds and kinds.count("TableResultEntered") == 2
    tid = url.rsplit("/", 1)[1]
    fed = c.get(f"/v1/events?tournamentId={tid}&type=TableResultEntered").json()["items"]
    assert [i["data"]["levels"] for i in fed] == [[3, 1], [0, 0]]  # R30: gained, not ranks
    standings = c.get(f"{url}/standings").json()["standings"]
    top = standings[0]
    assert top["team"] == first["firstTeam"] and top["matchPoints"] == 2
    assert top["levelsGained"] == 3
    record = c.get(f"/v1/matches/{first['matchId']}/record").json()
    assert record["end"]["reason"].startswith("result entered: levels 3-1")
    seats = first["firstTeamSeats"]
    assert record["end"]["winner"] == seats[0] % 2  # the first team's side of the table
    again = c.post(
        "/v1/records", content=c.get(f"/v1/matches/{first['matchId']}/record").content, headers=JSON
    )
    assert again.status_code == 200, again.text
    problem(
        c.post(
            f"{url}/rounds/1/tables/1/result",
            json={"levels": [1, 0], "reason": "again", "by": "TD"},
            headers=org,
        ),
        409,
        "round-not-current",
    )


def test_a_played_result_is_not_overwritten_by_a_paper_one(c: TestClient[Litestar]) -> None:
    url, org = create(c, swissRounds=1)
    c.post(f"{url}/rounds", headers=org)
    enter(c, url, org, 1, 1, [2, 0])
    r = c.post(
        f"{url}/rounds/1/tables/1/result",
        json={"levels": [0, 2], "reason": "late sheet", "by": "TD"},
        headers=org,
    )
    problem(r, 409, "result-recorded")
    problem(
        c.post(
            f"{url}/rounds/1/tables/2/result", json={"levels": [1, 0], "reason": "x", "by": "y"}
        ),
        401,
        "unauthorized",
    )


def test_the_round_clock_pauses_resumes_and_extends_one_table(
    own: TestClient[Litestar], own_store: GameService
) -> None:
    """R36: the deadline waits while paused; an extended table is flagged after its own."""
    c, store = own, own_store
    url, org = create(c, swissRounds=1, deadlineRule="flag")
    clock = store.clock
    assert isinstance(clock, FakeClock)
    r = c.post(f"{url}/rounds", json={"deadlineS": 600, "timers": {"playMs": 30000}}, headers=org)
    assert r.status_code == 201, r.text
    assert r.json()["round"]["deadlineS"] == 600
    match = store.get_match(UUID(r.json()["round"]["tables"][0]["matchId"]))
    assert match.timers is not None and match.timers.play_ms == 30000
    clerk = Clerk(bus_of(store))
    clock.advance(timedelta(seconds=100))
    paused = c.post(f"{url}/rounds/1/pause", json={"reason": "fire alarm"}, headers=org)
    assert paused.status_code == 200 and paused.json()["rounds"][0]["paused"]
    problem(
        c.post(f"{url}/rounds/1/pause", json={"reason": "again"}, headers=org), 409, "round-paused"
    )
    clock.advance(timedelta(seconds=1000))
    assert clerk.tick().deadlines == 0  # paused: the deadline waits
    resumed = c.post(f"{url}/rounds/1/resume", headers=org).json()["rounds"][0]
    assert not resumed["paused"]
    ext = c.post(
        f"{url}/rounds/1/tables/2/extension",
        json={"seconds": 300, "reason": "late start", "by": "TD"},
        headers=org,
    ).json()["rounds"][0]
    assert ext["tables"][1]["extensionS"] == 300
    assert ext["tables"][1]["deadline"] > ext["tables"][0]["deadline"] == ext["deadline"]
    clock.advance(timedelta(seconds=499))  # 100 + 499 = 599 s of play
    assert clerk.tick().deadlines == 0
    clock.advance(timedelta(seconds=2))
    assert clerk.tick().deadlines == 1
    assert c.get(f"{url}/rounds/1").json()["flaggedTables"] == [1]
    clock.advance(timedelta(seconds=300))
    assert clerk.tick().deadlines == 1
    assert c.get(f"{url}/rounds/1").json()["flaggedTables"] == [1, 2]


def test_the_time_control_of_rounds_to_come_is_patched(c: TestClient[Litestar]) -> None:
    url, org = create(c, swissRounds=1)
    r = c.patch(url, json={"roundDeadlineS": 900, "timers": {"playMs": 20000}}, headers=org)
    assert r.status_code == 200, r.text
    settings = r.json()["settings"]
    assert settings["roundDeadlineS"] == 900 and settings["timers"]["playMs"] == 20000
    assert settings["deadlineRule"] == "flag"  # kept
    problem(c.patch(url, json={"deadlineRule": "never"}, headers=org), 422, "validation-failed")
    problem(c.patch(url, json={"roundDeadlineS": 900}), 401, "unauthorized")
    scheduled = c.post(f"{url}/rounds", headers=org).json()["round"]
    assert scheduled["deadlineS"] == 900 and scheduled["deadline"] is not None


def test_a_requested_bye_a_substitute_and_a_rename(c: TestClient[Litestar]) -> None:
    """R36: the bye's team is not paired and scores the configured half point."""
    url, org = create(c, n=5)
    r = c.post(f"{url}/byes", json={"team": 4, "round": 1, "reason": "a wedding"}, headers=org)
    assert r.status_code == 200, r.text
    r = c.post(
        f"{url}/substitutes",
        json={"round": 1, "team": 0, "player": 1, "name": "Mei", "reason": "T0-b is ill"},
        headers=org,
    )
    assert r.status_code == 200, r.text
    renamed = c.post(
        f"{url}/teams/1/rename", json={"name": "Dragons", "reason": "sponsor"}, headers=org
    )
    assert renamed.json()["teams"][1]["name"] == "Dragons"
    problem(
        c.post(f"{url}/teams/2/rename", json={"name": "Dragons", "reason": "x"}, headers=org),
        409,
        "team-name-taken",
    )
    scheduled = c.post(f"{url}/rounds", headers=org).json()
    state = scheduled["round"]
    paired = {t for table in state["tables"] for t in (table["firstTeam"], table["secondTeam"])}
    assert paired == {0, 1, 2, 3} and state["bye"] is None and state["requestedByes"] == [4]
    assert state["substitutes"][0]["name"] == "Mei"
    table0 = next(t for t in state["tables"] if 0 in (t["firstTeam"], t["secondTeam"]))
    assert "Mei" in table0["players"] and "T0-b" not in table0["players"]
    assert any(s["player"] == "Mei" for s in scheduled["seatTokens"])
    for t in (1, 2):
        enter(c, url, org, 1, t, [1, 0])
    lines = {s["team"]: s for s in c.get(f"{url}/standings").json()["standings"]}
    assert lines[4]["byes"] == 1 and lines[4]["matchPoints"] == 1  # half a win
    assert lines[1]["name"] == "Dragons"
    problem(
        c.post(f"{url}/byes", json={"team": 4, "round": 1, "reason": "x"}, headers=org),
        409,
        "round-started",
    )


def test_a_cancelled_round_is_paired_again_on_new_tables(
    c: TestClient[Litestar], store: GameService
) -> None:
    url, org = create(c)
    first = c.post(f"{url}/rounds", headers=org).json()["round"]
    enter(c, url, org, 1, 1, [2, 0])
    r = c.post(f"{url}/rounds/1/cancel", json={"reason": "wrong boards", "by": "TD"}, headers=org)
    assert r.status_code == 200, r.text
    view = r.json()
    assert view["rounds"] == [] and view["cancelledRounds"][0]["reason"] == "wrong boards"
    assert c.get(f"{url}/standings").json()["standings"][0]["matchPoints"] == 0
    for table in first["tables"]:  # R32: the cancelled tables are over
        assert c.get(f"/v1/matches/{table['matchId']}").json()["finished"]
    again = c.post(f"{url}/rounds", headers=org).json()["round"]
    assert again["number"] == 1
    assert {t["matchId"] for t in again["tables"]}.isdisjoint(t["matchId"] for t in first["tables"])
    assert again["commitment"] != first["commitment"] or True  # a new secret is drawn (R35)


def test_the_preview_is_private_until_published_and_scheduling_uses_it(
    c: TestClient[Litestar],
) -> None:
    url, org = create(c)
    problem(c.get(f"{url}/preview"), 401, "unauthorized")
    private = c.get(f"{url}/preview", headers=org).json()
    assert not private["published"]
    assert c.get(f"{url}/display").json()["nextPairing"] == []  # nothing shown before
    r = c.post(f"{url}/publish", headers=org)
    assert r.status_code == 200, r.text
    public = c.get(f"{url}/preview").json()
    assert public["published"] and public["tables"] == private["tables"]
    display = c.get(f"{url}/display").json()  # the display page lists it once published
    assert display["nextRound"] == 1
    assert [p["firstName"] for p in display["nextPairing"]] == [
        t["firstName"] for t in public["tables"]
    ]
    assert "Next round" in c.get(url.replace("/v1", "")).text
    scheduled = c.post(f"{url}/rounds", headers=org).json()["round"]
    assert [(t["firstTeam"], t["secondTeam"]) for t in scheduled["tables"]] == [
        (t["firstTeam"], t["secondTeam"]) for t in public["tables"]
    ]


def test_an_override_with_a_forbidden_pairing_or_a_rematch_is_warned(
    c: TestClient[Litestar],
) -> None:
    """R36: the organiser may, but the preview says what it does."""
    url, org = create(c)
    met = c.post(f"{url}/rounds", headers=org).json()["round"]["tables"][0]
    for t in (1, 2):
        enter(c, url, org, 1, t, [1, 0])
    a, b = met["firstTeam"], met["secondTeam"]
    others = sorted({0, 1, 2, 3} - {a, b})
    c.post(f"{url}/forbidden", json={"teams": others, "reason": "one club"}, headers=org)
    tables = [{"firstTeam": a, "secondTeam": b}, {"firstTeam": others[0], "secondTeam": others[1]}]
    r = c.post(
        f"{url}/rounds/2/pairings", json={"tables": tables, "reason": "x", "by": "TD"}, headers=org
    )
    assert r.status_code == 200, r.text
    assert r.json()["pairingWarnings"] == c.get(f"{url}/preview", headers=org).json()["warnings"]
    warnings = c.get(f"{url}/preview", headers=org).json()["warnings"]
    assert any("rematch" in w for w in warnings) and any("forbidden" in w for w in warnings)


def test_seats_are_balanced_across_rounds_and_a_fixed_table_is_kept(
    c: TestClient[Litestar],
) -> None:
    """R2, R36: each team sits at seats 0/2 as evenly as the pairing allows."""
    url, org = create(c, n=8)
    r = c.post(
        f"{url}/fixed-tables", json={"team": 6, "table": 1, "reason": "wheelchair"}, headers=org
    )
    assert r.status_code == 200 and r.json()["fixedTables"] == {"6": 1}
    counts = dict.fromkeys(range(8), 0)
    for number in (1, 2):
        state = c.post(f"{url}/rounds", headers=org).json()["round"]
        assert 6 in (state["tables"][0]["firstTeam"], state["tables"][0]["secondTeam"])
        for table in state["tables"]:
            low = table["firstTeam"] if table["firstTeamSeats"] == [0, 2] else table["secondTeam"]
            counts[low] += 1
            enter(c, url, org, number, table["table"], [1, 0])
    assert set(counts.values()) == {1}  # two rounds: every team once at 0/2, once at 1/3


def test_the_results_csv_holds_tables_byes_flags_and_adjustments_in_one_file(
    own: TestClient[Litestar], own_store: GameService
) -> None:
    c, store = own, own_store
    """R36: one file a spreadsheet can recompute the standings from."""
    url, org = create(c, n=5, roundDeadlineS=600)
    c.post(f"{url}/byes", json={"team": 4, "round": 1, "reason": "away"}, headers=org)
    c.post(f"{url}/rounds", headers=org)
    enter(c, url, org, 1, 1, [2, 1])
    clock = store.clock
    assert isinstance(clock, FakeClock)
    clock.advance(timedelta(seconds=601))
    assert Clerk(bus_of(store)).tick().deadlines == 1  # table 2 flagged
    enter(c, url, org, 1, 2, [0, 1])
    adjustment = {"team": 2, "matchPoints": -1, "reason": "late", "by": "TD"}
    assert c.post(f"{url}/adjustments", json=adjustment, headers=org).status_code == 200
    rows = list(csv.DictReader(io.StringIO(c.get(f"{url}/results?format=csv").text)))
    assert [r["row"] for r in rows] == ["table", "table", "requested", "adjustment"]
    assert [r["entered"] for r in rows[:2]] == ["True", "True"]
    assert [r["deadline_flagged"] for r in rows[:2]] == ["False", "True"]
    assert (rows[2]["first_team"], rows[2]["match_points"]) == ("4", "1")
    assert (rows[3]["first_team"], rows[3]["match_points"], rows[3]["reason"]) == (
        "2",
        "-1",
        "late",
    )
    crosstable = c.get(f"{url}/crosstable").json()
    bye_line = next(line for line in crosstable["lines"] if line["team"] == 4)
    assert bye_line["rounds"][0]["outcome"] == "R" and bye_line["matchPoints"] == 1
    page = c.get(url.replace("/v1", "") + "/crosstable")
    assert page.headers["content-type"].startswith("text/html") and "Crosstable" in page.text


def test_a_completed_round_compares_each_deal_across_its_tables(
    c: TestClient[Litestar], store: GameService
) -> None:
    """R29, R36: the fields hold the matches' scored deals; matchpoints share the tops."""
    url, org = create(
        c, n=8, teams=[team(f"B{i}", ("heuristic", "random")) for i in range(8)], matchLength=2
    )
    scheduled = c.post(f"{url}/rounds", headers=org).json()["round"]
    settle(c)
    c.post(f"{url}/results/collect", headers=org)
    r = c.get(f"{url}/rounds/1/comparison")
    assert r.status_code == 200, r.text
    body = r.json()
    deals = []
    for table in scheduled["tables"]:
        for summary in c.get(f"/v1/matches/{table['matchId']}").json()["rounds"]:
            if summary["status"] == "scored":
                deals.append((table["table"], summary["result"]["attackersTotal"]))
    compared = sorted((s["table"], s["points"]) for f in body["fields"] for s in f["scores"])
    assert compared == sorted(deals) and len(deals) == 8  # four tables, two deals each
    for f in body["fields"]:
        points = [s["points"] for s in f["scores"]]
        assert f["average"] == pytest.approx(sum(points) / len(points))
        assert all(s["top"] == 2 * (len(points) - 1) for s in f["scores"])
    got = sum(m["matchpoints"] for m in body["teams"])
    assert got * 2 == sum(m["top"] for m in body["teams"])


def test_a_round_in_play_is_not_compared(c: TestClient[Litestar]) -> None:
    """R36: the tables are closed until the round completes."""
    url, org = create(c)
    c.post(f"{url}/rounds", headers=org)
    problem(c.get(f"{url}/rounds/1/comparison"), 409, "round-in-play")


def test_a_browser_asking_for_the_tournament_is_sent_to_the_display_page(
    c: TestClient[Litestar],
) -> None:
    url, _ = create(c)
    r = c.get(url, headers={"accept": "text/html,application/xhtml+xml,*/*;q=0.8"},
              follow_redirects=False)  # fmt: skip
    assert r.status_code == 303 and r.headers["location"] == url.replace("/v1", "")
    page = c.get(r.headers["location"], headers={"accept-language": "zh-CN,zh;q=0.9"})
    assert page.headers["content-type"].startswith("text/html") and "排名" in page.text
    assert c.get(url).json()["name"] == "club night"  # JSON stays the default


def display_frames(text: str) -> list[Json]:
    """The ``display`` frames' data of an SSE body."""
    out = []
    for block in text.split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        if lines.get("event") == "display":
            out.append(json.loads(lines["data"]))
    return out


def test_a_correction_after_the_event_reaches_a_connected_display(
    c: TestClient[Litestar], store: GameService, monkeypatch: pytest.MonkeyPatch
) -> None:
    """R36: the display stream outlives the tournament's end: a correction made while a
    display is connected reaches it on the same connection."""
    monkeypatch.setattr(pages, "LIFETIME_S", 1.5)
    monkeypatch.setattr(pages, "POLL_S", 0.05)
    url, org = create(c, swissRounds=1)
    c.post(f"{url}/rounds", headers=org)
    enter(c, url, org, 1, 1, [2, 0])
    enter(c, url, org, 1, 2, [1, 0])
    assert c.get(url).json()["status"] == "finished"
    tid = UUID(url.rsplit("/", 1)[1])

    def correct() -> None:
        Tournaments(store).correct(
            tid, 1, 0, winner=None, levels=(1, 1), points=(0, 0), by="TD", reason="misread"
        )

    later = threading.Timer(0.5, correct)
    later.start()
    try:
        with c.stream("GET", f"{url}/display/stream") as r:
            text = "".join(r.iter_text())
    finally:
        later.join()
    first, second = display_frames(text)
    assert "2-0" in first["html"] and second["version"] > first["version"]
    assert "1-1 =" in second["html"] and "2-0" not in second["html"]
    assert "retry: " in text  # it ended with its lifetime, not with the tournament


def test_a_patched_deadline_applies_to_rounds_scheduled_after_it_only(
    own: TestClient[Litestar], own_store: GameService
) -> None:
    """R36: PATCH roundDeadlineS (and deadlineRule) set the time control of the rounds to
    come; the round in play keeps the one it was scheduled with — its views, its score
    sheet, the clerk's flagging by its own rule and the tournament rebuilt from its
    history — and the next round gets the new one."""
    c, store = own, own_store
    url, org = create(c, swissRounds=2, roundDeadlineS=600, deadlineRule="flag")
    clock = store.clock
    assert isinstance(clock, FakeClock)
    first = c.post(f"{url}/rounds", headers=org).json()["round"]
    assert first["deadlineS"] == 600
    clerk = Clerk(bus_of(store))
    clock.advance(timedelta(seconds=10))
    r = c.patch(url, json={"roundDeadlineS": 30, "deadlineRule": "finish"}, headers=org)
    assert r.status_code == 200, r.text
    assert r.json()["settings"]["roundDeadlineS"] == 30
    in_play = c.get(f"{url}/rounds/1").json()
    assert (in_play["deadlineS"], in_play["deadline"]) == (600, first["deadline"])
    sheets = c.get(f"/tournaments/{url.rsplit('/', 1)[1]}/rounds/1/scoresheets")
    due = datetime.fromisoformat(first["deadline"]).strftime("%Y-%m-%d %H:%M UTC")
    assert sheets.status_code == 200 and due in sheets.text
    clock.advance(timedelta(seconds=40))  # 50 s in: past 30 s, not past 600 s
    assert clerk.tick().deadlines == 0
    assert c.get(f"{url}/rounds/1").json()["flaggedTables"] == []
    rebuilt = Tournaments(store).get(UUID(url.rsplit("/", 1)[1]))  # from the history
    assert rebuilt.round_deadline_s_of(rebuilt.rounds[0]) == 600
    clock.advance(timedelta(seconds=600))  # past 600 s: flagged by the round's rule, not ended
    assert clerk.tick().deadlines == 2
    assert c.get(f"{url}/rounds/1").json()["flaggedTables"] == [1, 2]
    assert not any(store.get_match(UUID(t["matchId"])).finished for t in first["tables"])
    for table in (1, 2):
        enter(c, url, org, 1, table, [1, 0])
    second = c.post(f"{url}/rounds", headers=org).json()["round"]
    assert second["deadlineS"] == 30
    assert c.get(f"{url}/rounds/1").json()["deadlineS"] == 600  # a finished round keeps its own

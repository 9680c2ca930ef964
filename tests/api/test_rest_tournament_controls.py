"""The organiser's controls over REST (T16), one fact per test: finding tournaments,
registration and its refusals, overrides, round-robin withdrawals, round deadlines
(flag and finish), re-issued tokens, the archive of a round in play, and every refusal
as a problem (401/403/404/409/422)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from infra.settings import Settings
from infra.store import build_service
from services.game import GameService
from services.tournaments.clerk import Clerk
from tests.api.rest import Json, auth, client
from tests.commands import bus_of
from tests.conftest import FakeClock, FixedSeeds

BOTS = ("heuristic", "random")


def team(name: str, kinds: tuple[str, str] = BOTS) -> Json:
    return {
        "name": name,
        "players": [
            {"name": f"{name}-a", "kind": kinds[0]},
            {"name": f"{name}-b", "kind": kinds[1]},
        ],
    }


def problem(r: Any, status: int, code: str) -> None:
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith("application/problem+json")
    assert r.json()["code"] == code


def popo() -> GameService:
    return build_service(Settings(backend="popo"), clock=FakeClock(), seeds=FixedSeeds())


@pytest.fixture(scope="module")
def c() -> Iterator[TestClient[Litestar]]:
    """One app for the tests that work on a tournament of their own and neither list every
    tournament nor move the clock."""
    service = popo()
    try:
        with client(service) as test_client:
            yield test_client
    finally:
        service.close()


@pytest.fixture
def store() -> Iterator[GameService]:
    service = popo()
    try:
        yield service
    finally:
        service.close()


@pytest.fixture
def own(store: GameService) -> Iterator[TestClient[Litestar]]:
    """An app of the test's own: it lists every tournament, or it advances the clock."""
    with client(store) as test_client:
        yield test_client


def create(c: TestClient[Litestar], n: int = 4, **body: Any) -> tuple[str, str]:
    body = {
        "name": "cup",
        "teams": [team(f"T{i}") for i in range(n)],
        "format": "swiss",
        "swissRounds": 2,
        "matchLength": 1,
        **body,
    }
    r = c.post("/v1/tournaments", json=body)
    assert r.status_code == 201, r.text
    return f"/v1/tournaments/{r.json()['tournamentId']}", r.json()["organiserToken"]


def test_tournaments_are_listed_paged_and_filtered_by_status(own: TestClient[Litestar]) -> None:
    c = own
    urls = [create(c)[0] for _ in range(3)]
    open_url, _ = create(c, n=0, registration=True)
    page = c.get("/v1/tournaments?limit=2").json()
    assert [f"/v1/tournaments/{t['tournamentId']}" for t in page["items"]] == urls[:2]
    assert page["more"]
    rest = c.get(f"/v1/tournaments?after={page['next']}&limit=2").json()
    assert [f"/v1/tournaments/{t['tournamentId']}" for t in rest["items"]] == [urls[2], open_url]
    assert not rest["more"]
    ready = c.get("/v1/tournaments?status=ready").json()["items"]
    assert len(ready) == 3 and {t["status"] for t in ready} == {"ready"}
    listed = c.get("/v1/tournaments?status=registration").json()["items"]
    assert [t["teams"] for t in listed] == [0]
    problem(c.get("/v1/tournaments?status=lost"), 422, "validation-failed")


ONE = {"name": "x", "players": [{"name": "a"}]}
NOUGHT = {"team": 0, "matchPoints": 0, "reason": "r", "by": "TD"}


@pytest.mark.parametrize(
    ("case", "method", "path", "body", "who", "status", "code"),
    [
        ("schedule during registration", "post", "/rounds", None, "o", 409, "registration-open"),
        ("preview during registration", "get", "/preview", None, "o", 409, "registration-open"),
        ("start without a token", "post", "/start", None, None, 401, "unauthorized"),
        ("start with a team's token", "post", "/start", None, "t", 403, "forbidden"),
        ("start with one team", "post", "/start", None, "o", 409, "too-few-teams"),
        ("check in without a token", "post", "/teams/0/checkin", None, None, 401, "unauthorized"),
        ("check in no such team", "post", "/teams/9/checkin", None, "o", 409, "no-such-team"),
        ("the same name twice", "post", "/teams", team("T0"), None, 409, "team-name-taken"),
        ("a team of one", "post", "/teams", ONE, None, 422, "validation-failed"),
        ("an adjustment of 0", "post", "/adjustments", NOUGHT, "o", 422, "invalid-input"),
        ("withdraw with no reason", "post", "/teams/0/withdraw", {}, "o", 422, "validation-failed"),
        ("a missing tournament", "get", "/../" + str(UUID(int=1)), None, None, 404, "not-found"),
    ],
)  # fmt: skip
def test_registration_refusals_are_problems(
    c: TestClient[Litestar],
    case: str,
    method: str,
    path: str,
    body: Json | None,
    who: str | None,
    status: int,
    code: str,
) -> None:
    url, organiser = create(c, n=0, registration=True)
    r = c.post(f"{url}/teams", json=team("T0"))
    assert r.status_code == 201 and r.json()["teamToken"].startswith("t.")
    tokens = {"o": organiser, "t": r.json()["teamToken"]}
    headers = auth(tokens[who]) if who else {}
    target = f"{url}{path}" if not path.startswith("/..") else "/v1/tournaments" + path[3:]
    r = c.request(method.upper(), target, json=body, headers=headers)
    problem(r, status, code)


def test_registration_closes_at_the_start_and_late_entries_are_swiss_only(
    c: TestClient[Litestar],
) -> None:
    url, organiser = create(c, n=0, registration=True, format="round_robin", swissRounds=None)
    for i in range(3):
        assert c.post(f"{url}/teams", json=team(f"T{i}")).status_code == 201
    assert c.post(f"{url}/start", headers=auth(organiser)).json()["totalRounds"] == 3
    problem(c.post(f"{url}/teams", json=team("self")), 409, "registration-closed")
    late = c.post(f"{url}/teams", json=team("late"), headers=auth(organiser))
    problem(late, 409, "registration-closed")  # a round robin takes no late entry
    problem(c.post(f"{url}/start", headers=auth(organiser)), 409, "registration-closed")
    forbid = c.post(
        f"{url}/forbidden", json={"teams": [0, 1], "reason": "club"}, headers=auth(organiser)
    )
    problem(forbid, 409, "swiss-only")


def test_a_round_robin_opponent_of_a_withdrawn_team_gets_a_bye(
    c: TestClient[Litestar],
) -> None:
    url, organiser = create(c, n=4, format="round_robin", swissRounds=None)
    r = c.post(f"{url}/teams/2/withdraw", json={"reason": "gone"}, headers=auth(organiser))
    assert r.status_code == 200, r.text
    assert r.json()["teams"][2]["status"] == "withdrawn"
    problem(
        c.post(f"{url}/teams/2/withdraw", json={"reason": "again"}, headers=auth(organiser)),
        409,
        "team-withdrawn",
    )
    scheduled = c.post(f"{url}/rounds", headers=auth(organiser)).json()["round"]
    assert len(scheduled["tables"]) == 1 and len(scheduled["awardedByes"]) == 1
    seated = {scheduled["tables"][0]["firstTeam"], scheduled["tables"][0]["secondTeam"]}
    assert seated | set(scheduled["awardedByes"]) == {0, 1, 3}
    sheet = c.get(f"{url}/rounds/1/sheet").text
    assert sheet.count("Bye") == 1


def test_the_organiser_overrides_the_next_round_with_a_reason(c: TestClient[Litestar]) -> None:
    url, organiser = create(c, n=4)
    reason = "travel: T0 and T1 share a car"
    body: Json = {
        "tables": [{"firstTeam": 0, "secondTeam": 1}, {"firstTeam": 2, "secondTeam": 3}],
        "reason": reason,
        "by": "TD",
    }
    bad = {**body, "tables": [{"firstTeam": 0, "secondTeam": 1}, {"firstTeam": 2, "secondTeam": 2}]}
    problem(
        c.post(f"{url}/rounds/1/pairings", json=bad, headers=auth(organiser)),
        409,
        "pairing-invalid",
    )
    problem(
        c.post(f"{url}/rounds/2/pairings", json=body, headers=auth(organiser)), 409, "round-started"
    )
    problem(c.post(f"{url}/rounds/1/pairings", json=body), 401, "unauthorized")
    assert (
        c.get(f"{url}/preview", headers=auth(organiser)).json()["tables"][0]["secondTeam"] == 2
    )  # the fold: 0 v 2
    r = c.post(f"{url}/rounds/1/pairings", json=body, headers=auth(organiser))
    assert r.status_code == 200, r.text
    preview = c.get(f"{url}/preview", headers=auth(organiser)).json()
    assert preview["overridden"] and preview["tables"][0]["secondTeam"] == 1
    scheduled = c.post(f"{url}/rounds", headers=auth(organiser)).json()["round"]
    assert [(t["firstTeam"], t["secondTeam"]) for t in scheduled["tables"]] == [(0, 1), (2, 3)]
    assert scheduled["override"] == reason
    assert reason in c.get(f"{url}/rounds/1/sheet").text
    problem(
        c.post(f"{url}/rounds/1/pairings", json=body, headers=auth(organiser)), 409, "round-started"
    )
    # a round in play: the archive waits for it, its tables are named
    archive = c.get(f"{url}/archive")
    assert archive.content == b"" and archive.headers["tournament-pending-tables"] == "1/1,1/2"
    problem(
        c.get(f"{url}/standings/stream", headers={"Last-Event-ID": "999"}),
        422,
        "last-event-id-ahead",  # as every stream (tests/api/test_stream_resume_ahead.py)
    )


@pytest.mark.parametrize("rule", ["flag", "finish"])
def test_the_round_deadline_flags_or_finishes_unfinished_tables(
    own: TestClient[Litestar], store: GameService, rule: str
) -> None:
    c = own
    people = [team(f"P{i}", ("human", "human")) for i in range(2)]
    url, organiser = create(
        c, n=0, teams=people, swissRounds=1, roundDeadlineS=600, deadlineRule=rule
    )
    scheduled = c.post(f"{url}/rounds", headers=auth(organiser)).json()["round"]
    clerk = Clerk(bus_of(store))
    clock = store.clock
    assert isinstance(clock, FakeClock)
    assert clerk.tick().deadlines == 0  # before the deadline: nothing
    clock.advance(timedelta(seconds=601))
    assert clerk.tick().deadlines == 1
    after = c.get(f"{url}/rounds/1").json()
    assert after["flaggedTables"] == [1]
    assert after["deadline"] is not None and scheduled["deadline"] == after["deadline"]
    if rule == "flag":
        assert after["status"] == "in_play" and after["tables"][0]["result"] is None
    else:  # R32: no deal scored, levels equal: a draw
        assert after["status"] == "completed" and after["tables"][0]["result"]["winner"] is None
    assert clerk.tick().deadlines == 0  # handled once


def test_reissued_tokens_replace_the_old_ones_only_in_the_round_in_play(
    c: TestClient[Litestar],
) -> None:
    url, organiser = create(
        c, n=0, teams=[team("P", ("human", "random")), team("B")], swissRounds=1
    )
    problem(
        c.post(f"{url}/rounds/1/tables/1/tokens", headers=auth(organiser)),
        409,
        "round-not-scheduled",
    )
    first = c.post(f"{url}/rounds", headers=auth(organiser)).json()["seatTokens"]
    problem(c.post(f"{url}/rounds/1/tables/1/tokens"), 401, "unauthorized")
    r = c.post(f"{url}/rounds/1/tables/1/tokens", headers=auth(organiser))
    assert r.status_code == 200, r.text
    fresh = r.json()["seatTokens"]
    assert [s["seat"] for s in fresh] == [s["seat"] for s in first] and len(fresh) == 1
    view = f"/v1/matches/{first[0]['matchId']}/view"
    problem(c.get(view, headers=auth(first[0]["token"])), 401, "unauthorized")
    assert c.get(view, headers=auth(fresh[0]["token"])).status_code == 200


def test_the_controls_survive_a_restart_on_sqlite_and_replay_by_key(tmp_path: Path) -> None:
    settings = Settings(backend="sqlite", sqlite_path=tmp_path / "events.sqlite3")
    first = build_service(settings, clock=FakeClock(), seeds=FixedSeeds())
    try:
        with client(first) as c:
            url, organiser = create(c, n=0, registration=True, checkinRequired=True)
            key = {"Idempotency-Key": "team-a"}
            r = c.post(f"{url}/teams", json=team("A"), headers=key)
            again = c.post(f"{url}/teams", json=team("A"), headers=key)
            assert r.status_code == again.status_code == 201
            assert again.json()["tokenWithheld"] and again.json()["teamToken"] is None
            assert again.json()["team"] == r.json()["team"] == 0
            for name in ("B", "C", "D"):
                c.post(f"{url}/teams", json=team(name), headers=auth(organiser))
            for n in range(4):
                c.post(f"{url}/teams/{n}/checkin", headers=auth(organiser))
            c.post(f"{url}/start", headers=auth(organiser))
            c.post(
                f"{url}/forbidden",
                json={"teams": [0, 2], "reason": "club"},
                headers=auth(organiser),
            )
            c.post(
                f"{url}/adjustments",
                json={"team": 1, "matchPoints": 1, "reason": "fair play", "by": "TD"},
                headers=auth(organiser),
            )
            assert c.post(f"{url}/rounds", headers=auth(organiser)).status_code == 201
            r = c.post(f"{url}/teams/3/withdraw", json={"reason": "ill"}, headers=auth(organiser))
            assert r.status_code == 200, r.text
            before = c.get(url).json()
    finally:
        first.close()
    second = build_service(settings, clock=FakeClock(), seeds=FixedSeeds())
    try:
        with client(second) as c:
            assert c.get(url).json() == before
            assert before["forbidden"] == [{"teams": [0, 2], "reason": "club"}]
            assert [t["status"] for t in before["teams"]] == ["playing"] * 3 + ["withdrawn"]
    finally:
        second.close()

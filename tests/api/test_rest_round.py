"""The REST core over HTTP: a full round played by four people, the views' ETags and 304,
If-Match (412), tokens (401/403), unknown fields (422), history paged by version without
loss or repeat, the state as of every version equal to the view answered live (R33, R34),
rounds and deal verification (R35)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from api.app import MAX_BODY_BYTES
from tests.api.rest import Json, Table, auth, client

PROBLEM = "application/problem+json"


@pytest.fixture(scope="module")
def played() -> Iterator[Table]:
    """Round 1 played to the end over HTTP (round 2 is dealt)."""
    with client() as c:
        table = Table.seat_four(c)
        table.play_round()
        yield table


def problem(r: Any, status: int, code: str | None = None) -> Json:
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith(PROBLEM)
    body: Json = r.json()
    assert body["status"] == status
    if code is not None:
        assert body["code"] == code and body["type"].endswith("/" + code)
    return body


# -- a whole round ---------------------------------------------------------------------------


def test_a_round_is_played_to_the_end(played: Table) -> None:
    summary = played.c.get(played.url).json()
    first = summary["rounds"][0]
    assert first["status"] == "scored" and first["result"]["number"] == 1
    assert summary["roundNumber"] == 2 and not summary["finished"]
    actions = {v["legal"]["actions"][0] for _, _, v in played.answers if v["legal"]["actions"]}
    kinds = [h["type"] for h in played.c.get(f"{played.url}/history?limit=1000").json()["items"]]
    assert {"TrumpDeclared", "BottomBuried", "CardPlayed", "TrickWon", "RoundScored"} <= set(kinds)
    assert kinds.count("CardPlayed") >= 25 and actions


def test_versions_grow_and_the_answer_is_the_acting_seats_view(played: Table) -> None:
    versions = [v for v, _, _ in played.answers]
    assert versions == sorted(set(versions))
    for version, seat, view in played.answers:
        assert (view["kind"], view["seat"], view["version"]) == ("seat", seat, version)


def test_the_summary_lists_the_match(played: Table) -> None:
    listed = played.c.get("/v1/matches").json()
    assert played.match_id in [m["matchId"] for m in listed["items"]]
    mine = next(m for m in listed["items"] if m["matchId"] == played.match_id)
    assert (mine["seatsTaken"], mine["roundNumber"], mine["finished"]) == (4, 2, False)


def test_matches_are_listed_in_pages() -> None:
    with client() as c:
        ids = [c.post("/v1/matches", json={"name": f"m{i}"}).json()["matchId"] for i in range(5)]
        seen: list[str] = []
        after = 0
        while True:
            page = c.get(f"/v1/matches?after={after}&limit=2").json()
            seen += [m["matchId"] for m in page["items"]]
            after = page["next"]
            if not page["more"]:
                break
        assert seen == ids


# -- ETags, 304, If-Match ----------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/public", "/view", ""])
def test_etag_and_not_modified(played: Table, path: str) -> None:
    headers = auth(played.tokens[1]) if path == "/view" else {}
    r = played.c.get(played.url + path, headers=headers)
    tag = r.headers["etag"]
    assert tag == f'"{r.json()["version"]}"'
    for match in (tag, f"W/{tag}", f'"1", {tag}', "*"):
        again = played.c.get(played.url + path, headers={**headers, "If-None-Match": match})
        assert (again.status_code, again.content, again.headers["etag"]) == (304, b"", tag)
    stale = played.c.get(played.url + path, headers={**headers, "If-None-Match": '"1"'})
    assert stale.status_code == 200 and stale.json()["version"] == r.json()["version"]


def test_if_match_guards_a_command(c: TestClient[Litestar]) -> None:
    table = Table.seat_four(c)
    version = table.public()["version"]
    seat = next(s for s in range(4) if "pass" in table.view(s)["legal"]["actions"])
    problem(table.act(seat, "pass", [], **{"If-Match": f'"{version - 1}"'}), 412)
    problem(table.act(seat, "pass", [], **{"If-Match": "7"}), 412, "precondition-failed")
    assert table.public()["version"] == version  # nothing saved
    ok = table.act(seat, "pass", [], **{"If-Match": f'"{version}"'})
    assert ok.status_code == 200 and ok.json()["version"] == version + 1
    problem(table.act((seat + 1) % 4, "pass", [], **{"If-Match": f'"{version}"'}), 412)


# -- tokens (401 / 403) ------------------------------------------------------------------------


def test_tokens(played: Table) -> None:
    c, url = played.c, played.url
    foreign = Table.seat_four(c).tokens[0]  # a seat token of another match in the same store
    wrong_secret = played.tokens[0].rsplit(".", 1)[0] + ".forged"
    cases: list[tuple[dict[str, str], int]] = [
        ({}, 401),
        ({"Authorization": "Basic abc"}, 401),
        ({"Authorization": "Bearer "}, 401),
        (auth("garbage"), 401),
        (auth(wrong_secret), 401),
        (auth(foreign), 403),  # a token of another match
        (auth(played.organiser), 403),  # the organiser is no seat
    ]
    for headers, status in cases:
        r = c.post(f"{url}/actions/pass", json={}, headers=headers)
        body = problem(r, status, "unauthorized" if status == 401 else "forbidden")
        assert body["detail"]
        if status == 401:
            assert r.headers["www-authenticate"].startswith("Bearer")
        problem(c.get(f"{url}/view", headers=headers), status)
    problem(
        c.post(f"{url}/seats/0/bot", json={"kind": "random"}, headers=auth(played.tokens[0])),
        403,
    )
    problem(c.post(f"{url}/bots/run", json={}), 401)
    problem(c.get(f"{url}/history", headers=auth("garbage")), 401)
    assert c.get(f"{url}/history", headers=auth(played.organiser)).status_code == 200


def test_a_seat_reads_its_own_view_only(played: Table) -> None:
    for seat in range(4):
        view = played.view(seat)
        assert view["seat"] == seat and len(view["hand"]) == view["handSizes"][seat]
    public = played.public()
    assert public["kind"] == "public" and "hand" not in public


# -- bad input: 404 / 409 / 422, never 5xx ------------------------------------------------------

BAD_REQUESTS: list[tuple[str, str, Any, int, str]] = [
    ("post", "/v1/matches", {"name": "x", "colour": "red"}, 422, "validation-failed"),
    ("post", "/v1/matches", {"rules": {"fooBar": 1}}, 422, "validation-failed"),
    ("post", "/v1/matches", {"rules": {"matchEnd": "never"}}, 422, "validation-failed"),
    ("post", "/v1/matches", {"preset": "nope"}, 422, "validation-failed"),
    ("post", "/v1/matches", [1, 2], 422, "validation-failed"),
    ("post", "/v1/matches/{m}/seats/4", {"name": "x"}, 422, "validation-failed"),
    ("post", "/v1/matches/{m}/seats/1", {"name": "x", "x": 1}, 422, "validation-failed"),
    ("post", "/v1/matches/{m}/seats/1", {"name": ""}, 422, "validation-failed"),
    ("post", "/v1/matches/{m}/seats/1", {"name": "x"}, 409, "seat-taken"),
    ("post", "/v1/matches/{m}/actions/shout", {}, 422, "validation-failed"),
    ("post", "/v1/matches/{m}/actions/play", {"cards": ["11H"]}, 422, "invalid-card"),
    ("post", "/v1/matches/{m}/actions/play", {"cards": ["AS"], "x": 1}, 422, "validation-failed"),
    ("post", "/v1/matches/{m}/actions/play", {"cards": 5}, 422, "validation-failed"),
    ("post", "/v1/matches/{m}/actions/play", [["AS"]], 422, "validation-failed"),
    ("post", "/v1/matches/{m}/actions/play", "AS", 422, "validation-failed"),
    ("get", "/v1/matches/{u}", None, 404, "not-found"),
    ("get", "/v1/matches/{u}/public", None, 404, "not-found"),
    ("get", "/v1/matches/not-a-uuid", None, 404, "not-found"),
    ("get", "/v1/matches/{m}/state?version=0", None, 422, "validation-failed"),
    ("get", "/v1/matches/{m}/state?version=999999", None, 404, "not-found"),
    ("get", "/v1/matches/{m}/history?limit=0", None, 422, "validation-failed"),
    ("get", "/v1/matches/{m}/rounds/9", None, 404, "not-found"),
    ("get", "/v1/matches/{m}/rounds/2/verify", None, 409, "round-not-scored"),
    ("post", "/v1/verify", {"seed": "00", "commitment": "00"}, 422, "validation-failed"),
]


@pytest.mark.parametrize(("method", "path", "body", "status", "code"), BAD_REQUESTS)
def test_bad_requests_are_problems(
    played: Table, method: str, path: str, body: Any, status: int, code: str
) -> None:
    url = path.format(m=played.match_id, u="00000000-0000-4000-8000-000000000000")
    headers = auth(played.tokens[0]) if "/actions/" in url else {}
    kwargs: dict[str, Any] = {"headers": headers}
    if body is not None:
        kwargs["json"] = body
    r = getattr(played.c, method)(url, **kwargs)
    problem(r, status, code)


def test_an_illegal_move_names_its_rule(played: Table) -> None:
    """Round 2 is being dealt: playing a card now breaks R22 (409, its own code)."""
    assert played.public()["phase"] == "dealing"
    body = problem(played.act(0, "play", played.view(0)["hand"][:1]), 409, "not-playing-yet")
    assert body["rule"] == "R22" and body["detail"]


def test_malformed_json_is_a_400_problem(played: Table) -> None:
    r = played.c.post("/v1/matches", content=b"{nope", headers={"Content-Type": "application/json"})
    problem(r, 400, "bad-request")


@pytest.mark.parametrize("body", [b"{nope", b"[", b'{"cards": ["AS"]', b"\xff"])
def test_a_command_reads_its_body_as_every_route_does(played: Table, body: bytes) -> None:
    """Commands read their own body (api/commands.py ``act_well_formed``): what is not JSON
    is the same 400 as on any route, with Litestar's words; nothing changes."""
    before = played.public()["version"]
    headers = {"Content-Type": "application/json"}
    general = played.c.post("/v1/matches", content=body, headers=headers)
    url = f"/v1/matches/{played.match_id}/actions/play"
    r = played.c.post(url, content=body, headers=headers | auth(played.tokens[0]))
    assert (
        problem(r, 400, "bad-request")["detail"] == problem(general, 400, "bad-request")["detail"]
    )
    assert played.public()["version"] == before


@pytest.mark.parametrize("body", [b"", b"  ", b"{}"])
def test_a_command_without_cards_is_a_pass_or_a_rule_refusal(played: Table, body: bytes) -> None:
    """No body or ``{}`` is a command without cards (as ``"cards": []``): the rules answer
    it (a 409 naming the rule), never a 4xx about the body."""
    url = f"/v1/matches/{played.match_id}/actions/play"
    r = played.c.post(url, content=body, headers=auth(played.tokens[0]))
    assert r.status_code == 409, r.text
    assert r.json()["rule"]


def test_a_null_body_is_refused_naming_the_body(played: Table) -> None:
    """A body is an object or left out (one type in the contract): JSON ``null`` is a 422."""
    url = f"/v1/matches/{played.match_id}/actions/play"
    r = played.c.post(url, content=b"null", headers=auth(played.tokens[0]))
    assert r.status_code == 422 and r.json()["code"] == "validation-failed", r.text
    assert "not null" in r.json()["detail"]


def test_a_command_body_over_the_limit_is_a_413(played: Table) -> None:
    url = f"/v1/matches/{played.match_id}/actions/play"
    body = b'{"cards": [' + b" " * (MAX_BODY_BYTES + 1) + b"]}"
    r = played.c.post(url, content=body, headers=auth(played.tokens[0]))
    assert r.status_code == 413


# -- history and the state as of a version (R33, R34) -------------------------------------------


def _pages(c: TestClient[Litestar], url: str, limit: int, headers: dict[str, str]) -> list[Json]:
    items: list[Json] = []
    after = 0
    while True:
        page = c.get(f"{url}/history?after={after}&limit={limit}", headers=headers).json()
        items += page["items"]
        after = page["next"]
        if not page["more"]:
            return items


@pytest.mark.parametrize("limit", [1, 7, 50])
def test_history_pages_lose_and_repeat_nothing(played: Table, limit: int) -> None:
    headers = auth(played.tokens[2])
    whole = played.c.get(f"{played.url}/history?limit=1000", headers=headers).json()
    assert not whole["more"]
    items = _pages(played.c, played.url, limit, headers)
    assert items == whole["items"]
    assert [i["version"] for i in items] == list(range(1, len(items) + 1))
    assert items[-1]["version"] == played.public()["version"]


def test_history_is_redacted_for_the_viewer(played: Table) -> None:
    items = played.c.get(f"{played.url}/history?limit=1000").json()["items"]
    seats = [i for i in items if i["type"] == "SeatTaken"]
    assert all("tokenHash" in i["hidden"] for i in seats)
    deals = [i for i in items if i["type"] == "Dealt"]
    assert "seed" in deals[0]["data"]  # round 1 is scored (R35)
    assert "seed" in deals[-1]["hidden"]  # round 2 is not
    for token in played.tokens:
        text = played.c.get(f"{played.url}/history?limit=1000").text
        assert token.rsplit(".", 1)[1] not in text


def test_the_state_at_each_version_is_the_view_answered_then(played: Table) -> None:
    for version, seat, view in played.answers:
        r = played.c.get(f"{played.url}/state?version={version}", headers=auth(played.tokens[seat]))
        assert r.status_code == 200, r.text
        state = r.json()
        assert state["view"] == view
        assert (state["revealed"] is not None) == (view["roundNumber"] == 1)


def test_the_state_of_a_scored_round_reveals_everything(played: Table) -> None:
    version, _, view = next(a for a in played.answers if a[2]["phase"] == "playing")
    state = played.c.get(f"{played.url}/state?version={version}").json()
    assert state["view"]["kind"] == "public" and len(state["revealed"]["hands"]) == 4
    assert sum(len(h) for h in state["revealed"]["hands"]) == sum(view["handSizes"])


# -- rounds and verification (R35) ----------------------------------------------------------------


def test_rounds_and_verification(played: Table) -> None:
    c, url = played.c, played.url
    rounds = c.get(f"{url}/rounds").json()["items"]
    assert [r["status"] for r in rounds] == ["scored", "playing"]
    first = c.get(f"{url}/rounds/1").json()
    result = first["result"]
    assert first["phase"] == "scored" and len(result["dealtHands"]) == 4
    checked = c.get(f"{url}/rounds/1/verify").json()
    assert checked["ok"] and checked["seed"] == result["seed"]
    body = {
        "seed": result["seed"],
        "commitment": result["commitment"],
        "firstSeat": 0,
        "hands": result["dealtHands"],
        "bottom": result["dealtBottom"],
    }
    r = c.post("/v1/verify", json=body)
    assert r.status_code == 200 and r.json()["ok"] and r.json()["hands"] == result["dealtHands"]
    assert r.json()["mismatch"] is None
    wrong = {**body, "commitment": "0" * 64}
    failed = c.post("/v1/verify", json=wrong)  # R35: the check's outcome is the answer
    assert failed.status_code == 200 and failed.json()["ok"] is False
    assert "commitment" in failed.json()["mismatch"]
    assert failed.json()["hands"] == result["dealtHands"]  # the seed's deal all the same
    moved = [list(h) for h in result["dealtHands"]]
    moved[0][0], moved[1][0] = moved[1][0], moved[0][0]
    if moved[0][0] != moved[1][0]:
        other = c.post("/v1/verify", json={**body, "hands": moved}).json()
        assert other["ok"] is False and "seat 0" in other["mismatch"]

"""Players (docs/players.md): a device account and its player token; sessions opened,
rotated and ended (the old token refused at once); a seat claimed by a player, who acts
for it with the player token from any device, gets a fresh seat token (the old one stops
working) and lists their matches with whose turn it is."""

from __future__ import annotations

from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from tests.api.rest import Json, Table, auth


def new_player(c: TestClient[Litestar], name: str = "Mei", **extra: Any) -> Json:
    r = c.post("/v1/players", json={"displayName": name, **extra})
    assert r.status_code == 201, r.text
    body: Json = r.json()
    assert body["token"].startswith("p.") and body["displayName"] == name
    return body


def test_a_player_signs_in_on_two_devices_rotates_and_ends_sessions(
    c: TestClient[Litestar],
) -> None:
    first = new_player(c, locale="zh-CN", label="phone")
    phone = first["token"]
    me = c.get("/v1/players/me", headers=auth(phone)).json()
    assert (me["playerId"], me["locale"]) == (first["playerId"], "zh-CN")
    r = c.post("/v1/players/me/sessions", json={"label": "tablet"}, headers=auth(phone))
    assert r.status_code == 201, r.text
    tablet = r.json()["token"]
    items = c.get("/v1/players/me/sessions", headers=auth(tablet)).json()["items"]
    assert [(i["label"], i["current"]) for i in items] == [("phone", False), ("tablet", True)]

    r = c.post("/v1/players/me/token", headers=auth(phone))
    assert r.status_code == 200, r.text
    rotated = r.json()["token"]
    assert c.get("/v1/players/me", headers=auth(phone)).status_code == 401  # rotated away
    assert c.get("/v1/players/me", headers=auth(rotated)).status_code == 200

    r = c.delete(f"/v1/players/me/sessions/{r.json()['sessionId']}", headers=auth(tablet))
    assert r.status_code == 204
    refused = c.get("/v1/players/me", headers=auth(rotated))
    assert refused.status_code == 401
    assert refused.headers["content-type"].startswith("application/problem+json")
    assert c.get("/v1/players/me", headers=auth(tablet)).status_code == 200


@pytest.mark.parametrize(
    ("headers", "status", "code"),
    [
        ({}, 401, "unauthorized"),
        (auth("p.00000000000000000000000000000000.forged"), 401, "unauthorized"),
        (auth("s.00000000000000000000000000000000.seat"), 403, "forbidden"),
        ({"Authorization": "Basic abc"}, 401, "unauthorized"),
    ],
)
def test_player_routes_refuse_other_tokens(
    c: TestClient[Litestar], headers: dict[str, str], status: int, code: str
) -> None:
    r = c.get("/v1/players/me/matches", headers=headers)
    assert (r.status_code, r.json()["code"]) == (status, code)


@pytest.mark.parametrize(
    "body",
    [{}, {"displayName": ""}, {"displayName": "x", "locale": "fr"}, {"displayName": "x", "y": 1}],
)
def test_bad_player_bodies_are_422(c: TestClient[Litestar], body: Json) -> None:
    r = c.post("/v1/players", json=body)
    assert r.status_code == 422, r.text


def seat_player_and_three(c: TestClient[Litestar], player: str) -> Table:
    created = c.post("/v1/matches", json={"name": "friends"}).json()
    match_id = created["matchId"]
    r = c.post("/v1/players/me/seats", json={"matchId": match_id, "seat": 0}, headers=auth(player))
    assert r.status_code == 201, r.text
    assert r.json()["token"].startswith("s.")
    tokens = [player]
    for seat in (1, 2, 3):
        r = c.post(f"/v1/matches/{match_id}/seats/{seat}", json={"name": f"p{seat}"})
        tokens.append(r.json()["token"])
    return Table(c, match_id, created["organiserToken"], tokens)


def test_a_player_acts_with_the_player_token_and_lists_whose_turn(c: TestClient[Litestar]) -> None:
    player = new_player(c)["token"]
    table = seat_player_and_three(c, player)
    for _ in range(60):  # the seat's commands and view with the player token (R33)
        table.step()
    mine = c.get("/v1/players/me/matches", headers=auth(player)).json()
    assert mine["finished"] == [] and len(mine["current"]) == 1
    item = mine["current"][0]
    public = table.public()
    assert (item["matchId"], item["seat"], item["status"]) == (table.match_id, 0, "playing")
    assert item["toAct"] == public["expected"]["seat"]
    assert item["yourTurn"] == (public["expected"]["seat"] == 0)
    twice = c.post(
        "/v1/players/me/seats",
        json={"matchId": table.match_id, "seat": 1},
        headers=auth(player),
    )
    assert twice.status_code == 409  # seat taken (R1)
    c.post(f"{table.url}/finish", headers=auth(table.organiser))
    mine = c.get("/v1/players/me/matches", headers=auth(player)).json()
    assert mine["current"] == [] and mine["finished"][0]["status"] == "finished"


def test_one_player_cannot_hold_two_seats_of_a_match(c: TestClient[Litestar]) -> None:
    player = new_player(c)["token"]
    match_id = c.post("/v1/matches", json={}).json()["matchId"]
    body = {"matchId": match_id, "seat": 0}
    assert c.post("/v1/players/me/seats", json=body, headers=auth(player)).status_code == 201
    r = c.post("/v1/players/me/seats", json={**body, "seat": 2}, headers=auth(player))
    assert (r.status_code, r.json()["code"]) == (409, "already-seated")
    assert r.json()["rule"] == "R1" and "R1" in r.json()["detail"]
    seats = c.get(f"/v1/matches/{match_id}").json()["seats"]
    assert seats[2] is None  # the refusal changed nothing


def test_a_fresh_seat_token_replaces_the_old_one(c: TestClient[Litestar]) -> None:
    player = new_player(c)["token"]
    table = seat_player_and_three(c, player)
    r = c.post("/v1/players/me/seats", json={"matchId": table.match_id, "seat": 0})
    assert r.status_code == 401
    first = c.post(
        f"/v1/players/me/matches/{table.match_id}/seat-token", headers=auth(player)
    ).json()
    view = c.get(f"{table.url}/view", headers=auth(first["token"]))
    assert view.status_code == 200 and view.json()["seat"] == 0
    second = c.post(
        f"/v1/players/me/matches/{table.match_id}/seat-token", headers=auth(player)
    ).json()
    assert c.get(f"{table.url}/view", headers=auth(first["token"])).status_code == 401
    assert c.get(f"{table.url}/view", headers=auth(second["token"])).status_code == 200
    other = new_player(c, "Lin")["token"]
    r = c.post(f"/v1/players/me/matches/{table.match_id}/seat-token", headers=auth(other))
    assert r.status_code == 404
    assert c.get(f"{table.url}/view", headers=auth(other)).status_code == 403


def test_creating_a_player_is_idempotent_and_withholds_the_token(c: TestClient[Litestar]) -> None:
    key = {"Idempotency-Key": "join-1"}
    first = c.post("/v1/players", json={"displayName": "Mei"}, headers=key)
    again = c.post("/v1/players", json={"displayName": "Mei"}, headers=key)
    assert again.headers["idempotent-replayed"] == "true"
    assert again.json() == {**first.json(), "token": None, "tokenWithheld": True}


def test_a_replayed_seat_token_request_rotates_once_and_withholds_the_token(
    c: TestClient[Litestar],
) -> None:
    player = new_player(c)["token"]
    table = seat_player_and_three(c, player)
    url = f"/v1/players/me/matches/{table.match_id}/seat-token"
    key = {**auth(player), "Idempotency-Key": "phone-2"}
    first = c.post(url, headers=key)
    again = c.post(url, headers=key)
    assert again.headers["idempotent-replayed"] == "true"
    assert again.json() == {**first.json(), "token": None, "tokenWithheld": True}
    view = c.get(f"{table.url}/view", headers=auth(first.json()["token"]))
    assert view.status_code == 200  # the replay did not replace it again

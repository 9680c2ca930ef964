"""Invite codes (docs/players.md): the organiser or a seated player makes a code; whoever
has it takes the lowest free seat (R1), a player as their account; a full table, an
expired code and a bad code are refused as problems, and many joiners racing for the
last seats are each seated once."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from tests.api.rest import Json, auth, client, new_service
from tests.api.test_rest_players import new_player


def new_match(c: TestClient[Litestar]) -> Json:
    body: Json = c.post("/v1/matches", json={"name": "friends"}).json()
    return body


def invite(c: TestClient[Litestar], match_id: str, token: str, **body: int) -> Json:
    r = c.post(f"/v1/matches/{match_id}/invites", json=body or None, headers=auth(token))
    assert r.status_code == 201, r.text
    made: Json = r.json()
    return made


def test_an_invite_seats_a_player_and_guests_until_the_table_is_full(
    c: TestClient[Litestar],
) -> None:
    m = new_match(c)
    code = invite(c, m["matchId"], m["organiserToken"])["code"]
    assert len(code) == 9 and code[4] == "-"
    info = c.get(f"/v1/invites/{code.lower()}").json()
    assert (info["matchId"], info["freeSeats"]) == (m["matchId"], [0, 1, 2, 3])
    player = new_player(c)["token"]
    r = c.post(f"/v1/invites/{code}", headers=auth(player))
    assert r.status_code == 201, r.text
    assert r.json()["seat"] == 0
    mine = c.get("/v1/players/me/matches", headers=auth(player)).json()["current"]
    assert [i["matchId"] for i in mine] == [m["matchId"]]
    # a seated player invites too, with their player token
    second = invite(c, m["matchId"], player)["code"]
    seats = [
        c.post(f"/v1/invites/{second}", json={"name": f"guest {i}"}).json()["seat"]
        for i in range(3)
    ]
    assert seats == [1, 2, 3]
    full = c.post(f"/v1/invites/{code}", json={"name": "late"})
    assert (full.status_code, full.json()["code"], full.json()["rule"]) == (
        409,
        "no-free-seat",
        "R1",
    )
    summary = c.get(f"/v1/matches/{m['matchId']}", headers=auth(player))  # a private table's
    assert summary.json()["roundNumber"] == 1  # dealt (R16)


@pytest.mark.parametrize(
    ("path", "body", "status", "code"),
    [
        ("/v1/invites/AAAA-AAAA", {"name": "x"}, 404, "not-found"),
        ("/v1/invites/short", {"name": "x"}, 422, "validation-failed"),
        ("/v1/invites/IOIO-1010", {"name": "x"}, 422, "validation-failed"),
        ("/v1/invites/AAAA-AAAA", None, 404, "not-found"),
    ],
)
def test_bad_codes_are_problems(
    c: TestClient[Litestar], path: str, body: Json | None, status: int, code: str
) -> None:
    r = c.post(path, json=body)
    assert (r.status_code, r.json()["code"]) == (status, code)
    assert r.headers["content-type"].startswith("application/problem+json")


def test_only_the_organiser_or_a_seat_invites(c: TestClient[Litestar]) -> None:
    m = new_match(c)
    url = f"/v1/matches/{m['matchId']}/invites"
    assert c.post(url).status_code == 401
    stranger = new_player(c)["token"]
    assert c.post(url, headers=auth(stranger)).status_code == 403
    other = new_match(c)
    assert c.post(url, headers=auth(other["organiserToken"])).status_code == 403


def test_an_expired_invite_is_refused() -> None:
    service = new_service()
    with client(service) as c:
        m = new_match(c)
        code = invite(c, m["matchId"], m["organiserToken"], ttlSeconds=60)["code"]
        service.clock.advance(timedelta(seconds=61))  # type: ignore[attr-defined]
        r = c.post(f"/v1/invites/{code}", json={"name": "late"})
        assert (r.status_code, r.json()["code"]) == (409, "invite-expired")


def test_racing_joiners_are_each_seated_once(c: TestClient[Litestar]) -> None:
    m = new_match(c)
    code = invite(c, m["matchId"], m["organiserToken"])["code"]
    tokens = [new_player(c, f"p{i}")["token"] for i in range(8)]
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda t: c.post(f"/v1/invites/{code}", headers=auth(t)), tokens))
    won = [a.json()["seat"] for a in answers if a.status_code == 201]
    assert sorted(won) == [0, 1, 2, 3]
    assert {a.json()["code"] for a in answers if a.status_code != 201} == {"no-free-seat"}
    seated = [
        len(c.get("/v1/players/me/matches", headers=auth(t)).json()["current"]) for t in tokens
    ]
    assert sorted(seated) == [0, 0, 0, 0, 1, 1, 1, 1]


def test_a_guest_who_holds_a_seat_of_the_match_gets_no_second_one(
    c: TestClient[Litestar],
) -> None:
    """R1 for guests: a guest is known by the seat token it holds. Presenting a seat token
    of the invite's match is 409 ``already-seated``; one of another match is no tie to this
    one (the guest joins); a player who sits already is refused as before."""
    m = new_match(c)
    code = invite(c, m["matchId"], m["organiserToken"])["code"]
    guest = c.post(f"/v1/invites/{code}", json={"name": "ann"}).json()
    again = c.post(f"/v1/invites/{code}", json={"name": "ann 2"}, headers=auth(guest["token"]))
    assert (again.status_code, again.json()["code"], again.json()["rule"]) == (
        409,
        "already-seated",
        "R1",
    )
    other = new_match(c)
    elsewhere = c.post(f"/v1/matches/{other['matchId']}/seats/0", json={"name": "bo"}).json()[
        "token"
    ]
    joined = c.post(f"/v1/invites/{code}", json={"name": "bo"}, headers=auth(elsewhere))
    assert joined.status_code == 201, joined.text
    player = new_player(c)["token"]
    assert c.post(f"/v1/invites/{code}", headers=auth(player)).status_code == 201
    twice = c.post(f"/v1/invites/{code}", headers=auth(player))
    assert (twice.status_code, twice.json()["code"]) == (409, "already-seated")
    assert c.get(f"/v1/invites/{code}").json()["freeSeats"] == [3]
    # the same rule on a public table's seats
    seat = c.post(
        f"/v1/matches/{other['matchId']}/seats/1", json={"name": "bo"}, headers=auth(elsewhere)
    )
    assert (seat.status_code, seat.json()["code"]) == (409, "already-seated")

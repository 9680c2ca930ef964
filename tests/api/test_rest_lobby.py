"""Quick play (docs/players.md): four compatible tickets make one match, seated and dealt
(R16); partners who name each other sit opposite (R2); incompatible rule sets never meet;
bots fill the free seats once a ticket's wait has passed; a ticket is read, streamed and
cancelled; a player waits with one ticket at a time; racing tickets seat each player once."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from tests.api.rest import Json, auth, client, new_service
from tests.api.test_rest_players import new_player


def ticket(c: TestClient[Litestar], token: str, **body: object) -> Json:
    r = c.post("/v1/lobby/tickets", json=body or None, headers=auth(token))
    assert r.status_code == 201, r.text
    assert r.headers["location"] == f"/v1/lobby/tickets/{r.json()['ticketId']}"
    made: Json = r.json()
    return made


def read(c: TestClient[Litestar], token: str, ticket_id: str) -> Json:
    r = c.get(f"/v1/lobby/tickets/{ticket_id}", headers=auth(token))
    assert r.status_code == 200, r.text
    body: Json = r.json()
    return body


def test_four_tickets_make_one_seated_match() -> None:
    with client() as c:
        players = [new_player(c, f"p{i}") for i in range(5)]
        tickets = [ticket(c, p["token"]) for p in players[:4]]
        assert [t["status"] for t in tickets] == ["waiting"] * 3 + ["matched"]
        seen = [read(c, p["token"], t["ticketId"]) for p, t in zip(players, tickets, strict=False)]
        match_ids = {t["matchId"] for t in seen}
        assert len(match_ids) == 1 and sorted(t["seat"] for t in seen) == [0, 1, 2, 3]
        match_id = match_ids.pop()
        summary = c.get(f"/v1/matches/{match_id}").json()
        assert [s["name"] for s in summary["seats"]] == ["p0", "p1", "p2", "p3"]
        assert summary["roundNumber"] == 1  # dealt in the same save (R16)
        view = c.get(f"/v1/matches/{match_id}/view", headers=auth(players[2]["token"]))
        assert view.status_code == 200 and view.json()["seat"] == 2
        fifth = ticket(c, players[4]["token"])
        assert fifth["status"] == "waiting"  # the next table


def test_partners_sit_opposite_and_rule_sets_do_not_mix() -> None:
    with client() as c:
        a, b, x, y, z = (new_player(c, n) for n in "abxyz")
        ta = ticket(c, a["token"], partner=b["playerId"])
        other = ticket(c, z["token"], preset="tuolaji")  # another rule set: never meets
        ticket(c, x["token"])
        ticket(c, y["token"])  # three singles-worth but a's partner is not here yet
        assert read(c, a["token"], ta["ticketId"])["status"] == "waiting"
        tb = ticket(c, b["token"], partner=a["playerId"])
        assert tb["status"] == "matched"
        seat_a = read(c, a["token"], ta["ticketId"])["seat"]
        assert (seat_a, tb["seat"]) in ((0, 2), (2, 0))  # R2
        assert read(c, z["token"], other["ticketId"])["status"] == "waiting"


def test_bots_fill_after_the_named_wait() -> None:
    service = new_service()
    with client(service) as c:
        mei, lin = new_player(c, "Mei"), new_player(c, "Lin")
        first = ticket(c, mei["token"], partner=lin["playerId"], botsAfterSeconds=30)
        ticket(c, lin["token"], partner=mei["playerId"])
        assert read(c, mei["token"], first["ticketId"])["status"] == "waiting"
        service.clock.advance(timedelta(seconds=30))  # type: ignore[attr-defined]
        done = read(c, mei["token"], first["ticketId"])
        assert done["status"] == "matched"
        seats = c.get(f"/v1/matches/{done['matchId']}").json()["seats"]
        assert sorted(s["kind"] for s in seats) == ["heuristic", "heuristic", "human", "human"]
        assert seats[0]["kind"] == seats[2]["kind"] == "human"  # partners opposite (R2)


def test_a_ticket_is_cancelled_once_and_one_waits_at_a_time() -> None:
    with client() as c:
        mei = new_player(c)
        first = ticket(c, mei["token"])
        other = c.post(
            "/v1/lobby/tickets", json={"botsAfterSeconds": 30}, headers=auth(mei["token"])
        )
        assert (other.status_code, other.json()["code"]) == (409, "already-queued")
        url = f"/v1/lobby/tickets/{first['ticketId']}"
        r = c.delete(url, headers=auth(mei["token"]))
        assert (r.status_code, r.json()["status"]) == (200, "cancelled")
        r = c.delete(url, headers=auth(mei["token"]))
        assert (r.status_code, r.json()["code"]) == (409, "ticket-closed")
        stranger = new_player(c, "Lin")
        assert c.get(url, headers=auth(stranger["token"])).status_code == 404
        assert c.get(url).status_code == 401
        ticket(c, mei["token"])  # free to queue again


def test_the_ticket_stream_resumes_and_ends_when_matched() -> None:
    with client() as c:
        players = [new_player(c, f"p{i}") for i in range(4)]
        first = ticket(c, players[0]["token"])
        for p in players[1:]:
            ticket(c, p["token"])
        url = f"/v1/lobby/tickets/{first['ticketId']}/stream"
        with c.stream("GET", url, headers=auth(players[0]["token"])) as r:
            text = "".join(r.iter_text())
        assert text.count("event: ticket") == 1 and '"status":"matched"' in text
        assert "id: 2\n" in text and text.startswith("retry: ")  # a reconnect hint first
        resumed = {**auth(players[0]["token"]), "Last-Event-ID": "2"}
        with c.stream("GET", url, headers=resumed) as r:
            assert "event:" not in "".join(r.iter_text())  # nothing newer than version 2


def test_many_racing_tickets_seat_every_player_once() -> None:
    with client() as c:
        players = [new_player(c, f"p{i}") for i in range(12)]
        with ThreadPoolExecutor(6) as pool:
            made = list(pool.map(lambda p: ticket(c, p["token"]), players))
        seated = [read(c, p["token"], t["ticketId"]) for p, t in zip(players, made, strict=True)]
        assert {t["status"] for t in seated} == {"matched"}
        tables: dict[str, list[int]] = {}
        for t in seated:
            tables.setdefault(t["matchId"], []).append(t["seat"])
        assert sorted(sorted(s) for s in tables.values()) == [[0, 1, 2, 3]] * 3
        for p in players:
            mine = c.get("/v1/players/me/matches", headers=auth(p["token"])).json()
            assert len(mine["current"]) == 1


def test_erasing_a_waiting_player_cancels_their_ticket() -> None:
    with client() as c:
        mei, lin = new_player(c, "Mei"), new_player(c, "Lin")
        first = ticket(c, mei["token"])
        assert c.delete("/v1/players/me", headers=auth(mei["token"])).status_code == 204
        for i in range(3):  # three more: no match with the erased player's ticket
            ticket(c, lin["token"] if i == 0 else new_player(c, f"x{i}")["token"])
        assert first["status"] == "waiting"
        mine = c.get("/v1/players/me/matches", headers=auth(lin["token"])).json()
        assert mine["current"] == []  # three waiting, the fourth place was Mei's


# the partner named → the problem; a ticket that could never be matched is refused
BAD_PARTNERS = [
    ("yourself", "your partner is another player"),
    ("nobody", "no player 00000000-0000-0000-0000-000000000000"),
    ("erased", "was erased"),
    ("a match", "no player"),  # an id of something else
]


@pytest.fixture(scope="module")
def refusing() -> Iterator[TestClient[Litestar]]:
    """One app for the refusals: each test leaves its lobby as it found it (its one
    ticket cancelled), so a ticket of its own waits alone whatever ran before."""
    with client() as c:
        yield c


@pytest.mark.parametrize(("partner", "detail"), BAD_PARTNERS)
def test_a_partner_who_can_never_queue_is_refused(
    refusing: TestClient[Litestar], partner: str, detail: str
) -> None:
    c = refusing
    mei, lin = new_player(c, "Mei"), new_player(c, "Lin")
    ids = {
        "yourself": mei["playerId"],
        "nobody": "00000000-0000-0000-0000-000000000000",
        "erased": lin["playerId"],
        "a match": c.post("/v1/matches", json={"name": "x"}).json()["matchId"],
    }
    assert c.delete("/v1/players/me", headers=auth(lin["token"])).status_code == 204
    r = c.post("/v1/lobby/tickets", json={"partner": ids[partner]}, headers=auth(mei["token"]))
    assert r.status_code == 422, r.text
    assert r.headers["content-type"].startswith("application/problem+json")
    assert r.json()["code"] == "invalid-input" and detail in r.json()["detail"]
    assert r.json()["detail"].startswith("partner:")
    queued = ticket(c, mei["token"])
    assert queued["status"] == "waiting"  # nothing was queued
    r = c.delete(f"/v1/lobby/tickets/{queued['ticketId']}", headers=auth(mei["token"]))
    assert (r.status_code, r.json()["status"]) == (200, "cancelled")


def test_a_second_tap_answers_the_first_ticket() -> None:
    """The same ticket asked for again without an Idempotency-Key (a double tap) answers
    the player's ticket, 200: the one waiting, or the one whose quick-play match the player
    still plays — never a second match (one quick play at a time)."""
    with client() as c:
        players = [new_player(c, f"p{i}") for i in range(4)]
        mei = players[0]["token"]
        first = ticket(c, mei)
        tap = c.post("/v1/lobby/tickets", headers=auth(mei))
        assert (tap.status_code, tap.json()["ticketId"]) == (200, first["ticketId"])
        assert tap.json()["status"] == "waiting"
        for p in players[1:]:
            ticket(c, p["token"])
        matched = read(c, mei, first["ticketId"])
        assert matched["status"] == "matched"
        tap = c.post("/v1/lobby/tickets", headers=auth(mei))
        assert (tap.status_code, tap.json()["ticketId"]) == (200, first["ticketId"])
        assert tap.json()["matchId"] == matched["matchId"]
        current = c.get("/v1/players/me/matches", headers=auth(mei)).json()["current"]
        assert [m["matchId"] for m in current] == [matched["matchId"]]
        other = c.post("/v1/lobby/tickets", json={"botsAfterSeconds": 30}, headers=auth(mei))
        assert (other.status_code, other.json()["code"]) == (409, "already-queued")
        left = c.post(f"/v1/players/me/matches/{matched['matchId']}/leave", headers=auth(mei))
        assert left.status_code == 200, left.text
        assert ticket(c, mei)["ticketId"] != first["ticketId"]  # left: free to queue again

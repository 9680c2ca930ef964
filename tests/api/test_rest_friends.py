"""Friends over REST (docs/players.md "Friends", docs/decisions.md D-social): requests
asked, accepted, declined, withdrawn; friendships removed; friend codes rotated; blocks
that hide one player from the other everywhere (no oracle); table invitations; erasure."""

from __future__ import annotations

import json
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

import api.players.stream as player_stream
from tests.api.rest import auth, client, new_service
from tests.api.test_rest_players import new_player

Json = dict[str, Any]


def ask(c: TestClient[Litestar], token: str, **body: Any) -> Any:
    return c.post("/v1/players/me/friend-requests", json=body, headers=auth(token))


def listed(c: TestClient[Litestar], token: str, path: str) -> list[str]:
    r = c.get(path, headers=auth(token))
    assert r.status_code == 200, r.text
    return [item["playerId"] for item in r.json()["items"]]


def frames(text: str) -> list[tuple[int | None, str, str]]:
    """(id, event, data) of every frame; presence frames have no id (not in the log)."""
    out: list[tuple[int | None, str, str]] = []
    for block in text.split("\n\n"):
        fields = dict(
            line.split(": ", 1) for line in block.splitlines() if ": " in line and line[0] != ":"
        )
        if "event" in fields:
            fid = int(fields["id"]) if "id" in fields else None
            out.append((fid, fields["event"], fields["data"]))
    return out


def read_stream(c: TestClient[Litestar], token: str, last: int | None = None) -> str:
    headers = auth(token) | ({} if last is None else {"Last-Event-ID": str(last)})
    with c.stream("GET", "/v1/players/me/stream", headers=headers) as r:
        assert r.status_code == 200, r.read()
        return "".join(r.iter_text())


def befriend(c: TestClient[Litestar], a: Json, b: Json) -> None:
    assert ask(c, a["token"], playerId=b["playerId"]).json()["status"] == "requested"
    r = c.post(
        f"/v1/players/me/friend-requests/{a['playerId']}/answer",
        json={"accept": True},
        headers=auth(b["token"]),
    )
    assert r.status_code == 204, r.text


@pytest.fixture(scope="module")
def c() -> Any:
    """One app for the module: every test signs up players of its own and reads only
    theirs (their friends, requests, invitations and streams)."""
    with client(new_service()) as c:
        yield c


def test_request_accept_decline_withdraw_remove(c: TestClient[Litestar]) -> None:
    mei, li, wu = (new_player(c, n) for n in ("Mei", "Li", "Wu"))
    r = ask(c, mei["token"], playerId=li["playerId"])
    assert r.status_code == 201 and r.json() == {"playerId": li["playerId"], "status": "requested"}
    assert ask(c, mei["token"], playerId=li["playerId"]).json()["code"] == "already-requested"
    assert listed(c, li["token"], "/v1/players/me/friend-requests?direction=in") == [
        mei["playerId"]
    ]
    assert listed(c, mei["token"], "/v1/players/me/friend-requests?direction=out") == [
        li["playerId"]
    ]
    r = c.post(
        f"/v1/players/me/friend-requests/{mei['playerId']}/answer",
        json={"accept": True},
        headers=auth(li["token"]),
    )
    assert r.status_code == 204
    assert listed(c, mei["token"], "/v1/players/me/friends") == [li["playerId"]]
    assert listed(c, li["token"], "/v1/players/me/friends") == [mei["playerId"]]
    friends = c.get("/v1/players/me/friends", headers=auth(mei["token"])).json()["items"]
    assert friends[0]["name"] == "Li" and friends[0]["presence"]["state"] in ("online", "away")
    # declined and withdrawn requests leave nothing
    ask(c, wu["token"], playerId=mei["playerId"])
    r = c.post(
        f"/v1/players/me/friend-requests/{wu['playerId']}/answer",
        json={"accept": False},
        headers=auth(mei["token"]),
    )
    assert r.status_code == 204
    assert listed(c, mei["token"], "/v1/players/me/friend-requests?direction=in") == []
    ask(c, wu["token"], playerId=li["playerId"])
    r = c.delete(f"/v1/players/me/friend-requests/{li['playerId']}", headers=auth(wu["token"]))
    assert r.status_code == 204
    assert listed(c, li["token"], "/v1/players/me/friend-requests?direction=in") == []
    # either side removes a friendship
    r = c.delete(f"/v1/players/me/friends/{mei['playerId']}", headers=auth(li["token"]))
    assert r.status_code == 204
    assert listed(c, mei["token"], "/v1/players/me/friends") == []


def test_asked_both_ways_are_friends_and_pages_have_cursors(c: TestClient[Litestar]) -> None:
    mei = new_player(c, "Mei")
    others = [new_player(c, f"p{i}") for i in range(3)]
    for o in others:
        ask(c, o["token"], playerId=mei["playerId"])
    r = ask(c, mei["token"], playerId=others[0]["playerId"])
    assert r.json()["status"] == "friends"
    page = c.get(
        "/v1/players/me/friend-requests?direction=in&limit=1", headers=auth(mei["token"])
    ).json()
    assert len(page["items"]) == 1 and page["next"]
    rest = c.get(
        f"/v1/players/me/friend-requests?direction=in&limit=5&after={page['next']}",
        headers=auth(mei["token"]),
    ).json()
    assert [i["playerId"] for i in page["items"] + rest["items"]] == [
        o["playerId"] for o in others[1:]
    ]
    assert c.get("/v1/players/me/friends?bogus=1", headers=auth(mei["token"])).status_code == 400


def test_a_rotated_friend_code_stops_working(c: TestClient[Litestar]) -> None:
    mei, li, wu = (new_player(c, n) for n in ("Mei", "Li", "Wu"))
    assert c.get("/v1/players/me/social", headers=auth(mei["token"])).json()["friendCode"] is None
    first = c.post("/v1/players/me/friend-code", headers=auth(mei["token"])).json()["code"]
    r = ask(c, li["token"], friendCode=first.lower())
    assert r.status_code == 201 and r.json()["playerId"] == mei["playerId"]
    second = c.post("/v1/players/me/friend-code", headers=auth(mei["token"])).json()["code"]
    assert second != first
    assert c.get("/v1/players/me/social", headers=auth(mei["token"])).json()["friendCode"] == second
    gone = ask(c, wu["token"], friendCode=first)
    assert gone.status_code == 404 and gone.json()["code"] == "not-found"
    assert ask(c, wu["token"], friendCode=second).status_code == 201


def test_a_block_hides_the_blocker_without_telling(c: TestClient[Litestar]) -> None:
    mei, li = new_player(c, "Mei"), new_player(c, "Li")
    befriend(c, mei, li)
    r = c.put(f"/v1/players/me/blocks/{li['playerId']}", headers=auth(mei["token"]))
    assert r.status_code == 204
    assert listed(c, mei["token"], "/v1/players/me/friends") == []
    assert listed(c, li["token"], "/v1/players/me/friends") == []
    assert listed(c, mei["token"], "/v1/players/me/blocks") == [li["playerId"]]
    refused = ask(c, li["token"], playerId=mei["playerId"])
    unknown = ask(c, li["token"], playerId="00000000-0000-4000-8000-000000000000")
    assert refused.status_code == unknown.status_code == 404
    assert refused.json()["detail"] == unknown.json()["detail"]
    assert listed(c, mei["token"], "/v1/players/me/friend-requests?direction=in") == []
    r = c.delete(f"/v1/players/me/blocks/{li['playerId']}", headers=auth(mei["token"]))
    assert r.status_code == 204
    assert ask(c, li["token"], playerId=mei["playerId"]).status_code == 201


def test_erasure_removes_friends_requests_and_the_code(c: TestClient[Litestar]) -> None:
    mei, li, wu = (new_player(c, n) for n in ("Mei", "Li", "Wu"))
    befriend(c, mei, li)
    ask(c, mei["token"], playerId=wu["playerId"])
    code = c.post("/v1/players/me/friend-code", headers=auth(mei["token"])).json()["code"]
    assert c.delete("/v1/players/me", headers=auth(mei["token"])).status_code == 204
    assert listed(c, li["token"], "/v1/players/me/friends") == []
    assert listed(c, wu["token"], "/v1/players/me/friend-requests?direction=in") == []
    assert ask(c, wu["token"], friendCode=code).status_code == 404


def test_appear_offline_is_a_stored_choice(c: TestClient[Litestar]) -> None:
    mei, li = new_player(c, "Mei"), new_player(c, "Li")
    befriend(c, mei, li)
    r = c.put(
        "/v1/players/me/presence",
        json={"appearOffline": True, "notifyFriendOnline": True},
        headers=auth(li["token"]),
    )
    assert r.status_code == 200 and r.json() == {"appearOffline": True, "notifyFriendOnline": True}
    friends = c.get("/v1/players/me/friends", headers=auth(mei["token"])).json()["items"]
    assert friends[0]["presence"] == {"state": "offline", "matchId": None}
    mine = c.get("/v1/players/me/social", headers=auth(li["token"])).json()
    assert mine["appearOffline"] and mine["notifyFriendOnline"]
    # a setting left out keeps its value: turning "appear offline" off keeps the alerts
    r = c.put("/v1/players/me/presence", json={"appearOffline": False}, headers=auth(li["token"]))
    assert r.json() == {"appearOffline": False, "notifyFriendOnline": True}
    r = c.put("/v1/players/me/presence", json={}, headers=auth(li["token"]))
    assert r.json() == {"appearOffline": False, "notifyFriendOnline": True}


def test_the_player_stream_tells_requests_and_friends_presence(
    c: TestClient[Litestar], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(player_stream, "LIFETIME_S", 0.5)
    monkeypatch.setattr(player_stream, "POLL_S", 0.1)
    mei, li = new_player(c, "Mei"), new_player(c, "Li")
    c.put(
        "/v1/players/me/presence",
        json={"appearOffline": False, "notifyFriendOnline": True},
        headers=auth(mei["token"]),
    )
    start = frames(read_stream(c, mei["token"]))[0][0] or 0
    ask(c, li["token"], playerId=mei["playerId"])
    c.post(
        f"/v1/players/me/friend-requests/{li['playerId']}/answer",
        json={"accept": True},
        headers=auth(mei["token"]),
    )
    seen = frames(read_stream(c, mei["token"], start))
    kinds = [k for _, k, _ in seen]
    assert "friend-request" in kinds
    request = next(json.loads(d) for _, k, d in seen if k == "friend-request")
    assert request["playerId"] == li["playerId"] and request["name"] == "Li"
    assert request["text"] == {"en": "Li wants to be your friend", "zh-CN": "Li 想加你为好友"}
    # Li's presence is told on Mei's stream; Li asked for nothing, so no friend-online
    told = frames(read_stream(c, li["token"], start))
    presence = [json.loads(d) for _, k, d in told if k == "presence"]
    assert presence and presence[0]["playerId"] == mei["playerId"]
    assert presence[0]["state"] in ("online", "away")
    accepted = [json.loads(d) for _, k, d in told if k == "friend-accepted"]
    assert accepted and accepted[0]["playerId"] == mei["playerId"]


def seated_inviter(c: TestClient[Litestar], inviter: Json) -> str:
    made = c.post("/v1/matches", json={"name": "table"})
    match_id: str = made.json()["matchId"]
    r = c.post(
        "/v1/players/me/seats",
        json={"matchId": match_id, "seat": 0},
        headers=auth(inviter["token"]),
    )
    assert r.status_code == 201, r.text
    return match_id


def test_a_block_withdraws_the_open_invitations_between_the_two(c: TestClient[Litestar]) -> None:
    mei, li = new_player(c, "Mei"), new_player(c, "Li")
    befriend(c, mei, li)
    match_id = seated_inviter(c, mei)
    sent = c.post(
        f"/v1/matches/{match_id}/friend-invitations",
        json={"playerId": li["playerId"]},
        headers=auth(mei["token"]),
    )
    assert sent.status_code == 201, sent.text
    assert listed_invitations(c, li) == [sent.json()["invitationId"]]
    r = c.put(f"/v1/players/me/blocks/{mei['playerId']}", headers=auth(li["token"]))
    assert r.status_code == 204
    assert listed_invitations(c, li) == []


def listed_invitations(c: TestClient[Litestar], player: Json) -> list[str]:
    r = c.get("/v1/players/me/invitations", headers=auth(player["token"]))
    assert r.status_code == 200, r.text
    return [item["invitationId"] for item in r.json()["items"]]


def test_inviting_again_to_the_same_table_answers_the_open_invitation(
    c: TestClient[Litestar],
) -> None:
    mei, li = new_player(c, "Mei"), new_player(c, "Li")
    befriend(c, mei, li)
    match_id = seated_inviter(c, mei)
    path = f"/v1/matches/{match_id}/friend-invitations"
    first = c.post(path, json={"playerId": li["playerId"]}, headers=auth(mei["token"]))
    again = c.post(path, json={"playerId": li["playerId"]}, headers=auth(mei["token"]))
    assert first.status_code == 201, first.text
    assert again.status_code == 201, again.text
    assert again.json() == first.json()
    assert listed_invitations(c, li) == [first.json()["invitationId"]]


def test_declining_an_invitation_answers_the_documented_204(c: TestClient[Litestar]) -> None:
    mei, li = new_player(c, "Mei"), new_player(c, "Li")
    befriend(c, mei, li)
    match_id = seated_inviter(c, mei)
    sent = c.post(
        f"/v1/matches/{match_id}/friend-invitations",
        json={"playerId": li["playerId"]},
        headers=auth(mei["token"]),
    ).json()
    r = c.post(
        f"/v1/players/me/invitations/{sent['invitationId']}/answer",
        json={"accept": False},
        headers=auth(li["token"]),
    )
    assert r.status_code == 204, r.text
    document = c.get("/schema/openapi.json").json()
    answer = document["paths"]["/v1/players/me/invitations/{invitation_id}/answer"]["post"]
    assert {"201", "204"} <= set(answer["responses"])


def test_ending_a_friendship_withdraws_the_open_invitations(c: TestClient[Litestar]) -> None:
    mei, li = new_player(c, "Mei"), new_player(c, "Li")
    befriend(c, mei, li)
    match_id = seated_inviter(c, mei)
    sent = c.post(
        f"/v1/matches/{match_id}/friend-invitations",
        json={"playerId": li["playerId"]},
        headers=auth(mei["token"]),
    ).json()
    r = c.delete(f"/v1/players/me/friends/{li['playerId']}", headers=auth(mei["token"]))
    assert r.status_code == 204
    assert listed_invitations(c, li) == []
    r = c.post(
        f"/v1/players/me/invitations/{sent['invitationId']}/answer",
        json={"accept": True},
        headers=auth(li["token"]),
    )
    assert r.status_code == 409 and r.json()["code"] == "invitation-closed", r.text

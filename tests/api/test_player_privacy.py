"""A player's account id is not public (R33, docs/players.md "Who sees a player's id").

``SeatTaken.accountId`` links every match a player sat in; anyone who once learnt the id
(a partner, for quick play) could follow that player through the public history and the
events feed — after an erasure too, which destroys the name but not the id. It is a
secret field of ``SeatTaken``, like the seat token's hash: left out of every public read
and named in ``hidden``; the operator's feed keeps it."""

from __future__ import annotations

from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from tests.api.rest import auth, new_service
from tests.apps import make_app

OPERATOR = "operator-token-0123456789abcdef"


def seat_taken(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [i for i in items if i["type"] == "SeatTaken"]


def read_items(c: TestClient[Litestar], read: str, match_id: str, token: str) -> list[Any]:
    """The SeatTaken items a read shows (the player's seat is seat 0)."""
    if read == "history":
        items = c.get(f"/v1/matches/{match_id}/history").json()["items"]
    elif read == "events feed":
        items = c.get("/v1/events", params={"limit": 1000}).json()["items"]
    else:  # the history as the seat sees it
        items = c.get(f"/v1/matches/{match_id}/history", headers=auth(token)).json()["items"]
    return seat_taken(items)


READS = ["history", "events feed", "history as the seat"]


@pytest.mark.parametrize("read", READS)
def test_the_account_id_of_a_seat_is_not_public(read: str) -> None:
    with TestClient(make_app(new_service(), operator_token=OPERATOR)) as c:
        player = c.post("/v1/players", json={"displayName": "Mei"}).json()
        match_id = c.post("/v1/matches", json={"name": "friends"}).json()["matchId"]
        body = {"matchId": match_id, "seat": 0}
        claimed = c.post("/v1/players/me/seats", json=body, headers=auth(player["token"]))
        assert claimed.status_code == 201, claimed.text
        items = read_items(c, read, match_id, player["token"])
        assert items, read
        for item in items:
            assert "accountId" not in item["data"] and "accountId" in item["hidden"], item
            assert player["playerId"] not in str(item)
        operator = c.get("/v1/events", params={"limit": 1000}, headers=auth(OPERATOR)).json()
        ids = [i["data"].get("accountId") for i in seat_taken(operator["items"])]
        assert ids == [player["playerId"]]  # the operator reads every field

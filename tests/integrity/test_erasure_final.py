"""Erasure is final for what the person held (docs/players.md): their seat tokens stop
working with their sessions — in the finished matches they keep a seat in too — and an
Idempotency-Key replayed after the erasure answers a problem (nothing of the person is left
to answer with), never a 500."""

from __future__ import annotations

from litestar.testing import TestClient

from tests.apps import make_app
from tests.integrity.population import auth


def test_an_erased_players_seat_tokens_stop_and_a_replay_is_a_problem() -> None:
    with TestClient(make_app()) as c:
        key = {"idempotency-key": "erase-me-1"}
        made = c.post("/v1/players", json={"displayName": "Mei"}, headers=key).json()
        created = c.post("/v1/matches", json={"name": "x"}).json()
        match_id = created["matchId"]
        body = {"matchId": match_id, "seat": 0}
        seat = c.post("/v1/players/me/seats", json=body, headers=auth(made["token"])).json()
        for guest in (1, 2, 3):
            c.post(f"/v1/matches/{match_id}/seats/{guest}", json={"name": f"g{guest}"})
        ended = c.post(f"/v1/matches/{match_id}/finish", headers=auth(created["organiserToken"]))
        assert ended.status_code == 200  # a finished match: the player keeps the seat
        view = f"/v1/matches/{match_id}/view"
        assert c.get(view, headers=auth(seat["token"])).status_code == 200
        assert c.delete("/v1/players/me", headers=auth(made["token"])).status_code == 204
        assert c.get(view, headers=auth(seat["token"])).status_code == 401
        assert c.get("/v1/players/me", headers=auth(made["token"])).status_code == 401
        replay = c.post("/v1/players", json={"displayName": "Mei"}, headers=key)
        assert replay.status_code == 409 and replay.json()["code"] == "player-erased"
        summary = c.get(f"/v1/matches/{match_id}").json()
        assert summary["seats"][0]["name"] == "erased player"

"""The README's players walkthrough, as a test: two players join by quick play as
partners (opposite seats, R2), two bots fill the other seats, and the two play a whole
round with their player tokens while the bots move after every command (off the request
path: the test waits for them)."""

from __future__ import annotations

from tests.api.rest import Json, auth, choose, client, settle


def test_two_players_quick_play_two_bots_fill_and_they_play() -> None:
    with client() as c:
        mei = c.post("/v1/players", json={"displayName": "Mei"}).json()
        lin = c.post("/v1/players", json={"displayName": "Lin"}).json()
        first = c.post(
            "/v1/lobby/tickets",
            json={"partner": lin["playerId"], "botsAfterSeconds": 0, "botKind": "heuristic"},
            headers=auth(mei["token"]),
        ).json()
        assert first["status"] == "waiting"  # Lin's ticket is not there yet
        second = c.post(
            "/v1/lobby/tickets", json={"partner": mei["playerId"]}, headers=auth(lin["token"])
        ).json()
        assert second["status"] == "matched"
        match_id = second["matchId"]
        mine = c.get("/v1/players/me/matches", headers=auth(mei["token"])).json()["current"]
        seats = {mine[0]["seat"], second["seat"]}
        assert seats in ({0, 2}, {1, 3})  # partners opposite (R2)
        summary = c.get(f"/v1/matches/{match_id}").json()
        assert sorted(s["kind"] for s in summary["seats"]) == [
            "heuristic",
            "heuristic",
            "human",
            "human",
        ]
        tokens = {mine[0]["seat"]: mei["token"], second["seat"]: lin["token"]}
        for _ in range(400):
            settle(c)  # the bots move off the request path
            if c.get(f"/v1/matches/{match_id}").json()["rounds"][0]["status"] == "scored":
                break
            moved = False
            for token in tokens.values():
                view: Json = c.get(f"/v1/matches/{match_id}/view", headers=auth(token)).json()
                choice = choose(view)
                if choice is not None:
                    action, cards = choice
                    r = c.post(
                        f"/v1/matches/{match_id}/actions/{action}",
                        json={"cards": cards},
                        headers=auth(token),
                    )
                    assert r.status_code == 200, r.text
                    moved = True
                    break  # then the bots reply (settled above)
            assert moved  # the bots have moved after every command: a person is to act
        assert c.get(f"/v1/matches/{match_id}").json()["rounds"][0]["status"] == "scored"

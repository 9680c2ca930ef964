"""Every stream that resumes with ``Last-Event-ID`` answers an id it never sent alike:
422 ``last-event-id-ahead`` citing R34 (ids only grow), so one client rule — reconnect
without the id — serves them all. The standings stream answered ``invalid-input``;
the ticket stream waited in silence."""

from __future__ import annotations

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from tests.api.rest import auth
from tests.api.test_rest_players import new_player
from tests.api.test_rest_tournaments import create

AHEAD = "999999999"


@pytest.mark.parametrize(
    "stream", ["match", "standings", "player", "ticket", "events"], ids=lambda s: f"{s} stream"
)
def test_an_id_never_sent_is_last_event_id_ahead(c: TestClient[Litestar], stream: str) -> None:
    headers = {"Last-Event-ID": AHEAD}
    if stream == "match":
        match_id = c.post("/v1/matches", json={"name": "x"}).json()["matchId"]
        url = f"/v1/matches/{match_id}/stream"
    elif stream == "standings":
        url = f"/v1/tournaments/{create(c)[0]}/standings/stream"
    elif stream == "ticket":  # it waited in silence for a version that never came
        token = new_player(c)["token"]
        made = c.post("/v1/lobby/tickets", json={}, headers=auth(token)).json()
        url = f"/v1/lobby/tickets/{made['ticketId']}/stream"
        headers |= auth(token)
    elif stream == "player":
        url = "/v1/players/me/stream"
        headers |= auth(new_player(c)["token"])
    else:
        url = "/v1/events/stream"
    r = c.get(url, headers=headers)
    assert r.status_code == 422, r.text
    assert r.headers["content-type"].startswith("application/problem+json")
    problem = r.json()
    assert problem["code"] == "last-event-id-ahead", problem
    assert problem["type"].endswith("/last-event-id-ahead")
    assert AHEAD in problem["detail"] and "R34" in problem["detail"]

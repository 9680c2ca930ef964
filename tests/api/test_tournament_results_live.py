"""A served app's standings move by themselves (docs/decisions.md D-results-policy): the bot
driver plays a bots-only round, and the results policy, woken by the save that ends each
table — not by the clerk's period, set far longer than the test — records the results and
completes the round, with no request of the organiser's."""

from __future__ import annotations

import time

from litestar.testing import TestClient

from services.game import GameService
from tests.api.rest import auth
from tests.apps import make_app

PERIOD_MS = 600_000
"""The clerk's period: longer than the test, so only a save can wake the policy."""


def test_a_bots_round_completes_without_a_request() -> None:
    service = GameService({"PERSISTENCE_MODULE": "eventsourcing.popo"})
    app = make_app(service, sweep_interval_ms=PERIOD_MS)
    teams = [
        {"name": f"T{i}", "players": [{"name": f"a{i}", "kind": "random"}] * 2} for i in range(4)
    ]
    body = {"name": "cup", "teams": teams, "format": "round_robin", "matchLength": 1}
    with TestClient(app) as c:
        made = c.post("/v1/tournaments", json=body).json()
        url, token = f"/v1/tournaments/{made['tournamentId']}", made["organiserToken"]
        assert c.post(f"{url}/rounds", headers=auth(token)).status_code == 201
        deadline = time.monotonic() + 120
        while c.get(f"{url}/rounds/1").json()["status"] != "completed":
            assert time.monotonic() < deadline, "the round did not complete by itself"
            time.sleep(0.05)
        standings = c.get(f"{url}/standings").json()["standings"]
        assert sum(s["played"] for s in standings) == 4  # two tables, two teams each
    service.close()

"""``GET /v1/records?tournamentId=&player=``: one tournament's tables, or one player's
matches — the latter only with that player's token (an account links a person's
matches, so nobody else may ask)."""

from __future__ import annotations

import json
from typing import Any

from litestar.testing import TestClient

from services.records.bulk import BulkFilter, finished_matches
from tests.analysis.population import Population
from tests.apps import make_app


def lines(client: TestClient[Any], params: dict[str, str], token: str = "") -> list[dict[str, Any]]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    r = client.get("/v1/records", params=params, headers=headers)
    assert r.status_code == 200, r.text
    return [json.loads(line) for line in r.text.splitlines()]


def test_a_tournaments_tables_and_a_players_own_matches(population: Population) -> None:
    service = population.service
    everything = list(finished_matches(service, BulkFilter()))
    with TestClient(make_app(service)) as client:
        cup = lines(client, {"tournamentId": str(population.tournament)})
        assert len(cup) == 2 and len(everything) > 2
        ids = {str(m) for m in everything}
        assert len(ids) == len(everything)
        assert lines(client, {"tournamentId": "00000000-0000-0000-0000-000000000000"}) == []
        mine = lines(client, {"player": str(population.player)}, token=population.player_token)
        assert len(mine) == 1
        assert [s["kind"] for s in mine[0]["seats"]].count("human") == 1
        without = client.get("/v1/records", params={"player": str(population.player)})
        assert without.status_code == 401
        other = client.get(
            "/v1/records",
            params={"player": "00000000-0000-0000-0000-000000000001"},
            headers={"Authorization": f"Bearer {population.player_token}"},
        )
        assert other.status_code == 403 and other.json()["type"].endswith("forbidden")
        cup_id = population.tournament
        twice = client.get(f"/v1/records?tournamentId={cup_id}&tournamentId={cup_id}")
        assert twice.status_code == 422

"""Ratings at a tournament's registration and round 1 seeded by them (docs/decisions.md
D-career, docs/tournaments.md "Seeding"): each player's rating in the family of the
tournament's rule set (none: 1500, a bot its anchor), a team's the mean of its two, a
Swiss round 1 paired top half against bottom half of the teams by rating (R36), fixed by
its first scheduling; a player's account that is no player's is refused."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from uuid import UUID

import pytest
from litestar.testing import TestClient

from domain.tournament.events import TeamsSeeded
from services.game import GameService
from services.ratings.model import ANCHORS
from tests.apps import make_app
from tests.conftest import FakeClock
from tests.ratings.population import Population, populate

Json = Any


@pytest.fixture(scope="module")
def world() -> Iterator[tuple[TestClient[Any], Population, GameService]]:
    clock = FakeClock()
    service = GameService(clock=clock)
    pop = populate(service, clock)
    with TestClient(make_app(service)) as client:
        yield client, pop, service


def player(name: str, kind: str = "human", player_id: Any = None) -> Json:
    return {"name": name, "kind": kind, **({"playerId": str(player_id)} if player_id else {})}


def rating_of(client: TestClient[Any], player_id: Any) -> int:
    found = client.get(f"/v1/players/{player_id}/ratings").json()["ratings"]
    return next((r["rating"] for r in found if r["family"] == "standard"), 1500)


def test_teams_are_shown_with_their_ratings_and_seed_a_swiss_round_one(
    world: tuple[TestClient[Any], Population, GameService],
) -> None:
    client, pop, service = world
    a, c = pop.people[0].id, pop.people[2].id
    # registered so that round 1 by rating differs from round 1 by registration wherever
    # the rated pair ranks (it would coincide only below the weak bots' anchor)
    teams = [
        {"name": "Strong bots", "players": [player("S", "strong"), player("T", "strong")]},
        {"name": "Nobody rated", "players": [player("N1"), player("N2")]},
        {"name": "Weak bots", "players": [player("R", "random"), player("Q", "random")]},
        {"name": "Rated", "players": [player("A", player_id=a), player("B", player_id=c)]},
    ]
    body = {
        "name": "rated cup",
        "preset": "standard",
        "format": "swiss",
        "swissRounds": 2,
        "matchLength": 1,
        "teams": teams,
        "seeding": "rating",
    }
    made = client.post("/v1/tournaments", json=body)
    assert made.status_code == 201, made.text
    tid, token = made.json()["tournamentId"], made.json()["organiserToken"]
    assert made.json()["tournament"]["settings"]["seeding"] == "rating"
    seeding = client.get(f"/v1/tournaments/{tid}/seeding").json()
    assert (seeding["family"], seeding["seeding"], seeding["fixed"]) == (
        "standard",
        "rating",
        False,
    )
    expected = {
        0: [ANCHORS["strong"].shown] * 2,
        1: [1500, 1500],
        2: [ANCHORS["random"].shown] * 2,
        3: [rating_of(client, a), rating_of(client, c)],
    }
    for team in seeding["teams"]:
        ratings = [p["rating"] for p in team["players"]]
        assert ratings == expected[team["team"]]
        assert team["rating"] == round(sum(ratings) / 2)
    sums = {t: sum(r) for t, r in expected.items()}
    order = sorted(sums, key=lambda t: (-sums[t], t))
    assert [t["team"] for t in seeding["teams"]] == order
    assert [t["seed"] for t in seeding["teams"]] == [1, 2, 3, 4]
    assert seeding["teams"][order.index(3)]["players"][0]["playerId"] == str(a)
    # the preview and round 1: the top half against the bottom half, by rating (R36)
    fold = {frozenset((order[0], order[2])), frozenset((order[1], order[3]))}
    assert fold != {frozenset((0, 2)), frozenset((1, 3))}  # not the registration order
    preview = client.get(
        f"/v1/tournaments/{tid}/preview", headers={"Authorization": f"Bearer {token}"}
    ).json()
    assert {frozenset((t["firstTeam"], t["secondTeam"])) for t in preview["tables"]} == fold
    scheduled = client.post(
        f"/v1/tournaments/{tid}/rounds", headers={"Authorization": f"Bearer {token}"}
    )
    assert scheduled.status_code in (200, 201), scheduled.text
    state = client.get(f"/v1/tournaments/{tid}/rounds/1").json()
    tables = {frozenset((t["firstTeam"], t["secondTeam"])) for t in state["tables"]}
    assert tables == fold
    assert client.get(f"/v1/tournaments/{tid}/seeding", params={"top": "2"}).status_code == 400
    fixed = client.get(f"/v1/tournaments/{tid}/seeding").json()
    assert fixed["fixed"] and [t["team"] for t in fixed["teams"]] == order
    seeded = [e for e in service.events.get(UUID(tid)) if isinstance(e, TeamsSeeded)]
    assert len(seeded) == 1 and list(seeded[0].order) == order


def test_registration_order_still_seeds_by_default_and_bad_accounts_are_refused(
    world: tuple[TestClient[Any], Population, GameService],
) -> None:
    client, pop, _ = world
    a = pop.people[0].id
    base = {"name": "open cup", "preset": "standard", "matchLength": 1}
    teams: list[Json] = [
        {"name": f"T{i}", "players": [player(f"p{i}"), player(f"q{i}")]} for i in range(4)
    ]
    teams[3]["players"][0] = player("A", player_id=a)
    made = client.post(
        "/v1/tournaments", json={**base, "format": "swiss", "swissRounds": 2, "teams": teams}
    ).json()
    tid, token = made["tournamentId"], made["organiserToken"]
    auth = {"Authorization": f"Bearer {token}"}
    client.post(f"/v1/tournaments/{tid}/rounds", headers=auth)
    state = client.get(f"/v1/tournaments/{tid}/rounds/1").json()
    tables = {frozenset((t["firstTeam"], t["secondTeam"])) for t in state["tables"]}
    assert tables == {frozenset((0, 2)), frozenset((1, 3))}  # the registration order, folded
    assert client.get(f"/v1/tournaments/{tid}/seeding").json()["fixed"] is False
    for bad in (pop.erased, "00000000-0000-4000-8000-000000000000"):
        refused = client.post(
            "/v1/tournaments",
            json={
                **base,
                "format": "swiss",
                "swissRounds": 1,
                "teams": [
                    {"name": "X", "players": [player("x", player_id=bad), player("y")]},
                    {"name": "Y", "players": [player("z"), player("w")]},
                ],
            },
        )
        assert refused.status_code == 422 and "playerId" in refused.json()["detail"]
    robin = client.post(
        "/v1/tournaments",
        json={**base, "format": "round_robin", "teams": teams[:2], "seeding": "rating"},
    )
    assert robin.status_code == 422 and "seeding" in robin.json()["detail"]
    # a team registering itself names its players' accounts too
    open_ = client.post(
        "/v1/tournaments",
        json={
            **base,
            "format": "swiss",
            "swissRounds": 1,
            "registration": True,
            "seeding": "rating",
        },
    ).json()
    entered = client.post(
        f"/v1/tournaments/{open_['tournamentId']}/teams",
        json={"name": "Self", "players": [player("A", player_id=a), player("b")]},
    )
    assert entered.status_code == 201, entered.text
    shown = client.get(f"/v1/tournaments/{open_['tournamentId']}/seeding").json()["teams"]
    assert shown[0]["players"][0]["rating"] == rating_of(client, a)

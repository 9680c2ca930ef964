"""The ratings' routes (docs/decisions.md D-ratings): a board's pages and cursor, around a
player, the caller's own entry, provisional players apart, seasons, a player's ratings
now and at a time, unknown parameters refused, ETag and 304, an erased player nowhere."""

from __future__ import annotations

from litestar.testing import TestClient

from services.game import GameService
from tests.apps import make_app
from tests.conftest import FakeClock
from tests.ratings.population import populate


def test_the_routes_answer_from_the_ratings(clock: FakeClock) -> None:
    service = GameService(clock=clock)
    pop = populate(service, clock)
    a = pop.people[0].id
    with TestClient(make_app(service)) as client:
        # ten rated matches make nobody established: everyone is provisional
        board = client.get("/v1/leaderboards/standard").json()
        assert board["entries"] == [] and board["next"] is None
        prov = client.get("/v1/leaderboards/standard", params={"provisional": "true"})
        assert prov.status_code == 200, prov.text
        entries = prov.json()["entries"]
        assert [e["rank"] for e in entries] == list(range(1, len(entries) + 1))
        keys = [e["conservative"] for e in entries]
        assert keys == sorted(keys, reverse=True)
        assert str(pop.erased) not in {e["playerId"] for e in entries}
        assert all(e["name"].startswith("Rated Person") for e in entries)
        # pages: two at a time give the same entries
        paged, after = [], None
        while True:
            params = {"provisional": "true", "limit": "2", **({"after": after} if after else {})}
            page = client.get("/v1/leaderboards/standard", params=params).json()
            paged += page["entries"]
            after = page["next"]
            if after is None:
                break
        assert paged == entries
        around = client.get(
            "/v1/leaderboards/standard",
            params={"provisional": "true", "around": str(a), "limit": "3"},
        ).json()["entries"]
        assert str(a) in {e["playerId"] for e in around}
        # ETag and 304
        first = client.get("/v1/leaderboards/standard", params={"provisional": "true"})
        tag = first.headers["etag"]
        again = client.get(
            "/v1/leaderboards/standard",
            params={"provisional": "true"},
            headers={"If-None-Match": tag},
        )
        assert again.status_code == 304
        # unknown parameters and families are refused
        assert client.get("/v1/leaderboards/standard", params={"top": "5"}).status_code == 400
        assert client.get("/v1/leaderboards/bridge").status_code == 422
        seasons = client.get("/v1/leaderboards/standard/seasons").json()
        assert seasons["schedule"] == "monthly" and seasons["seasons"]
        season = seasons["seasons"][0]["id"]
        in_season = client.get(
            "/v1/leaderboards/standard", params={"provisional": "true", "season": season}
        )
        assert in_season.status_code == 200 and in_season.json()["entries"]
        mine = client.get(f"/v1/players/{a}/ratings").json()
        assert {r["family"] for r in mine["ratings"]} == {"standard"}
        early = client.get(f"/v1/players/{a}/ratings", params={"at": "2000-01-01T00:00:00Z"})
        assert early.json()["ratings"] == []
        erased = client.get(f"/v1/players/{pop.erased}/ratings").json()
        assert erased["ratings"] == []

"""The career's routes (docs/decisions.md D-career): a public profile, the player's own
statistics, a paged history with the rating's moves — private tables for their own people
only, a tournament table once its round is complete (R36) — erased players and ids that
are no player a 404, unknown parameters refused."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from litestar.testing import TestClient

from services.game import GameService
from tests.apps import make_app
from tests.career.population import Careers, populate_careers
from tests.conftest import FakeClock

NOBODY = "00000000-0000-4000-8000-000000000000"


@pytest.fixture(scope="module")
def world() -> Iterator[tuple[TestClient[Any], Careers]]:
    clock = FakeClock()
    service = GameService(clock=clock)
    pop = populate_careers(service, clock)
    with TestClient(make_app(service)) as client:
        yield client, pop


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def all_pages(client: TestClient[Any], player: Any, headers: dict[str, str]) -> list[Any]:
    items, after = [], None
    while True:
        params = {"limit": "2", **({"after": after} if after else {})}
        page = client.get(f"/v1/players/{player}/matches", params=params, headers=headers)
        assert page.status_code == 200, page.text
        items += page.json()["items"]
        after = page.json()["next"]
        if after is None:
            return items


def test_a_profile_is_public(world: tuple[TestClient[Any], Careers]) -> None:
    client, pop = world
    a = pop.people[0]
    body = client.get(f"/v1/players/{a.id}/profile").json()
    assert body["name"] == "Rated Person 0" and body["playerId"] == str(a.id)
    ratings = client.get(f"/v1/players/{a.id}/ratings").json()["ratings"]
    assert [(r["family"], r["rating"]) for r in body["ratings"]] == [
        (r["family"], r["rating"]) for r in ratings
    ]
    assert all(r["rank"] is None for r in body["ratings"] if r["provisional"])
    history = all_pages(client, a.id, auth(pop.tokens[0]))
    assert body["matches"] == len(history)
    assert body["wins"] == sum(1 for i in history if i["outcome"] == "won")
    last = history[0]["outcome"]
    if body["streak"] is None:
        assert last == "drawn"
    else:
        run = 0
        for item in history:
            if (item["outcome"] == "won") != (body["streak"]["result"] == "won"):
                break
            if item["outcome"] == "drawn":
                break
            run += 1
        assert body["streak"]["length"] == run
    for nobody in (NOBODY, pop.erased):  # no player, an erased one (a guest has no id)
        answer = client.get(f"/v1/players/{nobody}/profile")
        assert answer.status_code == 404 and answer.json()["type"].endswith("not-found")
        assert client.get(f"/v1/players/{nobody}/matches").status_code == 404


def test_statistics_are_the_players_own(world: tuple[TestClient[Any], Careers]) -> None:
    client, pop = world
    assert client.get("/v1/players/me/statistics").status_code == 401
    mine = client.get("/v1/players/me/statistics", headers=auth(pop.tokens[0]))
    assert mine.status_code == 200, mine.text
    families = {f["family"] for f in mine.json()["families"]}
    assert families == {"standard"}
    one = client.get(
        "/v1/players/me/statistics", params={"family": "tuolaji"}, headers=auth(pop.tokens[4])
    ).json()
    assert [f["family"] for f in one["families"]] == ["tuolaji"]
    (partner,) = one["families"][0]["partners"]  # seats 0 and 2 are partners (R2)
    assert (partner["kind"], partner["bot"], partner["matches"]) == ("bot", "random", 1)
    for params, status in (({"family": "bridge"}, 422), ({"top": "5"}, 400)):
        refused = client.get(
            "/v1/players/me/statistics", params=params, headers=auth(pop.tokens[0])
        )
        assert refused.status_code == status, refused.text


def test_the_history_pages_and_shows_only_what_the_viewer_may_see(
    world: tuple[TestClient[Any], Careers],
) -> None:
    client, pop = world
    a, g = pop.people[0], pop.late[0]
    own = all_pages(client, a.id, auth(pop.tokens[0]))
    public = all_pages(client, a.id, {})
    one_page = client.get(
        f"/v1/players/{a.id}/matches", params={"limit": "100"}, headers=auth(pop.tokens[0])
    ).json()
    assert one_page["items"] == own and one_page["next"] is None
    # the private table: its own people only (docs/decisions.md D-hidden)
    assert str(pop.private) in {i["matchId"] for i in own}
    assert [i for i in own if i["matchId"] != str(pop.private)] == public
    other = all_pages(client, a.id, auth(pop.tokens[1]))
    assert other == public
    # newest first; the rating's move of each rated match, the last one the rating now
    assert [i["finishedAt"] for i in own] == sorted((i["finishedAt"] for i in own), reverse=True)
    rated = [i for i in own if i["rating"] is not None]
    assert rated and all(
        i["rating"]["after"] - i["rating"]["before"] == i["rating"]["delta"] for i in rated
    )
    standard = [i for i in rated if i["family"] == "standard"]
    now = client.get(f"/v1/players/{a.id}/ratings").json()["ratings"]
    assert standard[0]["rating"]["after"] == next(r["rating"] for r in now)
    unrated = {str(pop.base.unrated["guest"])}
    assert all(i["rating"] is None for i in own if i["matchId"] in unrated)
    guest = next(i for i in own if i["matchId"] in unrated)
    kinds = {p["kind"] for p in [guest["partner"], *guest["opponents"]]}
    assert "guest" in kinds and all(p["name"] is None for p in guest["opponents"])
    # the erased player: an erased seat in the others' histories, no name, no id
    erased_seats = [
        p for i in own for p in [i["partner"], *i["opponents"]] if p["kind"] == "erased"
    ]
    assert erased_seats and all(p["playerId"] is None for p in erased_seats)
    # the tournament table, once its round completed (R36)
    table = next(i for i in all_pages(client, g.id, {}) if i["matchId"] == str(pop.held))
    assert table["partner"]["name"] == "Late Person 1"  # seats 1 and 3 (R2)
    # a leaver's outcome
    leaver = next(
        i for i in all_pages(client, pop.people[2].id, {}) if i["matchId"] == str(pop.base.leaver)
    )
    assert leaver["outcome"] == "left"


def test_bad_paging_is_refused(world: tuple[TestClient[Any], Careers]) -> None:
    client, pop = world
    a = pop.people[0].id
    for params, status in (
        ({"after": "not-a-cursor"}, 422),
        ({"limit": "0"}, 422),
        ({"limit": "101"}, 422),
        ({"page": "2"}, 400),
    ):
        answer = client.get(f"/v1/players/{a}/matches", params=params)
        assert answer.status_code == status, (params, answer.text)
    assert client.get(f"/v1/players/{a}/profile", params={"x": "1"}).status_code == 400
    seat = client.get(f"/v1/players/{a}/matches", headers=auth("s.nonsense"))
    assert seat.status_code in (401, 403)

"""The leaderboard as a player reads it from a real server (``python -m infra.serve`` on a
SQLite file) over a generated population of ratings: the top N, every page of a cursor
walk, the entries around the caller, the caller's own rank, provisional players on a board
of their own, unknown parameters refused — and every answer valid against the OpenAPI
document's schema (docs/decisions.md D-ratings)."""

from __future__ import annotations

import functools
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from uuid import UUID

import httpx
import pytest
from eventsourcing.persistence import Tracking
from jsonschema import Draft202012Validator  # type: ignore[import-untyped]

from infra.ratingviews import open_ratings_view
from infra.settings import Settings
from infra.store import build_service
from services.ratings.model import Rating
from services.ratings.projection import Ratings
from services.ratings.rows import ALL_TIME, Change, RatingRow
from services.ratings.view import cursor_of
from services.readmodels.tracked import UPSTREAM
from tests.api.served import served
from tests.commands import create_player
from tests.documents import repository_yaml

PLAYERS = 60


class Population:
    """Players with tokens and generated all-time ratings (a third of them provisional)."""

    def __init__(self, path: Path, seed: int = 2026) -> None:
        rng = random.Random(seed)
        service = build_service(Settings(backend="sqlite", sqlite_path=path))
        try:
            view = open_ratings_view(service, create=True)
            view.reset(Ratings(view, service).signature)  # the model a server keeps
            self.tokens: dict[UUID, str] = {}
            change = Change()
            first = Rating(25.0, 2.0)
            for i in range(PLAYERS):
                account, token = create_player(service, f"Board {i:02d}")
                self.tokens[account.id] = token
                rating = Rating(rng.uniform(15, 35), rng.uniform(1.2, 4.0))
                matches = rng.choice([1, 4, 9, 10, 14, 30, 80])
                if i == 0:
                    first, matches = rating, 30
                if i == 1:  # a tie with player 0 on the key: the id breaks it
                    rating, matches = first, 30
                change.ratings["standard", ALL_TIME, account.id] = RatingRow(
                    family="standard",
                    season=ALL_TIME,
                    player_id=account.id,
                    mu=rating.mu,
                    sigma=rating.sigma,
                    matches=matches,
                    last_at=0,
                    provisional=matches < 10,
                    key=-rating.conservative,
                )
            end = service.recorder.max_notification_id() or 0
            view.record(change, Tracking(UPSTREAM, end))
        finally:
            service.close()
        rows = sorted(change.ratings.values(), key=cursor_of)
        self.board = {
            provisional: [r for r in rows if r.provisional == provisional]
            for provisional in (False, True)
        }


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Population]]:
    folder = tmp_path_factory.mktemp("board")
    population = Population(folder / "events.sqlite3")
    with served(folder) as base:
        yield base, population


@functools.cache
def components() -> Any:
    """The document's components, read when a test first needs them (not at collection)."""
    return repository_yaml("openapi.yaml")["components"]


def board(base: str, token: str | None = None, **params: str) -> dict[str, Any]:
    """A board page as the player reads it, checked against the document's schema."""
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    r = httpx.get(f"{base}/v1/leaderboards/standard", params=params, headers=headers)
    assert r.status_code == 200, r.text
    body: dict[str, Any] = r.json()
    schema = {"$ref": "#/components/schemas/Leaderboard", "components": components()}
    Draft202012Validator(schema).validate(body)
    return body


def ids(entries: list[dict[str, Any]]) -> list[str]:
    return [e["playerId"] for e in entries]


@pytest.mark.parametrize("provisional", [False, True])
def test_the_top_and_a_cursor_walk_give_the_whole_board_in_order(
    server: tuple[str, Population], provisional: bool
) -> None:
    base, pop = server
    expected = [str(r.player_id) for r in pop.board[provisional]]
    flag = "true" if provisional else "false"
    top = board(base, limit="5", provisional=flag)
    assert ids(top["entries"]) == expected[:5]
    assert [e["rank"] for e in top["entries"]] == [1, 2, 3, 4, 5]
    walked: list[dict[str, Any]] = []
    after = None
    while True:
        params = {"limit": "7", "provisional": flag, **({"after": after} if after else {})}
        page = board(base, **params)
        walked += page["entries"]
        after = page["next"]
        if after is None:
            break
    assert ids(walked) == expected
    assert [e["rank"] for e in walked] == list(range(1, len(expected) + 1))
    assert {e["provisional"] for e in walked} == {provisional}  # provisional apart
    keys = [e["conservative"] for e in walked]
    assert keys == sorted(keys, reverse=True)


@pytest.mark.parametrize("place", [0, 1, 2, 17, -1])
def test_a_player_reads_around_themselves_and_their_own_rank(
    server: tuple[str, Population], place: int
) -> None:
    base, pop = server
    established = pop.board[False]
    me = established[place]
    token = pop.tokens[me.player_id]
    rank = established.index(me) + 1
    mine = board(base, token)
    assert mine["me"]["playerId"] == str(me.player_id) and mine["me"]["rank"] == rank
    around = board(base, token, around="me", limit="5")
    entries = around["entries"]
    assert str(me.player_id) in ids(entries)
    first = max(1, rank - 2)
    assert [e["rank"] for e in entries] == list(range(first, first + len(entries)))
    assert ids(entries) == [str(r.player_id) for r in established[first - 1 : first - 1 + 5]]
    assert around["me"]["rank"] == rank


def test_a_provisional_player_is_on_the_provisional_board_only(
    server: tuple[str, Population],
) -> None:
    base, pop = server
    me = pop.board[True][3]
    token = pop.tokens[me.player_id]
    assert board(base, token)["me"] is None  # not on the established board
    assert board(base, token, provisional="true")["me"]["rank"] == 4
    r = httpx.get(
        f"{base}/v1/leaderboards/standard",
        params={"around": "me"},
        headers={"Authorization": f"Bearer {token}"},
    )
    assert (r.status_code, r.json()["code"]) == (404, "not-found")
    assert board(base, token, around="me", provisional="true")["me"]["rank"] == 4


@pytest.mark.parametrize(
    ("params", "status"),
    [
        ({"top": "5"}, 400),
        ({"limit": "0"}, 422),
        ({"limit": "101"}, 422),
        ({"after": "not-a-cursor"}, 422),
        ({"season": "2026-13"}, 422),
        ({"around": "me"}, 401),  # around=me without a token: who is "me"?
    ],
)
def test_bad_parameters_are_refused_with_a_problem(
    server: tuple[str, Population], params: dict[str, str], status: int
) -> None:
    base, _ = server
    r = httpx.get(f"{base}/v1/leaderboards/standard", params=params)
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith("application/problem+json")

"""Every item of the event log, as the public and as the operator read it, validates
against the schema ``GET /v1/events/schema`` publishes for its type — camelCase, cards and
ranks as the API writes them, levels gained as integers, secret fields absent (R33, R36)
— over the whole population (docs/decisions.md D-integrity)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from jsonschema import Draft202012Validator, FormatChecker  # type: ignore[import-untyped]
from litestar import Litestar
from litestar.testing import TestClient

from tests.integrity.population import OPERATOR, Population, auth


def pages(c: TestClient[Litestar], headers: dict[str, str], query: str = "") -> list[Any]:
    items: list[Any] = []
    after = 0
    while True:
        r = c.get(f"/v1/events?after={after}&limit=1000{query}", headers=headers)
        assert r.status_code == 200, r.text
        page = r.json()
        items += page["items"]
        if not page["more"]:
            return items
        after = page["next"]


@pytest.fixture(scope="module")
def c(population: Population) -> Iterator[TestClient[Litestar]]:
    """One app (a restart) on the population's file: the tests only read the feed."""
    with TestClient(population.app()) as opened:
        yield opened


def test_every_feed_item_validates_against_its_published_schema(
    c: TestClient[Litestar], population: Population
) -> None:
    served = c.get("/v1/events/schema").json()["feed"]
    validators = {
        name: Draft202012Validator(schema, format_checker=FormatChecker())
        for name, schema in served.items()
    }
    types: Counter[str] = Counter()
    bad: list[str] = []
    for reader, headers in (("public", {}), ("operator", auth(OPERATOR))):
        for item in pages(c, headers):
            types[item["type"]] += 1
            errors = list(validators[item["type"]].iter_errors(item))
            if errors:
                bad.append(f"{reader} {item['type']} {item['position']}: {errors[0].message}")
    print(f"\n{sum(types.values())} feed items of {len(types)} types validated")
    assert not bad, "\n".join(bad[:20])
    # the population reaches the feed's kinds: play, tournaments, players (operator)
    assert {"CardPlayed", "RoundScored", "TableResultRecorded", "RoundCompleted"} <= set(types)
    assert {"AccountCreated", "AccountErased", "TicketMatched"} <= set(types)
    assert len(types) >= 30


def test_levels_gained_are_integers_and_ranks_are_ranks(
    c: TestClient[Litestar], population: Population
) -> None:
    """R30: a tournament result's ``levels`` are levels gained, as the API gives them; a
    match's ``levels`` are ranks."""
    tid = population.tournaments["round_robin"]
    results = pages(c, {}, f"&tournamentId={tid}&type=TableResultRecorded")
    assert results and all(i["stream"]["id"] == tid for i in results)
    for item in results:
        assert all(type(n) is int for n in item["data"]["levels"]), item
    begun = pages(c, {}, f"&matchId={population.matches['plain'][2]}&type=RoundBegun")
    assert len(begun) == 2 and all(type(r) is str for i in begun for r in i["data"]["levels"])


def test_the_feed_filters_on_the_server(c: TestClient[Litestar], population: Population) -> None:
    """``type``, ``matchId``, ``tournamentId``, ``since`` and ``until`` each narrow the
    log to what they name, on every page (the operator's reads everything)."""
    everything = pages(c, auth(OPERATOR))
    match_id = population.matches["names"][0]
    mine = pages(c, auth(OPERATOR), f"&matchId={match_id}")
    assert mine == [
        i for i in everything if match_id in (i["stream"]["id"], i["stream"]["matchId"])
    ]
    dealt = pages(c, auth(OPERATOR), "&type=Dealt,MatchFinished")
    assert dealt == [i for i in everything if i["type"] in ("Dealt", "MatchFinished")]
    middle = everything[len(everything) // 2]["time"]
    later = pages(c, auth(OPERATOR), f"&since={middle.replace('+', '%2B')}")
    assert later == [i for i in everything if i["time"] >= middle]
    earlier = pages(c, auth(OPERATOR), f"&until={middle.replace('+', '%2B')}")
    assert len(earlier) + len(later) == len(everything)
    bad = c.get("/v1/events?type=Nope")
    assert bad.status_code == 422 and "Nope" in bad.json()["detail"]

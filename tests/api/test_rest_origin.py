"""Imported matches say so (docs/security.md, finding 4; docs/records.md, docs/security.md).

A record stored with ``POST /v1/records?store=true`` becomes a finished match whose
seeds and moves the importer chose. Its summary, its list entry, its views and its
exports carry its origin — ``imported``, when, and the record's digest — the list can be
filtered by origin, and deal verification says that the seeds came from the record.
A match played here says ``played``."""

from __future__ import annotations

import json
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from tests.api.test_rest_records import JSON, bot_match
from tests.conftest import T0

FORGED_NAME = "Official final: Alice & Carol beat Bob & Dan"


@pytest.fixture(scope="module")
def played(c: TestClient[Litestar]) -> str:
    return bot_match(c, rounds=1)


@pytest.fixture(scope="module")
def imported(c: TestClient[Litestar], played: str) -> dict[str, Any]:
    """The issue's record: a bots-only match renamed, every seat made human, stored."""
    doc = c.get(f"/v1/matches/{played}/record").json()
    doc["name"] = FORGED_NAME
    for n, seat in enumerate(doc["seats"]):
        seat["kind"] = "human"  # a person may not carry a name the service gives its bots
        seat["name"] = ("Alice", "Bob", "Carol", "Dan")[n]
    r = c.post("/v1/records?store=true", content=json.dumps(doc), headers=JSON)
    assert r.status_code == 201, r.text
    answer: dict[str, Any] = r.json()
    return answer


def test_the_summary_says_imported_when_and_from_which_record(
    c: TestClient[Litestar], imported: dict[str, Any], played: str
) -> None:
    summary = c.get(f"/v1/matches/{imported['matchId']}").json()
    assert summary["name"] == FORGED_NAME
    assert summary["origin"] == {
        "kind": "imported",
        "importedAt": T0.isoformat(),
        "digest": imported["digest"],
    }
    assert c.get(f"/v1/matches/{played}").json()["origin"] == {"kind": "played"}


def test_views_say_so(c: TestClient[Litestar], imported: dict[str, Any]) -> None:
    url = f"/v1/matches/{imported['matchId']}"
    for path in ("/public", "/rounds/1"):
        assert c.get(url + path).json()["origin"]["kind"] == "imported", path


def test_the_list_says_so_and_filters_by_origin(
    c: TestClient[Litestar], imported: dict[str, Any], played: str
) -> None:
    everything = c.get("/v1/matches", params={"limit": 100}).json()["items"]
    origins = {item["matchId"]: item["origin"] for item in everything}
    assert origins[imported["matchId"]]["kind"] == "imported"
    assert origins[played] == {"kind": "played"}
    only = c.get("/v1/matches", params={"origin": "imported"}).json()
    assert [i["matchId"] for i in only["items"]] == [imported["matchId"]]
    assert only["items"][0]["origin"]["importedAt"] == T0.isoformat()
    assert only["items"][0]["origin"]["digest"] == imported["digest"]
    here = c.get("/v1/matches", params={"origin": "played"}).json()["items"]
    assert imported["matchId"] not in {i["matchId"] for i in here}
    assert played in {i["matchId"] for i in here}
    r = c.get("/v1/matches", params={"origin": "forged"})
    assert r.status_code in (400, 422) and r.headers["content-type"] == "application/problem+json"


def test_exports_carry_the_origin_and_the_record_stays_the_same(
    c: TestClient[Litestar], imported: dict[str, Any]
) -> None:
    url = f"/v1/matches/{imported['matchId']}"
    exported = c.get(f"{url}/record").json()
    assert exported.pop("origin") == {
        "kind": "imported",
        "importedAt": "2026-01-01T12:00:00.000000Z",
        "digest": imported["digest"],
    }
    assert exported["name"] == FORGED_NAME
    round_record = c.get(f"{url}/rounds/1/record").json()
    assert round_record["origin"]["digest"] == imported["digest"]
    text = c.get(f"{url}/record?format=text").text
    assert f'[Origin "imported 2026-01-01T12:00:00.000000Z {imported["digest"]}"]' in text
    # importing the export again is the same record (the origin is the server's, not the
    # record's): the same digest, the match stored first
    for body, media in ((c.get(f"{url}/record").content, JSON), (text.encode(), {})):
        headers = media or {"content-type": "text/plain"}
        again = c.post("/v1/records?store=true", content=body, headers=headers)
        assert again.status_code == 200, again.text
        assert again.json()["digest"] == imported["digest"]
        assert again.json()["matchId"] == imported["matchId"]


def test_a_played_match_export_has_no_origin(c: TestClient[Litestar], played: str) -> None:
    assert "origin" not in c.get(f"/v1/matches/{played}/record").json()
    assert "[Origin" not in c.get(f"/v1/matches/{played}/record?format=text").text


def test_verify_says_the_seeds_came_from_the_record(
    c: TestClient[Litestar], imported: dict[str, Any], played: str
) -> None:
    checked = c.get(f"/v1/matches/{imported['matchId']}/rounds/1/verify").json()
    assert checked["ok"] is True and checked["seedsFrom"] == "record"
    ours = c.get(f"/v1/matches/{played}/rounds/1/verify").json()
    assert ours["seedsFrom"] == "server"


@pytest.mark.parametrize("origin", ["played", "imported", None])
def test_filtered_pages_cover_the_list_once(
    c: TestClient[Litestar], imported: dict[str, Any], origin: str | None
) -> None:
    for _ in range(3):
        assert c.post("/v1/matches", json={}).status_code == 201
    params: dict[str, Any] = {"limit": 100} | ({"origin": origin} if origin else {})
    whole = [i["matchId"] for i in c.get("/v1/matches", params=params).json()["items"]]
    paged: list[str] = []
    after = 0
    while True:
        page = c.get("/v1/matches", params={**params, "limit": 1, "after": after}).json()
        paged += [i["matchId"] for i in page["items"]]
        after = page["next"]
        if not page["more"]:
            break
    assert paged == whole and len(set(paged)) == len(paged)
    assert (imported["matchId"] in whole) is (origin != "played")

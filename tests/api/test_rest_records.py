"""Records over REST: export a finished match or a scored round as canonical
JSON or the text notation, import (validate, or store as a new finished match), and the
problems: 409 before the end (R33), 422 unreadable or tampered, naming the first bad move."""

from __future__ import annotations

import hashlib
import json

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from tests.api.rest import Table, auth, settle

JSON = {"content-type": "application/json"}
TEXT = {"content-type": "text/plain"}


def bot_match(c: TestClient[Litestar], rounds: int = 1) -> str:
    """A match of four bots that plays itself out (``rounds:N``) over HTTP."""
    r = c.post("/v1/matches", json={"name": "bots", "rules": {"matchEnd": f"rounds:{rounds}"}})
    assert r.status_code == 201, r.text
    created = r.json()
    for seat in range(4):
        kind = "heuristic" if seat % 2 else "random"
        r = c.post(
            f"/v1/matches/{created['matchId']}/seats/{seat}/bot",
            json={"kind": kind},
            headers=auth(created["organiserToken"]),
        )
        assert r.status_code == 201, r.text
    settle(c)  # the bots play it off the request path
    assert c.get(f"/v1/matches/{created['matchId']}").json()["finished"] is True
    match_id: str = created["matchId"]
    return match_id


@pytest.fixture(scope="module")
def finished(c: TestClient[Litestar]) -> str:
    return bot_match(c, rounds=2)


def test_a_finished_match_exports_canonical_json(c: TestClient[Litestar], finished: str) -> None:
    r = c.get(f"/v1/matches/{finished}/record")
    assert r.status_code == 200
    assert r.headers["content-type"] == "application/json"
    doc = r.json()
    assert (doc["format"], doc["kind"], len(doc["rounds"])) == ("shengji-record/1", "match", 2)
    for rnd in doc["rounds"]:  # R35: every seed is revealed with its commitment
        for deal in rnd["deals"]:
            assert hashlib.sha256(bytes.fromhex(deal["seed"])).hexdigest() == deal["commitment"]
    assert r.content == c.get(f"/v1/matches/{finished}/record?format=json").content


@pytest.mark.parametrize(
    ("query", "headers"),
    [
        ("?format=text", {}),
        ("", {"accept": "text/plain"}),
        ("", {"accept": "text/*;q=1, */*;q=0.1"}),
    ],
)
def test_the_text_notation_by_query_or_accept(
    c: TestClient[Litestar], finished: str, query: str, headers: dict[str, str]
) -> None:
    r = c.get(f"/v1/matches/{finished}/record{query}", headers=headers)
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/plain")
    assert r.text.startswith("% Shengji game record") and '[Format "shengji-record/1"]' in r.text
    assert "\n1. S" in r.text


def test_export_import_export_is_byte_identical(c: TestClient[Litestar], finished: str) -> None:
    exported = c.get(f"/v1/matches/{finished}/record").content
    r = c.post("/v1/records?store=true", content=exported, headers=JSON)
    assert r.status_code == 201, r.text
    body = r.json()
    assert body["created"] is True and body["kind"] == "match" and body["rounds"] == 2
    assert body["digest"] == "sha256:" + hashlib.sha256(exported).hexdigest()
    assert r.headers["location"] == f"/v1/matches/{body['matchId']}"
    stored = c.get(f"{r.headers['location']}/record")
    # the record byte for byte, then its origin: imported, when, this digest
    origin = b',"origin":{"kind":"imported","importedAt":"2026-01-01T12:00:00.000000Z",'
    assert stored.content == exported[:-1] + origin + b'"digest":"%s"}}' % body["digest"].encode()
    match = c.get(r.headers["location"]).json()
    assert match["finished"] is True
    # the same record again: found, not stored twice
    again = c.post("/v1/records?store=true", content=exported, headers=JSON)
    assert again.status_code == 200
    assert (again.json()["matchId"], again.json()["created"]) == (body["matchId"], False)


def test_a_text_record_imports_to_the_same_record(c: TestClient[Litestar], finished: str) -> None:
    exported = c.get(f"/v1/matches/{finished}/record").content
    text = c.get(f"/v1/matches/{finished}/record?format=text").content
    r = c.post("/v1/records", content=text, headers={"content-type": "text/plain; charset=utf-8"})
    assert r.status_code == 200, r.text
    assert r.json()["digest"] == "sha256:" + hashlib.sha256(exported).hexdigest()
    assert r.json()["matchId"] is None and r.json()["created"] is False  # validated only


def test_a_scored_round_exports_and_validates(c: TestClient[Litestar], finished: str) -> None:
    r = c.get(f"/v1/matches/{finished}/rounds/2/record")
    assert r.status_code == 200
    doc = r.json()
    assert (doc["kind"], doc["end"], [x["number"] for x in doc["rounds"]]) == ("round", None, [2])
    checked = c.post("/v1/records", content=r.content, headers=JSON)
    assert checked.status_code == 200 and checked.json()["kind"] == "round"
    refused = c.post("/v1/records?store=true", content=r.content, headers=JSON)
    assert refused.status_code == 422 and refused.json()["code"] == "record-invalid"


def test_a_tampered_record_names_the_first_bad_move(c: TestClient[Litestar], finished: str) -> None:
    doc = c.get(f"/v1/matches/{finished}/record").json()
    first = doc["rounds"][0]["actions"]
    k = next(k for k, a in enumerate(first) if a["action"] == "play")
    first[k]["seat"] = (first[k]["seat"] + 1) % 4  # the move of another seat
    r = c.post("/v1/records", content=json.dumps(doc), headers=JSON)
    assert r.status_code == 422
    assert r.headers["content-type"] == "application/problem+json"
    problem = r.json()
    assert problem["type"].endswith("/record-tampered") and problem["code"] == "record-tampered"
    assert problem["rule"] == "R22"
    assert problem["errors"] == [{"move": k + 1, "round": 1, "field": "action", "rule": "R22"}]
    assert f"move {k + 1} (round 1, S{first[k]['seat']} play" in problem["detail"]


def test_a_seed_that_is_not_its_commitments_is_refused(
    c: TestClient[Litestar], finished: str
) -> None:
    doc = c.get(f"/v1/matches/{finished}/record").json()
    doc["rounds"][0]["deals"][0]["seed"] = "0" * 64
    r = c.post("/v1/records?store=true", content=json.dumps(doc), headers=JSON)
    assert r.status_code == 422
    problem = r.json()
    assert (problem["code"], problem["rule"]) == ("record-tampered", "R35")
    assert problem["errors"][0]["round"] == 1 and "commitment" in problem["detail"]
    assert "fourth seat" in problem["detail"]  # round 1 is dealt when the table fills


def test_problems_speak_chinese_when_asked(c: TestClient[Litestar], finished: str) -> None:
    doc = c.get(f"/v1/matches/{finished}/record").json()
    doc["rounds"][0]["result"]["attackersTotal"] += 5
    r = c.post("/v1/records", content=json.dumps(doc), headers={**JSON, "accept-language": "zh-CN"})
    assert r.status_code == 422
    assert r.json()["title"] == "棋谱被篡改" and "（R29）" in r.json()["detail"]


@pytest.mark.parametrize(
    ("body", "headers", "code"),
    [
        (b"{}", JSON, "record-invalid"),
        (b"{not json", JSON, "record-invalid"),
        (b"[Format shengji", TEXT, "record-invalid"),
        (b"\xff\xfe", TEXT, "record-invalid"),
        (b"<record/>", {"content-type": "application/xml"}, "record-invalid"),
    ],
)
def test_an_unreadable_record_is_invalid(
    c: TestClient[Litestar], body: bytes, headers: dict[str, str], code: str
) -> None:
    r = c.post("/v1/records", content=body, headers=headers)
    assert r.status_code == 422
    assert r.json()["code"] == code and r.json()["detail"]


def test_a_text_error_names_its_line(c: TestClient[Litestar], finished: str) -> None:
    text = c.get(f"/v1/matches/{finished}/record?format=text").text.replace("\n3. ", "\n33. ", 1)
    r = c.post("/v1/records", content=text.encode(), headers=TEXT)
    assert r.status_code == 422
    line = text.splitlines().index(next(x for x in text.splitlines() if x.startswith("33. "))) + 1
    assert r.json()["detail"].startswith(f"line {line}: move 3 expected")


def test_records_over_the_64k_body_limit_are_accepted(
    c: TestClient[Litestar], finished: str
) -> None:
    exported = c.get(f"/v1/matches/{finished}/record").content
    padded = exported[:-1] + b" " * 100_000 + b"}"  # insignificant JSON whitespace
    r = c.post("/v1/records", content=padded, headers=JSON)
    assert r.status_code == 200, r.text
    too_big = c.post("/v1/records", content=b" " * (1024 * 1024 + 1), headers=JSON)
    assert too_big.status_code == 413


def test_no_record_before_the_end(c: TestClient[Litestar]) -> None:
    # R33: a record reveals every hand and seed.
    table = Table.seat_four(c, {"name": "people"})
    r = c.get(f"{table.url}/record")
    assert r.status_code == 409
    assert (r.json()["code"], r.json()["rule"]) == ("record-unavailable", "R33")
    r = c.get(f"{table.url}/rounds/1/record")
    assert r.status_code == 409 and r.json()["code"] == "record-unavailable"
    assert c.get(f"{table.url}/rounds/2/record").status_code == 404


def test_a_round_scored_in_a_match_still_played_exports(c: TestClient[Litestar]) -> None:
    table = Table.seat_four(c, {"name": "people", "rules": {"matchEnd": "rounds:2"}})
    table.play_round()
    assert c.get(f"{table.url}/record").status_code == 409
    r = c.get(f"{table.url}/rounds/1/record?format=text")
    assert r.status_code == 200 and '[Kind "round"]' in r.text
    assert c.post("/v1/records", content=r.content, headers=TEXT).status_code == 200


def test_unknown_matches_are_404(c: TestClient[Litestar]) -> None:
    missing = "00000000-0000-4000-8000-000000000000"
    assert c.get(f"/v1/matches/{missing}/record").status_code == 404
    assert c.get(f"/v1/matches/{missing}/rounds/1/record").status_code == 404

"""The contract's fine print: request bodies decoded strictly (unknown fields,
wrong types, ``0`` for a bool and ``"5"`` for an int refused, naming the field; ``5.0`` is
an int, as in JSON), card tokens in R4 notation (RULES R4) refused as ``invalid-card``
naming the field and the token, authorisation before the Idempotency-Key lookup, and the
OpenAPI document stating every constraint the decoder applies."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from litestar import Litestar
from litestar.testing import TestClient

from api.dto import ActionRequest, CreateMatchRequest, VerifyRequest
from api.openapi import openapi_document
from api.openapi_patches import REF_TEMPLATE
from api.rules_oracle import SettleRequest, ShapeRequest, ThrowRequest, TrickRequest
from api.streams import MATCH_ID_PATTERN
from tests.api.rest import Json, Table, auth

SHAPE = {"level": "2", "trumpSuit": "S"}


# (path, body, status, code, what the detail names)
STRICT_CASES: list[tuple[str, Any, int, str | None, tuple[str, ...]]] = [
    # §10 fields: exact JSON types, no coercion
    (
        "/v1/matches",
        {"rules": {"selfOvercall": 0}},
        422,
        "validation-failed",
        ("rules.selfOvercall",),
    ),
    (
        "/v1/matches",
        {"rules": {"selfOvercall": "true"}},
        422,
        "validation-failed",
        ("selfOvercall",),
    ),
    ("/v1/matches", {"rules": {"levelCap": "5"}}, 422, "validation-failed", ("rules.levelCap",)),
    ("/v1/matches", {"rules": {"levelCap": 5.5}}, 422, "validation-failed", ("rules.levelCap",)),
    ("/v1/matches", {"rules": {"levelCap": True}}, 422, "validation-failed", ("rules.levelCap",)),
    ("/v1/matches", {"rules": {"throwPenaltyPoints": -1}}, 422, "validation-failed", ("rules",)),
    ("/v1/matches", {"rules": {"fooBar": 1}}, 422, "validation-failed", ("fooBar",)),
    ("/v1/matches", {"name": 5}, 422, "validation-failed", ("name",)),
    ("/v1/matches", {"name": "x", "colour": "red"}, 422, "validation-failed", ("colour",)),
    # JSON has one number type: an integral value is an integer
    ("/v1/rules/settle", {"attackerPoints": 80.0}, 200, None, ()),
    ("/v1/rules/settle", {"attackerPoints": "80"}, 422, "validation-failed", ("attackerPoints",)),
    # the oracle's rules are RULES §10 fields too (R30: levelCap changes the settlement)
    ("/v1/rules/settle", {"attackerPoints": 200, "rules": {"levelCap": 1}}, 200, None, ()),
    (
        "/v1/rules/settle",
        {"attackerPoints": 80, "rules": {"levelCap": "1"}},
        422,
        "validation-failed",
        ("rules.levelCap",),
    ),
    (
        "/v1/rules/settle",
        {"attackerPoints": 80, "rules": {"x": 1}},
        422,
        "validation-failed",
        ("x",),
    ),
    # R4 notation: upper-case rank then suit, jokers SJ BJ
    (
        "/v1/rules/shape",
        {**SHAPE, "cards": ["AS", "11H"]},
        422,
        "invalid-card",
        ("cards[1]", "11H"),
    ),
    ("/v1/rules/shape", {**SHAPE, "cards": ["as"]}, 422, "invalid-card", ("cards[0]", "as")),
    ("/v1/rules/shape", {**SHAPE, "cards": ["AS", "1S"]}, 422, "invalid-card", ("cards[1]", "1S")),
    # cards are always an array: one string is refused, naming the field and the form
    ("/v1/rules/shape", {**SHAPE, "cards": "AS KS"}, 422, "validation-failed", ("cards", "array")),
    ("/v1/rules/shape", {**SHAPE, "cards": ["AS", 1]}, 422, "validation-failed", ("cards",)),
    ("/v1/rules/shape", {**SHAPE, "cards": ["10H", "10H", "SJ"]}, 200, None, ()),
    (
        "/v1/rules/trick",
        {**SHAPE, "plays": [["AS"], ["XX"]]},
        422,
        "invalid-card",
        ("plays[1][0]", "XX"),
    ),
]


@pytest.mark.parametrize(("path", "body", "status", "code", "names"), STRICT_CASES)
def test_request_bodies_are_decoded_strictly(
    c: TestClient[Litestar],
    path: str,
    body: Any,
    status: int,
    code: str | None,
    names: tuple[str, ...],
) -> None:
    r = c.post(path, json=body)
    assert r.status_code == status, r.text
    if code is None:
        return
    problem = r.json()
    assert r.headers["content-type"].startswith("application/problem+json")
    assert problem["code"] == code
    for name in names:
        assert name in problem["detail"], problem
    if code == "invalid-card":
        assert problem["rule"] == "R4"


def test_an_integral_float_is_the_integer(c: TestClient[Litestar]) -> None:
    r = c.post("/v1/matches", json={"rules": {"levelCap": 5.0, "throwPenaltyPoints": 1e1}})
    assert r.status_code == 201, r.text
    assert (r.json()["rules"]["levelCap"], r.json()["rules"]["throwPenaltyPoints"]) == (5, 10)


@pytest.mark.parametrize(
    "body",
    [
        b"[" * 30_000 + b"]" * 30_000,  # beyond the interpreter's recursion limit
        b'{"rules": ' + b"[" * 900 + b"]" * 900 + b"}",
        b'{"rules": ' + b"[" * 70 + b"]" * 70 + b"}",
    ],
)
@pytest.mark.parametrize("path", ["/v1/matches", "/v1/rules/settle"])
def test_deeply_nested_json_is_a_400_never_a_500(
    c: TestClient[Litestar], path: str, body: bytes
) -> None:
    r = c.post(path, content=body, headers={"content-type": "application/json"})
    assert (r.status_code, r.json()["code"]) == (400, "bad-request"), r.text
    assert "nests deeper" in r.json()["detail"]


# -- authorisation before the Idempotency-Key ---------------------------------------------


@pytest.mark.parametrize(
    ("route", "body"),
    [("finish", {}), ("bots/run", {}), ("seats/0/bot", {"kind": "random"})],
)
def test_a_reused_key_on_a_route_the_token_may_not_use_is_refused_for_the_token(
    c: TestClient[Litestar], route: str, body: Json
) -> None:
    """The key's record (same caller, another request) would be a 422; the token's
    refusal comes first (401/403), and tells nothing about what the key did."""
    table = Table.seat_four(c)
    key = {"Idempotency-Key": "k-1"}
    seat = next(s for s in range(4) if "pass" in table.view(s)["legal"]["actions"])
    assert table.act(seat, "pass", [], **key).status_code == 200
    r = c.post(f"{table.url}/{route}", json=body, headers={**auth(table.tokens[seat]), **key})
    assert (r.status_code, r.json()["code"]) == (403, "forbidden"), r.text  # a seat token
    again = table.act(seat, "pass", [], **key)  # the key itself still replays
    assert again.headers["idempotent-replayed"] == "true"


def test_a_command_without_a_token_is_401_whatever_its_key(c: TestClient[Litestar]) -> None:
    table = Table.seat_four(c)
    key = {"Idempotency-Key": "k-2"}
    for _ in range(2):
        r = c.post(f"{table.url}/actions/pass", json={"cards": []}, headers=key)
        assert (r.status_code, r.json()["code"]) == (401, "unauthorized")


# -- the document states the decoder's constraints ---------------------------------------


@pytest.fixture(scope="module")
def document(c: TestClient[Litestar]) -> Json:
    doc: Json = msgspec.json.decode(msgspec.json.encode(openapi_document(c.app)))
    return doc


@pytest.mark.parametrize(
    "request_type",
    [
        CreateMatchRequest,
        ActionRequest,
        VerifyRequest,
        TrickRequest,
        ShapeRequest,
        ThrowRequest,
        SettleRequest,
    ],
)
def test_request_schemas_are_the_decoders_own(document: Json, request_type: type) -> None:
    _, components = msgspec.json.schema_components([request_type], ref_template=REF_TEMPLATE)
    for name, schema in components.items():
        # the document adds descriptions (D-contract); everything else is msgspec's own
        assert _undescribed(document["components"]["schemas"][name]) == _undescribed(schema)


def _undescribed(schema: object) -> object:
    if isinstance(schema, dict):
        return {k: _undescribed(v) for k, v in schema.items() if k != "description"}
    if isinstance(schema, list):
        return [_undescribed(v) for v in schema]
    return schema


def _param(document: Json, path: str, name: str) -> Json:
    op = document["paths"][path]["get"]
    found: Json = next(p for p in op["parameters"] if p["name"] == name)
    return found


def test_the_constraints_inside_unions_and_lists_are_documented(document: Json) -> None:
    schemas = document["components"]["schemas"]
    cards = schemas["ActionRequest"]["properties"]["cards"]
    assert cards["type"] == "array" and cards["maxItems"] == 108  # R3: two decks
    assert cards["items"]["pattern"] == "^(?:(?:10|[2-9JQKA])[SHCD]|[SB]J)$"  # R4
    lead = schemas["FollowRequest"]["properties"]["lead"]
    assert lead["type"] == "array" and lead["minItems"] == 1  # R12: a lead has a card
    assert schemas["RulesRequest"]["properties"]["throwPenaltyPoints"]["minimum"] == 0
    assert schemas["RulesRequest"]["additionalProperties"] is False
    rules = schemas["TrickRequest"]["properties"]["rules"]["anyOf"][0]
    assert rules == {"$ref": "#/components/schemas/RulesRequest"}


def test_the_stream_documents_its_parameters_and_refusals(document: Json) -> None:
    path = "/v1/matches/{match_id}/stream"
    pattern = MATCH_ID_PATTERN  # a version, or V.T once table talk was sent (R37)
    assert _param(document, path, "Last-Event-ID")["schema"]["pattern"] == pattern
    assert _param(document, path, "lastEventId")["schema"]["pattern"] == pattern
    responses = document["paths"][path]["get"]["responses"]
    assert {"401", "403", "404", "422"} <= set(responses)


def test_every_error_response_is_documented_as_a_problem(document: Json) -> None:
    for path, item in document["paths"].items():
        for method, op in item.items():
            for status, response in op["responses"].items():
                if int(status) >= 400:
                    assert set(response.get("content", {})) == {"application/problem+json"}, (
                        method,
                        path,
                        status,
                    )


@pytest.mark.parametrize(
    "header", ["abc", "\u00b2", "", "1" * 19, "-1", "1.0", "1.", ".1", "1.2.3"]
)
def test_a_last_event_id_that_is_not_a_version_is_422(c: TestClient[Litestar], header: str) -> None:
    table = Table.seat_four(c)
    r = c.get(f"{table.url}/stream", headers=[(b"Last-Event-ID", header.encode("latin-1"))])
    assert r.status_code == 422, r.text
    assert "Last-Event-ID" in r.json()["detail"]

"""``openapi.yaml`` at the root is the app's OpenAPI document (regenerate it with
``scripts/gen_openapi.py``); every operation documents its problems as problem+json."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from infra.bootstrap import openapi_yaml
from tests.documents import load_yaml

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def generated() -> str:
    return openapi_yaml()


@pytest.fixture(scope="module")
def doc(generated: str) -> dict[str, Any]:
    """The generated document parsed once (~1 CPU-s a parse); the tests only read it."""
    parsed: dict[str, Any] = load_yaml(generated)
    return parsed


def test_openapi_yaml_is_up_to_date(generated: str) -> None:
    checked_in = (ROOT / "openapi.yaml").read_text(encoding="utf-8")
    assert checked_in == generated, "openapi.yaml drifted: run scripts/gen_openapi.py"


def _operations(doc: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (path, method, op)
        for path, item in doc["paths"].items()
        for method, op in item.items()
        if path.startswith("/v1/matches") or path == "/v1/verify"
    ]


def test_every_rest_error_is_a_documented_problem(doc: dict[str, Any]) -> None:
    for path, method, op in _operations(doc):
        if path.endswith("/stream"):
            continue
        codes = {int(c) for c in op["responses"]}
        assert {400, 422, 429, 500} <= codes, (path, method)
        for code, response in op["responses"].items():
            if int(code) >= 400:
                assert list(response["content"]) == ["application/problem+json"], (path, code)


def test_the_rest_core_is_documented(doc: dict[str, Any]) -> None:
    paths = doc["paths"]
    assert {"get", "post"} <= set(paths["/v1/matches"])
    view = paths["/v1/matches/{match_id}/view"]["get"]
    assert {"200", "304", "401", "403", "404"} <= set(view["responses"])
    assert "ETag" in view["responses"]["200"]["headers"]
    act = paths["/v1/matches/{match_id}/actions/{action}"]["post"]
    assert {"401", "403", "409", "412", "422"} <= set(act["responses"])
    headers = {p["name"] for p in act["parameters"] if p["in"] == "header"}
    assert headers == {"If-Match", "Idempotency-Key"}
    assert doc["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer"
    view_schema = doc["components"]["schemas"]["SeatView"]["properties"]
    assert {"matchId", "handSizes", "legal", "hand"} <= set(view_schema)

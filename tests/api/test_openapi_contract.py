"""openapi.yaml is a document a mobile developer can generate a client from (D-contract):
human operationIds, a description on every operation, parameter, schema and property,
enums for the closed sets, an example for every request and answer that fits its schema,
unique readable schema names, and every 4xx answer listing its problem types."""

from __future__ import annotations

import re
from functools import cache
from typing import Any

import pytest
from jsonschema import Draft202012Validator  # type: ignore[import-untyped]

from tests.documents import repository_yaml

METHODS = ("get", "post", "put", "patch", "delete")


@cache
def document() -> dict[str, Any]:
    loaded: dict[str, Any] = repository_yaml("openapi.yaml")
    return loaded


def operations() -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (method, path, op)
        for path, item in sorted(document()["paths"].items())
        for method, op in item.items()
        if method in METHODS
    ]


def schemas() -> dict[str, Any]:
    found: dict[str, Any] = document()["components"]["schemas"]
    return found


def test_operation_ids_are_human_and_unique() -> None:
    ids = [op["operationId"] for _, _, op in operations()]
    assert len(ids) == len(set(ids))
    for op_id in ids:
        assert re.fullmatch(r"[a-z][a-zA-Z]{1,30}", op_id), op_id
        assert not op_id.startswith("V1"), op_id
    for wanted in ("createMatch", "claimSeat", "act", "getSeatView", "streamMatch"):
        assert wanted in ids


def test_every_operation_and_parameter_is_described() -> None:
    for method, path, op in operations():
        assert op.get("description"), f"{method} {path}"
        assert op.get("summary"), f"{method} {path}"
        for parameter in op.get("parameters", []):
            assert parameter.get("description"), f"{method} {path} {parameter['name']}"


def test_every_schema_and_property_is_described() -> None:
    missing = [name for name, s in schemas().items() if not s.get("description")]
    missing += [
        f"{name}.{prop}"
        for name, s in schemas().items()
        for prop, sub in (s.get("properties") or {}).items()
        if not sub.get("description")
    ]
    assert not missing


def test_schema_names_are_readable_and_unique() -> None:
    for name in schemas():
        assert re.fullmatch(r"[A-Z][A-Za-z0-9]+", name), name


def _enum(schema: dict[str, Any]) -> list[Any]:
    if "enum" in schema:
        return list(schema["enum"])
    for key in ("oneOf", "anyOf"):
        for branch in schema.get(key, []):
            if branch.get("enum"):
                return list(branch["enum"])
    if schema.get("type") == "array":
        return _enum(schema.get("items", {}))
    return []


@pytest.mark.parametrize(
    ("schema", "prop", "values"),
    [
        ("PublicView", "phase", {"seating", "dealing", "burying", "playing", "scored"}),
        ("SeatView", "phase", {"overcalling", "declaring", "abandoned", "redeal"}),
        ("Expected", "action", {"declare_or_pass", "overcall_or_pass", "bury", "play"}),
        ("LegalActions", "actions", {"declare", "overcall", "pass", "bury", "play", "redeal"}),
        ("ShowView", "strength", {"single", "level_pair", "sj_pair", "bj_pair"}),
        ("ShowView", "trump", {"S", "H", "C", "D"}),
        ("SeatPlayer", "kind", {"human", "random", "heuristic", "strong"}),
        ("PublicView", "teamLevels", {"2", "10", "A"}),
        ("RoundSummary", "status", {"playing", "scored", "abandoned"}),
        ("RulesView", "bottomMultiplier", {"linear", "exponential"}),
        ("RoundResultView", "outcome", {"defenders_up", "attackers_take_over"}),
        ("DryRun", "action", {"play", "bury"}),
    ],
)
def test_closed_sets_are_enums(schema: str, prop: str, values: set[str]) -> None:
    found = set(_enum(schemas()[schema]["properties"][prop]))
    assert values <= found, found


def _validator(schema: dict[str, Any]) -> Draft202012Validator:
    return Draft202012Validator({**schema, "components": document()["components"]})


def _json_media() -> list[tuple[str, dict[str, Any]]]:
    found = []
    for method, path, op in operations():
        body = op.get("requestBody")
        if body:
            for media_type, media in body["content"].items():
                found.append((f"{method} {path} request {media_type}", media))
        for status, response in op["responses"].items():
            if int(status) < 400:
                for media_type, media in (response.get("content") or {}).items():
                    if "json" in media_type:
                        found.append((f"{method} {path} {status} {media_type}", media))
    return found


def test_every_json_request_and_answer_has_an_example_that_fits() -> None:
    media = _json_media()
    assert len(media) > 40
    for where, item in media:
        assert "example" in item or item.get("examples"), where
        values = [item["example"]] if "example" in item else []
        values += [e["value"] for e in (item.get("examples") or {}).values() if "value" in e]
        for value in values:
            errors = list(_validator(item["schema"]).iter_errors(value))
            assert not errors, f"{where}: {errors[0].message} at {list(errors[0].path)}"


def test_every_example_a_field_declares_fits_it() -> None:
    """A field's examples are on its type (``Meta(examples=…)``, D-declared): each fits."""
    checked = 0
    for name, schema in schemas().items():
        for prop, sub in (schema.get("properties") or {}).items():
            for value in sub.get("examples", ()):
                errors = list(_validator(sub).iter_errors(value))
                assert not errors, f"{name}.{prop}: {errors[0].message}"
                checked += 1
    assert checked > 100


def test_every_problem_answer_lists_its_types() -> None:
    examples = document()["components"]["examples"]
    for method, path, op in operations():
        for status, response in op["responses"].items():
            if int(status) < 400 or (status == "404" and "content" not in response):
                continue
            where = f"{method} {path} {status}"
            assert "Problem types:" in response["description"], where
            media = response["content"]["application/problem+json"]
            assert media["examples"], where
            for code, ref in media["examples"].items():
                value = examples[ref["$ref"].rsplit("/", 1)[1]]["value"]
                assert value["type"].endswith("/" + code) and value["status"] == int(status)
                assert f"`{code}`" in response["description"], where


def test_the_action_route_lists_the_rules_it_enforces() -> None:
    act = document()["paths"]["/v1/matches/{match_id}/actions/{action}"]["post"]
    conflict = act["responses"]["409"]["description"]
    for code in ("illegal-follow", "not-your-turn", "mixed-lead", "version-conflict"):
        assert f"`{code}`" in conflict
    assert "415" in act["responses"] and "412" in act["responses"]
    assert any(p["name"] == "dryRun" for p in act["parameters"])

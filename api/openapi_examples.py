"""An example for every JSON request body and answer of the OpenAPI document, made from
the schemas themselves so it always fits them: a field's own examples (its type's
``Meta(examples=…)``), else the first value of an enum, a card in R4 notation where a card
is asked for, a UUID for an id, the least a minimum allows, one item per array (or as
many as ``minItems`` asks), every property of an object. A test validates each example
against its schema."""

from __future__ import annotations

from typing import Any, Final

from api.openapi_patches import Json, operations
from services.field_docs import EXAMPLE_HEX64, EXAMPLE_ID, EXAMPLE_TIME

MAX_DEPTH = 40
TEXT_EXAMPLES: Final[dict[str, str]] = {
    "text/plain": (
        '% Shengji game record: docs/records.md\n[Format "shengji-record/1"]\n'
        '[Kind "round"]\n[Name "demo"]\n[Started "2026-01-01T12:00:00.003000Z"]\n…\n'
        "1. S0 declare 2C {+0.018}\n2. S0 pass {+0.024}\n…\n"
    ),
    "text/csv": "rank,team,name,played,wins,draws,losses,byes,match_points,...\r\n"
    "1,0,Team A,1,1,0,0,0,2,...\r\n",
}
"""Examples of the answers that are not JSON, by media type."""


def add_examples(document: Json) -> None:
    """Gap: Litestar writes no example of a body or an answer (its ``create_examples``
    draws random values, which neither fit the patterns nor stay the same from one run to
    the next). An ``example`` on every JSON request body and answer that has none, made
    from its schema; the answers that are not JSON by :data:`TEXT_EXAMPLES`."""
    schemas = document["components"]["schemas"]
    for _, _, op in operations(document):
        media = list(op.get("requestBody", {}).get("content", {}).items())
        for status, response in op["responses"].items():
            if int(status) < 400:
                media += list(response.get("content", {}).items())
        for media_type, item in media:
            if "example" in item or item.get("examples"):
                continue
            if "json" in media_type and "schema" in item:
                item["example"] = (
                    example(item["schema"], schemas) if item["schema"] else {"status": "ready"}
                )
            elif media_type in TEXT_EXAMPLES:
                item["example"] = TEXT_EXAMPLES[media_type]


def example(schema: Json, schemas: Json, depth: int = 0) -> Any:
    """A value that fits ``schema`` (``$ref`` into ``schemas``): its own example (a field's
    ``Meta(examples=…)``), else one made from its type."""
    if depth > MAX_DEPTH:
        return None
    if "example" in schema or schema.get("examples"):
        return schema["example"] if "example" in schema else schema["examples"][0]
    ref = schema.get("$ref") or (
        schema["allOf"][0]["$ref"] if len(schema.get("allOf", ())) == 1 else None
    )
    if ref:  # allOf: a described field of a Struct type (Litestar's)
        return example(schemas[ref.rsplit("/", 1)[1]], schemas, depth + 1)
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):  # not null: a null would leave a required property out
        return next((v for v in schema["enum"] if v is not None), schema["enum"][0])
    for key in ("oneOf", "anyOf"):
        if key in schema:
            branches = [b for b in schema[key] if b.get("type") != "null"] or schema[key]
            return example(branches[0], schemas, depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object" or "properties" in schema:
        props = schema.get("properties") or {}
        return {prop: example(sub, schemas, depth + 1) for prop, sub in props.items()}
    if kind == "array":
        one = example(schema.get("items") or {}, schemas, depth + 1)
        return [one] * max(1, int(schema.get("minItems", 1)))
    if kind in ("integer", "number"):
        low, high = schema.get("minimum"), schema.get("maximum")
        value = 1 if low is None else int(low)
        return value if high is None else min(value, int(high))
    if kind == "string":
        return _string(schema)
    return False if kind == "boolean" else None


def _string(schema: Json) -> str:
    pattern = str(schema.get("pattern", ""))
    if schema.get("format") in ("uuid", "date-time"):
        return EXAMPLE_ID if schema["format"] == "uuid" else EXAMPLE_TIME
    if "[SHCD]" in pattern:
        return "5C 5C 7C 7C" if "+" in pattern else "5C"
    if "0-9a-f" in pattern:
        return EXAMPLE_HEX64
    return "text".ljust(int(schema.get("minLength", 0)), "x")

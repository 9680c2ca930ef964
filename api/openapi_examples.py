"""An example for every JSON request body and answer of the OpenAPI document,
made from the schemas themselves so it always fits them: the first value of an enum, a
card in R4 notation where a card is asked for, a UUID for an id, the least a minimum
allows, one item per array (or as many as ``minItems`` asks), every property of an
object. A test validates each example against its schema."""

from __future__ import annotations

from typing import Any, Final

from api.openapi_patches import Json, operations

UUID_EXAMPLE = "0b5c3a6e-8d5f-4f39-9a41-2f1c6f0e7d21"
HEX64 = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
BY_NAME: dict[str, Any] = {
    "matchId": UUID_EXAMPLE,
    "replacedBy": "heuristic",
    "roundId": UUID_EXAMPLE,
    "tournamentId": UUID_EXAMPLE,
    "seed": HEX64,
    "commitment": HEX64,
    "secret": HEX64,
    "name": "Alice",
    "matchEnd": "wrap",
    "level": "2",
    "levelRank": "2",
    "trumpSuit": "H",
    "trump": "H",
    "createdAt": "2026-12-01T20:00:00+00:00",
    "timestamp": "2026-12-01T20:00:00+00:00",
    "startedAt": "2026-12-01T20:00:00+00:00",
    "endsAt": "2026-12-01T20:00:04.950000+00:00",
    "deadline": "2026-12-01T20:00:35+00:00",
    "turnDeadline": "2026-12-01T20:01:00+00:00",
    "importedAt": "2026-12-01T20:00:00+00:00",
    "digest": "sha256:" + HEX64,
    "organiserToken": "o-3f9c2a…",
    "token": "s-8e1d47…",
    "detail": "what happened",
}
CARDS = ["5C", "5C", "7C", "7C"]
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


def example(schema: dict[str, Any], schemas: dict[str, Any], name: str = "", depth: int = 0) -> Any:
    """A value that fits ``schema`` (``$ref`` into ``schemas``); ``name``: its property."""
    if depth > MAX_DEPTH:
        return None
    ref = schema.get("$ref")
    if isinstance(ref, str):
        return example(schemas[ref.rsplit("/", 1)[1]], schemas, name, depth + 1)
    if len(schema.get("allOf", ())) == 1:  # a described field of a Struct type (Litestar's)
        return example(schema["allOf"][0], schemas, name, depth + 1)
    if "example" in schema:
        return schema["example"]
    if schema.get("examples"):
        return schema["examples"][0]
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        if name in BY_NAME and BY_NAME[name] in schema["enum"]:
            return BY_NAME[name]
        # a null would be dropped from the document, leaving a required property out
        return next((v for v in schema["enum"] if v is not None), schema["enum"][0])
    for key in ("oneOf", "anyOf"):
        if key in schema:
            branches = [b for b in schema[key] if b.get("type") != "null"] or schema[key]
            return example(branches[0], schemas, name, depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object" or "properties" in schema:
        out = {}
        for prop, sub in (schema.get("properties") or {}).items():
            out[prop] = example(sub, schemas, prop, depth + 1)
        return out
    if kind == "array":
        items = schema.get("items") or {}
        if name in ("cards", "hand", "bottom", "played", "attempted", "forced", "throw"):
            return _cards(items, schemas, depth)
        one = example(items, schemas, name, depth + 1)
        return [one] * max(1, int(schema.get("minItems", 1)))
    if kind == "string":
        return _string(schema, name)
    if kind == "integer":
        return _number(schema, 1)
    if kind == "number":
        return _number(schema, 1)
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    return None


def _cards(items: dict[str, Any], schemas: dict[str, Any], depth: int) -> Any:
    one = example(items, schemas, "card", depth + 1)
    if isinstance(one, str):
        return list(CARDS)
    return [one]


def _string(schema: dict[str, Any], name: str) -> str:
    if name in BY_NAME and isinstance(BY_NAME[name], str):
        return str(BY_NAME[name])
    if schema.get("format") == "uuid":
        return UUID_EXAMPLE
    if schema.get("format") == "date-time":
        return "2026-12-01T20:00:00+00:00"
    pattern = str(schema.get("pattern", ""))
    if "[SHCD]" in pattern:
        return "5C 5C 7C 7C" if "+" in pattern else "5C"
    if "0-9a-fA-F" in pattern or "0-9a-f" in pattern:
        return HEX64
    text = "text"
    low = int(schema.get("minLength", 0))
    return text if len(text) >= low else text + "x" * (low - len(text))


def _number(schema: dict[str, Any], default: int) -> int:
    low = schema.get("minimum")
    high = schema.get("maximum")
    value = default if low is None else int(low)
    if high is not None and value > high:
        value = int(high)
    return value

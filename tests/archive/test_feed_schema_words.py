"""The feed's schemas say what every property is, and speak the served form (docs/events.md):
every property of every served feed schema — ``GET /v1/events/schema``'s ``feed``, and the
checked-in copies in openapi.yaml and asyncapi.yaml — nested ones included, has a
description; data keys are camelCase (turn timers too); a tournament's table numbers are
served from 1, as the API counts them (stored from 0)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

import pytest
from litestar.testing import TestClient

from domain.tournament.events import (
    ResultCorrected,
    RoundDeadlinePassed,
    RoundScheduled,
    TableEntry,
    TableResultEntered,
    TableResultRecorded,
    TimeControlChanged,
)
from services.history_items import history_item
from tests.apps import make_app
from tests.documents import repository_yaml

T0 = datetime(2026, 12, 6, tzinfo=UTC)
CAMEL = re.compile(r"^[a-z][A-Za-z0-9]*$")


def undescribed(schema: Any, path: str) -> Iterator[str]:
    """Every property under ``schema`` without a description, by its path."""
    if isinstance(schema, list):
        for item in schema:
            yield from undescribed(item, path)
        return
    if not isinstance(schema, dict):
        return
    for name, prop in (schema.get("properties") or {}).items():
        if isinstance(prop, dict) and "description" not in prop:
            yield f"{path}.{name}"
        yield from undescribed(prop, f"{path}.{name}")
    for key in ("items", "additionalProperties", "anyOf", "oneOf", "allOf", "prefixItems"):
        if key in schema:
            yield from undescribed(schema[key], f"{path}[]" if key == "items" else path)
    for name, sub in (schema.get("$defs") or {}).items():
        yield from undescribed(sub, name)


@pytest.fixture(scope="module")
def served() -> dict[str, Any]:
    """The feed's schemas as ``GET /v1/events/schema`` serves them (read once a module: the
    tests only read them)."""
    with TestClient(make_app()) as c:
        feed: dict[str, Any] = c.get("/v1/events/schema").json()["feed"]
        return feed


def document(name: str) -> dict[str, Any]:
    schemas: dict[str, Any] = repository_yaml(name)["components"]["schemas"]
    return {k: v for k, v in schemas.items() if k.startswith("Feed")}


@pytest.mark.parametrize("source", ["served", "openapi.yaml", "asyncapi.yaml"])
def test_every_feed_property_is_described(source: str, request: pytest.FixtureRequest) -> None:
    schemas = request.getfixturevalue("served") if source == "served" else document(source)
    assert len(schemas) > 50
    missing = [p for name, schema in schemas.items() for p in undescribed(schema, name)]
    assert missing == [], f"{len(missing)} properties without a description: {missing}"


def data_of(cls: Any, **fields: Any) -> dict[str, Any]:
    """The served ``data`` of an event of ``cls`` with ``fields``."""
    event = cls(originator_id=UUID(int=7), originator_version=2, timestamp=T0, **fields)
    data: dict[str, Any] = history_item(1, 0, event, frozenset()).data
    return data


def test_table_numbers_are_served_from_1_and_timers_in_camel_case() -> None:
    table = TableEntry(0, 1, 2, 0, UUID(int=8))
    scheduled = data_of(
        RoundScheduled, number=1, commitment="c", secret="s", tables=(table,), bye=None
    )
    assert scheduled["tables"][0]["table"] == 1
    result = data_of(
        TableResultRecorded, number=1, table=0, winner=1, levels=(0, 2), points=(0, 10), deals=1
    )
    assert result["table"] == 1
    assert data_of(RoundDeadlinePassed, number=1, tables=(0, 2), rule="flag")["tables"] == [1, 3]
    changed = data_of(
        TimeControlChanged,
        timers={"declare_ms": 1000, "play_ms": 30000},
        round_deadline_s=None,
        deadline_rule="flag",
        requested_bye_points=1,
    )
    assert changed["timers"] == {"declareMs": 1000, "playMs": 30000}
    assert all(CAMEL.match(k) for k in changed["timers"])


RESULT = {"number": 1, "table": 0, "winner": 3, "levels": (2, 0), "points": (120, 40)}
LEVELS_GAINED: list[tuple[type[Any], dict[str, Any]]] = [
    (TableResultRecorded, {**RESULT, "deals": 4}),
    (ResultCorrected, {**RESULT, "by": "TD", "reason": "a slip"}),
    (TableResultEntered, {**RESULT, "by": "TD", "reason": "played on paper"}),
]


@pytest.mark.parametrize(
    ("cls", "fields"), LEVELS_GAINED, ids=[cls.__name__ for cls, _ in LEVELS_GAINED]
)
def test_a_tournament_results_levels_are_served_as_levels_gained(
    cls: type[Any], fields: dict[str, Any], served: dict[str, Any]
) -> None:
    """R30: a table's result, recorded, corrected or entered on paper, counts the levels
    each team gained — ``[2, 0]``, never the ranks ``["4", "2"]`` — in the served data and
    in the schema ``GET /v1/events/schema`` publishes for it (docs/events.md, "Corrections")."""
    assert data_of(cls, **fields)["levels"] == [2, 0]
    levels = served[cls.__name__]["$defs"][f"FeedData{cls.__name__}"]["properties"]["levels"]
    assert levels["prefixItems"] == [{"type": "integer"}, {"type": "integer"}], levels

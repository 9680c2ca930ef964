"""The served feed's format policy (docs/events.md, "The served format"): yesterday's
served examples (docs/feed-examples.json) still fit what is served today, every served
item validates against the published ``FeedItem`` schema, and every type served has an
example; and the feed reads backwards (``order=desc``, ``before=``)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from jsonschema import Draft202012Validator  # type: ignore[import-untyped]
from litestar.testing import TestClient

from domain.rules.ruleset import STANDARD, MatchEnd, MatchEndKind
from services.event_schema import EVENT_CLASSES
from services.feed_schema import feed_item_schemas
from services.game import GameService
from tests.apps import make_app
from tests.archive.matches import bot_match, bot_teams, ended_match, open_match
from tests.commands import create_match, run_bots, take_seat
from tests.conftest import FixedSeeds
from tests.documents import repository_yaml
from tests.driving import play_round
from tests.tournaments import Tournaments

ROOT = Path(__file__).parents[2]
EXAMPLES = ROOT / "docs" / "feed-examples.json"


def served(client: TestClient[Any]) -> list[dict[str, Any]]:
    """Every item the public feed serves now, from position 0."""
    items: list[dict[str, Any]] = []
    after = 0
    while True:
        page = client.get("/v1/events", params={"after": after, "limit": 1000}).json()
        items += page["items"]
        after = page["next"]
        if not page["more"]:
            return items


def kind(value: Any) -> str:
    """A JSON value's type, as a schema names it (an array with its first item's)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return f"array of {kind(value[0])}" if value else "array"
    return "object"


def first_of_each_type(items: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """An example per ``type`` and ``classVersion``: the first one served not withheld."""
    found: dict[str, dict[str, Any]] = {}
    for item in items:
        key = f"{item['type']}/{item['classVersion']}"
        if item.get("withheld") is None and key not in found:
            found[key] = item
    return dict(sorted(found.items()))


def misfits(example: dict[str, Any], item: dict[str, Any]) -> list[str]:
    """What of ``example`` (yesterday's) ``item`` (today's) no longer has."""
    wrong = [f"item.{k}" for k in example if k not in item]
    wrong += [
        f"item.{k}: {kind(item[k])} not {kind(v)}"
        for k, v in example.items()
        if k in item and v not in (None, []) and item[k] not in (None, [])
        if kind(v) != kind(item[k])
    ]
    data, hidden = item.get("data", {}), set(item.get("hidden", []))
    for k, v in example.get("data", {}).items():
        if k not in data and k not in hidden:
            wrong.append(f"data.{k} is gone")
        elif (
            k in data
            and v not in (None, [])
            and data[k] not in (None, [])
            and (kind(v) != kind(data[k]))
        ):
            wrong.append(f"data.{k}: {kind(data[k])} not {kind(v)}")
    return wrong


def population() -> list[dict[str, Any]]:
    """What the public feed serves of a fixed population (fixed seeds and ids: the same
    types every run): a two-round match, a tournament, a match ended in play, one dealt."""
    service = GameService({"PERSISTENCE_MODULE": "eventsourcing.popo"}, seeds=FixedSeeds())
    rules = dataclasses.replace(STANDARD, match_end=MatchEnd(MatchEndKind.ROUNDS, 2))
    mid = create_match(service, rules, name="bots", preset="standard", match_id=UUID(int=1))
    for seat in range(4):
        take_seat(service, mid, seat, f"bot{seat}", "random")
    run_bots(service, mid, 100_000)  # the bots' choices follow from the round's id
    ts = Tournaments(service)
    cup = ts.create(
        name="cup",
        rules=STANDARD,
        teams=bot_teams(4),
        fmt="round_robin",
        match_length=1,
        tournament_id=UUID(int=2),
    )
    ts.schedule_next(cup.id)
    assert play_round(ts, cup.id).completed
    ended_match(service)
    open_match(service)
    with TestClient(make_app(service)) as client:
        return served(client)


@pytest.fixture(scope="module")
def items() -> list[dict[str, Any]]:
    return population()


def version_of(key: str) -> tuple[str, int]:
    kind_, version = key.split("/")
    return kind_, int(version)


def test_yesterdays_examples_fit_todays_feed(items: list[dict[str, Any]]) -> None:
    """Every example — of a version served today or an older one (its items are served
    upcast, as a newer version) — fits today's items of its type; every type and version
    served today has an example."""
    examples: dict[str, dict[str, Any]] = json.loads(EXAMPLES.read_text())
    today = first_of_each_type(items)
    missing = sorted(set(today) - set(examples))
    assert missing == [], f"add these served types to docs/feed-examples.json: {missing}"
    problems = {}
    for key, example in examples.items():
        name, version = version_of(key)
        for item in items:
            if item["type"] != name or item["classVersion"] < version or item.get("withheld"):
                continue
            if wrong := misfits(example, item):
                problems[key] = wrong
                break
    assert problems == {}, "a served item no longer fits its example (a breaking change)"


def test_every_served_item_and_example_fits_the_published_schema(
    items: list[dict[str, Any]],
) -> None:
    """Today's items, and the examples of the versions served today, validate against
    ``FeedItem`` in openapi.yaml (an older version's example names a version no longer
    served: the fit above checks it)."""
    components = repository_yaml("openapi.yaml")["components"]
    branch = one_branch_per_type(components)
    validators = {
        name: Draft202012Validator({"$ref": ref, "components": components})
        for name, ref in branch.items()
    }
    examples = json.loads(EXAMPLES.read_text())
    served = set(first_of_each_type(items))
    current = [e for k, e in examples.items() if k in served]
    assert current, "examples of today's versions are checked"
    for item in [*items, *current]:
        assert item["type"] in validators, f"no FeedItem branch for {item['type']}"
        errors = [e.message for e in validators[item["type"]].iter_errors(item)]
        assert errors == [], (item["type"], errors)


def one_branch_per_type(components: dict[str, Any]) -> dict[str, str]:
    """``FeedItem``'s branches by the ``type`` each one pins. FeedItem is a ``oneOf`` whose
    every branch requires ``type`` to be its own constant, and its discriminator maps each
    constant to that branch: so an item is valid against FeedItem exactly when it is valid
    against the branch of its ``type`` (no other branch can match it), which is what the
    test validates against (a ``oneOf`` validator tries all 80-odd branches per item)."""
    schemas = components["schemas"]
    feed_item = schemas["FeedItem"]
    refs = [b["$ref"] for b in feed_item["oneOf"]]
    pinned: dict[str, str] = {}
    for ref in refs:
        schema = schemas[ref.rsplit("/", 1)[-1]]
        const = schema["properties"]["type"]["const"]
        assert "type" in schema["required"], ref
        assert const not in pinned, f"two branches pin type {const}"
        pinned[const] = ref
    assert feed_item["discriminator"]["propertyName"] == "type"
    assert feed_item["discriminator"]["mapping"] == pinned
    return pinned


def test_a_changed_field_is_caught() -> None:
    """The check can fail: a field renamed, or its JSON type changed, is a misfit."""
    example = {"type": "TrickWon", "data": {"winner": 1, "points": 10}, "hidden": []}
    renamed = {"type": "TrickWon", "data": {"winner": 1, "score": 10}, "hidden": []}
    retyped = {"type": "TrickWon", "data": {"winner": "1", "points": 10}, "hidden": []}
    grown = {"type": "TrickWon", "data": {"winner": 1, "points": 10, "new": 0}, "hidden": []}
    ranks = {"type": "T", "data": {"levels": ["2", "4"]}, "hidden": []}
    counts = {"type": "T", "data": {"levels": [0, 2]}, "hidden": []}
    assert misfits(ranks, counts) == ["data.levels: array of number not array of string"]
    assert misfits(example, renamed) == ["data.points is gone"]
    assert misfits(example, retyped) == ["data.winner: string not number"]
    assert misfits(example, grown) == [], "an added field is additive"


def test_the_feed_reads_backwards() -> None:
    service = GameService({"PERSISTENCE_MODULE": "eventsourcing.popo"})
    bot_match(service)
    with TestClient(make_app(service)) as client:
        forwards = [i["position"] for i in served(client)]
        backwards: list[int] = []
        params: dict[str, Any] = {"order": "desc", "limit": 37}
        while True:
            page = client.get("/v1/events", params=params).json()
            backwards += [i["position"] for i in page["items"]]
            if not page["more"]:
                break
            params = {"order": "desc", "limit": 37, "before": page["next"]}
        assert backwards == forwards[::-1]
        newest = client.get("/v1/events", params={"order": "desc", "limit": 1}).json()
        assert [i["position"] for i in newest["items"]] == [forwards[-1]]
        bads: list[dict[str, str | int]] = [
            {"before": 5},
            {"order": "desc", "after": 3},
            {"order": "sideways"},
        ]
        for bad in bads:
            r = client.get("/v1/events", params=bad)
            assert r.status_code == 422, (bad, r.text)


def test_every_public_type_has_an_example_that_fits_its_schema() -> None:
    """docs/events.md: every event type the public feed serves has an example of its
    current version (made from a played population: tests/archive/feed_examples.py), and
    it validates against the type's published schema (``GET /v1/events/schema``)."""
    examples: dict[str, dict[str, Any]] = json.loads(EXAMPLES.read_text())
    schemas = feed_item_schemas()
    public = [c for stream, c in EVENT_CLASSES if stream in ("match", "round", "tournament")]
    missing = []
    for cls in public:
        key = f"{cls.__name__}/{getattr(cls, 'class_version', 1)}"
        if key not in examples:
            missing.append(key)
            continue
        errors = [
            e.message
            for e in Draft202012Validator(schemas[cls.__name__]).iter_errors(examples[key])
        ]
        assert errors == [], (key, errors)
    assert missing == [], f"run python -m tests.archive.feed_examples: {missing}"

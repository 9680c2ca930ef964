"""The event catalogue (D17): every stored event class is catalogued, its JSON Schema
matches the checked-in snapshot of its ``class_version``, an older version in the
snapshot has its upcaster, and what the store holds validates against the schemas."""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path
from typing import Any, ClassVar

import jsonschema  # type: ignore[import-untyped]
import msgspec
from eventsourcing.domain import Aggregate
from litestar.testing import TestClient

import domain
import services
from services.event_schema import (
    EVENT_CLASSES,
    drift,
    event_schemas,
    generated,
    load_snapshot,
    schema_of,
    updated_snapshot,
)
from services.game import GameService
from tests.apps import make_app
from tests.archive.matches import bot_match, bot_tournament

ROOT = Path(__file__).resolve().parents[2]
BASES = frozenset(
    {
        "MatchEvent",
        "RoundEvent",
        "TournamentEvent",
        "AccountEvent",
        "LobbyEvent",
        "RankedQueueEvent",
        "FriendshipEvent",
        "InvitationEvent",
        "SocialEvent",
        "TicketEvent",
        "TalkEvent",
    }
)
"""The aggregates' event base classes: never stored themselves."""


def _all_event_classes() -> set[type[Any]]:
    for package in (domain, services):
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            importlib.import_module(info.name)
    found: set[type[Any]] = set()
    todo: list[type[Any]] = [Aggregate.Event]
    while todo:
        cls = todo.pop()
        for sub in cls.__subclasses__():
            todo.append(sub)
            own = vars(sub).get("__annotations__", {})
            fields = [
                k for k, v in own.items() if not str(v).startswith(("ClassVar", "typing.ClassVar"))
            ]
            acts = "apply" in vars(sub) or "apply_to" in vars(sub)
            if sub.__module__.startswith(("domain.", "services.")) and (fields or acts):
                found.add(sub)
    return found


def test_the_snapshot_matches_the_code() -> None:
    assert drift(load_snapshot(), EVENT_CLASSES) == []


def test_every_stored_event_class_is_catalogued() -> None:
    catalogued = {cls.__qualname__ for _, cls in EVENT_CLASSES}
    found = {
        c.__qualname__
        for c in _all_event_classes()
        if not c.__name__.startswith("_") and c.__name__ not in BASES
    }
    missing = sorted(found - catalogued)
    assert missing == [], "add them to services.event_schema.EVENT_CLASSES and docs/events.md"
    names = [cls.__name__ for _, cls in EVENT_CLASSES]
    assert len(names) == len(set(names))
    doc = (ROOT / "docs" / "events.md").read_text(encoding="utf-8")
    assert [n for n in names if f"`{n}`" not in doc] == [], "docs/events.md misses these"


class Dealt(Aggregate.Event):
    """A stand-in for a real class whose fields changed (a field added)."""

    class_version: ClassVar[int] = 1
    deal_no: int
    seed: str


def test_a_changed_event_without_a_new_version_fails() -> None:
    snapshot = {"Dealt": {"1": schema_of(Dealt)}}
    assert drift(snapshot, (("round", Dealt),)) == []

    class Changed(Dealt):
        extra: int

    Changed.__name__ = "Dealt"
    problems = drift(snapshot, (("round", Changed),))
    assert len(problems) == 1 and "without a new class_version" in problems[0]


def test_a_new_version_needs_an_upcaster_from_every_older_one() -> None:
    snapshot = {"Dealt": {"1": schema_of(Dealt)}}

    class V2(Aggregate.Event):
        class_version: ClassVar[int] = 2
        deal_no: int
        seed: str
        pace: int

    V2.__name__ = "Dealt"
    snapshot["Dealt"]["2"] = schema_of(V2)
    assert any("no upcast_v1_v2" in p for p in drift(snapshot, (("round", V2),)))

    class V2Upcast(V2):
        @staticmethod
        def upcast_v1_v2(state: dict[str, Any]) -> None:
            state["pace"] = 0

    V2Upcast.__name__ = "Dealt"
    assert drift(snapshot, (("round", V2Upcast),)) == []


def test_the_generator_never_rewrites_a_recorded_version() -> None:
    snapshot = load_snapshot()
    assert updated_snapshot(snapshot) == snapshot
    tampered = {**snapshot, "Passed": {"1": {"type": "object"}}}
    try:
        updated_snapshot(tampered)
    except ValueError as e:
        assert "Passed v1 changed" in str(e)
    else:
        raise AssertionError("a rewritten version was accepted")


def test_stored_events_validate_against_their_schemas() -> None:
    service = GameService({"PERSISTENCE_MODULE": "eventsourcing.popo"})
    bot_match(service)
    bot_tournament(service)
    current = generated()
    validators: dict[str, Any] = {}  # one checked validator per event type, not per event
    checked: set[str] = set()
    for n in service.recorder.select_notifications(0, 10_000):
        event = service.mapper.to_domain_event(n)
        name = type(event).__name__
        document = msgspec.json.decode(msgspec.json.encode(event))
        if name not in validators:
            schema = current[name]["schema"]
            validator_class = jsonschema.validators.validator_for(schema)
            validator_class.check_schema(schema)
            validators[name] = validator_class(schema)
        validators[name].validate(document)
        checked.add(name)
    assert {"Dealt", "CardPlayed", "RoundScored", "RoundScheduled", "MatchFinished"} <= checked


def test_served_at_events_schema() -> None:
    with TestClient(make_app()) as c:
        served = c.get("/v1/events/schema").json()
    assert served["events"] == msgspec.json.decode(msgspec.json.encode(event_schemas()))["events"]
    assert set(served["feed"]) == {e["type"] for e in served["events"] if e["stream"] != "outbox"}
    recorded = next(e for e in served["events"] if e["type"] == "Recorded")
    assert list(recorded["versions"]) == ["1", "2"] and recorded["classVersion"] == 2
    dealt = next(e for e in served["events"] if e["type"] == "Dealt")
    assert dealt["secret"] == ["seed"] and dealt["stream"] == "round"

"""``asyncapi.yaml`` at the root is the AsyncAPI 3.0 document of the SSE streams
(regenerate it with ``scripts/gen_asyncapi.py``), and it names every stream route.

The second test reads the checked-in documents: the first test keeps ``asyncapi.yaml`` equal
to the generated one, ``tests/api/test_openapi_drift.py`` keeps ``openapi.yaml`` equal to the
app's. Generating them again (an app, its document, two YAML dumps) cost ~6 CPU-s."""

from __future__ import annotations

from pathlib import Path

from api.asyncapi import asyncapi_yaml
from tests.documents import repository_yaml

ROOT = Path(__file__).resolve().parents[2]


def test_asyncapi_yaml_is_up_to_date() -> None:
    checked_in = (ROOT / "asyncapi.yaml").read_text(encoding="utf-8")
    assert checked_in == asyncapi_yaml(), "asyncapi.yaml drifted: run scripts/gen_asyncapi.py"


def test_every_stream_of_the_api_is_a_channel() -> None:
    doc = repository_yaml("asyncapi.yaml")
    assert doc["asyncapi"] == "3.0.0"
    addresses = {
        c["address"]
        .replace("{matchId}", "{match_id}")
        .replace("{tournamentId}", "{tournament_id}")
        .replace("{ticketId}", "{ticket_id}")
        for c in doc["channels"].values()
    }
    openapi = repository_yaml("openapi.yaml")
    streams = {
        path
        for path, item in openapi["paths"].items()
        if "text/event-stream" in str(item.get("get", {}).get("responses", {}).get("200", {}))
    }
    assert streams and streams == addresses
    for operation in doc["operations"].values():
        assert operation["action"] == "receive"
    feed = doc["components"]["messages"]["feedEvent"]["payload"]
    schemas = doc["components"]["schemas"]
    union = schemas[feed["$ref"].rsplit("/", 1)[1]]
    # a feed item is one schema per event type, told apart by `type` (not `data: object`)
    assert union["discriminator"]["propertyName"] == "type" and len(union["oneOf"]) > 30
    for name, ref in union["discriminator"]["mapping"].items():
        item = schemas[ref.rsplit("/", 1)[1]]
        assert item["properties"]["type"]["const"] == name
        assert {"position", "stream", "version", "type", "data", "hidden"} <= set(
            item["properties"]
        )

"""The AsyncAPI 3.0 document of the service's Server-Sent Event streams (issue 17).

``asyncapi.yaml`` at the repository root is :func:`asyncapi_yaml`, written by
``scripts/gen_asyncapi.py``; ``tests/api/test_asyncapi_drift.py`` fails when they
differ. The payload schemas come from the same msgspec types the streams encode
(:class:`services.feed.FeedItem`, the views of :mod:`services.view_types`), so a change
to a frame changes the document.
"""

from __future__ import annotations

from typing import Any

import msgspec

from services.feed import FeedItem
from services.history_items import HistoryItem
from services.view_types import PublicView, SeatView

VERSION = "1.0.0"
_REF = "#/components/schemas/{name}"


def _last_event_id(what: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "Last-Event-ID": {
                "type": "string",
                "pattern": "^[0-9]{1,18}$",
                "description": f"The id of the last frame received ({what}): the stream "
                "resumes right after it, without loss or repeat.",
            }
        },
    }


def asyncapi_document() -> dict[str, Any]:
    """The document as a mapping (AsyncAPI 3.0.0)."""
    (feed, seat, public, item), components = msgspec.json.schema_components(
        [FeedItem, SeatView, PublicView, HistoryItem], ref_template=_REF
    )
    del item  # referenced from the views' ``missed``
    return {
        "asyncapi": "3.0.0",
        "info": {
            "title": "Shengji live streams",
            "version": VERSION,
            "description": "Server-Sent Events (text/event-stream) of the Shengji service. "
            "Each frame has an `id` (resume with `Last-Event-ID`), an `event` name and JSON "
            "`data`; `: ping` comments keep the connection alive and a `retry:` hint ends a "
            "stream after its lifetime. The REST side is openapi.yaml; the events "
            "themselves are catalogued in docs/events.md.",
        },
        "servers": {
            "local": {
                "host": "127.0.0.1:8000",
                "protocol": "http",
                "description": "make serve's default address",
            }
        },
        "channels": {
            "events": {
                "address": "/v1/events/stream",
                "title": "The whole event log",
                "description": "Every event of every match, round and tournament in commit "
                "order, redacted for the public (R33–R36); the operator token "
                "(`Authorization: Bearer`) reads it unredacted. Query: `after` "
                "(a position), `lastEventId`.",
                "messages": {"event": {"$ref": "#/components/messages/feedEvent"}},
            },
            "match": {
                "address": "/v1/matches/{matchId}/stream",
                "title": "Live views of a match",
                "description": "The view of a seat (seat token as `Authorization: Bearer` "
                "or `?token=`) or of a spectator, once now and once per newer match "
                "version (R33). A tournament table in play is closed to spectators (R36).",
                "parameters": {"matchId": {"description": "The match's id (a UUID)"}},
                "messages": {"view": {"$ref": "#/components/messages/matchView"}},
            },
        },
        "operations": {
            "followEvents": {
                "action": "receive",
                "channel": {"$ref": "#/channels/events"},
                "summary": "Follow the whole log from a position",
                "messages": [{"$ref": "#/channels/events/messages/event"}],
            },
            "watchMatch": {
                "action": "receive",
                "channel": {"$ref": "#/channels/match"},
                "summary": "Watch a match as a seat or a spectator",
                "messages": [{"$ref": "#/channels/match/messages/view"}],
            },
        },
        "components": {
            "messages": {
                "feedEvent": {
                    "name": "event",
                    "title": "One event of the log",
                    "summary": "SSE `event: event`; `id` is the event's position in the log.",
                    "contentType": "application/json",
                    "headers": _last_event_id("a position in the log"),
                    "payload": feed,
                },
                "matchView": {
                    "name": "view",
                    "title": "The viewer's view at a match version",
                    "summary": "SSE `event: view`; `id` is the match version. On a resumed "
                    "stream the first frame also carries `missed` (the redacted history "
                    "items after Last-Event-ID, `HistoryItem`) and `missedMore`.",
                    "contentType": "application/json",
                    "headers": _last_event_id("a match version"),
                    "payload": {"oneOf": [seat, public]},
                },
            },
            "schemas": components,
        },
    }


def asyncapi_yaml() -> str:
    import yaml  # type: ignore[import-untyped]  # noqa: PLC0415 - the generator only

    text: str = yaml.safe_dump(asyncapi_document(), sort_keys=True, allow_unicode=True, width=100)
    return text

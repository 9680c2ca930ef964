"""The OpenAPI document: what it says besides the routes, how it is completed, and when.

Litestar generates the document from the route handlers (each operation's id is its
handler's name, :func:`operation_id`; its summary and description the handler's
docstring); :func:`complete_document` then states what Litestar leaves out
(:mod:`api.contract`: request bodies as msgspec's schemas, parameter constraints, problem
answers, links; :mod:`api.openapi_docs`: field descriptions and problem types;
:mod:`api.openapi_examples`: examples), and the last steps make every union a tagged,
named schema (:func:`tag_unions`) and leave the streams to an SSE client
(:func:`leave_streams`) — docs/decisions.md D-contract-native.

The document is the same for every app of the process (the routes are), so it is built
once per process, on first use: the first request to ``/schema`` (every page there serves
the completed document through :class:`Completed`) or :func:`openapi_document` (the
``openapi.yaml`` generator, tests). Building an app builds no document
(docs/decisions.md D-root).
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Sequence
from typing import Any

import yaml  # type: ignore[import-untyped]
from litestar import Litestar, Request
from litestar.handlers import HTTPRouteHandler
from litestar.openapi import OpenAPIConfig
from litestar.openapi.plugins import (
    JsonRenderPlugin,
    OpenAPIRenderPlugin,
    RapidocRenderPlugin,
    RedocRenderPlugin,
    StoplightRenderPlugin,
    SwaggerRenderPlugin,
    YamlRenderPlugin,
)
from litestar.openapi.spec import Components, OpenAPI, SecurityScheme, Tag
from litestar.router import Router
from litestar.routes import BaseRoute

from api.asyncapi import asyncapi_document
from api.contract import JsonSchema, constrain_operations, link_operations
from api.openapi_docs import (
    describe_feed_data,
    describe_operations,
    describe_parameters,
    document_schemas,
    problem_types,
)
from api.openapi_examples import add_examples
from api.streams import EVENT_STREAM
from services.feed_schema import feed_classes, feed_item_components

API_VERSION = "1.0.0"

DESCRIPTION = """Event-sourced Shengji (双升 / Tractor / 80 points): matches, seats, round
commands, per-seat views (RULES R33), history and state as of any version (R34), deal
verification (R35), live views (SSE) and a stateless rules oracle. JSON in camelCase;
cards in R4 notation (`10H`, `AS`, `SJ`, `BJ`).

**Versions and ETags.** A match's version counts the events of the match and its rounds
(1, 2, 3, … gap-free). Views carry `ETag: "<version>"` (a `-dNN` / `-c` suffix when the
view also changes with the clock: a paced deal, an unclaimed deadline); `If-None-Match`
answers 304. Commands take `If-Match: "<version>"` (412 when the match moved on).

**Tokens.** `Authorization: Bearer <token>`. A seat token (answered once by the seat
claim) acts for that seat and reads its view; the organiser token (answered once by
`POST /v1/matches`) seats bots, runs them and ends the match. 401: no or a bad token;
403: a token of another match or of the wrong role.

**Errors** are RFC 9457 `application/problem+json` with a stable `type` per `code`.
Rule violations are **409** and name the rule (R-number) and the cards; so is a command
that lost a race with another (`version-conflict`: of two conflicting commands exactly one
wins). Input that cannot be understood is **422** and names the field.

**Idempotency-Key** on every POST (IETF draft): the same key and body answer the first
response again without acting twice (`Idempotent-Replayed: true`); the same key with
another body is 422; while the first request runs, 409."""


def openapi_config() -> OpenAPIConfig:
    """The document's title, description, tags and security schemes, and the pages that
    serve it under ``/schema`` (each of the completed document, :func:`openapi_document`)."""
    return OpenAPIConfig(
        title="Shengji service",
        version=API_VERSION,
        description=DESCRIPTION,
        components=Components(
            security_schemes={
                "bearer": SecurityScheme(
                    type="http",
                    scheme="bearer",
                    description="A seat token or the match's organiser token",
                )
            }
        ),
        tags=[
            Tag(name="matches", description="Create matches, claim seats, seat and run bots"),
            Tag(name="commands", description="Round commands (R16–R25)"),
            Tag(name="views", description="Views, history, state as of a version, rounds"),
            Tag(name="live", description="Live views (Server-Sent Events)"),
            Tag(name="verification", description="Deal verification (R35)"),
            Tag(name="rules oracle", description="The stateless rules engine"),
            Tag(name="tournaments", description="Tournaments, duplicate deals, standings (R36)"),
            Tag(name="health", description="Liveness and readiness"),
            Tag(name="archive", description="The whole event log: feed, stream, schemas"),
            Tag(name="webhooks", description="Operator: webhook subscriptions, delivery log"),
            Tag(
                name="players",
                description="Players, sessions, seats and matches; invites; quick play",
            ),
        ],
        render_plugins=[Completed(page) for page in pages()],
        operation_id_creator=operation_id,
    )


def operation_id(handler: HTTPRouteHandler, method: Any, path: Any) -> str:
    """An operation's id: its handler's name in camelCase (``claim_seat`` → ``claimSeat``),
    stable for clients: a handler is named for its operation (docs/decisions.md
    D-contract-native)."""
    first, *rest = handler.handler_name.split("_")
    return first + "".join(word.capitalize() for word in rest)


def pages() -> list[OpenAPIRenderPlugin]:
    """The pages under ``/schema``: the interactive docs (ReDoc, also at ``/schema`` itself;
    Swagger UI, Stoplight Elements, RapiDoc) and the document as JSON and YAML."""
    return [
        RedocRenderPlugin(),
        JsonRenderPlugin(),
        YamlRenderPlugin(),
        SwaggerRenderPlugin(),
        StoplightRenderPlugin(),
        RapidocRenderPlugin(),
    ]


class Completed(OpenAPIRenderPlugin):
    """A page of :func:`pages` rendering the completed document (:func:`openapi_document`)
    instead of the one Litestar generated, which it is handed."""

    def __init__(self, page: OpenAPIRenderPlugin) -> None:
        super().__init__(
            path=page.paths, media_type=page.media_type, favicon=page.favicon, style=page.style
        )
        self.page = page

    def render(self, request: Request[Any, Any, Any], openapi_schema: dict[str, Any]) -> bytes:
        return self.page.render(request, openapi_document(request.app))

    def receive_router(self, router: Router) -> None:
        self.page.receive_router(router)


def complete_document(doc: OpenAPI, routes: Sequence[BaseRoute]) -> None:
    """Complete Litestar's document of ``routes`` in place (the module docstring)."""
    constrain_operations(doc, routes)
    describe_operations(doc)
    describe_parameters(doc)
    document_schemas(doc)
    problem_types(doc)
    type_feed_items(doc)
    add_examples(doc)
    link_operations(doc)


def type_feed_items(doc: OpenAPI) -> None:
    """A feed item is one schema per event type, told apart by ``type`` (the served
    schemas of :mod:`services.feed_schema`), not an object of anything."""
    schemas = doc.components.schemas or {}
    parts = feed_item_components("#/components/schemas/{name}")
    describe_feed_data(parts, {f"FeedData{c.__name__}": c for c in feed_classes()})
    for name, schema in parts.items():
        schemas[name] = JsonSchema(raw=schema)
    # the stream of msgspec's own FeedItem, replaced above by FeedItemStream: nothing
    # refers to it any more
    schemas.pop("FeedStream", None)
    doc.components.schemas = schemas


_documents: dict[tuple[tuple[str, str], ...], dict[str, Any]] = {}
_lock = threading.Lock()


def openapi_document(app: Litestar) -> dict[str, Any]:
    """``app``'s completed OpenAPI document as plain data, built on first use and then
    shared by every app of the process with the same routes."""
    key = tuple(
        sorted(
            (route.path, ",".join(sorted(getattr(route, "methods", ())))) for route in app.routes
        )
    )
    with _lock:
        document = _documents.get(key)
        if document is None:
            doc = app.openapi_schema
            complete_document(doc, app.routes)
            document = doc.to_schema()
            tag_unions(document)
            leave_streams(document)
            _documents[key] = document
    return document


def tag_unions(document: dict[str, Any]) -> None:
    """Every ``oneOf`` of schemas becomes a named schema (``CommandDoneOrDryRun``, or for
    many branches their common prefix: ``FeedItemAny``) with its
    ``discriminator``: the property whose ``const`` tells its branches apart (a msgspec
    tagged union's tag, such as ``kind``), so that generated clients decode each answer
    as its own type (docs/decisions.md D-contract-native). A union with no such tag fails
    the document's generation."""
    schemas = document["components"]["schemas"]

    def tag(node: Any) -> None:
        if isinstance(node, list):
            for item in node:
                tag(item)
        if not isinstance(node, dict):
            return
        refs = [b.get("$ref", "") for b in node.get("oneOf", ())]
        if refs and all(refs) and "discriminator" not in node:  # a named, tagged one stays
            named = {ref: schemas[ref.rsplit("/", 1)[1]] for ref in refs}
            common = set.intersection(
                *({k for k, v in s["properties"].items() if "const" in v} for s in named.values())
            )
            if not common:
                raise RuntimeError(f"OpenAPI: a oneOf of {refs} has no tag to tell them apart")
            name = min(common)
            mapping = {s["properties"][name]["const"]: ref for ref, s in named.items()}
            names = [ref.rsplit("/", 1)[1] for ref in refs]
            # two or three: ``CommandDoneOrDryRun``; more: their common prefix, ``FeedItemAny``
            prefix = os.path.commonprefix(names)  # noqa: RUF071 - names, not paths
            union = "Or".join(names) if len(names) <= 3 or not prefix else prefix + "Any"
            schemas[union] = {
                "description": f"{' or '.join(names[:3])}{', …' if len(names) > 3 else ''}, "
                f"told apart by `{name}`",
                "oneOf": node.pop("oneOf"),
                "discriminator": {"propertyName": name, "mapping": mapping},
            }
            node["$ref"] = f"#/components/schemas/{union}"
        for value in list(node.values()):
            tag(value)

    tag(document)
    document["components"]["schemas"] = dict(sorted(schemas.items()))


def _sse_event(channel: str) -> dict[str, Any]:
    """One Server-Sent Event as the HTML standard parses it (the schema of each event of
    the stream, as OpenAPI 3.1 writes it), its ``data`` a message of ``channel``."""
    return {
        "type": "object",
        "required": ["data"],
        "properties": {
            "event": {"type": "string", "description": "The message's name"},
            "id": {"type": "string", "description": "Its id, for Last-Event-ID"},
            "retry": {"type": "integer", "minimum": 0},
            "data": {
                "type": "string",
                "contentMediaType": "application/json",
                "description": f"A message of asyncapi.yaml's channel `{channel}`, as JSON",
            },
        },
    }


def leave_streams(document: dict[str, Any]) -> None:
    """The Server-Sent Event streams are left to an SSE client: each answers
    ``text/event-stream`` events (:func:`_sse_event`), is marked ``x-internal`` (client
    generators skip it)
    and ``x-server-sent-events`` names its channel in ``asyncapi.yaml``, where its frames'
    schemas are (docs/clients.md)."""
    channels = {
        re.sub(r"\{[^}]*\}", "{}", channel["address"]): name
        for name, channel in asyncapi_document()["channels"].items()
    }
    for path, item in document["paths"].items():
        for operation in item.values():
            ok = operation.get("responses", {}).get("200", {})
            if EVENT_STREAM not in ok.get("content", {}):
                continue
            channel = channels[re.sub(r"\{[^}]*\}", "{}", path)]
            ok["description"] = (
                "Server-Sent Events: the frames are the messages of asyncapi.yaml's "
                f"channel `{channel}`; `: ping` comments and a `retry:` hint between them"
            )
            ok["content"] = {EVENT_STREAM: {"schema": _sse_event(channel)}}
            operation["x-internal"] = True
            operation["x-server-sent-events"] = {
                "asyncapi": "asyncapi.yaml",
                "channel": f"#/channels/{channel}",
            }


def openapi_yaml(app: Litestar) -> str:
    """``app``'s document as YAML (``openapi.yaml`` at the repository root is this,
    written by ``scripts/gen_openapi.py``; a test fails when they drift)."""
    text: str = yaml.safe_dump(openapi_document(app), sort_keys=True, allow_unicode=True, width=100)
    return text

"""The OpenAPI document: what it says besides the routes, how it is completed, and when.

Litestar generates the document from the route handlers; :func:`complete_document` then
states what Litestar leaves out (:mod:`api.contract`: request bodies as msgspec's schemas,
parameter constraints, problem answers, links; :mod:`api.openapi_docs`: operation ids,
descriptions and problem types; :mod:`api.openapi_examples`: examples).

The document is the same for every app of the process (the routes are), so it is built
once per process, on first use: the first request to ``/schema`` (every page there serves
the completed document through :class:`Completed`) or :func:`openapi_document` (the
``openapi.yaml`` generator, tests). Building an app builds no document
(docs/decisions.md D-root).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import yaml  # type: ignore[import-untyped]
from litestar import Litestar, Request
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

from api.contract import JsonSchema, constrain_operations, link_operations
from api.openapi_docs import (
    describe_feed_data,
    describe_parameters,
    document_schemas,
    name_operations,
    problem_types,
)
from api.openapi_examples import add_examples
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
    )


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
    name_operations(doc)
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
            document = _documents[key] = doc.to_schema()
    return document


def openapi_yaml(app: Litestar) -> str:
    """``app``'s document as YAML (``openapi.yaml`` at the repository root is this,
    written by ``scripts/gen_openapi.py``; a test fails when they drift)."""
    text: str = yaml.safe_dump(openapi_document(app), sort_keys=True, allow_unicode=True, width=100)
    return text

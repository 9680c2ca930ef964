"""What the OpenAPI document says besides the routes and types: its title, description,
tags and security scheme, how operations are named, and the pages that serve it under
``/schema`` — Litestar's ``OpenAPIConfig`` (the document itself: :mod:`api.openapi`)."""

from __future__ import annotations

from typing import Any

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
from litestar.openapi.spec import Components, SecurityScheme, Tag

from api.openapi import Completed

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
                name="talk",
                description="Table talk (R37): quick chat, free text where allowed, mutes, reports",
            ),
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

"""The OpenAPI document: how it is completed, and when (what it says besides the routes:
:mod:`api.openapi_config`).

Litestar generates the document from the route handlers (each operation's id is its
handler's name, :func:`api.openapi_config.operation_id`; its summary and description the
handler's docstring) and the types (a field's description and examples are its msgspec ``Meta``;
a stream's answer is its declaration's, :mod:`api.streams`); :func:`complete_document`
then fills what Litestar cannot be told, each step named for the gap it fills
(:mod:`api.openapi_patches`, :mod:`api.openapi_examples`) — docs/decisions.md
D-contract-native, D-declared.

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

import msgspec
import yaml  # type: ignore[import-untyped]
from litestar import Litestar, Request
from litestar.openapi.plugins import OpenAPIRenderPlugin
from litestar.router import Router
from litestar.routes import BaseRoute

from api.openapi_examples import add_examples
from api.openapi_patches import (
    feed_items,
    links,
    parameter_constraints,
    parameter_words,
    problem_answers,
    request_bodies,
    schema_words,
    tag_unions,
)


class Completed(OpenAPIRenderPlugin):
    """Gap: Litestar's pages render the document it generated, with no step after it. A
    page of :func:`api.openapi_config.pages` rendering the completed document
    (:func:`openapi_document`) instead of the one it is handed."""

    def __init__(self, page: OpenAPIRenderPlugin) -> None:
        super().__init__(
            path=page.paths, media_type=page.media_type, favicon=page.favicon, style=page.style
        )
        self.page = page

    def render(self, request: Request[Any, Any, Any], openapi_schema: dict[str, Any]) -> bytes:
        return self.page.render(request, openapi_document(request.app))

    def receive_router(self, router: Router) -> None:
        self.page.receive_router(router)


def complete_document(document: dict[str, Any], routes: Sequence[BaseRoute]) -> None:
    """Complete Litestar's document of ``routes`` in place: the steps of
    :mod:`api.openapi_patches`, each named for the gap it fills, then the examples."""
    request_bodies(document, routes)
    parameter_constraints(document, routes)
    parameter_words(document)
    problem_answers(document)
    schema_words(document)
    feed_items(document)
    add_examples(document)
    links(document)
    tag_unions(document)


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
            document = app.openapi_schema.to_schema()
            complete_document(document, app.routes)
            # plain data, nothing shared (Litestar's schemas share their examples' lists)
            document = msgspec.json.decode(msgspec.json.encode(document))
            _documents[key] = document
    return document


def openapi_yaml(app: Litestar) -> str:
    """``app``'s document as YAML (``openapi.yaml`` at the repository root is this,
    written by ``scripts/gen_openapi.py``; a test fails when they drift)."""
    text: str = yaml.safe_dump(openapi_document(app), sort_keys=True, allow_unicode=True, width=100)
    return text

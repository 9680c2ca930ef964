"""Route decorators documented by their handlers (docs/decisions.md D-bus): a route is
declared by its path, its status and the problems it may answer; its summary and
description are its handler's docstring — the first paragraph, then the others."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, Final

from litestar import get
from litestar.handlers import HTTPRouteHandler

from api.dto import ETAG_HEADER, NOT_MODIFIED, problems

RouteDecorator = Callable[[Callable[..., Any]], HTTPRouteHandler]
WRITE: Final = "write"
"""A route's ``opt`` key: it sends a command through the bus (``api.calls.write_route``)."""
STATELESS: Final = "stateless"
"""A route's ``opt`` key: a POST that changes nothing (the rules oracle, a deal's check)."""


def documented(fn: Callable[..., Any]) -> tuple[str, str | None]:
    """A handler's docstring as a summary (its first paragraph) and a description (the
    other paragraphs), each paragraph's lines joined."""
    text = inspect.cleandoc(fn.__doc__ or "")
    paragraphs = [" ".join(p.split()) for p in text.split("\n\n") if p.strip()]
    if not paragraphs:
        raise TypeError(f"{fn.__qualname__}: a route is documented by its docstring")
    return paragraphs[0], "\n\n".join(paragraphs[1:]) or None


def route(
    path: str,
    *statuses: int,
    tagged: bool = False,
    description: str | None = None,
    handler: Callable[..., RouteDecorator] = get,
    **kwargs: Any,
) -> RouteDecorator:
    """A route (``get`` by default): the problems it may answer (``statuses``, or
    ``responses`` given whole), ``tagged``: an ``ETag`` answered and ``If-None-Match``'s
    304 (:mod:`api.etag`), and the decorator's other arguments; documented by its
    handler's docstring (``description`` given instead: that)."""
    responses = kwargs.pop("responses", None) or problems(*statuses)
    if tagged:
        responses = {304: NOT_MODIFIED, **responses}
        kwargs["response_headers"] = [ETAG_HEADER]
    return Documented(handler, path, description, responses=responses, **kwargs)


class Documented:
    """A route decorator that documents its handler by the handler's docstring
    (:func:`documented`): ``handler(path, summary=…, description=…, **kwargs)(fn)``."""

    def __init__(
        self,
        handler: Callable[..., RouteDecorator],
        path: str,
        description: str | None,
        **kwargs: Any,
    ) -> None:
        self.handler = handler
        self.path = path
        self.description = description
        self.kwargs = kwargs

    def __call__(self, fn: Callable[..., Any]) -> HTTPRouteHandler:
        summary, rest = documented(fn)
        description = self.description or rest
        return self.handler(self.path, summary=summary, description=description, **self.kwargs)(fn)

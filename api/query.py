"""Every route's query parameters are a closed set: a parameter a route does not declare is
a 400 ``unknown-parameter`` problem naming it, never silently dropped (a filter the client
believes in and the server ignores answers too much, and looks right; docs/decisions.md
D-integrity).

The set is read from the route handler's own signature — the parameters Litestar binds
from the query string (plain parameters and ``QueryParameter``s, by their name on the
wire), its dependencies' included — once per handler. :func:`refuse_unknown_query` is
the application's ``before_request`` hook, so it runs for every route, after routing and
before the handler.
"""

from __future__ import annotations

from typing import Any, ClassVar

from litestar import Request
from litestar.constants import RESERVED_KWARGS
from litestar.handlers import HTTPRouteHandler
from litestar.params import (
    BodyKwarg,
    CookieParameter,
    DependencyKwarg,
    HeaderParameter,
    ParameterKwarg,
    PathParameter,
)

from domain.rules.errors import InvalidInputError


class UnknownParameterError(InvalidInputError):
    """A query parameter the route does not take."""

    code = "unknown-parameter"
    status: ClassVar[int] = 400


_DECLARED = "declared query parameters"
"""The key in a handler's ``opt`` under which :func:`declared_query` keeps its answers: they
live and go with the handler (an app dropped, as the tests drop hundreds, takes them along;
a cache of the module's own would keep every app it saw)."""


def declared_query(handler: HTTPRouteHandler, path_params: frozenset[str]) -> frozenset[str]:
    """The query parameter names ``handler`` reads (as the client spells them), worked out
    once per handler."""
    answers: dict[frozenset[str], frozenset[str]] = handler.opt.setdefault(_DECLARED, {})
    known = answers.get(path_params)
    if known is None:
        known = answers[path_params] = _declared_query(handler, path_params)
    return known


def _declared_query(handler: HTTPRouteHandler, path_params: frozenset[str]) -> frozenset[str]:
    signature = dict(handler.parsed_fn_signature.parameters)
    dependencies = handler.resolve_dependencies()
    for provider in dependencies.values():
        signature.update(provider.parsed_fn_signature.parameters)
    names: set[str] = set()
    for name, field in signature.items():
        if name in RESERVED_KWARGS or name in dependencies or name in path_params:
            continue
        kwarg = field.kwarg_definition
        if isinstance(kwarg, DependencyKwarg | BodyKwarg):
            continue
        if isinstance(kwarg, ParameterKwarg):
            if kwarg.header or kwarg.cookie or isinstance(kwarg, _NOT_QUERY):
                continue
            names.add(getattr(kwarg, "name", None) or kwarg.query or name)
        else:
            names.add(name)
    return frozenset(names)


_NOT_QUERY = (HeaderParameter, CookieParameter, PathParameter)


async def refuse_unknown_query(request: Request[Any, Any, Any]) -> None:
    """400 ``unknown-parameter`` when the request names a query parameter its route does
    not declare (the module doc). A coroutine though it never waits: Litestar runs a
    plain function hook in a worker thread, a hop per request for a set difference."""
    handler = request.route_handler
    if not isinstance(handler, HTTPRouteHandler) or not request.query_params:
        return
    known = declared_query(handler, frozenset(request.path_params))
    unknown = sorted(set(request.query_params) - known)
    if unknown:
        takes = ", ".join(sorted(known)) or "none"
        raise UnknownParameterError(
            f"unknown query parameter{'s' if len(unknown) > 1 else ''} "
            f"{', '.join(repr(u[:40]) for u in unknown[:5])}: this route takes {takes}"
        )

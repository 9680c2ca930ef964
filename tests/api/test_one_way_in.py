"""One way in (docs/decisions.md D-bus): every route that may change something sends a
typed command through the bus, and its handler only parses, sends and renders.

The app's routes are enumerated: a route other than GET/HEAD/OPTIONS is either a write —
declared by ``api.calls.write_route`` (``opt["write"]``), its handler sending one command
(``write.send``) — or a question that changes nothing, declared ``opt["stateless"]`` (the
rules oracle, a deal's check). The sign-in with an identity provider, whose credential is
the provider's token and no token of this service, sends its command to the bus itself.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from collections.abc import Callable, Iterator
from typing import Any

from litestar import Litestar
from litestar.handlers import HTTPRouteHandler
from litestar.routes import HTTPRoute

from api.routes import STATELESS, WRITE
from services.bus import Bus
from tests.apps import make_app

READS = frozenset({"GET", "HEAD", "OPTIONS"})
SENT_ELSEWHERE = {"sign_in_with_oidc"}
"""Write routes that hand their command to the bus themselves (``runtime.bus.handle``)."""


def handlers(app: Litestar) -> Iterator[tuple[str, str, HTTPRouteHandler]]:
    for route in app.routes:
        if not isinstance(route, HTTPRoute):
            continue
        for method, (handler, _) in route.route_handler_map.items():
            if method not in READS:
                yield method, route.path, handler


def calls(fn: Callable[..., Any]) -> set[str]:
    """The names of the functions and methods the handler's body calls or hands on."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            names.add(f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", ""))
        elif isinstance(node, ast.Attribute):
            names.add(node.attr)
    return names


def nested(fn: Callable[..., Any]) -> list[str]:
    """Functions defined inside the handler (closures: a route only parses and sends)."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    top = tree.body[0]
    return [
        n.name
        for n in ast.walk(top)
        if n is not top and isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
    ]


def test_every_write_route_sends_one_command_through_the_bus() -> None:
    app = make_app()
    writes = stateless = 0
    for method, path, handler in handlers(app):
        fn = handler.fn
        where = f"{method} {path} ({fn.__qualname__})"
        if handler.opt.get(STATELESS):
            assert WRITE not in handler.opt, where
            assert "send" not in calls(fn) and "handle" not in calls(fn), where
            stateless += 1
            continue
        writes += 1
        assert not nested(fn), f"{where}: closures {nested(fn)}"
        assert handler.opt.get(WRITE), f"{where}: a write is declared as one"
        if fn.__name__ in SENT_ELSEWHERE:
            assert "handle" in calls(fn), where
            continue
        sends = {"send", "send_no_content"} & calls(fn)
        assert sends, f"{where}: a write route sends its command (write.send)"
    assert writes >= 58 and stateless == 7, (writes, stateless)


def test_every_command_has_one_handler_and_every_handler_its_command() -> None:
    app = make_app()
    bus: Bus = app.state.runtime.bus
    assert len(set(bus.commands)) == len(list(bus.commands))
    for command in bus.commands:
        handler = bus.handlers[command]
        assert type(handler).__name__ == f"{command.__name__}Handler", command

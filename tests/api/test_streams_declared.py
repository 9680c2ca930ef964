"""Every live stream is one declaration (api/streams.py, docs/decisions.md D-streams):
each route that answers ``text/event-stream`` carries its :class:`~api.streams.StreamRoute`,
so it is capped by construction, has its AsyncAPI channel, its ``SSE_STREAM_CAPS`` kind and
its ``shengji_sse_open{kind}`` label; a stream route without one fails here. The
tournament display's stream, left out once (200 of 200 opened from one address), is capped
like the others."""

from __future__ import annotations

from contextlib import AsyncExitStack
from typing import Any

import pytest
from litestar import Litestar, get
from litestar.routes import HTTPRoute

from api.asyncapi import asyncapi_document
from api.streamcap import parse_caps
from api.streams import EVENT_STREAM, KINDS, OPT_KEY, STREAMS, StreamRoute
from infra.settings import Settings
from tests.api.limits import CUP, client_at, limited_app
from tests.api.sse_driver import stream


def stream_routes(app: Litestar) -> dict[str, StreamRoute | None]:
    """Each route of ``app`` answering ``text/event-stream``: its path → its declaration
    (None: it has none)."""
    found: dict[str, StreamRoute | None] = {}
    for route in app.routes:
        if not isinstance(route, HTTPRoute):
            continue
        for handler in route.route_handlers:
            if handler.media_type == EVENT_STREAM:
                declared = handler.opt.get(OPT_KEY)
                found[route.path] = declared if isinstance(declared, StreamRoute) else None
    return found


def undeclared(app: Litestar) -> list[str]:
    """The stream routes of ``app`` without a declaration, or not where it says."""
    return sorted(
        path
        for path, declared in stream_routes(app).items()
        if declared is None or declared.path != path
    )


def test_every_stream_route_is_declared_and_every_declaration_routed() -> None:
    app = limited_app()
    routes = stream_routes(app)
    assert undeclared(app) == []
    assert sorted(routes) == sorted(s.path for s in STREAMS)


def test_a_stream_route_without_a_declaration_is_found() -> None:
    """The check above fails for a route that answers SSE without its declaration."""

    @get("/v1/sneaky/stream", media_type=EVENT_STREAM, sync_to_thread=False)
    def sneaky() -> str:
        return ""

    assert undeclared(Litestar([sneaky])) == ["/v1/sneaky/stream"]


def test_the_kinds_channels_and_caps_derive_from_the_declarations() -> None:
    assert len(set(KINDS)) == len(STREAMS)
    doc = asyncapi_document()
    assert {s.channel: s.address for s in STREAMS} == {
        name: channel["address"] for name, channel in doc["channels"].items()
    }
    assert {s.operation for s in STREAMS} == set(doc["operations"])
    caps = Settings(sse_max_per_identity=5, sse_stream_caps=("display=2",)).stream_caps
    assert caps == {**dict.fromkeys(KINDS, 5), "display": 2}
    with pytest.raises(ValueError, match="display"):  # the message names every kind
        parse_caps(("nosuch=1",), 5)


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_display_streams_past_the_cap_from_one_address_are_refused(
    anyio_backend: Any,
) -> None:
    app = limited_app(rate_limit_per_minute=10_000, sse_max_per_address=3)
    async with app.lifespan(), client_at(app, "127.0.0.1") as c:
        tournament = (await c.post("/v1/tournaments", json=CUP)).json()["tournamentId"]
        path = f"/v1/tournaments/{tournament}/display/stream"
        async with AsyncExitStack() as stack:
            opened = [(await stack.enter_async_context(stream(app, path))) for _ in range(4)]
            assert [s.status for s in opened] == [200, 200, 200, 429]
            refused = opened[-1]
            assert refused.headers["content-type"].startswith("application/problem+json")
            assert int(refused.headers["retry-after"]) >= 1
            assert b'"too-many-streams"' in refused.body
            metrics = (await c.get("/metrics")).text
        async with stream(app, path) as later:  # closed streams free their places
            assert later.status == 200
    assert 'shengji_sse_open{kind="display"} 3.0' in metrics
    assert 'shengji_sse_refusals_total{limit="address"} 1.0' in metrics

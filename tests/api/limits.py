"""Helpers of the tests (and the bench) of the limits that cannot be dodged
(docs/security.md): an app with its limits on, a client that comes from an address, and
a small tournament to create (two teams of a bot and a person, round robin)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
from litestar import Litestar

from infra.settings import Settings
from services.game import GameService
from tests.apps import make_app
from tests.conftest import FakeClock

CUP: dict[str, Any] = {
    "name": "cup",
    "format": "round_robin",
    "matchLength": 1,
    "teams": [
        {"name": f"t{i}", "players": [{"name": "a", "kind": "random"}, {"name": "b"}]}
        for i in range(2)
    ],
}
"""The body of ``POST /v1/tournaments`` for a small tournament."""


def limited_app(**settings: Any) -> Litestar:
    """An app on a POPO service with the rate limits and quotas on (``settings`` changes
    them) and no background workers."""
    limited = Settings(backend="popo", sweep_interval_ms=0, webhook_interval_ms=0, **settings)
    service = GameService({"PERSISTENCE_MODULE": "eventsourcing.popo"}, clock=FakeClock())
    return make_app(service, settings=limited)


@asynccontextmanager
async def client_at(
    app: Litestar, address: str = "198.51.100.7"
) -> AsyncIterator[httpx.AsyncClient]:
    """A client of ``app`` (through ASGI) whose requests come from ``address``."""
    transport = httpx.ASGITransport(app=app, client=(address, 50000))  # type: ignore[arg-type]
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as c:
        yield c

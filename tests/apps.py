"""How a test builds the app: through the composition root, as the server does.

``make_app(service)`` is :func:`infra.bootstrap.build_app` on :data:`TEST_SETTINGS` with the
test's own service (POPO, a fixed clock and seeds; without one, the settings' store):
an in-memory store, no limits on
clients and no background workers (tests tick the sweeper, the clerk and the outbox
themselves). A test that wants something else says so with settings
(``make_app(service, sweep_interval_ms=10)``, ``operator_token=…``, ``oidc_issuer=…``)
or a fake webhook sender (``post=…``) or a bot driver of its own (``bots=…``). The OpenAPI
document is not built by an app: the first ``/schema`` request or
:func:`api.openapi.openapi_document` builds it, once per process. ``served(service)``
starts that app (its lifespan) with a client through ASGI, for a test that also streams.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import msgspec
from litestar import Litestar

from infra.bootstrap import build_app
from infra.settings import Settings
from services.bot_driver import BotDriver
from services.game import GameService
from services.webhooks.dispatch import Post

TEST_SETTINGS = Settings(
    backend="popo", rate_limit_per_minute=0, sweep_interval_ms=0, webhook_interval_ms=0
)
"""In memory, no limits on clients, no background worker."""


def sqlite_settings(path: Path, **changes: Any) -> Settings:
    """:data:`TEST_SETTINGS` on the SQLite file ``path`` (for a test that reopens its store),
    changed by ``changes`` (``Settings`` fields)."""
    return Settings(
        backend="sqlite",
        sqlite_path=path,
        rate_limit_per_minute=0,
        sweep_interval_ms=0,
        webhook_interval_ms=0,
        **changes,
    )


def make_app(
    service: GameService | None = None,
    *,
    settings: Settings = TEST_SETTINGS,
    post: Post | None = None,
    bots: BotDriver | None = None,
    **changes: Any,
) -> Litestar:
    """The app on ``service`` (by default one the settings' store gives, closed with the
    app) with ``settings`` changed by ``changes`` (``Settings`` fields). A service given
    is complete as it was built: its table policy is its own (``table=settings.table``
    when it should follow the settings, :func:`settings_of`)."""
    return build_app(settings_of(settings, **changes), service=service, post=post, bots=bots)


def settings_of(settings: Settings = TEST_SETTINGS, **changes: Any) -> Settings:
    """``settings`` changed by ``changes`` (``Settings`` fields)."""
    return msgspec.structs.replace(settings, **changes) if changes else settings


@asynccontextmanager
async def served(service: GameService) -> AsyncIterator[tuple[Litestar, httpx.AsyncClient]]:
    """``make_app(service)`` started, with a client through ASGI; ``service`` is closed after."""
    app = make_app(service)
    transport = httpx.ASGITransport(app=app)  # type: ignore[arg-type]
    async with app.lifespan(), httpx.AsyncClient(transport=transport, base_url="http://t") as c:
        yield app, c
    service.close()


def loop_periods(app: Litestar) -> dict[str, float]:
    """The background loops ``app``'s process runs (``infra.workers``), by name: their
    periods in seconds."""
    workers = app.state.workers
    return {} if workers is None else {loop.name: loop.period_s for loop in workers.loops}

"""How a test builds the app: through the composition root, as the server does.

``make_app(service)`` is :func:`infra.bootstrap.build_app` on :data:`TEST_SETTINGS` with the
test's own service (POPO, a fixed clock and seeds; without one, the settings' store):
an in-memory store, no limits on
clients and no background workers (tests tick the sweeper, the clerk and the outbox
themselves). A test that wants something else says so with settings
(``make_app(service, sweep_interval_ms=10)``, ``operator_token=…``, ``oidc_issuer=…``)
or a fake webhook sender (``post=…``) or a bot driver of its own (``bots=…``). The OpenAPI
document is not built by an app: the first ``/schema`` request or
:func:`api.openapi.openapi_document` builds it, once per process.
"""

from __future__ import annotations

from typing import Any

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


def make_app(
    service: GameService | None = None,
    *,
    settings: Settings = TEST_SETTINGS,
    post: Post | None = None,
    bots: BotDriver | None = None,
    **changes: Any,
) -> Litestar:
    """The app on ``service`` (by default one the settings' store gives, closed with the
    app) with ``settings`` changed by ``changes`` (``Settings`` fields)."""
    if changes:
        settings = msgspec.structs.replace(settings, **changes)
    return build_app(settings, service=service, post=post, bots=bots)

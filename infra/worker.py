"""The worker process (``shengji worker``, ``PROCESS_ROLE=worker``; docs/scaling.md,
docs/decisions.md D-rooms): the background work beside API processes, and a small server
of its own for its probes and metrics — no API app, no API route.

:func:`build_worker` builds, on the composition root's :func:`~infra.bootstrap.build_core`,
a Litestar app with three routes only: ``GET /healthz`` and ``GET /readyz`` (the API's own
probes, :mod:`api.health`: the same answers, the same store read) and ``GET /metrics``
(:mod:`api.metrics`: the bot driver's work, the store's appends, the hub's connection).
Its lifespan is the runner's (:class:`infra.workers.Workers`): the hub starts, then the
loops and the bot driver; at shutdown they stop cleanly, then the hub, then the store
closes. ``infra.serve`` serves it as it serves the API app, with the same graceful drain.
"""

from __future__ import annotations

from litestar import Litestar

from api.health import health_handlers, store_probe
from api.metrics import Metrics
from infra.bootstrap import build_core
from infra.settings import Settings
from services.game import GameService
from services.webhooks.dispatch import Post


def build_worker(
    settings: Settings, *, service: GameService | None = None, post: Post | None = None
) -> Litestar:
    """The worker's server (the module docstring) running the background work of
    ``settings``; ``service`` and ``post`` replace the settings' as for
    :func:`infra.bootstrap.build_app` (tests)."""
    core = build_core(settings, service=service, post=post, worker=True)
    metrics = Metrics(core.service, hub=core.hub, bots=core.bots, views=core.views)
    app = Litestar(
        route_handlers=[
            *health_handlers(store_probe(core.service), limiter=core.limiter),
            metrics.handler(),
        ],
        lifespan=[core.workers.running],
        on_shutdown=list(core.on_shutdown),
        logging_config=None,
        openapi_config=None,
    )
    app.state.workers = core.workers
    app.state.bots = core.bots
    return app

"""The Litestar application: every route, dependency and middleware of the service,
assembled from the parts it serves.

``create_app(parts)`` takes what it serves — the service's runtime (service, store limiter,
view tags), the live streams and their hub, the archive, the webhooks, the OIDC verifier,
the limits on clients, and the background work to run beside it in an ``all`` process —
as :class:`AppParts`, built by the composition root ``infra.bootstrap`` from one settings
object (docs/decisions.md D-root, D-rooms). A worker process builds no such app
(``infra.worker``).
The app reads no environment and builds no store; tests build theirs through the same root
(``tests/apps.py``). It wires the REST core (matches, seats, commands, views, history,
verification), the rules oracle, the live streams (SSE), health probes, request ids and
access logs, rate limiting, gzip when asked (:mod:`api.compression`), the one exception →
problem+json table and the OpenAPI document (``/schema``, built on first use:
:mod:`api.openapi`).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Final, Protocol

from litestar import Litestar
from litestar.di import Provide
from litestar.middleware import DefineMiddleware

from api.admission import AdmissionMiddleware
from api.calls import provide_read, provide_write
from api.career import CareerController
from api.commands import CommandController
from api.compression import COMPRESSION
from api.edge import EdgeMiddleware
from api.errors import EXCEPTION_HANDLERS
from api.export_gate import Exports
from api.exports import export_table
from api.feed import Archive, FeedController
from api.feed_subscriptions import SubscriptionController
from api.health import health_handlers, store_probe
from api.identity import Identities, token_verifier
from api.logging import unrouted
from api.matches import MatchController
from api.metrics import Metrics
from api.openapi_config import openapi_config
from api.players.controller import PlayerController
from api.players.friends import FriendController, TableInvitationController
from api.players.invites import InviteController
from api.players.lobby import LobbyController, RankedController
from api.players.oidc import sign_in_with_oidc
from api.players.stream import PlayerStreamController
from api.players.webhooks import WebhookController, Webhooks
from api.query import refuse_unknown_query
from api.ratelimit import Quota
from api.ratings import RatingsController
from api.reads import ReadController, verify_deal
from api.records.bulk import export_records
from api.records.controller import RecordController
from api.rulebook import RuleBookController
from api.rules_oracle import RulesOracleController
from api.runtime import Runtime
from api.sse import LiveStreams, MatchHub
from api.stream import MatchStreamController
from api.streamcap import StreamCaps
from api.talk import TalkController
from api.timers import TimeoutController
from api.tournaments.control import ControlController
from api.tournaments.controller import TournamentController
from api.tournaments.director import DirectorController
from api.tournaments.live import LiveController
from api.tournaments.pages import DisplayController, PageController
from api.tournaments.registration import RegistrationController
from api.tournaments.results import ResultController
from api.tournaments.travellers import TravellerController, TravellerPageController
from api.unavailable import UNAVAILABLE_HANDLERS
from services.bot_driver import BotDriver
from services.limits import Allowance, RateLimiter
from services.readmodels.runner import Pass

MAX_BODY_BYTES = 64 * 1024


class Background(Protocol):
    """The background work run beside the API in this process (an ``all`` process: the
    runner the composition root builds, ``infra.workers``), from start-up to shutdown."""

    def running(self, app: object) -> AbstractAsyncContextManager[None]: ...


@dataclass(frozen=True, kw_only=True)
class AppParts:
    """What the app serves, built by the composition root (``infra.bootstrap``)."""

    runtime: Runtime
    """The service, the store's one limiter, the view tags (:mod:`api.runtime`)."""
    hub: MatchHub
    """What wakes the live streams when a match changes (in-process or PostgreSQL's)."""
    live: LiveStreams
    archive: Archive
    exports: Exports
    """The exports' bounds and built partitions (:mod:`api.export_gate`)."""
    webhooks: Webhooks
    rate_limiter: RateLimiter
    quotas: tuple[Quota, ...] = ()
    """The per-request quotas admission checks (:mod:`api.ratelimit`)."""
    allowances: tuple[Allowance, ...] = ()
    """The quotas spent as many at a time as a call makes (the bus's match quota,
    :mod:`services.limits`): counted in the metrics with the others."""
    caps: StreamCaps
    bots: BotDriver
    """The bot driver: moves every bot off the request path (docs/decisions.md D-bot-driver);
    run by :attr:`background`, woken by the organiser's "run the bots" routes."""
    background: Background | None = None
    """The background work this process runs beside the API; None: an ``api`` process
    beside workers (docs/scaling.md)."""
    views: Pass | None = None
    """The pass that keeps this process's views (its failing views are in the metrics,
    docs/decisions.md D-isolate); None: it keeps none."""
    on_shutdown: tuple[Callable[[], None], ...] = ()
    """Called when the app shuts down (closing what the composition root opened)."""


API_ROUTES: Final = (
    MatchController,
    CommandController,
    ReadController,
    MatchStreamController,
    verify_deal,
    RulesOracleController,
    RuleBookController,
    TimeoutController,
    TournamentController,
    RatingsController,
    CareerController,
    ResultController,
    RegistrationController,
    ControlController,
    DirectorController,
    DisplayController,
    PageController,
    TravellerController,
    TravellerPageController,
    LiveController,
    RecordController,
    export_records,
    FeedController,
    SubscriptionController,
    export_table,
    PlayerController,
    InviteController,
    FriendController,
    TableInvitationController,
    LobbyController,
    RankedController,
    PlayerStreamController,
    WebhookController,
    sign_in_with_oidc,
    TalkController,
)
"""Every route of the API, health probes and metrics aside."""


def create_app(parts: AppParts) -> Litestar:
    """The app serving ``parts`` (the module docstring)."""
    runtime = parts.runtime
    service = runtime.service
    identities = Identities(token_verifier(service), limiter=runtime.limiter)
    metrics = Metrics(
        service,
        parts.live,
        parts.rate_limiter,
        parts.hub,
        quotas=(*parts.quotas, *parts.allowances),
        caps=parts.caps,
        bots=parts.bots,
        revocations=parts.live.revocations,
        views=parts.views,
    )
    app = Litestar(
        route_handlers=[
            *API_ROUTES,
            *health_handlers(store_probe(service), limiter=runtime.limiter),
            metrics.handler(),
        ],
        dependencies={
            "runtime": Provide(runtime.provide, sync_to_thread=False),
            "read": Provide(provide_read),
            "write": Provide(provide_write),
            "live": Provide(parts.live.provide, sync_to_thread=False),
            "archive": Provide(parts.archive.provide, sync_to_thread=False),
            "exports": Provide(parts.exports.provide, sync_to_thread=False),
            "webhooks": Provide(parts.webhooks.provide, sync_to_thread=False),
        },
        lifespan=[
            parts.live.lifespan,  # the hub first: the background work stops before it
            *(() if parts.background is None else (parts.background.running,)),
        ],
        on_shutdown=list(parts.on_shutdown),
        exception_handlers={**EXCEPTION_HANDLERS, **UNAVAILABLE_HANDLERS},
        # Litestar's own middleware stack, outermost first; requests the router answers
        # itself (404 no route, 405) pass none of it and are logged by ``before_send``.
        middleware=[
            DefineMiddleware(EdgeMiddleware, observe=metrics.observe_request),
            DefineMiddleware(
                AdmissionMiddleware,
                limiter=parts.rate_limiter,
                identities=identities,
                quotas=parts.quotas,
                caps=parts.caps,
            ),
        ],
        before_request=refuse_unknown_query,
        before_send=[unrouted(metrics.observe_request)],
        request_max_body_size=MAX_BODY_BYTES,
        logging_config=None,
        compression_config=COMPRESSION,
        openapi_config=openapi_config(),
    )
    app.state.runtime = runtime
    app.state.live = parts.live
    app.state.archive = parts.archive
    app.state.exports = parts.exports
    app.state.bots = parts.bots
    app.state.workers = parts.background
    app.state.rate_limiter = parts.rate_limiter
    app.state.quotas = parts.quotas
    app.state.metrics = metrics
    app.state.webhooks = parts.webhooks
    return app

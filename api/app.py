"""The Litestar application factory (the API's only door to ``infra``).

``create_app(settings, service)`` is the composition root of the HTTP process: without a
service it reads :class:`~infra.settings.Settings` from the environment (here, never at
import time) and builds the :class:`~services.game.GameService` on the configured store;
tests pass a service (POPO, a fixed clock and seeds). It wires the REST core (matches,
seats, commands, views, history, verification), the rules oracle, the live streams
(SSE, with the hub of ``infra.hub``), health probes, request ids and access logs, rate
limiting, the one exception → problem+json table and the OpenAPI document (``/schema``,
interactive docs included).
"""

from __future__ import annotations

import os
import re

import anyio
from litestar import Litestar
from litestar.di import Provide
from litestar.middleware import DefineMiddleware
from litestar.openapi import OpenAPIConfig
from litestar.openapi.spec import Components, SecurityScheme, Tag
from litestar.types import ASGIApp, Message, Receive, Scope, Send

from api.calls import provide_read, provide_write
from api.commands import CommandController
from api.contract import complete_document
from api.errors import EXCEPTION_HANDLERS
from api.feed import FEED_STREAM_PATH, Archive, FeedController
from api.health import health_handlers, store_probe
from api.identity import Identities, token_verifier
from api.logging import RequestContextMiddleware, route_context_middleware, unrouted
from api.matches import MatchController
from api.metrics import Metrics, MetricsMiddleware
from api.players.controller import PlayerController
from api.players.invites import InviteController
from api.players.lobby import LobbyController, LobbySweeper
from api.players.oidc import Oidc, oidc_sign_in
from api.players.stream import PlayerStreamController
from api.players.webhooks import WebhookConfig, WebhookController, Webhooks
from api.ratelimit import Quota, RateLimiter, RateLimitMiddleware, hourly
from api.reads import ReadController, verify
from api.records.bulk import bulk_records
from api.records.controller import RecordController
from api.rulebook import RuleBookController
from api.rules_oracle import RulesOracleController
from api.runtime import Runtime, ViewTags
from api.sse import LiveStreams, StreamSettings
from api.stream import MatchStreamController
from api.streamcap import STREAM_PATH, StreamCapMiddleware, StreamCaps
from api.timers import SweeperTask, TimeoutController, driver_lifespan
from api.tournaments.clerk import ClerkTask
from api.tournaments.control import ControlController
from api.tournaments.controller import TournamentController
from api.tournaments.live import LiveController
from api.tournaments.registration import RegistrationController
from api.tournaments.results import ResultController
from api.unavailable import UNAVAILABLE_HANDLERS
from infra.hub import PostgresHub, build_hub
from infra.localhub import InProcessHub
from infra.players import PlayerSettings, key_store, outbox_env
from infra.settings import Settings, build_service
from services.accounts.keys import MemoryKeys
from services.accounts.oidc import OidcVerifier
from services.accounts.players import personal_sealer, seal_personal_data
from services.bot_driver import BotDriver
from services.game import GameService

MAX_BODY_BYTES = 64 * 1024
API_VERSION = "1.0.0"

DESCRIPTION = """Event-sourced Shengji (双升 / Tractor / 80 points): matches, seats, round
commands, per-seat views (RULES R33), history and state as of any version (R34), deal
verification (R35), live views (SSE) and a stateless rules oracle. JSON in camelCase;
cards in R4 notation (`10H`, `AS`, `SJ`, `BJ`).

**Versions and ETags.** A match's version counts the events of the match and its rounds
(1, 2, 3, … gap-free). Views carry `ETag: "<version>"` (a `-dNN` / `-c` suffix when the
view also changes with the clock: a paced deal, an unclaimed deadline); `If-None-Match`
answers 304. Commands take `If-Match: "<version>"` (412 when the match moved on).

**Tokens.** `Authorization: Bearer <token>`. A seat token (answered once by the seat
claim) acts for that seat and reads its view; the organiser token (answered once by
`POST /v1/matches`) seats bots, runs them and ends the match. 401: no or a bad token;
403: a token of another match or of the wrong role.

**Errors** are RFC 9457 `application/problem+json` with a stable `type` per `code`.
Rule violations are **409** and name the rule (R-number) and the cards; so is a command
that lost a race with another (`version-conflict`: of two conflicting commands exactly one
wins). Input that cannot be understood is **422** and names the field.

**Idempotency-Key** on every POST (IETF draft): the same key and body answer the first
response again without acting twice (`Idempotent-Replayed: true`); the same key with
another body is 422; while the first request runs, 409."""


def create_app(
    settings: Settings | None = None,
    service: GameService | None = None,
    *,
    bots: BotDriver | None = None,
    sweep_interval_ms: int | None = None,
    webhooks: WebhookConfig | None = None,
    oidc: OidcVerifier | None = None,
) -> Litestar:
    """The app on ``service`` (built from ``settings``, else from the environment).

    Given a service and no settings, the app runs with an in-process hub and no limits on
    clients (tests); ``RATE_LIMIT_PER_MINUTE=0`` turns them all off too (the rate, the
    quotas, the stream caps: docs/security.md). ``bots``: the bot driver (default: one on
    the service, from the settings; started and stopped with the app).
    ``sweep_interval_ms``: the sweeper's period (default: the settings' for an app that
    builds its service, else off; docs/timers.md).
    """
    owned = service is None
    if settings is None:
        settings = Settings.from_env(os.environ) if owned else Settings(backend="popo")
        rate = settings.rate_limit_per_minute if owned else 0
    else:
        rate = settings.rate_limit_per_minute
    if service is None:
        service = build_service(settings)
        seal_personal_data(service, key_store(settings))
    elif personal_sealer(service) is None:
        seal_personal_data(service, MemoryKeys())
    limiter = anyio.CapacityLimiter(store_capacity(settings, service))
    hub: InProcessHub | PostgresHub
    if owned:
        hub = build_hub(settings, service)
    else:
        hub = InProcessHub()
        hub.attach(service)
    # One process owns the store (SQLite/POPO): every save passes through on_saved, so
    # unchanged polls can be answered from memory. On PostgreSQL other replicas write too.
    tags = ViewTags(enabled=isinstance(hub, InProcessHub))
    service.on_saved.append(tags.changed)
    if bots is None:
        bots = BotDriver(
            service,
            workers=settings.bot_workers,
            decision_cpu_s=settings.bot_decision_ms / 1000,
            bots_only_rounds=settings.bots_only_rounds,
        )
    runtime = Runtime(service, limiter, bots, tags=tags)
    sweep = settings.sweep_interval_ms if owned else 0
    sweeper = SweeperTask.build(
        runtime,
        sweep if sweep_interval_ms is None else sweep_interval_ms,
        settings.timeout_bot,
    )
    clerk = ClerkTask(runtime, sweeper.interval_ms)  # collects results, round deadlines
    live = LiveStreams(
        service,
        hub,
        StreamSettings(
            heartbeat_s=settings.sse_heartbeat_s,
            lifetime_s=settings.sse_lifetime_s,
            retry_ms=settings.sse_retry_ms,
        ),
        limiter=limiter,
    )
    archive = Archive(
        service,
        limiter,
        settings.operator_token,
        poll_s=settings.feed_poll_ms / 1000,
        heartbeat_s=settings.sse_heartbeat_s,
        lifetime_s=settings.sse_lifetime_s,
        retry_ms=settings.sse_retry_ms,
    )
    rate_limiter = RateLimiter(rate)
    extra = PlayerSettings.from_env(os.environ) if owned else PlayerSettings()
    quotas = client_quotas(settings if rate else None)
    if rate and extra.player_quota_per_hour:
        quotas += (
            hourly(
                "players created",
                "PLAYER_QUOTA_PER_HOUR",
                "POST",
                "/v1/players",
                extra.player_quota_per_hour,
            ),
        )
    caps = StreamCaps(
        settings.sse_max_per_identity if rate else 0, settings.sse_max_per_address if rate else 0
    )
    identities = Identities(token_verifier(service), limiter=limiter)
    lobby_sweeper = LobbySweeper(runtime, 1.0 if owned else 0)
    if owned:
        if webhooks is None:
            webhooks = WebhookConfig(
                settings.operator_token, outbox_env(settings), extra.webhook_interval_ms / 1000
            )
        if oidc is None and extra.oidc_issuer and extra.oidc_audience and extra.oidc_jwks_url:
            oidc = OidcVerifier(extra.oidc_issuer, extra.oidc_audience, extra.oidc_jwks_url)
    hooks = Webhooks(runtime, webhooks or WebhookConfig())
    metrics = Metrics(service, live, rate_limiter, hub, quotas=quotas, caps=caps, bots=bots)

    def close_service() -> None:
        if owned:
            service.close()

    app = Litestar(
        route_handlers=[
            MatchController,
            CommandController,
            ReadController,
            MatchStreamController,
            verify,
            RulesOracleController,
            RuleBookController,
            TimeoutController,
            TournamentController,
            ResultController,
            RegistrationController,
            ControlController,
            LiveController,
            RecordController,
            bulk_records,
            FeedController,
            PlayerController,
            InviteController,
            LobbyController,
            PlayerStreamController,
            WebhookController,
            oidc_sign_in,
            *health_handlers(store_probe(service), limiter=limiter),
            metrics.handler(),
        ],
        dependencies={
            "runtime": Provide(runtime.provide, sync_to_thread=False),
            "read": Provide(provide_read),
            "write": Provide(provide_write),
            "live": Provide(live.provide, sync_to_thread=False),
            "archive": Provide(archive.provide, sync_to_thread=False),
            "webhooks": Provide(hooks.provide, sync_to_thread=False),
            "oidc": Provide(Oidc(oidc).provide, sync_to_thread=False),
        },
        lifespan=[
            live.lifespan,
            driver_lifespan(bots),
            sweeper.lifespan,
            clerk.lifespan,
            lobby_sweeper.lifespan,
            hooks.lifespan,
        ],
        on_shutdown=[close_service],
        exception_handlers={**EXCEPTION_HANDLERS, **UNAVAILABLE_HANDLERS},
        # Litestar's own middleware stack, outermost first; requests the router answers
        # itself (404 no route, 405) pass none of it and are logged by ``before_send``.
        middleware=[
            RequestContextMiddleware,
            DefineMiddleware(
                RateLimitMiddleware, limiter=rate_limiter, identities=identities, quotas=quotas
            ),
            DefineMiddleware(
                StreamCapMiddleware,
                caps=caps,
                identities=identities,
                paths=(STREAM_PATH, re.compile(FEED_STREAM_PATH)),
            ),
            DefineMiddleware(MetricsMiddleware, metrics=metrics),
            AllowHeader,
            route_context_middleware,
        ],
        before_send=[unrouted(metrics.observe_request)],
        request_max_body_size=MAX_BODY_BYTES,
        logging_config=None,
        openapi_config=openapi_config(),
    )
    complete_document(app)
    app.state.runtime = runtime
    app.state.live = live
    app.state.archive = archive
    app.state.sweeper = sweeper
    app.state.bots = bots
    app.state.clerk = clerk
    app.state.timeout_kind = settings.timeout_bot
    app.state.rate_limiter = rate_limiter
    app.state.quotas = quotas
    app.state.metrics = metrics
    app.state.webhooks = hooks
    return app


def client_quotas(settings: Settings | None) -> tuple[Quota, ...]:
    """The hourly quotas of the calls that create things (none without ``settings``)."""
    if settings is None:
        return ()
    return (
        hourly(
            "matches created",
            "MATCH_QUOTA_PER_HOUR",
            "POST",
            "/v1/matches",
            settings.match_quota_per_hour,
        ),
        hourly(
            "tournaments created",
            "TOURNAMENT_QUOTA_PER_HOUR",
            "POST",
            "/v1/tournaments",
            settings.tournament_quota_per_hour,
        ),
        hourly(
            "records imported",
            "IMPORT_QUOTA_PER_HOUR",
            "POST",
            "/v1/records",
            settings.import_quota_per_hour,
        ),
    )


class AllowHeader:
    """Litestar middleware: OPTIONS answers ``Allow`` with every method of the resource
    (RFC 9110 §10.2.1).

    Litestar builds a path's OPTIONS answer from the first handler registered on it, so a
    path with GET and POST in one controller answered ``Allow: OPTIONS, POST``. The table
    of every path's methods is read from the app's routes on the first OPTIONS request.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.routes: list[tuple[re.Pattern[str], str]] | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("method") != "OPTIONS":
            await self.app(scope, receive, send)
            return
        if self.routes is None:
            self.routes = allow_table(Litestar.from_scope(scope))
        path = scope.get("path", "")
        allow = next((m for pattern, m in self.routes if pattern.match(path)), None)

        async def fix(message: Message) -> None:
            if allow is not None and message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"allow"]
                message = {**message, "headers": [*headers, (b"allow", allow.encode())]}
            await send(message)

        await self.app(scope, receive, fix)


def allow_table(app: Litestar) -> list[tuple[re.Pattern[str], str]]:
    """Each route's path pattern and its methods."""
    table = []
    for route in app.routes:
        methods = getattr(route, "methods", None)
        if methods:
            pattern = re.sub(r"\\{[^}]+\\}", "[^/]+", re.escape(route.path_format or route.path))
            table.append((re.compile(f"^{pattern}/?$"), ", ".join(sorted(methods))))
    return table


SQLITE_POOL = 5
"""The eventsourcing library's SQLite pool: 5 connections (its default; POPO: threads)."""


def store_capacity(settings: Settings, service: GameService) -> int:
    """How many blocking calls may be inside the store at once: its connection pool."""
    if settings.backend == "postgres":
        return settings.postgres_pool_size + settings.postgres_max_overflow
    return SQLITE_POOL


def openapi_config() -> OpenAPIConfig:
    return OpenAPIConfig(
        title="Shengji service",
        version=API_VERSION,
        description=DESCRIPTION,
        components=Components(
            security_schemes={
                "bearer": SecurityScheme(
                    type="http",
                    scheme="bearer",
                    description="A seat token or the match's organiser token",
                )
            }
        ),
        tags=[
            Tag(name="matches", description="Create matches, claim seats, seat and run bots"),
            Tag(name="commands", description="Round commands (R16–R25)"),
            Tag(name="views", description="Views, history, state as of a version, rounds"),
            Tag(name="live", description="Live views (Server-Sent Events)"),
            Tag(name="verification", description="Deal verification (R35)"),
            Tag(name="rules oracle", description="The stateless rules engine"),
            Tag(name="tournaments", description="Tournaments, duplicate deals, standings (R36)"),
            Tag(name="health", description="Liveness and readiness"),
            Tag(name="archive", description="The whole event log: feed, stream, schemas"),
            Tag(name="webhooks", description="Operator: webhook subscriptions, delivery log"),
            Tag(
                name="players",
                description="Players, sessions, seats and matches; invites; quick play",
            ),
        ],
    )


def openapi_yaml() -> str:
    """The OpenAPI document of the app, as YAML (``openapi.yaml`` at the repository root
    is this, written by ``scripts/gen_openapi.py``; a test fails when they drift)."""
    import yaml  # type: ignore[import-untyped]  # noqa: PLC0415 - the generator only

    app = create_app(service=GameService({"PERSISTENCE_MODULE": "eventsourcing.popo"}))
    schema = app.openapi_schema.to_schema()
    text: str = yaml.safe_dump(schema, sort_keys=True, allow_unicode=True, width=100)
    return text

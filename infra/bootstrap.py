"""The composition root: the whole process, put together from one :class:`Settings`.

:func:`build_app` is the one way an app is made — by the server (``infra.serve``), the
benchmarks and the tests alike (docs/decisions.md D-root). From the settings it builds:

* the :class:`~services.game.GameService` on the configured store
  (:func:`infra.store.build_service`: POPO in tests, the embedded SQLite file by default,
  PostgreSQL in production; docs/decisions.md F1), with the players' keys beside it;
* the hub that wakes the live streams (``infra.hub``: LISTEN on PostgreSQL, in-process
  otherwise) and the one limiter of blocking store calls, sized to the store's pool;
* the OIDC verifier, the webhook outbox's store and its sender;
* the read models of the lists and their follower (``infra.readviews``: a thread woken by
  saves, not in a PostgreSQL ``api`` process; docs/decisions.md D-readmodels);
* the limits on clients and the background workers (sweeper, tournament clerk, lobby
  sweeper, webhook outbox), run by the process whose role says so (``PROCESS_ROLE``:
  ``all`` in one process, else ``api`` processes beside ``worker`` ones; docs/scaling.md);

and hands them to :func:`api.app.create_app`, which reads no environment and builds no
store. Tests pass fakes the same way: a service of their own (POPO, a fixed clock and
seeds), a webhook sender, test settings (``tests/apps.py``). A service given to
:func:`build_app` stays its caller's to close; one it builds closes with the app.
"""

from __future__ import annotations

from collections.abc import Callable
from uuid import UUID

import anyio
from litestar import Litestar

from api.app import AppParts, create_app
from api.feed import Archive
from api.openapi import openapi_yaml as document_yaml
from api.players.lobby import LobbySweeper
from api.players.webhooks import WebhookConfig, Webhooks
from api.ratelimit import Quota, RateLimiter, hourly
from api.runtime import Runtime, ViewTags
from api.sse import LiveStreams, StreamSettings
from api.streamcap import StreamCaps
from api.timers import SweeperTask
from api.tournaments.clerk import ClerkTask
from infra.hub import build_hub
from infra.localhub import InProcessHub
from infra.readviews import build_read_models
from infra.settings import Settings
from infra.store import build_service, key_store, outbox_env
from services.accounts.oidc import OidcVerifier
from services.accounts.players import personal_sealer, seal_personal_data
from services.bot_driver import BotDriver
from services.game import GameService
from services.game_table import TimeoutBot
from services.handlers import build_bus
from services.operator import Operator
from services.webhooks.dispatch import Post
from services.webhooks.targets import TargetPolicy

SQLITE_POOL = 5
"""The eventsourcing library's SQLite pool: 5 connections (its default; POPO: threads)."""


def build_app(
    settings: Settings,
    *,
    service: GameService | None = None,
    post: Post | None = None,
    bots: BotDriver | None = None,
) -> Litestar:
    """The app of ``settings`` (the module docstring); ``service`` replaces the one the
    settings' store would give, ``post`` sends the webhooks, ``bots`` replaces the bot
    driver the settings would give (started and stopped with the app)."""
    return create_app(build_parts(settings, service=service, post=post, bots=bots))


def build_parts(
    settings: Settings,
    *,
    service: GameService | None = None,
    post: Post | None = None,
    bots: BotDriver | None = None,
) -> AppParts:
    """Everything :func:`api.app.create_app` serves, built from ``settings``."""
    on_shutdown: tuple[Callable[[], None], ...] = ()
    if service is None:
        service = build_service(settings)
        on_shutdown = (service.close,)
    service.table = settings.table  # a service given (tests) follows the settings too
    if personal_sealer(service) is None:
        seal_personal_data(service, key_store(settings))
    limiter = anyio.CapacityLimiter(store_capacity(settings))
    hub = build_hub(settings, service)
    # One process owns the store (SQLite/POPO): every save passes through on_saved, so
    # unchanged polls can be answered from memory. On PostgreSQL other replicas write too.
    tags = ViewTags(enabled=isinstance(hub, InProcessHub))
    service.on_saved.append(tags.changed)
    if bots is None:
        bus = build_bus(
            service,
            wake=ring(lambda: bots),
            timeout_bot=TimeoutBot(settings.timeout_bot, settings.bot_decision_ms / 1000),
            operator=Operator(settings.operator_token),
            oidc=oidc_verifier(settings),
            webhook_targets=TargetPolicy(
                settings.webhook_allow_http, settings.webhook_private_targets
            ),
        )
        bots = BotDriver(
            bus,
            workers=settings.bot_workers,
            decision_cpu_s=settings.bot_decision_ms / 1000,
            bots_only_rounds=settings.bots_only_rounds,
        )
    runtime = Runtime(
        bots.bus,
        limiter,
        bots,
        tags=tags,
        retry_ms=settings.sse_retry_ms,
        read_models=build_read_models(settings, service, hub),
    )
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
    webhooks = WebhookConfig(
        settings.operator_token,
        outbox_env(settings),
        settings.webhook_interval_ms / 1000,
        TargetPolicy(settings.webhook_allow_http, settings.webhook_private_targets),
        post=post,
    )
    limited = settings.rate_limit_per_minute > 0  # 0: no limit on clients at all
    sweep_ms = settings.sweep_interval_ms
    sweeper = SweeperTask.build(runtime, sweep_ms)
    clerk = ClerkTask(runtime, sweep_ms)  # round deadlines, the results policy
    role = settings.process_role
    if role == "worker":  # the API processes' saves reach this one through the hub
        hub.on_changed += [sweeper.sweeper.changed, bots.changed, clerk.changed]
    return AppParts(
        runtime=runtime,
        hub=hub,
        live=live,
        archive=archive,
        webhooks=Webhooks(runtime, webhooks),
        rate_limiter=RateLimiter(settings.rate_limit_per_minute),
        quotas=client_quotas(settings) if limited else (),
        caps=StreamCaps(
            settings.sse_max_per_identity if limited else 0,
            settings.sse_max_per_address if limited else 0,
            settings.stream_caps if limited else None,
        ),
        sweeper=sweeper,
        clerk=clerk,  # docs/tournaments.md
        lobby_sweeper=LobbySweeper(runtime, sweep_ms / 1000),
        bots=bots,
        on_shutdown=on_shutdown,
        http=role != "worker",
        background=role != "api",
    )


def oidc_verifier(settings: Settings) -> OidcVerifier | None:
    """The identity provider's verifier (``OIDC_*``); None: sign-in with it is off."""
    if not settings.oidc:
        return None
    return OidcVerifier(*settings.oidc, algorithms=settings.oidc_algorithms)


def ring(driver: Callable[[], BotDriver | None]) -> Callable[[UUID], None]:
    """The bot driver's doorbell for the bus, which is built before the driver it rings
    (the driver sends its moves through that bus): ``driver()`` is asked at each ring."""

    def wake(match_id: UUID) -> None:
        found = driver()
        if found is not None:
            found.wake(match_id)

    return wake


def client_quotas(settings: Settings) -> tuple[Quota, ...]:
    """The hourly quotas of the calls that create things (docs/security.md); a quota of 0
    counts nothing."""
    return (
        hourly(
            "matches created",
            "MATCH_QUOTA_PER_HOUR",
            "POST",
            # a ticket makes a match (bots after a wait), and so does a rematch
            ("/v1/matches", "/v1/lobby/tickets", "/v1/matches/*/rematch"),
            settings.match_quota_per_hour,
        ),
        hourly(
            "tournaments created",
            "TOURNAMENT_QUOTA_PER_HOUR",
            "POST",
            ("/v1/tournaments",),
            settings.tournament_quota_per_hour,
        ),
        hourly(
            "records imported",
            "IMPORT_QUOTA_PER_HOUR",
            "POST",
            ("/v1/records",),
            settings.import_quota_per_hour,
        ),
        hourly(
            "players created",
            "PLAYER_QUOTA_PER_HOUR",
            "POST",
            ("/v1/players",),
            settings.player_quota_per_hour,
        ),
        hourly(
            "player tokens minted",
            "SESSION_QUOTA_PER_HOUR",
            "POST",
            ("/v1/players/me/token", "/v1/players/me/sessions", "/v1/players/oidc"),
            settings.session_quota_per_hour,
        ),
    )


def store_capacity(settings: Settings) -> int:
    """How many blocking calls may be inside the store at once: its connection pool."""
    if settings.backend == "postgres":
        return settings.postgres_pool_size + settings.postgres_max_overflow
    return SQLITE_POOL


def openapi_yaml() -> str:
    """The service's OpenAPI document as YAML: ``openapi.yaml`` at the repository root is
    this (``scripts/gen_openapi.py``; a test fails when they drift)."""
    return document_yaml(build_app(Settings(backend="popo", sweep_interval_ms=0)))

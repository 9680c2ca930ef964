"""The composition root: the whole process, put together from one :class:`Settings`.

:func:`build_app` is the one way an API app is made — by the server (``infra.serve``),
the benchmarks and the tests alike (docs/decisions.md D-root); a worker process builds no
API app but its own small server (``infra.worker``) on the same :func:`build_core`. From
the settings it builds:

* the :class:`~services.game.GameService` on the configured store, complete
  (:func:`infra.store.build_service`: POPO in tests, the embedded SQLite file by default,
  PostgreSQL in production, docs/decisions.md F1; the players' keys beside it, the table
  policy, and one :class:`~services.saves.Saves` that everyone who hears of saves
  subscribes to, D-rooms);
* the hub that wakes the live streams (``infra.hub``: LISTEN on PostgreSQL, in-process
  otherwise) and the one limiter of blocking store calls, sized to the store's pool;
* the bus and its handlers (the OIDC verifier, the timeout bot, the operator), the bot
  driver, the webhook outbox's store and its sender;
* the read models of the lists, the ratings and the players' careers and who keeps them
  (``infra.readviews``, ``infra.ratingviews``, ``infra.careerviews``, docs/decisions.md
  D-readmodels, D-ratings, D-career);
* the limits on clients and the background work (the sweeper, the tournament clerk, the
  lobby sweeper, the webhook outbox, the lists' follower, the bot driver), run by one
  runner (``infra.workers``) in the processes whose role says so (``PROCESS_ROLE``:
  ``all`` in one process, else ``api`` processes beside ``worker`` ones; docs/scaling.md);

and hands them to :func:`api.app.create_app`, which reads no environment and builds no
store. Tests pass fakes the same way: a service of their own (POPO, a fixed clock and
seeds), a webhook sender, test settings (``tests/apps.py``). A service given to
:func:`build_app` stays its caller's to close; one it builds closes with the app.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from uuid import UUID

import anyio
from litestar import Litestar

from api.app import AppParts, create_app
from api.export_gate import Exports
from api.feed import Archive
from api.openapi import openapi_yaml as document_yaml
from api.players.webhooks import Webhooks
from api.ratelimit import Quota, hourly
from api.runtime import Runtime, ViewTags
from api.sse import LiveStreams, StreamSettings
from api.streamcap import StreamCaps
from infra.careerviews import build_career
from infra.hub import build_hub
from infra.localhub import InProcessHub, LocalHub
from infra.ratingviews import build_ratings
from infra.readviews import build_read_models
from infra.settings import Settings
from infra.socialviews import build_social
from infra.store import build_service, outbox_env
from infra.workers import Workers
from services.accounts.lobby_sweeper import LobbySweeper
from services.accounts.oidc import OidcVerifier
from services.accounts.ranked import RankedQueues
from services.background import Loop
from services.bot_driver import BotDriver
from services.bus import Bus
from services.career.notices import RatingNotices
from services.career.reads import CareerModels
from services.game import GameService
from services.game_table import TimeoutBot
from services.handlers import build_bus
from services.limits import Allowance, RateLimiter
from services.operator import Operator
from services.ratings.boards import RatingModels
from services.readmodels.lists import ReadModels
from services.readmodels.runner import Follower, Pass
from services.saves import Saves
from services.social.online_notices import OnlineNotices
from services.social.reads import SocialModels
from services.sweeper import Sweeper
from services.tournaments.background import TournamentWork
from services.tournaments.clerk import Clerk
from services.webhooks.delivery import WebhookDelivery
from services.webhooks.dispatch import Post
from services.webhooks.targets import TargetPolicy

SQLITE_POOL = 5
"""The eventsourcing library's SQLite pool: 5 connections (its default; POPO: threads)."""


@dataclass(frozen=True, slots=True)
class Core:
    """What every process of the settings builds, whatever it serves."""

    settings: Settings
    service: GameService
    limiter: anyio.CapacityLimiter
    """The one limiter of the event loop's blocking store calls (docs/decisions.md F2)."""
    hub: InProcessHub | LocalHub
    bus: Bus
    bots: BotDriver
    read_models: ReadModels
    ratings: RatingModels
    ranked: RankedQueues
    """The ranked queues as this process follows them (their sweeper, the expected waits)."""
    career: CareerModels
    """The players' careers (docs/decisions.md D-career)."""
    social: SocialModels
    """Friends and presence (docs/decisions.md D-social)."""
    delivery: WebhookDelivery
    """The webhook outbox and its dispatcher (its loop runs where the background work runs;
    the operator's routes read its deliveries)."""
    workers: Workers
    """The background work this process runs (none in an ``api`` process)."""
    views: Pass | None
    """The one pass over the log for the views this process keeps (None: it keeps none);
    its failing views are in the metrics (docs/decisions.md D-isolate)."""
    on_shutdown: tuple[Callable[[], None], ...]
    """What closes what this root opened (the service it built, the outbox's store)."""


def build_app(
    settings: Settings,
    *,
    service: GameService | None = None,
    post: Post | None = None,
    bots: BotDriver | None = None,
) -> Litestar:
    """The API app of ``settings`` (the module docstring); ``service`` replaces the one the
    settings' store would give, ``post`` sends the webhooks, ``bots`` replaces the bot
    driver the settings would give (started and stopped with the app's background work)."""
    return create_app(build_parts(settings, service=service, post=post, bots=bots))


def build_parts(
    settings: Settings,
    *,
    service: GameService | None = None,
    post: Post | None = None,
    bots: BotDriver | None = None,
) -> AppParts:
    """Everything :func:`api.app.create_app` serves, built from ``settings``: an ``all``
    process runs its background work beside the API, an ``api`` process none."""
    if settings.process_role == "worker":
        raise ValueError("a worker process builds no API app (infra.worker)")
    core = build_core(settings, service=service, post=post, bots=bots)
    service, hub = core.service, core.hub
    # One process owns the store (SQLite/POPO): every save passes through its saves, so
    # unchanged polls can be answered from memory. On PostgreSQL other replicas write too.
    tags = ViewTags(enabled=isinstance(hub, InProcessHub))
    if tags.enabled:  # off, they need no news: no save tells them (docs/decisions.md D-bus2)
        service.saves.changed.add(tags.changed)
    runtime = Runtime(
        core.bus,
        core.limiter,
        core.bots,
        tags=tags,
        retry_ms=settings.sse_retry_ms,
        read_models=core.read_models,
        rating_models=core.ratings,
        ranked_queues=core.ranked,
        career_models=core.career,
        social_models=core.social,
    )
    live = LiveStreams(
        service,
        hub,
        StreamSettings(
            heartbeat_s=settings.sse_heartbeat_s,
            lifetime_s=settings.sse_lifetime_s,
            retry_ms=settings.sse_retry_ms,
        ),
        limiter=core.limiter,
    )
    archive = Archive(
        service,
        core.limiter,
        settings.operator_token,
        poll_s=settings.feed_poll_ms / 1000,
        heartbeat_s=settings.sse_heartbeat_s,
        lifetime_s=settings.sse_lifetime_s,
        retry_ms=settings.sse_retry_ms,
    )
    limited = settings.rate_limit_per_minute > 0  # 0: no limit on clients at all
    exports = Exports(
        service,
        core.limiter,
        Operator(settings.operator_token),
        concurrency=settings.export_concurrency,
        quota=Allowance(
            "export files built",
            "EXPORT_QUOTA_PER_HOUR",
            settings.export_quota_per_hour if limited else 0,
        ),
        cache_bytes=settings.export_cache_mb * 2**20,
        ratings=core.ratings,
    )
    return AppParts(
        runtime=runtime,
        hub=hub,
        live=live,
        archive=archive,
        exports=exports,
        webhooks=Webhooks(runtime, core.delivery, Operator(settings.operator_token)),
        rate_limiter=RateLimiter(settings.rate_limit_per_minute),
        quotas=client_quotas(settings) if limited else (),
        allowances=(core.bus.matches, exports.quota),
        caps=StreamCaps(
            settings.sse_max_per_identity if limited else 0,
            settings.sse_max_per_address if limited else 0,
            settings.stream_caps if limited else None,
        ),
        bots=core.bots,
        background=core.workers if settings.process_role == "all" else None,
        views=core.views,
        on_shutdown=core.on_shutdown,
    )


def build_core(
    settings: Settings,
    *,
    service: GameService | None = None,
    post: Post | None = None,
    bots: BotDriver | None = None,
    worker: bool = False,
) -> Core:
    """The service, hub, bus, bot driver, read models, outbox and background work of
    ``settings``; ``worker``: a worker process's, whose runner starts the hub itself (no
    live streams start it) and hears the other processes' saves through it."""
    on_shutdown: tuple[Callable[[], None], ...] = ()
    if service is None:
        service = build_service(settings, saves=Saves())
        on_shutdown = (service.close,)
    limiter = anyio.CapacityLimiter(store_capacity(settings))
    pace_s = settings.worker_pace_ms / 1000 if worker else 0.0  # D-pace
    hub = build_hub(settings, service, pace_s=pace_s)
    read_models = build_read_models(settings, service, hub)
    ratings = build_ratings(settings, service, hub)
    career = build_career(settings, service, hub)
    social = build_social(settings, service, hub)
    if not isinstance(hub, InProcessHub):  # presence across replicas: the hub's relay
        social.board.relay = hub.relay
        hub.on_relayed.append(social.board.heard)
    ranked = RankedQueues()
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
            matches=match_quota(settings),
            ratings=ratings,
            ranked=ranked,
            social=social,
            invitation_ttl=timedelta(seconds=settings.table_invitation_ttl_s),
            friend_online_window=timedelta(seconds=settings.friend_online_window_s),
        )
        bots = BotDriver(
            bus,
            workers=settings.bot_workers,
            decision_cpu_s=settings.bot_decision_ms / 1000,
            bots_only_rounds=settings.bots_only_rounds,
            quota_ms=settings.bot_quota_ms_per_hour,
        )
        # a friend came online: its notice, off the request path (docs/decisions.md D-social)
        online = OnlineNotices(bots.bus, social, settings.friend_online_window_s)
        social.board.arrived = online.arrived
    policy = TargetPolicy(settings.webhook_allow_http, settings.webhook_private_targets)
    delivery = WebhookDelivery(service, outbox_env(settings), post or policy.post)
    on_shutdown = (*on_shutdown, delivery.close)
    loops: list[Loop] = []
    heard: list[Callable[[frozenset[str]], object]] = []
    views: Pass | None = None
    background = worker or settings.process_role == "all"
    if background:
        sweep_s = settings.sweep_interval_ms / 1000
        if sweep_s > 0:  # 0: no sweeper, clerk nor lobby sweeper (tests tick them)
            sweeper = Sweeper(bots.bus, wake=bots.wake)
            # round deadlines, the results policy (docs/tournaments.md)
            tournaments = TournamentWork(Clerk(bots.bus))
            # a rated match's notices to its players (docs/decisions.md D-career)
            notices = RatingNotices(bots.bus, career, ratings)
            loops += [
                sweeper.loop(sweep_s),
                *tournaments.loops(sweep_s),
                LobbySweeper(bots.bus, ranked).loop(sweep_s),
                notices.loop(sweep_s),
            ]
            if worker:  # the API processes' saves reach this one through the hub
                hub.on_changed.append(sweeper.changed)
                # the policies, when the pass over the log read what they follow (D-follow)
                heard += [tournaments.heard, notices.heard]
        if settings.webhook_interval_ms > 0:
            loops.append(delivery.loop(settings.webhook_interval_ms / 1000))
        # the views kept here: one read of the log for all (docs/decisions.md D-follow)
        kept = [
            f
            for f in (read_models.freshness, ratings.freshness, career.freshness, social.freshness)
            if isinstance(f, Follower)
        ]
        if kept:
            group = views = Pass.of(kept, pace_s=pace_s)
            group.heard += heard
            loops += group.loops()
        if worker:
            hub.on_changed += [bots.changed]
    workers = Workers(loops, (bots,) if background else (), hub=hub if worker else None)
    return Core(
        settings=settings,
        service=service,
        limiter=limiter,
        hub=hub,
        bus=bots.bus,
        bots=bots,
        read_models=read_models,
        ratings=ratings,
        ranked=ranked,
        career=career,
        social=social,
        delivery=delivery,
        workers=workers,
        views=views,
        on_shutdown=on_shutdown,
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


def match_quota(settings: Settings) -> Allowance:
    """The match quota (``MATCH_QUOTA_PER_HOUR``): every match a command makes, by any
    route, is charged to it by the bus (docs/decisions.md D-bounded); none when the limits
    on clients are off (``RATE_LIMIT_PER_MINUTE=0``)."""
    limited = settings.rate_limit_per_minute > 0
    per_hour = settings.match_quota_per_hour if limited else 0
    return Allowance("matches created", "MATCH_QUOTA_PER_HOUR", per_hour)


def client_quotas(settings: Settings) -> tuple[Quota, ...]:
    """The hourly quotas of the calls that create things one a call (docs/security.md); a
    quota of 0 counts nothing. Matches are counted by the bus, as many as a command makes
    (:func:`match_quota`)."""
    return (
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
        hourly(
            "friend requests sent",
            "FRIEND_REQUEST_QUOTA_PER_HOUR",
            "POST",
            ("/v1/players/me/friend-requests",),
            settings.friend_request_quota_per_hour,
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

"""Prometheus metrics at ``GET /metrics`` (docs/observability.md).

One :class:`Metrics` per app, on its own :class:`~prometheus_client.CollectorRegistry`
(built by ``api.app.create_app``: no process-global registry, so a test may build as
many apps as it likes). Exposed in the Prometheus text format 0.0.4
(``text/plain; version=0.0.4``), left out of the OpenAPI document (it is an operations
endpoint, not part of the game's contract; see docs/observability.md).

=============================================  =========  ===============================
metric                                         type       labels
=============================================  =========  ===============================
``shengji_commands_total``                     counter    ``command``, ``outcome``
``shengji_command_duration_seconds``           histogram  ``command``
``shengji_http_requests_total``                counter    ``method``, ``route``, ``status``
``shengji_store_append_duration_seconds``      histogram  ``outcome`` (ok/conflict/error)
``shengji_events_replayed_total``              counter    —
``shengji_stale_retries_total``                counter    —
``shengji_cache_heard_total``                  counter    —
``shengji_read_settles_total``                 counter    —
``shengji_read_log_end_queries_total``         counter    —
``shengji_sse_subscribers``                    gauge      —
``shengji_rate_limit_rejections_total``        counter    —
``shengji_quota_rejections_total``             counter    ``quota``
``shengji_sse_refusals_total``                 counter    ``limit`` (identity/address)
``shengji_sse_open``                           gauge      ``kind`` (a stream's, api.streams)
``shengji_live_hub_connected``                 gauge      — (PostgreSQL hub only)
``shengji_live_hub_connections_total``         counter    — (PostgreSQL hub only)
``shengji_read_model_failing``                 gauge      ``view`` (a process keeping views)
``shengji_read_model_failures_total``          counter    — (a process keeping views)
=============================================  =========  ===============================

Label values come from closed sets so cardinality stays bounded: ``command`` is one of
:data:`COMMANDS` (the POST routes that change a match, the round actions by name),
``outcome`` one of :data:`OUTCOMES` (a 409 is split by its problem ``code``: a lost race
``conflict``, a key still running ``in-flight``, else a rule's ``refused``), ``route``
the route *template* (``/v1/matches/{match_id}/view``, never a match id; unrouted
requests are ``unmatched``) and ``status`` the status class (``2xx`` … ``5xx``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final, Protocol

import msgspec
from litestar import Response, get
from litestar.handlers import HTTPRouteHandler
from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from api.streams import KINDS
from domain.game.actions import ACTIONS
from services.bot_driver import BotDriver, DriverStats
from services.game import GameService
from services.readmodels.runner import Pass
from services.saves import SaveTimed

METRICS_PATH: Final = "/metrics"
CONTENT_TYPE: Final = "text/plain; version=0.0.4"
"""Litestar adds ``; charset=utf-8`` to a ``text/`` type itself: one charset, or
Prometheus (3.x) refuses the scrape (a duplicate parameter is not a valid media type)."""

_MATCH: Final = "/v1/matches/{match_id}"
_TOURNAMENT: Final = "/v1/tournaments/{tournament_id}"
ROUTE_COMMANDS: Final[Mapping[str, str]] = {
    "/v1/matches": "create_match",
    f"{_MATCH}/seats/{{seat}}": "take_seat",
    f"{_MATCH}/seats/{{seat}}/bot": "seat_bot",
    f"{_MATCH}/bots/run": "run_bots",
    f"{_MATCH}/finish": "finish_match",
    f"{_MATCH}/timeout": "claim_timeout",
    "/v1/tournaments": "create_tournament",
    f"{_TOURNAMENT}/rounds": "pair_round",
    f"{_TOURNAMENT}/rounds/{{number}}/bots/run": "run_tournament_bots",
    f"{_TOURNAMENT}/results/collect": "collect_results",
    f"{_TOURNAMENT}/rounds/{{number}}/tables/{{table}}/correction": "correct_result",
}
ACTION_ROUTE: Final = f"{_MATCH}/actions/{{action}}"
COMMANDS: Final = (*ROUTE_COMMANDS.values(), *ACTIONS, "unknown")
OUTCOMES: Final = (
    "ok",
    "replayed",
    "refused",
    "conflict",
    "in-flight",
    "stale",
    "invalid",
    "bad-request",
    "unauthorized",
    "forbidden",
    "not-found",
    "rate-limited",
    "unavailable",
    "error",
    "aborted",
)
_BY_STATUS: Final[Mapping[int, str]] = {
    401: "unauthorized",
    403: "forbidden",
    404: "not-found",
    412: "stale",
    422: "invalid",
    429: "rate-limited",
    503: "unavailable",
}
_BY_CONFLICT_CODE: Final[Mapping[str, str]] = {
    "version-conflict": "conflict",
    "idempotency-in-flight": "in-flight",
}
COMMAND_BUCKETS: Final = (0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)
APPEND_BUCKETS: Final = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 2.5)


class _Code(msgspec.Struct):
    code: str = ""


_code_decoder = msgspec.json.Decoder(_Code)


def conflict_code(body: bytes) -> str:
    """The ``code`` of a 409 problem's body (``-`` when it is not one), for
    ``shengji_commands_total{outcome}``."""
    try:
        return _code_decoder.decode(body).code
    except msgspec.DecodeError:
        return "-"


def command_of(method: str, template: str | None, params: Mapping[str, Any]) -> str | None:
    """The command a request is (a label of :data:`COMMANDS`), None for other requests."""
    if method != "POST" or template is None:
        return None
    template = template.rstrip("/") or "/"
    if template == ACTION_ROUTE:
        action = params.get("action")
        return action if action in ACTIONS else "unknown"
    return ROUTE_COMMANDS.get(template)


def outcome_of(status: int, code: str = "", replayed: bool = False) -> str:
    """A response's outcome (a label of :data:`OUTCOMES`); ``code``: a 409's problem code."""
    if status == 0:
        return "aborted"  # the client left before any response
    if 200 <= status < 300:
        return "replayed" if replayed else "ok"
    if status == 409:
        return _BY_CONFLICT_CODE.get(code, "refused")
    if status in _BY_STATUS:
        return _BY_STATUS[status]
    return "error" if status >= 500 else "bad-request"


class _Streams(Protocol):
    streams: int


class _Limiter(Protocol):
    rejections: int


class _Quota(Protocol):
    @property
    def setting(self) -> str: ...

    @property
    def limiter(self) -> _Limiter: ...


class _Revocations(Protocol):
    ended: int


class _Caps(Protocol):
    @property
    def refusals(self) -> Mapping[str, int]: ...

    def open_by_kind(self) -> Mapping[str, int]: ...


def _bot_readings(stats: DriverStats) -> Iterable[Metric]:
    """The bot driver's work (docs/bots.md): its queue, its steps and their trouble."""
    yield GaugeMetricFamily(
        "shengji_bot_matches_queued", "Matches waiting for a bot step", value=stats.queued
    )
    yield GaugeMetricFamily(
        "shengji_bot_matches_out_of_time",
        "Queued matches whose owner has spent its bot time (BOT_QUOTA_MS_PER_HOUR)",
        value=stats.out_of_time,
    )
    yield GaugeMetricFamily(
        "shengji_bot_steps_running", "Bot steps (decisions) running now", value=stats.running
    )
    yield CounterMetricFamily(
        "shengji_bot_steps", "Bot moves and deadline claims the driver saved", value=stats.steps
    )
    yield CounterMetricFamily(
        "shengji_bot_conflicts",
        "Bot steps that lost a race with another command (looked at again)",
        value=stats.conflicts,
    )
    yield CounterMetricFamily(
        "shengji_bot_errors", "Bot steps that failed unexpectedly (logged)", value=stats.errors
    )
    yield CounterMetricFamily(
        "shengji_bots_only_ended",
        "Bots-only matches the driver ended at BOTS_ONLY_ROUNDS",
        value=stats.ended,
    )


def _view_readings(views: Pass) -> Iterable[Metric]:
    """The views kept by the process's pass over the log: a failing one sits out, tried
    again with backoff (docs/decisions.md D-isolate)."""
    failing = GaugeMetricFamily(
        "shengji_read_model_failing",
        "Failed passes in a row of a view kept here (0: it follows the log), by view",
        labels=["view"],
    )
    for member in views.members:
        trouble = views.troubles.get(member.name)
        failing.add_metric([member.name], 0 if trouble is None else trouble.failures)
    yield failing
    yield CounterMetricFamily(
        "shengji_read_model_failures",
        "A view's projection failing in a pass over the log (logged; the others go on)",
        value=views.failures,
    )


class _Readings:
    """Values read from their owners at scrape time (no hook in the hot paths)."""

    def __init__(
        self,
        service: GameService,
        live: _Streams | None,
        limiter: _Limiter | None,
        hub: Any,
        quotas: Iterable[_Quota] = (),
        caps: _Caps | None = None,
        bots: BotDriver | None = None,
        revocations: _Revocations | None = None,
        views: Pass | None = None,
    ) -> None:
        self.views = views
        self.service = service
        self.live = live
        self.limiter = limiter
        self.hub = hub
        self.quotas = tuple(quotas)
        self.caps = caps
        self.bots = bots
        self.revocations = revocations

    def collect(self) -> Iterable[Metric]:
        if self.live is not None:
            yield GaugeMetricFamily(
                "shengji_sse_subscribers",
                "Live streams (SSE) open in this process",
                value=self.live.streams,
            )
        yield CounterMetricFamily(
            "shengji_events_replayed",
            "Stored events applied to rebuild matches and rounds (R34)",
            value=self.service.events_replayed,
        )
        yield CounterMetricFamily(
            "shengji_stale_retries",
            "Commands decided again once on fresh copies: a cached copy was stale "
            "(docs/decisions.md D-owner)",
            value=self.service.stale_retries,
        )
        yield CounterMetricFamily(
            "shengji_read_settles",
            "Reads that waited for the live hub to reach the log's end (D-settle)",
            value=self.service.settling.settles,
        )
        yield CounterMetricFamily(
            "shengji_read_log_end_queries",
            "Queries of the log's end those reads made (shared by reads begun together)",
            value=self.service.settling.asked,
        )
        yield CounterMetricFamily(
            "shengji_cache_heard",
            "Cached aggregates brought up to another process's save (D-owner)",
            value=self.service.heard_elsewhere,
        )
        if self.limiter is not None:
            yield CounterMetricFamily(
                "shengji_rate_limit_rejections",
                "Requests answered 429 rate-limited",
                value=self.limiter.rejections,
            )
        quotas = CounterMetricFamily(
            "shengji_quota_rejections",
            "Requests answered 429 quota-exceeded, by quota (its setting)",
            labels=["quota"],
        )
        for quota in self.quotas:
            quotas.add_metric([quota.setting], quota.limiter.rejections)
        yield quotas
        refusals = CounterMetricFamily(
            "shengji_sse_refusals",
            "Live streams refused 429 too-many-streams, by the cap that refused them",
            labels=["limit"],
        )
        for limit, count in sorted((self.caps.refusals if self.caps else {}).items()):
            refusals.add_metric([limit], count)
        yield refusals
        if self.caps is not None:
            kinds = GaugeMetricFamily(
                "shengji_sse_open",
                "Live streams (SSE) open in this process, by kind "
                f"({', '.join(KINDS)}; api.streams)",
                labels=["kind"],
            )
            for kind, count in sorted(self.caps.open_by_kind().items()):
                kinds.add_metric([kind], count)
            yield kinds
        if self.revocations is not None:
            yield CounterMetricFamily(
                "shengji_sse_revoked",
                "Live streams ended because their token was revoked (event: revoked)",
                value=self.revocations.ended,
            )
        if self.bots is not None:
            yield from _bot_readings(self.bots.stats)
        if self.views is not None:
            yield from _view_readings(self.views)
        connections = getattr(self.hub, "connections", None)
        if isinstance(connections, int):
            yield GaugeMetricFamily(
                "shengji_live_hub_connected",
                "1 while the live hub's LISTEN connection to PostgreSQL is up",
                value=1 if getattr(self.hub, "connected", False) else 0,
            )
            yield CounterMetricFamily(
                "shengji_live_hub_connections",
                "LISTEN connections the live hub opened (reconnects included)",
                value=connections,
            )


class Metrics:
    """The app's metrics (see the module docstring); ``render()`` is the exposition."""

    def __init__(
        self,
        service: GameService,
        live: _Streams | None = None,
        limiter: _Limiter | None = None,
        hub: Any = None,
        *,
        quotas: Iterable[_Quota] = (),
        caps: _Caps | None = None,
        bots: BotDriver | None = None,
        revocations: _Revocations | None = None,
        views: Pass | None = None,
    ) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.commands = Counter(
            "shengji_commands",
            "Commands by type and outcome",
            ["command", "outcome"],
            registry=self.registry,
        )
        self.command_seconds = Histogram(
            "shengji_command_duration_seconds",
            "Command latency, request received to response sent",
            ["command"],
            buckets=COMMAND_BUCKETS,
            registry=self.registry,
        )
        self.requests = Counter(
            "shengji_http_requests",
            "HTTP requests by method, route template and status class",
            ["method", "route", "status"],
            registry=self.registry,
        )
        self.store_append_seconds = Histogram(
            "shengji_store_append_duration_seconds",
            "Event store appends (one atomic save of a command's events), by outcome",
            ["outcome"],
            buckets=APPEND_BUCKETS,
            registry=self.registry,
        )
        self.registry.register(
            _Readings(service, live, limiter, hub, quotas, caps, bots, revocations, views)
        )
        self._children: dict[tuple[Any, ...], Any] = {}
        service.saves.timed.add(self.observe_save)

    def _child(self, metric: Counter | Histogram, *values: str) -> Any:
        """``metric.labels(*values)``, remembered: the library's ``labels`` takes a lock
        and validates on every call, a few per request (the label sets are bounded)."""
        key = (id(metric), *values)
        child = self._children.get(key)
        if child is None:
            child = self._children[key] = metric.labels(*values)
        return child

    def observe_save(self, timed: SaveTimed) -> None:
        self._child(self.store_append_seconds, timed.outcome).observe(timed.seconds)

    def observe_request(
        self,
        method: str,
        template: str | None,
        params: Mapping[str, Any],
        status: int,
        seconds: float,
        *,
        code: str = "",
        replayed: bool = False,
    ) -> None:
        route = (template.rstrip("/") or "/") if template else "unmatched"
        status_class = f"{status // 100}xx" if status else "aborted"
        self._child(self.requests, method, route, status_class).inc()
        command = command_of(method, template, params)
        if command is not None:
            self._child(self.commands, command, outcome_of(status, code, replayed)).inc()
            self._child(self.command_seconds, command).observe(seconds)

    def render(self) -> bytes:
        return generate_latest(self.registry)

    def handler(self) -> HTTPRouteHandler:
        """``GET /metrics`` (not in the OpenAPI document): :meth:`exposition`."""
        return get(METRICS_PATH, include_in_schema=False, sync_to_thread=False)(self.exposition)

    def exposition(self) -> Response[bytes]:
        return Response(self.render(), media_type=CONTENT_TYPE)

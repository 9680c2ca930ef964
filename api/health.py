"""Liveness and readiness probes (the Kubernetes probes point here).

* ``GET /healthz`` — alive: 200 ``{"status": "ok"}`` while the process serves HTTP; it
  touches nothing else, so a slow store never gets a healthy pod restarted.
* ``GET /readyz`` — ready: the store is reachable and its schema is there. A cheap read
  through the service (the notification log's highest id, :func:`store_probe`) runs in a
  worker thread, one at a time, for at most ``timeout`` seconds: 200 ``{"status":
  "ready"}``, else 503 ``not-ready`` problem+json with ``Retry-After``.

Neither is rate limited (``api.ratelimit.DEFAULT_EXCLUDED``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

import anyio
import anyio.to_thread
import msgspec
import structlog
from litestar import Request, Response, get
from litestar.handlers import HTTPRouteHandler
from litestar.openapi.datastructures import ResponseSpec
from msgspec import Meta

from api.i18n import localize, prefers_chinese
from api.problems import PROBLEM_BASE, PROBLEM_MEDIA_TYPE, Problem
from services.game import GameService

Probe = Callable[[], object]
"""A blocking call that raises when the store is not usable."""

log = structlog.get_logger("api.health")


class HealthStatus(msgspec.Struct):
    """A probe's answer."""

    status: Annotated[str, Meta(description="ok (alive), ready (serving), or why not")]


def store_probe(service: GameService) -> Probe:
    """Read the highest notification id: needs a connection and the events table."""
    return service.recorder.max_notification_id


def health_handlers(
    probe: Probe,
    *,
    timeout: float = 2.0,
    retry_after: int = 5,
    limiter: anyio.CapacityLimiter | None = None,
) -> list[HTTPRouteHandler]:
    """``/healthz`` and ``/readyz``; ``/readyz`` runs ``probe`` (see the module doc) under
    ``limiter``, the app's one store limiter (a probe is a store read like any other)."""
    return Probes(probe, timeout=timeout, retry_after=retry_after, limiter=limiter).handlers()


class Probes:
    """The two probes of one app (the module docstring)."""

    def __init__(
        self,
        probe: Probe,
        *,
        timeout: float,
        retry_after: int,
        limiter: anyio.CapacityLimiter | None,
    ) -> None:
        self.probe = probe
        self.timeout = timeout
        self.retry_after = retry_after
        self.limiter = limiter or anyio.CapacityLimiter(1)

    def handlers(self) -> list[HTTPRouteHandler]:
        """The route handlers of :meth:`get_health` and :meth:`get_readiness`."""
        health = get(
            "/healthz",
            summary="Liveness",
            tags=["health"],
            description="Liveness: the process answers. Kubernetes restarts it when this fails.",
        )
        readiness = get(
            "/readyz",
            summary="Readiness: the store is reachable and its schema ready",
            tags=["health"],
            responses={
                503: ResponseSpec(
                    data_container=Problem,
                    media_type=PROBLEM_MEDIA_TYPE,
                    description="Not ready (the store is unreachable or has no schema yet)",
                    generate_examples=False,
                )
            },
            description="Readiness: the store is reachable and its schema is in place; 503 "
            "`not-ready` otherwise (the pod is taken out of its Service).",
        )
        return [health(self.get_health), readiness(self.get_readiness)]

    async def get_health(self) -> HealthStatus:
        return HealthStatus("ok")

    async def get_readiness(self, request: Request[Any, Any, Any]) -> Response[Any]:
        try:
            with anyio.fail_after(self.timeout):
                await anyio.to_thread.run_sync(
                    self.probe, abandon_on_cancel=True, limiter=self.limiter
                )
        except Exception as e:
            reason = "timed out" if isinstance(e, TimeoutError) else type(e).__name__
            log.warning("not ready", reason=reason, error=str(e)[:200])
            return _not_ready(request, reason, self.timeout, self.retry_after)
        return Response(HealthStatus("ready"))


def _not_ready(
    request: Request[Any, Any, Any], reason: str, timeout: float, retry_after: int
) -> Response[bytes]:
    chinese = prefers_chinese(request.headers.get("accept-language"))
    english = (
        f"the store did not answer a read within {timeout:g} s"
        if reason == "timed out"
        else f"the store is not reachable or its schema is not ready ({reason})"
    )
    title, detail = localize("not-ready", english, chinese=chinese)
    problem = Problem(
        type=PROBLEM_BASE + "not-ready",
        title=title,
        status=503,
        detail=detail,
        code="not-ready",
        instance=request.url.path,
    )
    return Response(
        content=msgspec.json.encode(problem),
        status_code=503,
        media_type=PROBLEM_MEDIA_TYPE,
        headers={"Retry-After": str(retry_after)},
    )

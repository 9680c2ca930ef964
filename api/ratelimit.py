"""Rate limiting: a token bucket per client, 429 problem+json with ``Retry-After``.

A client is its bearer token (a seat or organiser token, kept only as a SHA-256 prefix)
when it sends one, else its address. Each client's bucket holds ``burst`` tokens
(default: a minute's worth), refilled at ``per_minute`` / 60 a second; a request takes
one. An empty bucket answers ``429`` with the ``rate-limited`` problem and ``Retry-After``
= the whole seconds until a token is back. Health probes and the SSE stream are not
counted, nor Prometheus scrapes of ``/metrics`` (``exclude_paths`` /
``exclude_patterns``). Buckets live in memory, per process,
at most ``max_clients`` of them (the least recently seen are forgotten first).

:attr:`RateLimiter.rejections` counts the 429s (for the metrics).
"""

from __future__ import annotations

import hashlib
import math
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from typing import Final

import msgspec
from litestar.enums import ScopeType
from litestar.types import ASGIApp, Receive, Scope, Send

from api.i18n import localize, prefers_chinese
from api.problems import PROBLEM_BASE, PROBLEM_MEDIA_TYPE, Problem

DEFAULT_PER_MINUTE: Final = 600
DEFAULT_EXCLUDED: Final = ("/healthz", "/readyz", "/metrics")
DEFAULT_EXCLUDED_PATTERNS: Final = (r"^/v1/matches/[^/]+/stream$",)
"""The SSE stream (``api.sse``): long-lived, and EventSource reconnects on its own."""
RawHeaders = Iterable[tuple[bytes, bytes]]


class RateLimiter:
    """Token buckets keyed by client; ``per_minute=0`` turns limiting off."""

    def __init__(
        self,
        per_minute: int = DEFAULT_PER_MINUTE,
        *,
        burst: int | None = None,
        max_clients: int = 100_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if per_minute < 0:
            raise ValueError(f"per_minute must be >= 0, got {per_minute}")
        if burst is not None and burst < 1:
            raise ValueError(f"burst must be >= 1, got {burst}")
        if max_clients < 1:
            raise ValueError(f"max_clients must be >= 1, got {max_clients}")
        self.per_minute = per_minute
        self.capacity = float(burst if burst is not None else per_minute)
        self.rate = per_minute / 60.0
        self.max_clients = max_clients
        self.clock = clock
        self.rejections = 0
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def enabled(self) -> bool:
        return self.per_minute > 0

    def acquire(self, key: str) -> float | None:
        """Take a token for ``key``: None when allowed, else the seconds until one is back."""
        if not self.enabled:
            return None
        now = self.clock()
        with self._lock:
            tokens, stamp = self._buckets.pop(key, (self.capacity, now))
            tokens = min(self.capacity, tokens + (now - stamp) * self.rate)
            if tokens >= 1.0:
                self._buckets[key] = (tokens - 1.0, now)
                wait = None
            else:
                self._buckets[key] = (tokens, now)
                self.rejections += 1
                wait = (1.0 - tokens) / self.rate
            while len(self._buckets) > self.max_clients:
                self._buckets.popitem(last=False)
        return wait


def client_key(scope: Scope) -> str:
    """The bucket of a request: its bearer token's hash, else the client address."""
    for name, value in scope.get("headers", ()):
        if name.lower() == b"authorization":
            scheme, _, token = value.partition(b" ")
            token = token.strip()
            if scheme.lower() == b"bearer" and token:
                return "token:" + hashlib.sha256(token).hexdigest()[:32]
    client = scope.get("client")
    return "addr:" + (client[0] if client else "unknown")


class RateLimitMiddleware:
    """ASGI wrapper answering 429 before the app runs when the client's bucket is empty.

    Install it around the app's handler, inside the request-context middleware::

        app.asgi_handler = RequestContextMiddleware(RateLimitMiddleware(app.asgi_handler, limiter))
    """

    def __init__(
        self,
        app: ASGIApp,
        limiter: RateLimiter,
        *,
        exclude_paths: Iterable[str] = DEFAULT_EXCLUDED,
        exclude_patterns: Iterable[str] = DEFAULT_EXCLUDED_PATTERNS,
    ) -> None:
        self.app = app
        self.limiter = limiter
        self.exclude_paths = frozenset(exclude_paths)
        self.exclude_patterns = tuple(re.compile(p) for p in exclude_patterns)

    def _excluded(self, path: str) -> bool:
        return path in self.exclude_paths or any(p.search(path) for p in self.exclude_patterns)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != ScopeType.HTTP
            or not self.limiter.enabled
            or self._excluded(scope["path"])
        ):
            await self.app(scope, receive, send)
            return
        wait = self.limiter.acquire(client_key(scope))
        if wait is None:
            await self.app(scope, receive, send)
            return
        seconds = max(1, math.ceil(wait))
        await send_problem(
            scope,
            send,
            code="rate-limited",
            status=429,
            detail=(
                f"more than {self.limiter.per_minute} requests a minute from this client; "
                f"retry in {seconds} s"
            ),
            headers=[(b"retry-after", str(seconds).encode())],
        )


async def send_problem(
    scope: Scope,
    send: Send,
    *,
    code: str,
    status: int,
    detail: str,
    headers: RawHeaders = (),
) -> None:
    """Answer with a problem+json straight from ASGI (title and detail localized)."""
    accept_language = None
    for name, value in scope.get("headers", ()):
        if name.lower() == b"accept-language":
            accept_language = value.decode("latin-1")
    chinese = prefers_chinese(accept_language)
    title, text = localize(code, detail, chinese=chinese)
    body = msgspec.json.encode(
        Problem(
            type=PROBLEM_BASE + code,
            title=title,
            status=status,
            detail=text,
            code=code,
            instance=scope.get("path"),
        )
    )
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", PROBLEM_MEDIA_TYPE.encode()),
                (b"content-length", str(len(body)).encode()),
                (b"content-language", b"zh-CN" if chinese else b"en"),
                (b"vary", b"Accept-Language"),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body, "more_body": False})

"""Rate limiting: a token bucket per client, 429 problem+json with ``Retry-After``.

A client is its **verified** identity — the account, seat, match or tournament a token
that authenticates stands for, whichever of its tokens it presents (:mod:`api.identity`)
— else its address: a made-up or
forged token is counted under the address, so it buys nothing. Each client's bucket
holds ``burst`` tokens (default: a period's worth), refilled at ``limit`` per period
(a minute); a request takes one. An empty bucket answers ``429`` with the
``rate-limited`` problem and ``Retry-After`` = the whole seconds until a token is back.
Health probes are not counted, nor Prometheus scrapes of ``/metrics`` (``exclude_paths``),
nor the match streams (their declaration says so, :mod:`api.streams`: they have their cap,
:mod:`api.streamcap`). Buckets live in memory, per process, at most ``max_clients`` of
them (the least recently seen are forgotten first).

**Quotas** (:class:`Quota`): creating matches (quick-play tickets and rematches too: each
can make a match), creating tournaments, importing records, creating players and minting player
tokens (rotating one, opening a session) have hourly buckets of their own. A quota is
charged to the client's *address* always, and to its verified identity too when it has
one: a token is what those calls hand out, so a token must not buy more of them (an
organiser token minted by ``POST /v1/matches`` would otherwise create matches on a quota
of its own, and so on). Over a quota: 429
``quota-exceeded`` with ``Retry-After``.

:attr:`RateLimiter.rejections` counts the 429s (for the metrics).
"""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Final

import msgspec
from litestar.types import Scope, Send

from api.i18n import localize, prefers_chinese
from api.problems import PROBLEM_BASE, PROBLEM_MEDIA_TYPE, Problem

DEFAULT_PER_MINUTE: Final = 600
DEFAULT_EXCLUDED: Final = ("/healthz", "/readyz", "/metrics")
RawHeaders = Iterable[tuple[bytes, bytes]]


class RateLimiter:
    """Token buckets keyed by client: ``limit`` requests a ``period_s`` (a minute);
    ``limit=0`` turns limiting off."""

    def __init__(
        self,
        limit: int = DEFAULT_PER_MINUTE,
        *,
        period_s: float = 60.0,
        burst: int | None = None,
        max_clients: int = 100_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if limit < 0:
            raise ValueError(f"limit must be >= 0, got {limit}")
        if period_s <= 0:
            raise ValueError(f"period_s must be > 0, got {period_s}")
        if burst is not None and burst < 1:
            raise ValueError(f"burst must be >= 1, got {burst}")
        if max_clients < 1:
            raise ValueError(f"max_clients must be >= 1, got {max_clients}")
        self.limit = limit
        self.period_s = period_s
        self.per_minute = limit if period_s == 60.0 else round(limit * 60 / period_s)
        self.capacity = float(burst if burst is not None else limit)
        self.rate = limit / period_s
        self.max_clients = max_clients
        self.clock = clock
        self.rejections = 0
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def enabled(self) -> bool:
        return self.limit > 0

    @property
    def period(self) -> str:
        """The period in words (``a minute``, ``an hour``) for problem details."""
        return {60.0: "a minute", 3600.0: "an hour"}.get(self.period_s, f"{self.period_s:g} s")

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


@dataclass(frozen=True, slots=True)
class Quota:
    """An hourly allowance of one kind of call (``POST /v1/matches`` …) per client."""

    name: str
    """What is counted, in words: ``matches created``."""
    setting: str
    """The setting that sizes it (``MATCH_QUOTA_PER_HOUR``)."""
    method: str
    paths: tuple[str, ...]
    """Every route that spends it (``POST /v1/matches``, a quick-play ticket and a rematch,
    which each make a match, spend the same allowance); ``*`` stands for one segment (an
    id): ``/v1/matches/*/rematch``."""
    limiter: RateLimiter

    def applies(self, scope: Scope) -> bool:
        if not self.limiter.enabled or scope.get("method") != self.method:
            return False
        parts = scope["path"].rstrip("/").split("/")
        return any(_same(parts, path.split("/")) for path in self.paths)


def _same(parts: list[str], pattern: list[str]) -> bool:
    return len(parts) == len(pattern) and all(
        want in ("*", got) for got, want in zip(parts, pattern, strict=True)
    )


def hourly(
    name: str, setting: str, method: str, paths: tuple[str, ...], per_hour: int, **kwargs: Any
) -> Quota:
    return Quota(name, setting, method, paths, RateLimiter(per_hour, period_s=3600.0, **kwargs))


async def too_many(scope: Scope, send: Send, code: str, wait: float, detail: str) -> None:
    """A 429 problem with ``Retry-After``: the whole seconds until ``wait`` is over."""
    seconds = max(1, math.ceil(wait))
    await send_problem(
        scope,
        send,
        code=code,
        status=429,
        detail=f"{detail}; retry in {seconds} s",
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

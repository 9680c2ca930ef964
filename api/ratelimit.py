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

**Quotas** (:class:`Quota`): creating tournaments, importing records, creating players and
minting player tokens (rotating one, opening a session) have hourly buckets of their own,
one token a call. A quota is charged to the client's *address* always, and to its
verified identity too when it has one: a token is what those calls hand out, so a token
must not buy more of them (an organiser token minted by ``POST /v1/tournaments`` would
otherwise create tournaments on a quota of its own, and so on). Over a quota: 429
``quota-exceeded`` with ``Retry-After``. Matches are counted apart, as many as a command
makes, by whatever route (:mod:`services.limits`, spent by the bus: docs/decisions.md
D-bounded).

:attr:`RateLimiter.rejections` counts the 429s (for the metrics).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final

import msgspec
from litestar.types import Scope, Send

from api.i18n import localize, prefers_chinese
from api.problems import PROBLEM_BASE, PROBLEM_MEDIA_TYPE, Problem
from services.limits import RateLimiter

DEFAULT_EXCLUDED: Final = ("/healthz", "/readyz", "/metrics")
RawHeaders = Iterable[tuple[bytes, bytes]]


@dataclass(frozen=True, slots=True)
class Quota:
    """An hourly allowance of one kind of call (``POST /v1/tournaments`` …) per client."""

    name: str
    """What is counted, in words: ``matches created``."""
    setting: str
    """The setting that sizes it (``TOURNAMENT_QUOTA_PER_HOUR``)."""
    method: str
    paths: tuple[str, ...]
    """Every route that spends it (``POST /v1/players/me/token`` and
    ``POST /v1/players/me/sessions`` each mint a player token and spend one allowance);
    ``*`` stands for one segment (an id)."""
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

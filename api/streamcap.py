"""Caps on concurrent live streams (SSE), per verified identity and per address.

A live stream holds a connection, a task and a place in its match's fan-out for as long
as the client keeps it (``SSE_LIFETIME_S``, then EventSource reconnects), and it is not
rate limited (:mod:`api.ratelimit`). So the streams *open at once* are capped:
``per_identity`` for a verified token (a seat's or an organiser's, checked as
:mod:`api.identity` does; header or ``?token=``), else ``per_address`` for the client's
address — a made-up token counts under the address. Beyond its cap a stream is refused
before it starts: 429 ``too-many-streams`` problem+json with ``Retry-After``; the
refusals are counted by which cap refused (``shengji_sse_refusals_total{limit}``,
:mod:`api.metrics`). A stream's place is freed when its request ends, however it ends.

:class:`StreamCapMiddleware` does it around the app, for ``GET`` on the stream route only;
the counts are per process (each replica caps its own streams).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from typing import Final

from litestar.enums import ScopeType
from litestar.types import ASGIApp, Receive, Scope, Send

from api.identity import Identities, address_key, bearer_of
from api.ratelimit import send_problem

STREAM_PATH: Final = re.compile(r"^/v1/matches/[^/]+/stream/?$")
RETRY_AFTER_S: Final = 10
"""Retry-After of a refused stream: long enough for a stream of the client to end."""
LIMITS: Final = ("identity", "address")


class StreamCaps:
    """The streams open per identity and per address, and the refusals."""

    def __init__(self, per_identity: int, per_address: int) -> None:
        if per_identity < 0 or per_address < 0:
            raise ValueError("stream caps are >= 0 (0: no cap)")
        self.per_identity = per_identity
        self.per_address = per_address
        self.open: Counter[str] = Counter()
        self.refusals: Counter[str] = Counter({limit: 0 for limit in LIMITS})

    @property
    def enabled(self) -> bool:
        return bool(self.per_identity or self.per_address)

    def admit(self, identity: str | None, address: str) -> str | None:
        """The key the stream is counted under, or None when its cap is full (counted)."""
        key, cap, limit = (
            (identity, self.per_identity, "identity")
            if identity is not None
            else (address, self.per_address, "address")
        )
        if cap and self.open[key] >= cap:
            self.refusals[limit] += 1
            return None
        self.open[key] += 1
        return key

    def release(self, key: str) -> None:
        self.open[key] -= 1
        if self.open[key] <= 0:
            del self.open[key]


class StreamCapMiddleware:
    """ASGI wrapper admitting ``GET`` requests of the stream route under the caps."""

    def __init__(
        self,
        app: ASGIApp,
        caps: StreamCaps,
        identities: Identities | None = None,
        *,
        paths: Iterable[re.Pattern[str]] = (STREAM_PATH,),
    ) -> None:
        self.app = app
        self.caps = caps
        self.identities = identities
        self.paths = tuple(paths)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != ScopeType.HTTP
            or scope.get("method") != "GET"
            or not self.caps.enabled
            or not any(p.match(scope["path"]) for p in self.paths)
        ):
            await self.app(scope, receive, send)
            return
        identity = None
        if self.identities is not None:
            identity = await self.identities.identify(bearer_of(scope))
        key = self.caps.admit(identity, address_key(scope))
        if key is None:
            which = "verified token" if identity is not None else "address"
            cap = self.caps.per_identity if identity is not None else self.caps.per_address
            setting = "SSE_MAX_PER_IDENTITY" if identity is not None else "SSE_MAX_PER_ADDRESS"
            await send_problem(
                scope,
                send,
                code="too-many-streams",
                status=429,
                detail=f"{cap} live streams are open for this {which} already ({setting}); "
                f"close one, or retry in {RETRY_AFTER_S} s",
                headers=[(b"retry-after", str(RETRY_AFTER_S).encode())],
            )
            return
        try:
            await self.app(scope, receive, send)
        finally:
            self.caps.release(key)

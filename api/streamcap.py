"""Caps on concurrent live streams (SSE) of every kind, per verified identity and per address.

A live stream holds a connection, a task and a place in a fan-out or a polling loop for as
long as the client keeps it (its lifetime, then EventSource reconnects), and it is not rate
limited (:mod:`api.ratelimit`). So the streams *open at once* are capped, for each kind of
stream (:data:`KINDS`: a match's, a player's, a lobby ticket's, a tournament's standings,
the events feed) on its own: ``per_kind[kind]`` for a verified identity (the account, seat,
match or tournament a token stands for, :mod:`api.identity` — minting tokens buys no
streams), else ``per_address`` for the client's address — a made-up token counts under the
address. Beyond its cap a stream is refused before it starts: 429 ``too-many-streams``
problem+json with ``Retry-After``; the refusals are counted by which cap refused
(``shengji_sse_refusals_total{limit}``) and the streams open by kind
(``shengji_sse_open{kind}``, :mod:`api.metrics`). A stream's place is freed when its
request ends, however it ends.

:class:`StreamCapMiddleware` does it around the app, for ``GET`` on the stream routes only;
the counts are per process (each replica caps its own streams).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from typing import Final

from litestar.enums import ScopeType
from litestar.types import ASGIApp, Receive, Scope, Send

from api.identity import Identities, address_key, bearer_of
from api.ratelimit import send_problem

KINDS: Final[dict[str, re.Pattern[str]]] = {
    "match": re.compile(r"^/v1/matches/[^/]+/stream/?$"),
    "player": re.compile(r"^/v1/players/me/stream/?$"),
    "ticket": re.compile(r"^/v1/lobby/tickets/[^/]+/stream/?$"),
    "standings": re.compile(r"^/v1/tournaments/[^/]+/standings/stream/?$"),
    "feed": re.compile(r"^/v1/events/stream/?$"),
}
"""Every stream route of the service, by kind (a new stream route is added here)."""
RETRY_AFTER_S: Final = 10
"""Retry-After of a refused stream: long enough for a stream of the client to end."""
LIMITS: Final = ("identity", "address")


def kind_of(path: str) -> str | None:
    """The kind of stream ``path`` opens, or None for any other route."""
    return next((kind for kind, pattern in KINDS.items() if pattern.match(path)), None)


def parse_caps(items: tuple[str, ...], default: int) -> dict[str, int]:
    """Per-kind caps from ``kind=cap`` items (``SSE_STREAM_CAPS``); a kind not named gets
    ``default``. ValueError for an unknown kind or a cap that is not an integer >= 0."""
    caps = dict.fromkeys(KINDS, default)
    for item in items:
        kind, sep, text = item.partition("=")
        kind = kind.strip()
        if not sep or kind not in KINDS:
            raise ValueError(f"{item!r}: use kind=cap, kind one of {', '.join(KINDS)}")
        try:
            cap = int(text)
        except ValueError:
            cap = -1
        if cap < 0:
            raise ValueError(f"{item!r}: a cap is an integer >= 0 (0: no cap)")
        caps[kind] = cap
    return caps


class StreamCaps:
    """The streams open per (kind, identity) and per (kind, address), and the refusals."""

    def __init__(
        self, per_identity: int, per_address: int, per_kind: Mapping[str, int] | None = None
    ) -> None:
        if per_identity < 0 or per_address < 0:
            raise ValueError("stream caps are >= 0 (0: no cap)")
        self.per_kind = (
            dict(per_kind) if per_kind is not None else dict.fromkeys(KINDS, per_identity)
        )
        if any(cap < 0 for cap in self.per_kind.values()):
            raise ValueError("stream caps are >= 0 (0: no cap)")
        self.per_address = per_address
        self.open: Counter[tuple[str, str]] = Counter()
        self.refusals: Counter[str] = Counter({limit: 0 for limit in LIMITS})

    @property
    def enabled(self) -> bool:
        return bool(self.per_address or any(self.per_kind.values()))

    def open_by_kind(self) -> dict[str, int]:
        """Streams open now, by kind (for the metrics)."""
        counts = dict.fromkeys(KINDS, 0)
        for (kind, _), n in self.open.items():
            counts[kind] += n
        return counts

    def cap(self, kind: str, verified: bool) -> int:
        return self.per_kind.get(kind, 0) if verified else self.per_address

    def admit(self, kind: str, identity: str | None, address: str) -> tuple[str, str] | None:
        """The key the stream is counted under, or None when its cap is full (counted)."""
        key = (kind, identity if identity is not None else address)
        cap = self.cap(kind, identity is not None)
        if cap and self.open[key] >= cap:
            self.refusals["identity" if identity is not None else "address"] += 1
            return None
        self.open[key] += 1
        return key

    def release(self, key: tuple[str, str]) -> None:
        self.open[key] -= 1
        if self.open[key] <= 0:
            del self.open[key]


class StreamCapMiddleware:
    """ASGI wrapper admitting ``GET`` requests of the stream routes under the caps (every
    kind is counted, also when its cap is off, for the metrics)."""

    def __init__(
        self, app: ASGIApp, caps: StreamCaps, identities: Identities | None = None
    ) -> None:
        self.app = app
        self.caps = caps
        self.identities = identities

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = None
        if scope["type"] == ScopeType.HTTP and scope.get("method") == "GET":
            kind = kind_of(scope["path"])
        if kind is None:
            await self.app(scope, receive, send)
            return
        identity = None
        if self.identities is not None and self.caps.enabled:
            identity = await self.identities.identify(bearer_of(scope))
        key = self.caps.admit(kind, identity, address_key(scope))
        if key is None:
            verified = identity is not None
            which = "identity (account, seat or organiser)" if verified else "address"
            setting = "SSE_STREAM_CAPS" if verified else "SSE_MAX_PER_ADDRESS"
            await send_problem(
                scope,
                send,
                code="too-many-streams",
                status=429,
                detail=f"{self.caps.cap(kind, verified)} {kind} streams are open for this "
                f"{which} already ({setting}); close one, or retry in {RETRY_AFTER_S} s",
                headers=[(b"retry-after", str(RETRY_AFTER_S).encode())],
            )
            return
        try:
            await self.app(scope, receive, send)
        finally:
            self.caps.release(key)

"""Admission: the one check that admits or refuses a request before its handler runs
(docs/decisions.md D-edge).

:class:`AdmissionMiddleware` does, in this order, what the rate limiter
(:mod:`api.ratelimit`: the client's bucket, then the quota of the call, if any) and the
stream caps (:mod:`api.streamcap`: ``GET`` on a route declared a stream,
:mod:`api.streams`) ask, with the client's
verified identity (:mod:`api.identity`) looked up once for all of them, and kept in the
request's state as who pays for what it makes (:mod:`api.payer`: the bus charges the
matches a command makes to it, docs/decisions.md D-bounded). A refusal is a 429
problem+json with ``Retry-After`` and is counted by the check that refused it. An admitted
request runs with the ``send`` it came with: nothing here wraps a response or a stream's
chunks; an admitted stream only gives its place back when its request ends, however it ends.
"""

from __future__ import annotations

from collections.abc import Iterable

from litestar.enums import ScopeType
from litestar.types import ASGIApp, Receive, Scope, Send

from api.edge import REFUSED_STATE_KEY
from api.identity import Identities, address_key, bearer_of
from api.payer import keep_payer
from api.ratelimit import (
    DEFAULT_EXCLUDED,
    Quota,
    send_problem,
    too_many,
)
from api.streamcap import RETRY_AFTER_S, StreamCaps
from api.streams import declared
from services.limits import RateLimiter


class AdmissionMiddleware:
    """``DefineMiddleware(AdmissionMiddleware, limiter=…, identities=…, quotas=…, caps=…)``,
    inside :class:`api.edge.EdgeMiddleware`. Without ``identities`` every request is counted
    under its address; without ``caps`` streams are not capped. A stream whose declaration
    says so (``rate_limited=False``) takes no token of the rate limit."""

    def __init__(
        self,
        app: ASGIApp,
        limiter: RateLimiter,
        *,
        identities: Identities | None = None,
        quotas: Iterable[Quota] = (),
        caps: StreamCaps | None = None,
        exclude_paths: Iterable[str] = DEFAULT_EXCLUDED,
    ) -> None:
        self.app = app
        self.limiter = limiter
        self.identities = identities
        self.quotas = tuple(quotas)
        self.caps = caps
        self.exclude_paths = frozenset(exclude_paths)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != ScopeType.HTTP:
            await self.app(scope, receive, send)
            return
        stream = declared(scope)
        caps = self.caps
        kind = stream.kind if stream is not None and caps is not None else None
        limited = (
            self.limiter.enabled
            and scope["path"] not in self.exclude_paths
            and (stream is None or stream.rate_limited)
        )
        if not limited and kind is None:
            await self.app(scope, receive, send)
            return
        identity = None
        if self.identities is not None and (limited or (caps is not None and caps.enabled)):
            identity = await self.identities.identify(bearer_of(scope))
        address = address_key(scope)
        if limited:
            keep_payer(scope, address, identity)
            if await self._refused(scope, send, identity, address):
                return
        if kind is None or caps is None:
            await self.app(scope, receive, send)
            return
        if not caps.enabled:
            identity = None  # every stream counted under its address, as the caps read it
        key = caps.admit(kind, identity, address)
        if key is None:
            verified = identity is not None
            which = "identity (account, seat or organiser)" if verified else "address"
            setting = "SSE_STREAM_CAPS" if verified else "SSE_MAX_PER_ADDRESS"
            scope["state"][REFUSED_STATE_KEY] = True
            await send_problem(
                scope,
                send,
                code="too-many-streams",
                status=429,
                detail=f"{caps.cap(kind, verified)} {kind} streams are open for this "
                f"{which} already ({setting}); close one, or retry in {RETRY_AFTER_S} s",
                headers=[(b"retry-after", str(RETRY_AFTER_S).encode())],
            )
            return
        try:
            await self.app(scope, receive, send)
        finally:
            caps.release(key)

    async def _refused(self, scope: Scope, send: Send, identity: str | None, address: str) -> bool:
        """Take the client's token and its quota's; answer 429 when one is out."""
        limiter = self.limiter
        wait = limiter.acquire(identity or address)
        if wait is not None:
            scope["state"][REFUSED_STATE_KEY] = True
            await too_many(
                scope,
                send,
                "rate-limited",
                wait,
                f"more than {limiter.limit} requests {limiter.period} from this "
                "client (RATE_LIMIT_PER_MINUTE)",
            )
            return True
        quota = next((q for q in self.quotas if q.applies(scope)), None)
        if quota is None:
            return False
        keys = [address] if identity is None else [address, identity]
        waits = [w for w in (quota.limiter.acquire(k) for k in keys) if w is not None]
        if not waits:
            return False
        scope["state"][REFUSED_STATE_KEY] = True
        await too_many(
            scope,
            send,
            "quota-exceeded",
            max(waits),
            f"more than {quota.limiter.limit} {quota.name} {quota.limiter.period} "
            f"from this client ({quota.setting})",
        )
        return True

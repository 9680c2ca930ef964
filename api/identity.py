"""Who is calling, for the limits (docs/security.md): a verified token, else the address.

The rate limit, the quotas and the stream caps count a request by an identity only when
its bearer token *authenticates*: a token ``<role>.<id hex>.<secret>``
(:func:`services.sources.new_token`) names its match, tournament or account, so checking
it is one aggregate read (usually the repository's cache) and one sha256 — the credential
resolved by :func:`services.access.caller_of`, as the routes resolve it. Anything else —
no token, a made-up one, a forged secret for a real match — is counted under the client's
address (``scope["client"]``: the peer, or what a trusted proxy says, :mod:`infra.serve`).
So a fresh junk token per request buys nothing, and the routes that check tokens still
refuse it (401).

Verdicts are remembered (:class:`Identities`: at most ``max_known`` tokens each way, the
least recently used forgotten first): seat and organiser tokens are never revoked, so a
token that verified once stays valid; a refused one is refused again without a store
read. A player token rotated or revoked keeps its bucket here until forgotten (only the
bucket: the routes refuse it at once, docs/players.md). Only the token's sha256 is kept,
never the token.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Callable

import anyio
from litestar.types import Scope

from api.runtime import in_thread
from services.access import Credential, bearer_text, caller_of, read_token
from services.errors import UnauthorizedError
from services.game import GameService

Verify = Callable[[str], bool]


def address_key(scope: Scope) -> str:
    """The bucket of a request without a verified identity: the client's address."""
    client = scope.get("client")
    return "addr:" + (client[0] if client else "unknown")


def bearer_of(scope: Scope) -> str | None:
    """The ``Authorization: Bearer`` token of a request, else its ``?token=`` (the live
    stream's, for EventSource), else None. Parsed as the routes parse it
    (:mod:`services.access`), not verified: see :class:`Identities`."""
    for name, value in scope.get("headers", ()):
        if name.lower() == b"authorization":
            try:
                return bearer_text(value.decode("latin-1"))
            except UnauthorizedError:
                return None
    query: bytes = scope.get("query_string", b"")
    for pair in query.split(b"&"):
        name, _, value = pair.partition(b"=")
        if name == b"token":
            found = read_token(value.decode("latin-1"))
            return None if found is None else found.token
    return None


def token_verifier(service: GameService) -> Verify:
    """True when ``token`` opens what it names (:func:`services.access.caller_of`)."""

    def verify(token: str) -> bool:
        return caller_of(service, Credential.parse(token)) is not None

    return verify


class Identities:
    """Verified identities of bearer tokens, remembered (see the module docstring)."""

    def __init__(
        self,
        verify: Verify,
        *,
        limiter: anyio.CapacityLimiter | None = None,
        max_known: int = 100_000,
    ) -> None:
        self.verify = verify
        self.limiter = limiter
        self.max_known = max_known
        self._verdicts: OrderedDict[str, bool] = OrderedDict()

    async def identify(self, token: str | None) -> str | None:
        """``token:<sha256 prefix>`` for a token that authenticates, else None. The first
        sight of a token reads its match in a worker thread (the store may be remote)."""
        if token is None:
            return None
        digest = hashlib.sha256(token.encode()).hexdigest()
        verdict = self._verdicts.get(digest)
        if verdict is None:
            verdict = await in_thread(self.limiter, self.verify, token)
            self._verdicts[digest] = verdict
            while len(self._verdicts) > self.max_known:
                self._verdicts.popitem(last=False)
        else:
            self._verdicts.move_to_end(digest)
        return "token:" + digest[:32] if verdict else None

    async def key(self, scope: Scope) -> tuple[str | None, str]:
        """(the verified identity or None, the address key) of a request."""
        return await self.identify(bearer_of(scope)), address_key(scope)

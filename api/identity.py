"""Who is calling, for the limits (docs/security.md): a verified identity, else the address.

The rate limit, the quotas and the stream caps count a request by an identity only when
its bearer token *authenticates*: a token ``<role>.<id hex>.<secret>``
(:func:`services.sources.new_token`) names its match, tournament or account, so checking
it is one aggregate read (usually the repository's cache) and one sha256 — the credential
resolved by :func:`services.access.caller_of`, as the routes resolve it. The identity is
what the token stands for, not the token (:attr:`services.access.Caller.identity`): the
*account* of a player token, whichever session or rotation it comes from; the *seat* of a
seat token (a re-issue keeps it); the match or tournament of an organiser or team token
(docs/decisions.md D-fair). So minting tokens (rotating, opening sessions) buys no bucket
of its own. Anything else — no token, a made-up one, a forged secret for a real match — is
counted under the client's address (``scope["client"]``: the peer, or what a trusted
proxy says, :mod:`infra.serve`). So a fresh junk token per request buys nothing, and the
routes that check tokens still refuse it (401).

Verdicts are remembered (:class:`Identities`: at most ``max_known`` tokens each way, the
least recently used forgotten first): the identity a token verified as is durable (an
account, a seat), so a token rotated or revoked since keeps counting under it (only for
the limits: the routes refuse it at once, docs/players.md, and its streams end,
:mod:`api.revocation`). Only the token's sha256 is kept, never the token.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Callable
from functools import partial

import anyio
from litestar.types import Scope

from api.runtime import in_thread
from services.access import Credential, bearer_text, caller_of, read_token
from services.errors import UnauthorizedError
from services.game import GameService

Verify = Callable[[str], str | None]
"""The identity a token stands for (:attr:`services.access.Caller.identity`), or None."""


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
    """The identity of a token when it opens what it names in ``service``
    (:func:`verify_token`), else None."""
    return partial(verify_token, service)


def verify_token(service: GameService, token: str) -> str | None:
    """The identity of ``token`` when it opens what it names
    (:func:`services.access.caller_of`), else None (blocking)."""
    caller = caller_of(service, Credential.parse(token))
    return None if caller is None else caller.identity


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
        self._verdicts: OrderedDict[str, str | None] = OrderedDict()

    async def identify(self, token: str | None) -> str | None:
        """The identity of a token that authenticates (``player:<account id>``,
        ``seat:<match id>:<seat>`` …), else None. The first sight of a token reads what it
        names in a worker thread (the store may be remote)."""
        if token is None:
            return None
        digest = hashlib.sha256(token.encode()).hexdigest()
        if digest in self._verdicts:
            self._verdicts.move_to_end(digest)
            return self._verdicts[digest]
        verdict = await in_thread(self.limiter, self.verify, token)
        self._verdicts[digest] = verdict
        while len(self._verdicts) > self.max_known:
            self._verdicts.popitem(last=False)
        return verdict

    async def key(self, scope: Scope) -> tuple[str | None, str]:
        """(the verified identity or None, the address key) of a request."""
        return await self.identify(bearer_of(scope)), address_key(scope)

"""Who is calling, for the limits (docs/security.md): a verified token, else the address.

The rate limit, the quotas and the stream caps count a request by an identity only when
its bearer token *authenticates*: a seat or organiser token ``<role>.<id hex>.<secret>``
(:func:`services.game.new_token`) names its match or tournament, so checking it is one
aggregate read (usually the repository's cache) and one sha256 — the same check the
routes make (:mod:`api.auth`). Anything else — no token, a made-up one, a forged secret
for a real match — is counted under the client's address (``scope["client"]``: the peer,
or what a trusted proxy says, :mod:`infra.serve`). So a fresh junk token per request buys
nothing, and the routes that check tokens still refuse it (401).

Verdicts are remembered (:class:`Identities`: at most ``max_known`` tokens each way, the
least recently used forgotten first): seat and organiser tokens are never revoked, so a
token that verified once stays valid; a refused one is refused again without a store
read. A player token rotated or revoked keeps its bucket here until forgotten (only the
bucket: the routes refuse it at once, docs/players.md). Only the token's sha256 is kept,
never the token.
"""

from __future__ import annotations

import hashlib
import secrets
from collections import OrderedDict
from collections.abc import Callable
from typing import Final
from uuid import UUID

import anyio
from eventsourcing.application import AggregateNotFoundError
from litestar.types import Scope

from domain.game.match import Match
from domain.tournament.tournament import Tournament
from services.accounts.players import is_player_token, verify_player
from services.game import GameService
from services.sources import ORGANISER_ROLE, SEAT_ROLE, token_hash

MAX_TOKEN: Final = 200
Verify = Callable[[str], bool]


def address_key(scope: Scope) -> str:
    """The bucket of a request without a verified identity: the client's address."""
    client = scope.get("client")
    return "addr:" + (client[0] if client else "unknown")


def bearer_of(scope: Scope) -> str | None:
    """The ``Authorization: Bearer`` token of a request, else its ``?token=`` (the live
    stream's, for EventSource), else None. Not validated: see :class:`Identities`."""
    for name, value in scope.get("headers", ()):
        if name.lower() == b"authorization":
            scheme, _, token = value.partition(b" ")
            token = token.strip()
            if scheme.lower() == b"bearer" and 0 < len(token) <= MAX_TOKEN:
                return token.decode("latin-1")
            return None
    query: bytes = scope.get("query_string", b"")
    for pair in query.split(b"&"):
        name, _, value = pair.partition(b"=")
        if name == b"token" and 0 < len(value) <= MAX_TOKEN:
            return value.decode("latin-1")
    return None


def token_verifier(service: GameService) -> Verify:
    """True when ``token`` is a seat or organiser token of the match (or the organiser
    token of the tournament) it names: the check of :mod:`api.auth` and
    :mod:`api.tournaments.organiser`, without the route."""

    def verify(token: str) -> bool:
        if is_player_token(token):
            return verify_player(service, token) is not None
        parts = token.split(".")
        if len(parts) != 3 or parts[0] not in (SEAT_ROLE, ORGANISER_ROLE) or len(parts[1]) != 32:
            return False
        try:
            owner = UUID(hex=parts[1])
            found: object = service.repository.get(owner, deepcopy_from_cache=False)
        except (ValueError, AggregateNotFoundError):
            return False
        if isinstance(found, Match):
            if parts[0] == ORGANISER_ROLE:
                stored = [found.organiser_token_hash]
            else:
                stored = [seat.token_hash for seat in found.seats if seat is not None]
        elif isinstance(found, Tournament) and parts[0] == ORGANISER_ROLE:
            stored = [found.organiser_token_hash]
        else:
            return False
        digest = token_hash(token)
        return any(h and secrets.compare_digest(h, digest) for h in stored)

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
            verdict = await anyio.to_thread.run_sync(self.verify, token, limiter=self.limiter)
            self._verdicts[digest] = verdict
            while len(self._verdicts) > self.max_known:
                self._verdicts.popitem(last=False)
        else:
            self._verdicts.move_to_end(digest)
        return "token:" + digest[:32] if verdict else None

    async def key(self, scope: Scope) -> tuple[str | None, str]:
        """(the verified identity or None, the address key) of a request."""
        return await self.identify(bearer_of(scope)), address_key(scope)

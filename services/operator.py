"""The operator (``OPERATOR_TOKEN``, one setting: ``infra.settings.Settings.operator_token``):
the bearer token of the events feed read unredacted (:mod:`api.feed`, docs/events.md), of
the webhooks' and the feed subscriptions' commands (docs/webhooks.md, docs/events.md).

:class:`Operator` keeps only the token's sha256 and compares a presented token's in
constant time, so the check is written once. What a route answers to a missing or wrong
token is its own: the feed serves the public without a token and refuses any other token
(401); the webhooks' routes want the operator (401 without a token, 403 with another one
or when the service has no operator).
"""

from __future__ import annotations

import hashlib
import secrets
from typing import Final

from services.bus import Caller, Service
from services.errors import ForbiddenError, UnauthorizedError


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


class Operator:
    """Who the operator is: the sha256 of ``OPERATOR_TOKEN`` (None: there is none)."""

    __slots__ = ("_hash",)

    def __init__(self, token: str | None) -> None:
        self._hash = None if not token else _digest(token)

    @property
    def configured(self) -> bool:
        """The service has an operator."""
        return self._hash is not None

    def is_operator(self, token: str | None) -> bool:
        """``token`` is the operator's (constant time; False when there is no operator)."""
        if token is None or self._hash is None:
            return False
        return secrets.compare_digest(_digest(token), self._hash)

    def require(self, caller: Caller, what: str) -> None:
        """``caller`` must be the operator (or the service itself): 401 without a token;
        403 with another one, or when the service has no operator (``what`` is off)."""
        if isinstance(caller, Service):
            return
        if caller is None:
            raise UnauthorizedError("the operator token is needed: Authorization: Bearer")
        if not self.configured:
            raise ForbiddenError(f"{what} are off: the service has no OPERATOR_TOKEN")
        if not self.is_operator(caller.token):
            raise ForbiddenError("this is not the operator token")


NO_OPERATOR: Final = Operator(None)
"""A service without an operator (webhooks and feed subscriptions are off)."""

"""The operator (``OPERATOR_TOKEN``, one setting: ``infra.settings.Settings.operator_token``):
the bearer token of the events feed read unredacted (:mod:`api.feed`, docs/events.md) and
of the webhooks' routes (:mod:`api.players.webhooks`, docs/webhooks.md).

:class:`Operator` keeps only the token's sha256 and compares a presented token's in
constant time, so the check is written once. What a route answers to a missing or wrong
token is its own: the feed serves the public without a token and refuses any other token
(401); the webhooks' routes want the operator (401 without a token, 403 with another one
or when the service has no operator).
"""

from __future__ import annotations

import hashlib
import secrets


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

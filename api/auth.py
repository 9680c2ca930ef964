"""The request's credential: its ``Authorization: Bearer`` header (or, for a live stream,
its ``?token=``), parsed by :mod:`services.access` — which also checks it against the
match, tournament or account it is used on (401/403).

Reads that take an optional token (history, state) treat no token as a spectator, and
refuse a bad one rather than silently showing the public view.
"""

from __future__ import annotations

from typing import Any

from litestar.connection import ASGIConnection

from services.access import Credential, read_authorization, read_token


def credential(connection: ASGIConnection[Any, Any, Any, Any]) -> Credential | None:
    """The request's bearer credential; None without an Authorization header (401 for
    one that is not ``Bearer <token>``)."""
    return read_authorization(connection.headers.get("authorization"))


def stream_credential(
    connection: ASGIConnection[Any, Any, Any, Any], token: str | None
) -> Credential | None:
    """A live stream's credential: the Authorization header, else its ``?token=``
    (EventSource cannot send headers)."""
    return credential(connection) or read_token(token)

"""Where a service's clock, seeds and tokens come from: the only clock read and the only
entropy of the application layer (``domain/`` has neither; docs/decisions.md F5).
The composition root passes ``utc_now`` and ``new_seed``; tests pass fakes."""

from __future__ import annotations

import hashlib
import secrets
from datetime import UTC, datetime
from uuid import UUID


def utc_now() -> datetime:
    return datetime.now(tz=UTC)


def new_seed() -> bytes:
    """R35: a fresh 256-bit seed from the OS's CSPRNG."""
    return secrets.token_bytes(32)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


SEAT_ROLE = "s"
ORGANISER_ROLE = "o"


def new_token(match_id: UUID, role: str) -> str:
    """A bearer token ``<role>.<match id hex>.<secret>`` (role ``s`` seat, ``o`` organiser):
    it names its match, so a token of another match is told apart from a forged one.
    Shown once; only its sha256 is stored."""
    return f"{role}.{match_id.hex}.{secrets.token_urlsafe(24)}"


PLAYER_ROLE = "p"
"""A player token ``p.<account id hex>.<secret>``: names its account, not a match."""


def jitter() -> float:
    """A uniform draw in [0, 1) from the OS's CSPRNG (webhook retry backoff)."""
    return secrets.randbelow(1 << 30) / (1 << 30)

"""Keyset cursors as the pages answer them (``next``) and take them back (``after``): a
place in an ordered list — its key and the id that breaks ties — as opaque URL-safe text
(the boards' pages, D-ratings; a player's matches, D-career)."""

from __future__ import annotations

import base64
import binascii
from typing import TypeVar
from uuid import UUID

from domain.rules.errors import InvalidInputError

K = TypeVar("K", int, float)


def encode_cursor(key: float, tie: str) -> str:
    """``key`` (its exact ``repr``) and ``tie`` as a cursor."""
    return base64.urlsafe_b64encode(f"{key!r}~{tie}".encode()).decode().rstrip("=")


def decode_cursor(text: str, kind: type[K]) -> tuple[K, str]:
    """The key (a ``kind``) and the tie-breaking id a cursor holds; 422 for text that is
    no cursor a page answered."""
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)).decode()
        key, tie = raw.split("~", 1)
        return kind(key), str(UUID(tie))
    except (ValueError, binascii.Error, UnicodeDecodeError) as e:
        raise InvalidInputError(f"after is a cursor a page answered, got {text[:40]!r}") from e

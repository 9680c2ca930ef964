"""Crypto-shredding (docs/players.md): personal data in events is sealed under a key per
player; destroying the key erases the data from an immutable history.

:class:`Sealer` seals a field value as ``enc:v1:<account hex>:<base64(nonce+ciphertext)>``
(AES-256-GCM, a fresh 96-bit nonce each time, the account id and field name as associated
data, so a sealed value cannot be moved to another account or field). Opening a value
whose key is gone answers :data:`ERASED`. The keys live outside the event store, in a
:class:`KeyStore` that can really delete (``infra.keys``: an SQLite file with
``secure_delete``, or a PostgreSQL table); :class:`MemoryKeys` for the in-memory store.
"""

from __future__ import annotations

import base64
import binascii
import secrets
import threading
from typing import Protocol
from uuid import UUID

import msgspec
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

PREFIX = "enc:v1:"
"""The prefix of a sealed value in stores written before :class:`Sealed` (legacy)."""
ERASED = "erased player"
"""What a sealed name reads as once its player is erased."""
UNREADABLE = "unavailable name"
"""What a stored sealed value that cannot be opened reads as (a damaged store)."""


class Sealed(msgspec.Struct, frozen=True, tag_field="sealed", tag="v1"):
    """A sealed personal value as stored (an object: never a client's string)."""

    owner: str
    """The account id (hex) whose key sealed it."""
    box: str
    """base64 of the 96-bit nonce then the AES-GCM ciphertext."""


class KeyStore(Protocol):
    def get(self, account_id: UUID) -> bytes | None: ...

    def create(self, account_id: UUID, key: bytes) -> None: ...

    def erase(self, account_id: UUID) -> None: ...


class MemoryKeys:
    """Keys in memory (the POPO store of tests)."""

    def __init__(self) -> None:
        self._keys: dict[UUID, bytes] = {}
        self._lock = threading.Lock()

    def get(self, account_id: UUID) -> bytes | None:
        return self._keys.get(account_id)

    def create(self, account_id: UUID, key: bytes) -> None:
        with self._lock:
            self._keys.setdefault(account_id, key)

    def erase(self, account_id: UUID) -> None:
        with self._lock:
            self._keys.pop(account_id, None)


class Sealer:
    """Seals and opens personal fields with the players' keys."""

    def __init__(self, keys: KeyStore) -> None:
        self.keys = keys

    def seal(self, account_id: UUID, field: str, value: str) -> Sealed:
        key = self.keys.get(account_id)
        if key is None:
            self.keys.create(account_id, AESGCM.generate_key(bit_length=256))
            key = self.keys.get(account_id)
            assert key is not None
        nonce = secrets.token_bytes(12)
        sealed = AESGCM(key).encrypt(nonce, value.encode(), _aad(account_id, field))
        return Sealed(owner=account_id.hex, box=base64.b64encode(nonce + sealed).decode())

    def open(self, field: str, value: Sealed) -> str:
        """The value sealed in ``value``: :data:`ERASED` once its key is gone,
        :data:`UNREADABLE` when it cannot be opened."""
        try:
            account_id = UUID(hex=value.owner)
            raw = base64.b64decode(value.box, validate=True)
        except (ValueError, binascii.Error):
            return UNREADABLE
        key = self.keys.get(account_id)
        if key is None:
            return ERASED
        if len(raw) < 13:
            return UNREADABLE
        try:
            return AESGCM(key).decrypt(raw[:12], raw[12:], _aad(account_id, field)).decode()
        except (InvalidTag, UnicodeDecodeError):
            return UNREADABLE

    def open_legacy(self, field: str, value: str, owner: UUID | None) -> str:
        """A stored string of the old, prefixed form: opened when it is one the service
        sealed — it names ``owner``, the event's own account — else shown as written."""
        if owner is None or not value.startswith(f"{PREFIX}{owner.hex}:"):
            return value
        blob = value[len(PREFIX) + len(owner.hex) + 1 :]
        return self.open(field, Sealed(owner=owner.hex, box=blob))


def _aad(account_id: UUID, field: str) -> bytes:
    return account_id.bytes + field.encode()

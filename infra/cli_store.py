"""The store an offline command (``shengji export``, ``shengji rebuild``) works on: the one
the environment configures, as ``shengji serve`` reads it (``DATABASE_URL``,
``SQLITE_PATH`` …). On SQLite the server must be stopped first: one process owns the file
(docs/operations.md)."""

from __future__ import annotations

import os
from typing import TextIO

from infra.settings import Settings, SettingsError
from infra.store import build_service
from infra.writerlock import StoreTakenError
from services.game import GameService


def open_store(command: str, err: TextIO) -> GameService | None:
    """The configured store's service (the caller closes it), or ``None`` once the reason
    it cannot be opened is written to ``err`` as ``shengji <command>: …`` (exit 2)."""
    try:
        settings = Settings.from_env(os.environ)
    except SettingsError as e:
        err.write(f"shengji {command}: {e}\n")
        return None
    try:
        return build_service(settings)
    except StoreTakenError as e:  # the server still runs on this SQLite file
        err.write(f"shengji {command}: {e}; stop the server first (docs/operations.md)\n")
        return None

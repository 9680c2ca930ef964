"""Store files are the service's alone (docs/security.md): the embedded store, its webhook
outbox, the players' keys and their journal files are created 0600 whatever the umask,
and an existing world-readable file is brought to 0600 when the service opens it."""

from __future__ import annotations

import os
import stat
import uuid
from pathlib import Path

from domain.rules.ruleset import STANDARD
from infra.settings import Settings
from infra.store import build_service, key_store
from tests.commands import create_match
from tests.conftest import FakeClock, FixedSeeds


def modes(folder: Path) -> dict[str, int]:
    return {p.name: stat.S_IMODE(p.stat().st_mode) for p in folder.iterdir() if p.is_file()}


def test_store_outbox_and_key_files_are_0600(tmp_path: Path) -> None:
    """The finding: store files, the key file included, were created 0644."""
    folder = tmp_path / "var"
    settings = Settings(backend="sqlite", sqlite_path=folder / "shengji.sqlite3")
    old = os.umask(0o022)
    try:
        service = build_service(settings, clock=FakeClock(), seeds=FixedSeeds())
        keys = key_store(settings)
        try:
            create_match(service, STANDARD)
            keys.create(uuid.uuid4(), b"k" * 32)
        finally:
            service.close()
    finally:
        os.umask(old)
    found = modes(folder)
    assert {"shengji.sqlite3", "shengji.sqlite3.keys", "shengji.sqlite3.outbox"} <= set(found)
    assert found == dict.fromkeys(found, 0o600), {k: oct(v) for k, v in found.items()}
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700


def test_an_existing_readable_store_is_made_private(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    path.touch(mode=0o644)
    os.chmod(path, 0o644)
    service = build_service(Settings(backend="sqlite", sqlite_path=path), clock=FakeClock())
    service.close()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600

"""The embedded store is the eventsourcing library's own SQLite recorder, durable by
SQLite's own settings (docs/decisions.md D2c): WAL with ``synchronous=FULL``, so every
COMMIT fsyncs the log before the save returns and an acknowledged move survives a power
cut (R34); and one process writes a file (its aggregate cache trusts its own saves)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from eventsourcing.sqlite import SQLiteApplicationRecorder

from domain.rules.ruleset import STANDARD
from infra.settings import Settings
from infra.store import build_service
from services.game import GameService
from tests.commands import create_match, take_seat
from tests.conftest import FakeClock, FixedSeeds

ROOT = Path(__file__).resolve().parents[2]
FULL = 2
"""``PRAGMA synchronous`` FULL: the log is fsynced in every COMMIT."""


@pytest.fixture
def service(tmp_path: Path) -> Iterator[GameService]:
    svc = build_service(
        Settings(backend="sqlite", sqlite_path=tmp_path / "events.sqlite3"),
        clock=FakeClock(),
        seeds=FixedSeeds(),
    )
    yield svc
    svc.close()


def test_the_store_is_the_librarys_own_recorder(service: GameService) -> None:
    assert type(service.recorder) is SQLiteApplicationRecorder


def test_every_connection_commits_durably(service: GameService) -> None:
    """WAL and synchronous=FULL on the connections the library's recorder writes with."""
    create_match(service, STANDARD, name="t")
    recorder = service.recorder
    assert isinstance(recorder, SQLiteApplicationRecorder)
    with recorder.datastore.transaction(commit=False) as cursor:
        cursor.execute("PRAGMA journal_mode")
        assert cursor.fetchone()[0] == "wal"
        cursor.execute("PRAGMA synchronous")
        assert cursor.fetchone()[0] == FULL


def test_a_save_is_in_the_file_when_it_returns(tmp_path: Path) -> None:
    """What a save returned is read back by a fresh service on the file (the commit is
    not held in a batch or a buffer of this process)."""
    path = tmp_path / "events.sqlite3"
    first = build_service(Settings(backend="sqlite", sqlite_path=path))
    match_id = create_match(first, STANDARD, name="kept")
    take_seat(first, match_id, 0, "Ann")
    first.close()
    again = build_service(Settings(backend="sqlite", sqlite_path=path))
    try:
        match = again.get_match(match_id)
        assert match.name == "kept" and match.seats[0] is not None
    finally:
        again.close()


def test_one_process_writes_an_embedded_store(tmp_path: Path) -> None:
    """A second process on the same SQLite file is refused at start-up; services of one
    process share the claim, and it goes when the last of them closes."""
    path = tmp_path / "events.sqlite3"
    other = (
        "import sys; from pathlib import Path; from infra.settings import Settings; "
        "from infra.store import build_service\n"
        "try:\n"
        f"    build_service(Settings(backend='sqlite', sqlite_path=Path({str(path)!r})))\n"
        "except Exception as e:\n"
        "    print(type(e).__name__); sys.exit(3)\n"
    )

    def second_process() -> int:
        return subprocess.run(
            [sys.executable, "-c", other], check=False, cwd=ROOT, capture_output=True, timeout=60
        ).returncode

    first = build_service(Settings(backend="sqlite", sqlite_path=path))
    again = build_service(Settings(backend="sqlite", sqlite_path=path))  # same process
    assert second_process() == 3  # StoreTakenError
    first.close()
    assert second_process() == 3  # `again` still holds it
    again.close()
    assert second_process() == 0

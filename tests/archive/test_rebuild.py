"""``shengji rebuild`` (D17): every registered read model rebuilt from the log alone
equals what the service answers now, on every store; a projection registered by another
feature gets every event in order; the command draws its progress and checks."""

from __future__ import annotations

import argparse
import fcntl
import io
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from infra.cli import build_parser
from infra.cli_rebuild import run_rebuild
from infra.settings import Settings
from infra.store import build_service
from services.game import GameService
from services.projections import (
    Progress,
    differences,
    rebuild,
    register,
    registered,
    unregister,
)
from services.records.export import export_match
from tests.archive.matches import (
    bot_match,
    bot_tournament,
    ended_match,
    open_match,
    tournament_in_play,
)
from tests.commands import import_record
from tests.conftest import Backend


def populate(service: GameService) -> None:
    played = bot_match(service, rounds=2)
    bot_match(service, "tuolaji")
    ended_match(service)
    open_match(service)
    bot_tournament(service)
    tournament_in_play(service)
    import_record(service, export_match(service, played), store=True)


def test_every_read_model_rebuilds_to_the_live_one(backend: Backend) -> None:
    service = backend.service()
    populate(service)
    fresh = backend.service()  # as a separate process would: nothing cached
    seen: list[Progress] = []
    projections, final = rebuild(fresh, progress=seen.append, every=100)
    assert {p.name for p in projections} >= {
        "match-summaries",
        "tournament-standings",
        "finished-matches",
    }
    for projection in projections:
        assert projection.rebuilt(), projection.name
        assert differences(projection) == [], projection.name
    assert final.done == final.last == (service.recorder.max_notification_id() or 0)
    assert seen[-1] == final and len(seen) >= final.done // 100
    assert len(projections[0].rebuilt()) >= 1
    # the comparison can fail: the live model moves on, the rebuilt one does not
    open_match(service)
    assert any(differences(p) for p in projections if p.name == "match-summaries")


class Positions:
    """A projection another feature might register: it records what it is given."""

    name = "test-positions"

    def __init__(self, service: GameService) -> None:
        self.service = service
        self.positions: list[int] = [-1]

    def reset(self) -> None:
        self.positions = []

    def apply(self, position: int, event: Any) -> None:
        self.positions.append(position)

    def finish(self) -> None:
        return

    def rebuilt(self) -> dict[str, Any]:
        return {"last": self.positions[-1] if self.positions else 0}

    def live(self) -> dict[str, Any]:
        return {"last": self.service.recorder.max_notification_id() or 0}


@pytest.fixture
def positions() -> Iterator[None]:
    register(Positions.name)(Positions)
    try:
        yield
    finally:
        unregister(Positions.name)


@pytest.mark.usefixtures("positions")
def test_a_registered_projection_gets_every_event_in_order() -> None:
    assert Positions.name in registered()
    with pytest.raises(ValueError, match="registered already"):
        register(Positions.name)(lambda s: Positions(s))  # noqa: PLW0108 - another factory
    service = GameService({"PERSISTENCE_MODULE": "eventsourcing.popo"})
    bot_match(service)
    projections, _ = rebuild(service)
    mine = next(p for p in projections if p.name == Positions.name)
    assert isinstance(mine, Positions)
    assert mine.positions == list(range(1, (service.recorder.max_notification_id() or 0) + 1))
    assert differences(mine) == []


def test_the_command_draws_progress_and_checks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "events.sqlite3"
    service = build_service(Settings(backend="sqlite", sqlite_path=path))
    try:
        populate(service)
    finally:
        service.close()
    monkeypatch.setenv("PERSISTENCE", "sqlite")
    monkeypatch.setenv("SQLITE_PATH", str(path))
    args = build_parser().parse_args(["rebuild", "--check"])
    out, err = io.StringIO(), io.StringIO()
    assert run_rebuild(args, out, err) == 0
    assert "every read model matches" in out.getvalue()
    assert "events/s" in out.getvalue() and "ev/s" in err.getvalue()
    assert err.getvalue().count("\r[") >= 1 and "#" * 30 in err.getvalue()
    only = argparse.Namespace(check=False, only=["nonsense"])
    assert run_rebuild(only, io.StringIO(), err) == 2


def test_the_command_refuses_a_store_the_server_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On SQLite the server owns the file (one writer): a rebuild started beside it says
    so in one line and exits 2, rather than a traceback (docs/operations.md)."""
    path = tmp_path / "events.sqlite3"
    build_service(Settings(backend="sqlite", sqlite_path=path)).close()
    monkeypatch.setenv("PERSISTENCE", "sqlite")
    monkeypatch.setenv("SQLITE_PATH", str(path))
    held = os.open(f"{path}.writer", os.O_RDWR | os.O_CREAT)  # as a serving process does
    try:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        out, err = io.StringIO(), io.StringIO()
        args = build_parser().parse_args(["rebuild", "--check"])
        assert run_rebuild(args, out, err) == 2
    finally:
        os.close(held)
    assert "stop the server first" in err.getvalue() and str(path) in err.getvalue()
    assert "Traceback" not in err.getvalue() and out.getvalue() == ""

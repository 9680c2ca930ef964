"""The embedded store's durability off the writer's path (infra/walsync.py, docs/decisions.md
D2a): commits take tickets, a syncer thread fsyncs the log, and nothing is acknowledged or
shown before the fsync that covers it (R34: an acknowledged move is never lost)."""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from eventsourcing.persistence import OperationalError
from litestar.testing import TestClient

from api.app import create_app
from domain.rules.ruleset import STANDARD
from infra.settings import Settings, build_service
from infra.sqlitestore import GroupCommitRecorder
from infra.walsync import WalSyncer
from services.bots import run_bots
from services.game import GameService
from tests.api.rest import Table, auth, choose
from tests.conftest import FakeClock, FixedSeeds

ROOT = Path(__file__).resolve().parents[2]


class GatedFsync:
    """An fsync that can be held shut; counts the calls that reached the disk."""

    def __init__(self) -> None:
        self.open = threading.Event()
        self.open.set()
        self.entered = threading.Event()
        self.calls = 0
        self.fail: OSError | None = None

    def __call__(self, fd: int) -> None:
        self.entered.set()
        if not self.open.wait(20):
            raise OSError(5, "the test never opened the gate")
        if self.fail is not None:
            raise self.fail
        self.calls += 1


def wal_db(tmp_path: Path) -> str:
    path = str(tmp_path / "log.db")
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("CREATE TABLE t (x)")
    conn.execute("INSERT INTO t VALUES (1)")
    conn.commit()
    return path


@pytest.fixture
def gate() -> GatedFsync:
    return GatedFsync()


@pytest.fixture
def syncer(tmp_path: Path, gate: GatedFsync) -> Iterator[WalSyncer]:
    s = WalSyncer(wal_db(tmp_path), fsync=gate)
    yield s
    gate.open.set()
    s.close()


def test_a_wait_returns_only_after_the_fsync_that_covers_its_ticket(
    syncer: WalSyncer, gate: GatedFsync
) -> None:
    gate.open.clear()
    ticket = syncer.committed()
    waited = threading.Event()

    def wait() -> None:
        syncer.wait(ticket)
        waited.set()

    t = threading.Thread(target=wait)
    t.start()
    assert gate.entered.wait(5)
    assert not waited.wait(0.3)  # the fsync has not returned: not durable yet
    gate.open.set()
    assert waited.wait(5)
    t.join(5)
    assert gate.calls >= 1


def test_commits_made_during_an_fsync_share_the_next_one(
    syncer: WalSyncer, gate: GatedFsync
) -> None:
    gate.open.clear()
    syncer.committed()
    assert gate.entered.wait(5)
    tickets = [syncer.committed() for _ in range(20)]  # all while the first fsync runs
    gate.open.set()
    syncer.wait(tickets[-1])
    assert gate.calls <= 2 * 2  # the log's fsync (and its directory's, once) per round
    assert syncer.syncs == 2


def test_settle_waits_without_blocking_the_loop(syncer: WalSyncer, gate: GatedFsync) -> None:
    async def scenario() -> list[str]:
        seen: list[str] = []
        gate.open.clear()
        syncer.committed()
        settling = asyncio.create_task(syncer.settle())
        await asyncio.sleep(0.2)
        seen.append("loop free")  # the loop ran while the fsync was held
        assert not settling.done()
        gate.open.set()
        await asyncio.wait_for(settling, 5)
        seen.append("settled")
        await asyncio.wait_for(syncer.settle(), 0.01)  # nothing pending: at once
        return seen

    assert asyncio.run(scenario()) == ["loop free", "settled"]


def test_a_failed_fsync_fails_the_store(syncer: WalSyncer, gate: GatedFsync) -> None:
    gate.fail = OSError(5, "Input/output error")
    ticket = syncer.committed()
    with pytest.raises(OperationalError, match="could not be made durable"):
        syncer.wait(ticket)
    assert syncer.failed is not None

    async def later() -> None:
        syncer.committed()
        await syncer.settle()

    with pytest.raises(OperationalError):
        asyncio.run(later())


# -- the recorder and the API on it -------------------------------------------------------------


@pytest.fixture
def service(tmp_path: Path) -> Iterator[GameService]:
    svc = build_service(
        Settings(backend="sqlite", sqlite_path=tmp_path / "events.sqlite3"),
        clock=FakeClock(),
        seeds=FixedSeeds(),
    )
    yield svc
    svc.close()


def gated(service: GameService) -> tuple[WalSyncer, GatedFsync]:
    recorder = service.recorder
    assert isinstance(recorder, GroupCommitRecorder) and recorder.syncer is not None
    gate = GatedFsync()
    recorder.syncer._fsync = gate
    return recorder.syncer, gate


def test_the_log_stays_bounded_under_a_stream_of_commands(service: GameService) -> None:
    """SQLite's own checkpoints rewind the log (a checkpoint on another thread never let
    it rewind: 534 MB after 48,000 commits): 2,000 commits leave it a few MB."""
    match_id = service.create_match(STANDARD, name="long")
    for seat in range(4):
        service.take_seat(match_id, seat, f"p{seat}", "heuristic")
    recorder = service.recorder
    assert isinstance(recorder, GroupCommitRecorder) and recorder.syncer is not None
    clock = service.clock
    assert isinstance(clock, FakeClock)
    while recorder.syncer.mark() < 2000:
        clock.advance(seconds=100)
        service.claim_deadlines(match_id)
        run_bots(service, match_id, 400)
        if service.get_match(match_id).finished:
            match_id = service.create_match(STANDARD, name="next")
            for seat in range(4):
                service.take_seat(match_id, seat, f"p{seat}", "heuristic")
    assert recorder.syncer.wal_path.stat().st_size < 8 << 20


def test_the_recorders_connections_leave_the_fsync_to_the_syncer(service: GameService) -> None:
    service.create_match(STANDARD, name="t")
    recorder = service.recorder
    assert isinstance(recorder, GroupCommitRecorder)
    db = recorder._writer_connection()  # the connection every save uses
    # NORMAL: COMMIT writes the log without an fsync
    assert db.execute("PRAGMA synchronous").fetchone()[0] == 1
    # SQLite's own checkpoints rewind the log
    assert db.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 1000
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_a_save_outside_the_api_returns_only_when_durable(service: GameService) -> None:
    _, gate = gated(service)
    gate.open.clear()
    done = threading.Event()

    def create() -> None:
        service.create_match(STANDARD, name="t")
        done.set()

    t = threading.Thread(target=create)
    t.start()
    assert gate.entered.wait(5)
    assert not done.wait(0.3)
    gate.open.set()
    assert done.wait(5)
    t.join(5)


def test_no_answer_and_no_read_before_the_fsync(service: GameService) -> None:
    """A command is committed but its fsync is held: neither its own answer nor another
    client's poll of the table shows it; both arrive once the log is durable."""
    with TestClient(create_app(service=service)) as c:
        table = Table.seat_four(c)
        seat, move = next((s, m) for s in range(4) if (m := choose(table.view(s))) is not None)
        syncer, gate = gated(service)
        before = syncer.mark()
        gate.open.clear()
        answers: dict[str, Any] = {}

        def act() -> None:
            answers["act"] = table.act(seat, move[0], move[1])

        def poll() -> None:
            answers["poll"] = c.get(f"{table.url}/view", headers=auth(table.tokens[seat]))

        actor = threading.Thread(target=act)
        actor.start()
        deadline = time.monotonic() + 5
        while syncer.mark() == before and time.monotonic() < deadline:
            time.sleep(0.01)
        assert syncer.mark() > before  # committed
        poller = threading.Thread(target=poll)
        poller.start()
        time.sleep(0.3)
        try:
            assert answers == {}  # neither the answer nor the poll before the fsync
        finally:
            gate.open.set()
        actor.join(10)
        poller.join(10)
        assert answers["act"].status_code == 200
        version = answers["act"].json()["version"]
        assert answers["poll"].status_code == 200
        assert answers["poll"].json()["version"] == version


def test_a_failed_fsync_makes_the_service_not_ready(service: GameService) -> None:
    syncer, gate = gated(service)
    gate.fail = OSError(5, "Input/output error")
    with TestClient(create_app(service=service)) as c:
        assert c.get("/readyz").status_code == 200
        r = c.post("/v1/matches", json={"name": "lost"})
        assert r.status_code == 503 and r.json()["code"] == "store-unavailable"
        assert syncer.failed is not None
        ready = c.get("/readyz")
        assert ready.status_code == 503 and ready.json()["code"] == "not-ready"


def test_one_process_writes_an_embedded_store(tmp_path: Path) -> None:
    """A second process on the same SQLite file is refused at start-up; services of one
    process share the claim, and it goes when the last of them closes."""
    path = tmp_path / "events.sqlite3"
    other = (
        "import sys; from pathlib import Path; from infra.settings import Settings, "
        "build_service\n"
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


def test_a_lone_writer_makes_its_own_fsync(syncer: WalSyncer) -> None:
    """A waiting save with no fsync under way syncs in its own thread: no hand-off."""
    ticket = syncer.committed(wake=False)
    syncer.wait(ticket)
    assert syncer.syncs == 1 and syncer._thread is None


def test_a_removed_log_leaves_the_file_to_sync(tmp_path: Path) -> None:
    """SQLite removes the log when its last connection closes, having copied it into the
    file: a sync then makes the file durable (and finds a new log again later)."""
    path = wal_db(tmp_path)  # its connection closed: the log was folded in and removed
    syncer = WalSyncer(path)
    syncer.wait(syncer.committed(wake=False))
    assert syncer.syncs == 1 and syncer.failed is None
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("INSERT INTO t VALUES (2)")  # a new log
    syncer.wait(syncer.committed(wake=False))
    assert syncer.syncs == 2 and syncer._wal_fd is not None
    conn.close()
    syncer.close()


def test_round_commands_batch_their_saves_and_answer_after_the_commit(
    service: GameService, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A round command runs in the syncer's batch (D2b): its save returns before any
    COMMIT, and its answer leaves only after the batch is committed and durable."""
    recorder = service.recorder
    assert isinstance(recorder, GroupCommitRecorder) and recorder.syncer is not None
    syncer = recorder.syncer
    seen: list[tuple[bool, bool]] = []
    act = service.act

    def observed(*args: Any, **kwargs: Any) -> Any:
        result = act(*args, **kwargs)
        seen.append((syncer.batching, recorder.open))  # saved, not yet committed
        return result

    monkeypatch.setattr(service, "act", observed)
    with TestClient(create_app(service=service)) as c:
        table = Table.seat_four(c)
        seat, move = next((s, m) for s in range(4) if (m := choose(table.view(s))) is not None)
        before = syncer.mark()
        assert table.act(seat, move[0], move[1]).status_code == 200
        assert seen == [(True, True)]
        assert not recorder.open
        assert syncer.mark() > before
        assert syncer._durable >= syncer.mark()

"""The embedded store's group commit (infra/sqlitestore.py): saves waiting at once share
one durable commit, each save stays all-or-none, a conflicting save fails alone (R34:
nothing acknowledged is lost, nothing refused is stored)."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any
from uuid import UUID, uuid4

import pytest
from eventsourcing.persistence import (
    InfrastructureFactory,
    IntegrityError,
    OperationalError,
    StoredEvent,
)

from infra.settings import Settings, persistence_env
from infra.sqlitestore import GroupCommitRecorder
from infra.walsync import WalSyncer


@pytest.fixture
def recorder(tmp_path: Path) -> Iterator[GroupCommitRecorder]:
    env = persistence_env(Settings(backend="sqlite", sqlite_path=tmp_path / "events.db"))
    factory = InfrastructureFactory.construct(env | {"APPLICATION_NAME": "shengji"})
    rec = factory.application_recorder()
    assert isinstance(rec, GroupCommitRecorder)
    yield rec
    factory.close()


def events(oid: UUID, versions: Sequence[int]) -> list[StoredEvent]:
    return [StoredEvent(oid, v, "t:E", b"{}") for v in versions]


def stored(rec: GroupCommitRecorder, oid: UUID) -> list[int]:
    return [e.originator_version for e in rec.select_events(oid)]


def hold_first_batch(rec: GroupCommitRecorder, release: threading.Event) -> None:
    """The first batch waits for ``release`` inside its transaction, so every save made
    meanwhile queues behind it and the second batch carries them all."""
    original = rec._commit
    first = [True]

    def commit(batch: Any) -> None:
        if first[0]:
            first[0] = False
            release.wait(10)
        original(batch)

    rec._commit = commit  # type: ignore[method-assign]


def test_concurrent_saves_share_one_commit(recorder: GroupCommitRecorder) -> None:
    release = threading.Event()
    hold_first_batch(recorder, release)
    ids = [uuid4() for _ in range(12)]
    results: dict[UUID, Sequence[int] | None] = {}

    def save(oid: UUID) -> None:
        results[oid] = recorder.insert_events(events(oid, [1, 2]))

    leader = threading.Thread(target=save, args=(ids[0],))
    leader.start()
    time.sleep(0.2)  # the leader is inside its transaction
    followers = [threading.Thread(target=save, args=(oid,)) for oid in ids[1:]]
    for t in followers:
        t.start()
    time.sleep(0.3)  # all of them queued
    release.set()
    for t in [leader, *followers]:
        t.join(20)
    assert (recorder.batches, recorder.saves) == (2, 12)
    assert all(stored(recorder, oid) == [1, 2] for oid in ids)
    notification_ids = sorted(n for r in results.values() for n in r or ())
    assert len(set(notification_ids)) == 24  # every event has its own id


def test_a_conflicting_save_fails_alone_in_its_batch(recorder: GroupCommitRecorder) -> None:
    contested, other = uuid4(), uuid4()
    recorder.insert_events(events(contested, [1]))
    release = threading.Event()
    hold_first_batch(recorder, release)
    outcomes: dict[str, str] = {}

    def save(name: str, oid: UUID, versions: list[int]) -> None:
        try:
            recorder.insert_events(events(oid, versions))
            outcomes[name] = "stored"
        except IntegrityError:
            outcomes[name] = "conflict"

    leader = threading.Thread(target=save, args=("leader", uuid4(), [1]))
    leader.start()
    time.sleep(0.2)
    racers = [
        threading.Thread(target=save, args=("a", contested, [2, 3])),
        threading.Thread(target=save, args=("b", other, [1])),
        threading.Thread(target=save, args=("c", contested, [2])),  # same version as a
    ]
    for t in racers:
        t.start()
    time.sleep(0.3)
    release.set()
    for t in [leader, *racers]:
        t.join(20)
    assert recorder.batches == 3  # the first insert, the held leader, the three racers
    assert sorted(outcomes.values()) == ["conflict", "stored", "stored", "stored"]
    winner = [n for n in ("a", "c") if outcomes[n] == "stored"]
    assert len(winner) == 1
    assert stored(recorder, contested) == ([1, 2, 3] if winner == ["a"] else [1, 2])
    assert stored(recorder, other) == [1]


def test_a_failed_commit_fails_every_save_of_the_batch(
    recorder: GroupCommitRecorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    bad, innocent = uuid4(), uuid4()
    original = recorder._insert_rows

    def broken(db: Any, stored_events: Sequence[StoredEvent]) -> Any:
        if stored_events[0].originator_id == bad:
            raise sqlite3.OperationalError("disk I/O error")
        return original(db, stored_events)

    monkeypatch.setattr(recorder, "_insert_rows", broken)
    release = threading.Event()
    hold_first_batch(recorder, release)
    outcomes: dict[UUID, str] = {}

    def save(oid: UUID) -> None:
        try:
            recorder.insert_events(events(oid, [1]))
            outcomes[oid] = "stored"
        except OperationalError:
            outcomes[oid] = "failed"

    leader = threading.Thread(target=save, args=(uuid4(),))
    leader.start()
    time.sleep(0.2)
    batch = [threading.Thread(target=save, args=(oid,)) for oid in (innocent, bad)]
    for t in batch:
        t.start()
    time.sleep(0.3)
    release.set()
    for t in [leader, *batch]:
        t.join(20)
    assert (outcomes[innocent], outcomes[bad]) == ("failed", "failed")
    assert stored(recorder, innocent) == stored(recorder, bad) == []
    fine = uuid4()
    recorder.insert_events(events(fine, [1]))  # the next batch is not affected
    assert stored(recorder, fine) == [1]


def test_a_lone_save_is_one_statement_all_or_none(recorder: GroupCommitRecorder) -> None:
    """A lone save is one multi-row INSERT without BEGIN/COMMIT: a conflict on its last
    event stores none of its events."""
    oid = uuid4()
    assert recorder.insert_events(events(oid, [3])) is not None
    with pytest.raises(IntegrityError):
        recorder.insert_events(events(oid, [1, 2, 3]))
    assert stored(recorder, oid) == [3]
    assert not recorder._writer_connection().in_transaction


def test_a_save_returns_its_notification_ids_in_order(recorder: GroupCommitRecorder) -> None:
    """Ids follow the events' order, over several statements too (ROWS_PER_STATEMENT)."""
    first = recorder.insert_events(events(uuid4(), [1, 2]))
    oid = uuid4()
    many = list(range(1, 1203))
    ids = recorder.insert_events(events(oid, many))
    assert first is not None and ids is not None
    assert list(ids) == list(range(first[-1] + 1, first[-1] + 1 + len(many)))
    assert stored(recorder, oid) == many
    notes = recorder.select_notifications(ids[0], 3)
    assert [n.id for n in notes] == list(ids[:3])
    assert [n.originator_version for n in notes] == [1, 2, 3]


# -- the loop's batch (WalSyncer.batched, docs/decisions.md D2b) ------------------------------


def syncer_of(rec: GroupCommitRecorder) -> WalSyncer:
    assert rec.syncer is not None
    return rec.syncer


def test_batched_saves_share_one_commit_made_by_settle(recorder: GroupCommitRecorder) -> None:
    """Commands ready in one turn of the loop save into one open transaction; nothing of
    it is visible (or promised) before a settle commits it, once, for all of them."""
    syncer = syncer_of(recorder)
    ids = [uuid4() for _ in range(5)]
    before = syncer.mark()

    async def command(oid: UUID) -> None:
        with syncer.batched():
            assert recorder.insert_events(events(oid, [1, 2]))
        assert recorder.open
        assert stored(recorder, oid) == []  # uncommitted: other connections see nothing
        await syncer.settle()
        assert stored(recorder, oid) == [1, 2]

    async def all_at_once() -> None:
        await asyncio.gather(*(command(oid) for oid in ids))

    asyncio.run(all_at_once())
    assert not recorder.open
    assert syncer.mark() == before + 1  # one COMMIT, one ticket
    assert all(stored(recorder, oid) == [1, 2] for oid in ids)


def test_a_conflict_in_the_batch_fails_alone(recorder: GroupCommitRecorder) -> None:
    syncer = syncer_of(recorder)
    taken, fine = uuid4(), uuid4()
    recorder.insert_events(events(taken, [1]))

    async def run() -> None:
        with syncer.batched():
            recorder.insert_events(events(fine, [1]))
            with pytest.raises(IntegrityError):
                recorder.insert_events(events(taken, [1, 2]))  # its version 1 is stored
            recorder.insert_events(events(fine, [2]))
        await syncer.settle()

    asyncio.run(run())
    assert stored(recorder, fine) == [1, 2]
    assert stored(recorder, taken) == [1]


def test_another_save_commits_the_open_batch_with_its_own(recorder: GroupCommitRecorder) -> None:
    """A save outside the batch (a worker thread, the CLI) commits the open transaction
    with it and waits for its fsync: the batch's saves are then committed too."""
    syncer = syncer_of(recorder)
    batched, alone = uuid4(), uuid4()
    with syncer.batched():
        recorder.insert_events(events(batched, [1]))
    assert recorder.open
    saved = threading.Thread(target=recorder.insert_events, args=(events(alone, [1]),))
    saved.start()
    saved.join(10)
    assert not recorder.open
    assert stored(recorder, batched) == stored(recorder, alone) == [1]
    asyncio.run(syncer.settle())  # nothing left to commit: returns once durable


class FailingCommit:
    """The writer connection, with a COMMIT that fails (as on a full disk)."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        self.in_transaction = False

    def execute(self, sql: str, *args: Any) -> Any:
        if sql == "COMMIT":
            raise sqlite3.OperationalError("database or disk is full")
        result = self.db.execute(sql, *args)
        self.in_transaction = self.db.in_transaction
        return result

    def close(self) -> None:
        self.db.close()


def test_a_lost_batch_fails_the_store(recorder: GroupCommitRecorder) -> None:
    """The batch's saves had returned: if its COMMIT fails they are lost, so the store is
    failed (every settle raises: the API answers 503) rather than answer for them."""
    syncer = syncer_of(recorder)
    oid = uuid4()
    recorder._writer = FailingCommit(recorder._writer_connection())  # type: ignore[assignment]

    async def run() -> None:
        with syncer.batched():
            recorder.insert_events(events(oid, [1]))
        await syncer.settle()

    with pytest.raises(OperationalError):
        asyncio.run(run())
    assert syncer.failed is not None
    assert not recorder.open
    assert stored(recorder, oid) == []
    with pytest.raises(OperationalError):
        asyncio.run(syncer.settle())


def test_closing_the_store_commits_an_open_batch(tmp_path: Path) -> None:
    env = persistence_env(Settings(backend="sqlite", sqlite_path=tmp_path / "events.db"))
    factory = InfrastructureFactory.construct(env | {"APPLICATION_NAME": "shengji"})
    rec = factory.application_recorder()
    assert isinstance(rec, GroupCommitRecorder)
    oid = uuid4()
    with syncer_of(rec).batched():
        rec.insert_events(events(oid, [1, 2, 3]))
    factory.close()
    again = InfrastructureFactory.construct(env | {"APPLICATION_NAME": "shengji"})
    try:
        reopened = again.application_recorder()
        assert isinstance(reopened, GroupCommitRecorder)
        assert stored(reopened, oid) == [1, 2, 3]
    finally:
        again.close()


def test_a_cancelled_settle_still_commits_the_batch(recorder: GroupCommitRecorder) -> None:
    """A request cancelled while it settles leaves no batch open (nothing would commit it
    until the next save or settle)."""
    syncer = syncer_of(recorder)
    oid = uuid4()

    async def run() -> None:
        async def command() -> None:
            with syncer.batched():
                recorder.insert_events(events(oid, [1]))
            await syncer.settle()

        task = asyncio.create_task(command())
        await asyncio.sleep(0)  # the command saved and yields in settle
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(run())
    assert not recorder.open
    assert stored(recorder, oid) == [1]

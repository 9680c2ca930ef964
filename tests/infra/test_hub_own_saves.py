"""The live hub takes this process's own saves as they were saved, not read back from the
store (docs/decisions.md D-path5): each commit is reached with its own notification, in
commit order; a commit another process made, or one no save of this process handed over,
is read as before. A connection stands in for PostgreSQL, so what the hub reads is counted
exactly."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any
from uuid import UUID, uuid4

from eventsourcing.persistence import Notification, Recording

from infra.hub import MATCH_CREATED, PostgresHub
from infra.pgstore import notified_ids
from services.saves import Recorded, Saves

SCHEMA = "shengji"


class Conn:
    """What the hub asks of an asyncpg connection; the log is :attr:`rows`."""

    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []
        self.reads = 0
        self.listeners: dict[str, Callable[..., None]] = {}

    def add_termination_listener(self, _callback: Callable[..., None]) -> None:
        pass

    async def add_listener(self, channel: str, callback: Callable[..., None]) -> None:
        self.listeners[channel] = callback

    async def fetchval(self, _sql: str, *_args: Any, timeout: float) -> int:
        return max((r["notification_id"] for r in self.rows), default=0)

    async def fetch(self, _sql: str, last: int, batch: int, timeout: float) -> list[Any]:
        self.reads += 1
        return [r for r in self.rows if r["notification_id"] > last][:batch]

    async def fetchrow(self, *_args: Any, timeout: float) -> Any:
        return None

    def is_closed(self) -> bool:
        return False

    async def close(self, timeout: float) -> None:
        pass

    def notify(self, payload: str) -> None:
        """A commit's notification reaching the hub's connection."""
        self.listeners["events"](self, 1, "events", payload)


def saved(conn: Conn, first: int, match_id: UUID, versions: range) -> list[Recording[UUID]]:
    """A save of ``versions`` of ``match_id`` at ids from ``first``, in the log."""
    out = []
    for i, version in enumerate(versions):
        n = Notification(
            id=first + i,
            originator_id=match_id,
            originator_version=version,
            topic=MATCH_CREATED,
            state=b"{}",
        )
        conn.rows.append({**vars(n), "notification_id": n.id})
        event: Any = ("event", match_id, version)
        out.append(Recording(event, n))
    return out


async def settled() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


@contextlib.asynccontextmanager
async def running_hub() -> AsyncIterator[tuple[Conn, Saves, PostgresHub]]:
    """A hub started on a fake connection, told of a :class:`Saves` (its poll out of
    reach), settled after its first read; stopped after."""
    conn = Conn()
    saves = Saves()

    async def connect(**_: Any) -> Conn:
        return conn

    hub = PostgresHub(
        {},
        schema=SCHEMA,
        table="events",
        channel="events",
        connect=connect,
        saves=saves,
        poll_s=3600,
    )
    await hub.start()
    try:
        await settled()
        yield conn, saves, hub
    finally:
        await hub.stop()


def test_notified_ids_name_the_schema_and_the_commit() -> None:
    assert notified_ids("shengji 12 14") == ("shengji", 12, 14)
    assert notified_ids("a schema 3 3") == ("a schema", 3, 3)
    assert notified_ids("") is None  # the library's own notification: read the log
    assert notified_ids("12 14") is None


def test_own_commits_are_taken_as_saved_and_others_read() -> None:
    async def scenario() -> None:
        async with running_hub() as (conn, saves, hub):
            reads = conn.reads  # the first read after connecting
            match_id = uuid4()
            sub = hub.subscribe(match_id)

            # the commit's notification comes before its save has handed its rows over
            ticket = saves.begin()
            recordings = saved(conn, 1, match_id, range(1, 3))
            conn.notify(f"{SCHEMA} 1 2")
            await settled()
            assert hub.position == 0 and conn.reads == reads  # it waits for the save
            saves.recorded.tell(Recorded(ticket, recordings))
            await settled()
            assert hub.position == 2 and conn.reads == reads  # taken, not read back
            assert sub.take() == [r.domain_event for r in recordings]

            # the rows handed over first, the notification after (a gap: rolled back)
            ticket = saves.begin()
            recordings = saved(conn, 5, match_id, range(3, 4))
            saves.recorded.tell(Recorded(ticket, recordings))
            await settled()
            assert hub.position == 2
            conn.notify(f"{SCHEMA} 5 5")
            await settled()
            assert hub.position == 5 and conn.reads == reads
            assert sub.take() == [recordings[0].domain_event]

            # another process's commit, no save of this one under way: read
            saved(conn, 6, match_id, range(4, 5))
            conn.notify(f"{SCHEMA} 6 6")
            await settled()
            assert hub.position == 6 and conn.reads == reads + 1
            assert sub.take() is None  # decoded by the mapper (none here: read the store)

            # another schema's store on the same channel: nothing to read
            conn.notify("elsewhere 7 7")
            await settled()
            assert conn.reads == reads + 1

            # a notification that names no rows: read
            conn.notify("")
            await settled()
            assert conn.reads == reads + 2

            # a save of this process under way that turns out not to be the commit notified
            ticket = saves.begin()
            saved(conn, 7, match_id, range(5, 6))
            conn.notify(f"{SCHEMA} 7 7")
            await settled()
            assert hub.position == 6  # it may be this process's: waits
            saves.recorded.tell(Recorded(ticket, []))  # that save failed
            await settled()
            assert hub.position == 7 and conn.reads == reads + 3

    asyncio.run(scenario())


def test_a_known_aggregate_s_rows_wake_its_match_without_a_look_up(
    monkeypatch: Any,
) -> None:
    """An aggregate's match is found once, from its first row; its later rows wake that
    match straight from what is kept (docs/decisions.md D-fan: no coroutine a row)."""
    looked: list[int] = []
    look_up = PostgresHub._match_of_row

    async def counted(self: PostgresHub, conn: Any, row: Any) -> UUID | None:
        looked.append(row.originator_version)
        return await look_up(self, conn, row)

    monkeypatch.setattr(PostgresHub, "_match_of_row", counted)

    async def scenario() -> None:
        async with running_hub() as (conn, saves, hub):
            match_id = uuid4()
            sub = hub.subscribe(match_id)
            for first, versions in ((1, range(1, 3)), (3, range(3, 5)), (5, range(5, 6))):
                ticket = saves.begin()
                recordings = saved(conn, first, match_id, versions)
                saves.recorded.tell(Recorded(ticket, recordings))
                conn.notify(f"{SCHEMA} {first} {first + len(versions) - 1}")
                await settled()
                assert sub.take() == [r.domain_event for r in recordings]
            assert looked == [1]  # the match's first row alone

    asyncio.run(scenario())

"""What the live streams keep between frames is not for the garbage collector to walk
(docs/decisions.md D-young): a follower's rings of frames hold no object the collector
tracks, and the streams' heartbeat alarms share one timer of the loop — no timer a
stream. Properties, not timings."""

from __future__ import annotations

import asyncio
import gc

import pytest

import api.match_follower
from api.match_follower import Ring
from api.sse import Alarms, Wake
from tests.api.sse_driver import TIMEOUT, many, stream, table, url

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # the hub is asyncio-only


async def test_a_followers_rings_hold_nothing_the_collector_tracks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A spectator's ring, a seat's ring and the seat's patch ring: their frames kept by
    version, the newest :data:`~api.match_follower.RING` of them, and none of the rings
    tracked by the collector (a ``(version, frame)`` tuple per frame was)."""
    monkeypatch.setattr(api.match_follower, "RING", 4)
    async with table() as t:
        seat = {"Authorization": f"Bearer {t.tokens[1]}"}
        async with (
            stream(t.app, url(t)) as watcher,
            stream(t.app, url(t, "frames=patch"), seat) as patcher,
        ):
            first = (await watcher.next_view()).id
            assert first is not None
            await t.steps(6)
            last = t.version()
            while (await watcher.next_view()).id != last:
                pass
            follower = await t.live.acquire(t.match_id)
            try:
                rings: dict[object, Ring] = {v: r for v, r in follower.rings.items()}
                rings.update({("patch", v): r for v, r in follower.patch_rings.items()})
                assert set(rings) == {None, 1, ("patch", 1)}
                for ring in rings.values():
                    assert list(ring) == list(range(last - 3, last + 1))  # the newest four
                    assert not gc.is_tracked(ring)
                assert follower.rings[None][last].startswith(b"event: view\nid: %d\n" % last)
            finally:
                t.live.release(follower)
            assert patcher.status == 200


async def test_idle_streams_share_one_timer() -> None:
    """Twenty more streams waiting for their next frame add no timer of the loop: their
    heartbeat alarms are entries on the one timer of :class:`api.sse.Alarms`."""

    def timers() -> int:
        return sum(type(o).__name__ == "TimerHandle" for o in gc.get_objects())

    async def idle(t_streams: int) -> None:  # every stream has sent its backlog and waits
        async with asyncio.timeout(TIMEOUT):
            while t.live.streams < t_streams:
                await asyncio.sleep(0.01)
            await asyncio.sleep(0.05)

    async with table() as t, stream(t.app, url(t)) as one:
        await one.next_view()
        await idle(1)
        before = timers()
        async with many(t, 20) as streams:
            for s in streams:
                await s.next_view()
            await idle(21)
            assert timers() - before <= 1


async def test_alarms_ring_each_wake_up_not_before_its_time() -> None:
    """Five alarms on one set of alarms: each rings once, none before its time; a disarmed
    one does not ring; one set again after it rang rings again."""
    loop = asyncio.get_running_loop()
    alarms = Alarms(0.01)
    wakes = [Wake(alarms) for _ in range(5)]
    start = loop.time()
    due = [start + 0.015 * (i + 1) for i in range(5)]
    for wake, when in zip(wakes, due, strict=True):
        wake.arm(loop, when)
    wakes[2].disarm()
    rung: dict[int, float] = {}

    async def watch(i: int) -> None:
        await wakes[i].wait()
        rung[i] = loop.time()
        assert wakes[i].take() is True  # the alarm alone

    async with asyncio.timeout(TIMEOUT):
        await asyncio.gather(*(watch(i) for i in (0, 1, 3, 4)))
        await asyncio.sleep(2 * alarms.tick_s)
    assert set(rung) == {0, 1, 3, 4}
    assert all(rung[i] >= due[i] - 0.001 for i in rung)  # the loop's clock: to a millisecond
    assert not wakes[2].is_set()
    again = loop.time() + 0.02
    wakes[0].arm(loop, again)
    async with asyncio.timeout(TIMEOUT):
        await wakes[0].wait()
    assert loop.time() >= again - 0.001

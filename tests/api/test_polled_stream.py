"""The one loop of the polled SSE streams (:mod:`api.polled_stream`): frames at once, a
full page polled again at once, pings while quiet, the end by ``done``, by the lifetime
or by a drain (with ``retry:``), and frames as SSE spells them."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable

import anyio
import pytest

from api.polled_stream import Polled, Timing, polled, sse_frame
from api.sse import PING

RETRY = b"retry: 7\n\n"


def run(
    answers: list[Polled], timing: Timing, closing: Callable[[], bool] | None = None
) -> list[bytes]:
    calls = iter(answers)

    async def poll() -> Polled:
        return next(calls, Polled())

    async def main() -> list[bytes]:
        stream = polled(poll, timing) if closing is None else polled(poll, timing, closing)
        return [frame async for frame in stream]

    return anyio.run(main)


FAST = Timing(poll_s=0.001, heartbeat_s=3600, lifetime_s=3600, retry_ms=7)


@pytest.mark.parametrize(
    ("answers", "timing", "sent"),
    [
        ([Polled([b"a"], done=True)], FAST, [b"a"]),
        ([Polled([b"a"], more=True), Polled([b"b"], done=True)], FAST, [b"a", b"b"]),
        ([Polled(), Polled(), Polled([b"c"], done=True)], FAST, [b"c"]),
        ([Polled([b"a"])], Timing(0.001, 3600, 0.0, retry_ms=7), [b"a", RETRY]),
        ([Polled([b"a"])], Timing(0.001, 3600, 0.0), [b"a"]),  # no hint asked
        ([Polled(), Polled([b"d"], done=True)], Timing(0.001, 0.0, 3600), [PING, b"d"]),
    ],
)
def test_the_loop(answers: list[Polled], timing: Timing, sent: list[bytes]) -> None:
    assert run(answers, timing) == sent


def test_a_draining_server_ends_the_stream_with_a_hint() -> None:
    assert run([Polled([b"a"]), Polled([b"b"])], FAST, closing=lambda: True) == [b"a", RETRY]


@pytest.mark.parametrize(
    ("event", "frame_id", "frame"),
    [
        ("ticket", 2, b'event: ticket\nid: 2\ndata: {"x":1}\n\n'),
        ("deal", None, b'event: deal\ndata: {"x":1}\n\n'),
    ],
)
def test_frames(event: str, frame_id: int | None, frame: bytes) -> None:
    assert sse_frame(event, b'{"x":1}', frame_id) == frame


def test_a_burst_of_wake_ups_is_one_read_per_gap() -> None:
    """A woken stream reads at once, and during a burst (a change every 10 ms) no sooner
    than ``min_gap_s`` after its last read: bots moving at every table are not one read
    each."""
    reads: list[float] = []

    async def main() -> None:
        wake = asyncio.Event()

        async def poll() -> Polled:
            reads.append(anyio.current_time())
            return Polled(done=len(reads) == 4)

        async def burst() -> None:
            while len(reads) < 4:
                await anyio.sleep(0.01)
                wake.set()

        timing = Timing(poll_s=3600, heartbeat_s=3600, lifetime_s=3600, min_gap_s=0.2)
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(burst)
            assert [frame async for frame in polled(poll, timing, wake=wake)] == []

    anyio.run(main)
    gaps = [b - a for a, b in itertools.pairwise(reads)]
    assert len(reads) == 4 and all(gap >= 0.2 for gap in gaps), gaps

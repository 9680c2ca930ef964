"""A viewer's ring of frames (``api.match_follower.Ring``, docs/decisions.md D-fan): the
frames after a version as a stream asks for them, and nothing per frame that the garbage
collector walks (a frame is kept for minutes at a quiet table)."""

from __future__ import annotations

import gc

import pytest

from api.match_follower import RING, Ring


def ring_of(versions: range) -> Ring:
    ring = Ring()
    for v in versions:
        ring.append(v, b"frame %d" % v)
    return ring


@pytest.mark.parametrize(
    ("kept", "last", "after"),
    [
        (range(5, 9), 8, []),  # caught up
        (range(5, 9), 7, [8]),  # the newest
        (range(5, 9), 5, [6, 7, 8]),
        (range(5, 9), 4, [5, 6, 7, 8]),  # the ring's first is the next
        (range(5, 9), 3, None),  # it starts later: read the store
        (range(0), 3, None),  # nothing kept
        (range(1, 1 + RING + 10), 10, list(range(11, 1 + RING + 10))),  # the oldest dropped
        (range(1, 1 + RING + 10), 9, None),
    ],
)
def test_the_frames_after_a_version(kept: range, last: int, after: list[int] | None) -> None:
    found = ring_of(kept).after(last)
    if after is None:
        assert found is None
    else:
        assert found == [(v, b"frame %d" % v) for v in after]


def test_a_kept_frame_is_nothing_the_collector_walks() -> None:
    ring = ring_of(range(1, 40))
    kept = [*gc.get_referents(ring.versions), *gc.get_referents(ring.blocks)]
    assert len(kept) == 2 * 39
    assert not any(gc.is_tracked(entry) for entry in kept)
    assert ring.newest() == (39, b"frame 39")

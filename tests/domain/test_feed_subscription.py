"""The feed subscription aggregate (docs/events.md, "Subscriptions"): ranges leased in
order, the checkpoint moving on only over ranges acknowledged without a gap, an expired
lease's range claimed again first, a lost lease refused."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.feed_subscription import FeedSubscription, LeaseLostError, subscription_id
from domain.rules.errors import IllegalMoveError, InvalidInputError

T0 = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)


def sub(start: int = 0) -> FeedSubscription:
    return FeedSubscription.create("warehouse", (), start, 1000, T0)


@pytest.mark.parametrize(
    ("acks", "checkpoint"),
    [
        ([], 0),
        (["a"], 10),
        (["b"], 0),  # (10, 20] done, (0, 10] not yet: no gap jumped
        (["b", "a"], 20),
        (["c", "a"], 10),
        (["c", "b", "a"], 30),
    ],
)
def test_the_checkpoint_moves_over_acknowledged_ranges_only(
    acks: list[str], checkpoint: int
) -> None:
    s = sub()
    for lease, (after, upto) in zip("abc", [(0, 10), (10, 20), (20, 30)], strict=True):
        s.claim(lease, "w", after, upto, T0)
    for lease in acks:
        s.acknowledge(lease, "w", T0)
    assert (s.checkpoint, s.handed) == (checkpoint, 30)


def test_an_expired_range_is_claimed_again_first_and_the_late_ack_is_refused() -> None:
    s = sub(5)
    s.claim("a", "one", 5, 15, T0)
    later = T0 + timedelta(seconds=2)
    assert s.expired(later) is not None
    with pytest.raises(IllegalMoveError):
        s.claim("b", "two", 15, 25, later)  # the expired range comes first
    s.claim("b", "two", 5, 15, later)
    with pytest.raises(LeaseLostError):
        s.acknowledge("a", "one", later)
    with pytest.raises(LeaseLostError):
        s.acknowledge("b", "one", later)  # held by another consumer
    s.acknowledge("b", "two", later)
    assert s.checkpoint == 15 and s.leases == {}


def test_a_commit_moves_the_checkpoint_over_what_is_not_leased() -> None:
    s = sub()
    s.commit(12, T0)
    assert (s.checkpoint, s.handed, s.leases) == (12, 12, {})
    s.claim("a", "w", 12, 20, T0)
    s.commit(25, T0)  # (12, 20] is leased: the checkpoint waits for it
    assert (s.checkpoint, s.handed, set(s.leases)) == (12, 25, {"a"})
    s.acknowledge("a", "w", T0)
    assert (s.checkpoint, s.leases) == (25, {})
    s.commit(3, T0)  # behind the checkpoint: nothing
    assert s.checkpoint == 25 and len(s.collect_events()) == 5


def test_a_commit_keeps_other_consumers_leases() -> None:
    """One consumer commits past two ranges leased to others: both stay leased — the one
    acknowledged moves the checkpoint on, the one whose consumer died is claimed again."""
    s = sub()
    s.claim("a", "one", 0, 10, T0)
    s.claim("b", "two", 10, 20, T0)
    s.commit(20, T0)
    s.acknowledge("a", "one", T0)
    assert s.checkpoint == 10
    later = T0 + timedelta(seconds=2)
    assert s.expired(later) == s.leases["b"]
    s.claim("c", "one", 10, 20, later)
    s.acknowledge("c", "one", later)
    assert (s.checkpoint, s.leases) == (20, {})


def covered(s: FeedSubscription, start: int) -> list[int]:
    """How many times each position after ``start`` up to what was handed out is held:
    below the checkpoint, in an acknowledged range or in a lease (1 each: never lost)."""
    counts = [0] * (s.handed - start)
    ranges = [(start, s.checkpoint), *s.acked.items()]
    ranges += [(x.after, x.upto) for x in s.leases.values()]
    for after, upto in ranges:
        for p in range(after, upto):
            counts[p - start] += 1
    return counts


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("cakx"), st.integers(0, 3), st.integers(1, 8))))
def test_two_consumers_and_commits_never_lose_a_range(
    steps: list[tuple[str, int, int]],
) -> None:
    """Claims (``c``), acknowledgements (``a``), commits (``k``) and time passing (``x``) in
    any order by two consumers: every position handed out is held exactly once."""
    s, now, n = sub(5), T0, 0
    for op, who, size in steps:
        consumer = ("one", "two")[who % 2]
        if op == "c":
            expired = s.expired(now)
            after, upto = (expired.after, expired.upto) if expired else (s.handed, s.handed + size)
            n += 1
            s.claim(f"l{n}", consumer, after, upto, now)
        elif op == "a":
            mine = sorted(k for k, x in s.leases.items() if x.consumer == consumer)
            if mine:
                s.acknowledge(mine[0], consumer, now)
        elif op == "k":
            s.commit(s.handed + size - 4, now)
        else:
            now += timedelta(milliseconds=600 * size)
        assert covered(s, 5) == [1] * (s.handed - 5)
    for lease, held in list(s.leases.items()):
        s.acknowledge(lease, held.consumer, now)
    assert s.checkpoint == s.handed


@pytest.mark.parametrize(
    ("name", "lease_ms", "start"),
    [("", 1000, 0), ("-x", 1000, 0), ("a" * 65, 1000, 0), ("ok", 999, 0), ("ok", 1000, -1)],
)
def test_bad_subscriptions_are_refused(name: str, lease_ms: int, start: int) -> None:
    with pytest.raises(InvalidInputError):
        FeedSubscription.create(name, (), start, lease_ms, T0)


def test_one_subscription_per_name() -> None:
    assert sub().id == subscription_id("warehouse") != subscription_id("other")

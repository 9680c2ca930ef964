"""The feed subscription aggregate (docs/events.md, "Subscriptions"): ranges leased in
order, the checkpoint moving on only over ranges acknowledged without a gap, an expired
lease's range claimed again first, a lost lease refused."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

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


def test_a_commit_moves_the_checkpoint_and_drops_what_it_covers() -> None:
    s = sub()
    s.claim("a", "w", 0, 10, T0)
    s.commit(12, T0)
    assert (s.checkpoint, s.handed, s.leases) == (12, 12, {})
    s.commit(3, T0)  # behind the checkpoint: nothing
    assert s.checkpoint == 12 and len(s.collect_events()) == 3


@pytest.mark.parametrize(
    ("name", "lease_ms", "start"),
    [("", 1000, 0), ("-x", 1000, 0), ("a" * 65, 1000, 0), ("ok", 999, 0), ("ok", 1000, -1)],
)
def test_bad_subscriptions_are_refused(name: str, lease_ms: int, start: int) -> None:
    with pytest.raises(InvalidInputError):
        FeedSubscription.create(name, (), start, lease_ms, T0)


def test_one_subscription_per_name() -> None:
    assert sub().id == subscription_id("warehouse") != subscription_id("other")

"""A load waits until the hub has read the log as far as it ended when the load began;
the log's end is asked once for loads that begin together (docs/decisions.md D-settle,
services.settling)."""

from __future__ import annotations

import threading

from services.settling import Settling


def test_no_hub_no_question() -> None:
    s = Settling()
    with Settling.one_read():
        assert s.needed() is False
    s.follow()
    with Settling.one_read():
        assert s.needed() is True


def test_a_load_waits_until_the_hub_has_read_to_the_logs_end() -> None:
    s = Settling()
    s.told(7)
    assert s.reach(7, 0) is True
    assert s.reach(9, 0.01) is False  # not read yet: the load reads the store
    reached: list[bool] = []
    waiter = threading.Thread(target=lambda: reached.append(s.reach(9, 30)))
    waiter.start()
    s.told(8)
    s.told(9)
    waiter.join(30)
    assert reached == [True]


def test_a_lost_connection_releases_every_waiting_load_to_the_store() -> None:
    s = Settling()
    reached: list[bool] = []
    waiter = threading.Thread(target=lambda: reached.append(s.reach(3, 60)))
    waiter.start()
    while waiter.is_alive():  # (a release before the wait began releases nothing)
        s.release()
        waiter.join(0.01)
    assert reached == [False]


def test_loads_begun_while_a_query_runs_share_the_next_one() -> None:
    """Load 1 asks; loads 2 and 3 begin while its query runs (its answer may predate
    them): load 2 asks again, load 3 takes load 2's answer. Three loads, two queries."""
    s = Settling()
    in_query, go_on = threading.Event(), threading.Event()
    ends = iter([10, 12])

    def ask() -> int:
        if not in_query.is_set():
            in_query.set()
            go_on.wait(30)
        return next(ends)

    answers: dict[int, int] = {}

    def load(n: int) -> None:
        answers[n] = s.end_of_log(ask)

    first = threading.Thread(target=load, args=(1,))
    first.start()
    in_query.wait(30)
    later = [threading.Thread(target=load, args=(n,)) for n in (2, 3)]
    for t in later:
        t.start()
    go_on.set()
    for t in (first, *later):
        t.join(30)
    assert answers == {1: 10, 2: 12, 3: 12}
    assert (s.asked, s.settles) == (2, 3)


def test_one_read_settles_once_and_a_command_not_at_all() -> None:
    s = Settling()
    s.follow()
    with Settling.one_read():
        assert [s.needed() for _ in range(3)] == [True, False, False]
    with Settling.deciding():
        assert s.needed() is False
    assert s.needed() is False  # outside a request's read: background work, streams

"""A load waits for the saves notified before it began, never for later ones
(docs/decisions.md D-owner, services.settling)."""

from __future__ import annotations

import threading
import time

from services.settling import Settling


def test_nothing_heard_nothing_to_wait_for() -> None:
    assert Settling().wait(0) is True


def test_a_load_waits_for_what_was_heard_before_it_until_it_is_told() -> None:
    s = Settling()
    s.heard()
    mark = s.notified  # the hub starts reading the rows of that notification
    assert s.wait(0.01) is False  # not told yet: a load would wait (at most its limit)
    done = threading.Event()

    def load() -> None:
        s.wait(10)
        done.set()

    waiter = threading.Thread(target=load)
    waiter.start()
    s.told_up_to(mark)
    waiter.join(10)
    assert done.is_set()


def test_a_steady_stream_of_notifications_never_holds_a_load_past_its_own() -> None:
    """Under steady saves the hub is never idle: a load waits for the notifications heard
    before it began and is released when the read covering them ends, although more
    notifications arrived meanwhile."""
    s = Settling()
    s.heard()
    released = threading.Event()

    def load() -> None:
        if s.wait(10):
            released.set()

    waiter = threading.Thread(target=load)
    waiter.start()
    time.sleep(0.05)  # the load waits for the first notification
    mark = s.notified  # the read that covers it starts
    for _ in range(5):
        s.heard()  # more saves notified meanwhile: not this load's concern
    s.told_up_to(mark)
    waiter.join(10)
    assert released.is_set()
    assert s.told < s.notified  # the later ones are still pending for later loads


def test_a_lost_connection_releases_every_waiting_load() -> None:
    s = Settling()
    for _ in range(3):
        s.heard()
    s.all_told()
    assert s.wait(0) is True

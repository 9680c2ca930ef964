"""The trusted aggregate cache's rules (services/kept_cache.py, docs/decisions.md D-owner),
on copies that are only a version: a put older than a row heard or than the copy held is
refused; while the cache is not kept loads miss and nothing is put; a put whose load began
before the cache turned is refused. (With two processes on PostgreSQL:
tests/integration/test_owner_cache.py.)
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any
from uuid import UUID, uuid4

import pytest
from eventsourcing.persistence import StoredEvent

from services.kept_cache import KeptCache


def copy_at(version: int) -> Any:
    return SimpleNamespace(version=version)


def row(aggregate_id: UUID, version: int) -> StoredEvent:
    return StoredEvent(originator_id=aggregate_id, originator_version=version, topic="t", state=b"")


def loaded(cache: KeptCache, aggregate_id: UUID, version: int) -> None:
    """What the library does on a miss: ask, read the store, put what it read."""
    with pytest.raises(KeyError):
        cache.get(aggregate_id)
    cache.put(aggregate_id, copy_at(version))


def cached_version(cache: KeptCache, aggregate_id: UUID) -> int | None:
    try:
        return int(cache.get(aggregate_id).version)
    except KeyError:
        return None


def never(*_: Any) -> Any:
    raise AssertionError("nothing cached to bring up")


def test_a_copy_older_than_a_row_heard_is_not_put() -> None:
    cache, a = KeptCache(10), uuid4()
    with pytest.raises(KeyError):
        cache.get(a)  # a load misses and reads version 4 from the store …
    cache.heard([row(a, 5)], never, never)  # … another process's save 5 is heard …
    cache.put(a, copy_at(4))  # … before the load puts what it read
    assert cached_version(cache, a) is None  # the next load reads the store
    loaded(cache, a, 5)
    assert cached_version(cache, a) == 5


def test_a_put_never_takes_the_copy_back() -> None:
    cache, a = KeptCache(10), uuid4()
    loaded(cache, a, 6)
    cache.begin()
    cache.put(a, copy_at(5))  # a save's put, overtaken
    assert cached_version(cache, a) == 6


def test_while_not_kept_loads_miss_and_nothing_is_put() -> None:
    cache, a = KeptCache(10), uuid4()
    loaded(cache, a, 3)
    cache.lose()
    assert cached_version(cache, a) is None
    loaded(cache, a, 4)
    cache.keep()
    assert cached_version(cache, a) is None  # the load read past the copy held: dropped
    loaded(cache, a, 4)
    assert cached_version(cache, a) == 4


def test_a_copy_from_before_the_turn_is_kept_when_nothing_read_past_it() -> None:
    cache, a = KeptCache(10), uuid4()
    loaded(cache, a, 3)
    cache.lose()
    cache.keep()
    assert cached_version(cache, a) == 3  # the hub's rows bring it up


def test_a_save_that_waited_out_the_turn_drops_the_copy_from_before_it() -> None:
    # The store restarts under a save: the library retries it until the store is back,
    # the hub meanwhile loses its connection, reconnects and catches up, and then the save
    # commits. Its put is refused (another epoch), and the hub takes its rows as this
    # process's own (not told to the cache again): the copy from before must not stay.
    cache, a = KeptCache(10), uuid4()
    loaded(cache, a, 39)
    cache.begin()  # the save begins …
    cache.lose()  # … the store goes away and comes back, the hub catches up …
    cache.keep()
    cache.put(a, copy_at(40))  # … then the save commits and puts its copy
    cache.saved([row(a, 40)])
    assert cached_version(cache, a) is None  # the next load reads the store
    loaded(cache, a, 40)
    assert cached_version(cache, a) == 40


def test_a_put_begun_before_the_cache_turned_is_refused() -> None:
    cache, a = KeptCache(10), uuid4()
    with pytest.raises(KeyError):
        cache.get(a)  # the load begins …
    cache.lose()  # … the hub's connection drops and comes back …
    cache.keep()
    cache.put(a, copy_at(2))  # … then it puts what it read before
    assert cached_version(cache, a) is None
    loaded(cache, a, 2)
    assert cached_version(cache, a) == 2


def test_a_cache_that_starts_not_kept_puts_nothing_until_kept() -> None:
    cache, a = KeptCache(10, kept=False), uuid4()
    loaded(cache, a, 1)
    cache.keep()
    assert cached_version(cache, a) is None
    loaded(cache, a, 1)
    assert cached_version(cache, a) == 1

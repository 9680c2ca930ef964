"""The trusted aggregate cache: the library's LRU cache, never holding a copy older than a
save this process has heard of (docs/decisions.md D-owner).

With ``AGGREGATE_CACHE_FASTFORWARD=n`` the library serves a cached aggregate without asking
the store, and puts an aggregate in the cache in two places: after a load that missed it
(rebuilt from the store) and after a save (the aggregates saved). Other processes' saves
reach the cache through the live hub (:meth:`KeptCache.heard`). Three windows would leave a
stale copy in the cache for good, and each is closed here:

* **A put overtaken by a row heard.** A load that missed read the store at version 14; before
  it puts its copy, the hub hears another process's row 15 (nothing cached to bring up).
  Or a save of this process's put lands after the hub has brought the cached copy past it.
  The cache keeps the highest version heard of every aggregate (:attr:`KeptCache.heard_up_to`,
  bounded) and refuses a put older than it or than the copy it holds.
* **The hub away.** While the hub has no connection (a PostgreSQL restart, a network fault),
  nobody tells the cache of other processes' saves: loads miss (:meth:`KeptCache.get` raises
  ``KeyError``, the library reads the store), puts are refused. The hub reads on from where
  it was when it connects again and brings the copies kept before up to every row missed;
  once that read is done the cache is :meth:`~KeptCache.keep`-ing again. A process whose hub
  has not connected yet starts the same way.
* **A put begun before such a turn.** A load or save that began while the cache was not kept
  (or before the hub was lost) and puts after it turned: its copy may predate rows the hub
  will never read again. Each turn starts a new epoch; a thread's miss or save notes the
  epoch it began in (:meth:`KeptCache.begin`), and a put of another epoch is refused.

Refusing a put is always safe: the next load reads the store.
"""

from __future__ import annotations

import contextlib
import copy
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from typing import Any
from uuid import UUID

from eventsourcing.application import LRUCache
from eventsourcing.persistence import StoredEvent

HEARD_SIZE_PER_CACHED = 4
"""Aggregates whose highest heard version is remembered, per aggregate the cache holds."""

Decode = Callable[[StoredEvent], Any]
Replay = Callable[[Any, Iterable[Any]], Any]


class KeptCache(LRUCache[UUID, Any]):
    """The library's LRU cache with the rules of the module docstring (thread-safe)."""

    def __init__(self, maxsize: int, *, kept: bool = True) -> None:
        super().__init__(maxsize)
        self._turning = threading.Lock()
        """Held by every check-then-put and by :meth:`heard` (the library's own lock guards
        only the linked list)."""
        self._local = threading.local()
        self.kept = kept
        """Loads may trust the cache: every save heard of is told to it (the hub is
        connected and has read on from where it was)."""
        self.epoch = 0 if kept else 1
        """Counts the turns between kept and not kept."""
        self.heard_up_to: OrderedDict[UUID, int] = OrderedDict()
        """The highest version heard of each aggregate (the most recent
        ``maxsize * HEARD_SIZE_PER_CACHED``)."""
        self._heard_size = max(1, maxsize) * HEARD_SIZE_PER_CACHED

    # -- the library's cache API -------------------------------------------------------------

    def get(self, key: UUID, *, evict: bool = False) -> Any:
        """The cached copy; a miss (``KeyError``) while the cache is not kept. A miss notes
        the epoch the load began in (its put follows)."""
        if evict:
            return super().get(key, evict=True)
        if not self.kept or getattr(self._local, "miss", False):
            self._local.miss = False
            self.begin()
            raise KeyError(key)
        try:
            return super().get(key)
        except KeyError:
            self.begin()
            raise

    def put(self, key: UUID, value: Any) -> Any:
        """Put ``value`` unless it is older than a row heard or than the copy held, or its
        load or save began in another epoch (then drop what is held, if older)."""
        with self._turning:
            if not self.kept or getattr(self._local, "epoch", 0) != self.epoch:
                self._drop_older(key, value)
                return None
            return self._put_newer(key, value)

    # -- what the process does with it -------------------------------------------------------

    def begin(self) -> None:
        """A load or save starts on this thread: its put belongs to the current epoch."""
        self._local.epoch = self.epoch

    def peek(self, key: UUID) -> Any:
        """The copy held (``KeyError``: none), for reading only; not a load (no epoch)."""
        return super().get(key)

    def miss_once(self) -> None:
        """This thread's next load reads the store (it could not be settled: D-settle)."""
        self._local.miss = True

    def keep(self) -> None:
        """Every save heard of is told from now on: loads trust the cache."""
        with self._turning:
            if not self.kept:
                self.kept = True
                self.epoch += 1

    def lose(self) -> None:
        """Saves may go unheard (the hub lost its connection): loads read the store."""
        with self._turning:
            if self.kept:
                self.kept = False
                self.epoch += 1

    def forget(self, key: UUID) -> None:
        """Drop the cached copy of ``key`` (nothing happens when there is none)."""
        with contextlib.suppress(KeyError):
            super().get(key, evict=True)

    def heard(self, stored: Sequence[StoredEvent], decode: Decode, replay: Replay) -> int:
        """Rows of the store's log, in order: note the highest version of each aggregate,
        bring a cached copy older than its rows up to them (a copy of it with the new
        events applied) or drop it when they do not follow on from it. The count of copies
        brought up or dropped."""
        rows: dict[UUID, list[StoredEvent]] = {}
        for row in stored:
            rows.setdefault(UUID(str(row.originator_id)), []).append(row)
        behind: list[tuple[UUID, Any, list[StoredEvent]]] = []
        with self._turning:  # noted before a put can be checked against it
            for aggregate_id, found in rows.items():
                self._note(aggregate_id, max(r.originator_version for r in found))
                try:
                    cached: Any = super().get(aggregate_id)
                except KeyError:
                    continue
                newer = [r for r in found if r.originator_version > cached.version]
                if newer:
                    behind.append((aggregate_id, cached, newer))
        for aggregate_id, cached, newer in behind:  # the copies made outside the lock
            brought = self._brought_up(cached, newer, decode, replay)
            with self._turning:
                if brought is None:
                    self.forget(aggregate_id)  # the next load reads the store
                else:
                    self._put_newer(aggregate_id, brought)
        return len(behind)

    def saved(self, stored: Iterable[StoredEvent]) -> None:
        """Rows this process's save just stored (its copies are in the cache already, put
        by the save): note each aggregate's version as heard, as the hub did when it read
        them back (docs/decisions.md D-path5), so no older copy is put after them."""
        with self._turning:
            for row in stored:
                aggregate_id = row.originator_id
                if not isinstance(aggregate_id, UUID):
                    aggregate_id = UUID(aggregate_id)
                self._note(aggregate_id, row.originator_version)

    # -- internals -------------------------------------------------------------------------

    def _note(self, aggregate_id: UUID, version: int) -> None:
        heard = self.heard_up_to
        if heard.get(aggregate_id, 0) < version:
            heard[aggregate_id] = version
        heard.move_to_end(aggregate_id)
        if len(heard) > self._heard_size:
            heard.popitem(last=False)

    @staticmethod
    def _brought_up(
        cached: Any, newer: list[StoredEvent], decode: Decode, replay: Replay
    ) -> Any | None:
        """A copy of ``cached`` with ``newer`` applied; None when they do not follow on
        from it (a gap) or cannot be read."""
        versions = [r.originator_version for r in newer]
        if versions != list(range(cached.version + 1, cached.version + 1 + len(newer))):
            return None
        try:
            return replay(copy.deepcopy(cached), [decode(r) for r in newer])
        except Exception:
            return None

    def _drop_older(self, key: UUID, value: Any) -> None:
        """(Holding ``_turning``.) A put refused: drop the copy held if ``value`` is newer.
        A save that waited out the hub's turn (the store restarting under it) is in the
        store, and the hub, reaching its rows as this process's own, takes them as put
        (docs/decisions.md D-path5): the copy from before it must not be trusted again."""
        if value is None:
            return
        try:
            held: Any = super().get(key)
        except KeyError:
            return
        if held.version < value.version:
            self.forget(key)

    def _put_newer(self, key: UUID, value: Any) -> Any:
        """(Holding ``_turning``.) Put ``value`` unless a newer version is heard or held."""
        if value is None:
            return None
        version = value.version
        if version < self.heard_up_to.get(key, 0):
            return None  # a save heard of is newer: the next load reads the store
        try:
            held: Any = super().get(key)
        except KeyError:
            held = None
        if held is not None and held.version > version:
            return None  # overtaken: the copy held is newer
        return super().put(key, value)

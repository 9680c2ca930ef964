"""A past day's partition of the tidy tables, built once and served again while nothing
that could change it happened (docs/analysis.md "Partitions", docs/decisions.md D-bounded).

A partition is one table's rows of the matches that entered a reader's history on one UTC
day (:mod:`services.analysis.dump`). Once its day is **settled** — ended at least
:data:`SETTLE` ago, so that no command stamped within it is still to be saved — the
history only adds to other days, with three exceptions, each an event of the log:

* a record imported now whose match ended on that day (``MatchImported``);
* a player erased: their name reads as erased in every row that showed it
  (``AccountErased``, docs/players.md);
* a tournament's facts behind ``tournament_tables``: a result corrected or entered, a
  team renamed, a round completed (any event of a tournament).

:class:`Changes` follows those events in the log (the library's notification log filtered
by their topics, read from where it last stopped) and gives each table its **mark**: the
last of them that could change it. A partition built at a mark is the partition for as
long as the mark stays; :class:`PartitionCache` keeps what was built (bounded by bytes,
the least recently used forgotten first), with a strong validator — the sha256 of the
file — and the time it may last have changed (the day's end, or the mark's event if
later), so an answer can be a 304.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any, Final

from eventsourcing.utils import get_topic

from domain.accounts.account import AccountErased
from domain.game.match_events import MatchImported
from domain.tournament import events as tournament_events
from domain.tournament.events import TournamentCreated, TournamentEvent
from services.analysis.dump import Format, table_chunks
from services.analysis.rows import Reader
from services.game import GameService
from services.ratings.boards import RatingModels

SETTLE: Final = timedelta(hours=1)
"""How long after its day's end a partition is settled: far longer than a command takes
between reading the clock and saving."""
PAGE: Final = 1000
"""Notifications read per query while following the changes."""
TOURNAMENT_TABLES: Final = "tournament_tables"


def _subclasses(cls: type) -> Iterator[type]:
    sub: type
    for sub in cls.__subclasses__():
        yield sub
        yield from _subclasses(sub)


TOURNAMENT_TOPICS: Final = frozenset(
    get_topic(cls)
    for cls in (TournamentCreated, *_subclasses(TournamentEvent))
    if cls.__module__ == tournament_events.__name__
)
"""Every event of a tournament: each may change a ``tournament_tables`` row."""
EVERY_TABLE_TOPICS: Final = frozenset({get_topic(MatchImported), get_topic(AccountErased)})
"""Events that may change a settled partition of any table."""


def settled(day: date, now: datetime) -> bool:
    """Whether ``day``'s partitions are settled at ``now`` (the module docstring)."""
    return day_end(day) + SETTLE <= now


def day_end(day: date) -> datetime:
    return datetime.combine(day + timedelta(days=1), time(), tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class Mark:
    """The last change that could alter a settled partition: its log position (0: none
    known) and when it happened."""

    position: int
    at: datetime


class Changes:
    """The marks of the tables (the module docstring), kept up with the log. What happened
    before this process first looked is not read back: the first mark is the log's end
    then, at that moment (a cache starts empty anyway)."""

    def __init__(self, service: GameService) -> None:
        self.service = service
        self._lock = threading.Lock()
        self._seen: int | None = None
        self._every: Mark | None = None
        self._tournaments: Mark | None = None

    def mark(self, table: str) -> Mark:
        """``table``'s mark now (blocking: reads the log's end, and what was added)."""
        with self._lock:
            self._catch_up()
            assert self._every is not None and self._tournaments is not None
            if table == TOURNAMENT_TABLES and self._tournaments.position > self._every.position:
                return self._tournaments
            return self._every

    def _catch_up(self) -> None:
        recorder = self.service.recorder
        top = recorder.max_notification_id() or 0
        if self._seen is None:
            start = Mark(top, self.service.clock())
            self._seen, self._every, self._tournaments = top, start, start
            return
        topics = sorted(EVERY_TABLE_TOPICS | TOURNAMENT_TOPICS)
        while self._seen < top:
            page = recorder.select_notifications(
                self._seen, PAGE, stop=top, topics=topics, inclusive_of_start=False
            )
            for n in page:
                event: Any = self.service.mapper.to_domain_event(n)
                mark = Mark(n.id, event.timestamp)
                if n.topic in TOURNAMENT_TOPICS:
                    self._tournaments = mark
                else:
                    self._every = mark
            if len(page) < PAGE:
                break
            self._seen = page[-1].id
        self._seen = top


@dataclass(frozen=True, slots=True)
class Built:
    """One partition as one file, at its table's mark."""

    position: int
    """The mark it was built at: it stands while the table's mark is this."""
    body: bytes
    etag: str
    """A strong validator: the sha256 of ``body``, quoted."""
    modified: datetime
    """When it may last have changed: the day's end, or the mark's event if later."""


def build(
    service: GameService,
    table: str,
    fmt: Format,
    reader: Reader,
    day: date,
    mark: Mark,
    ratings: RatingModels | None = None,
) -> Built:
    """``table``'s partition of ``day`` for ``reader`` as one file (its ``day`` column
    first), stamped with ``mark`` (read before it, so a change meanwhile makes it stale);
    the rating moves from ``ratings``."""
    body = b"".join(table_chunks(service, table, fmt, reader, day=day, ratings=ratings))
    tag = '"' + hashlib.sha256(body).hexdigest()[:40] + '"'
    return Built(mark.position, body, tag, max(day_end(day), mark.at))


Key = tuple[str, str, str, date]
"""A partition: its table, format, reader and day."""


class PartitionCache:
    """Built partitions, at most ``max_bytes`` of them (the least recently used forgotten
    first; a file larger than a quarter of it is served, never kept)."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._held: OrderedDict[Key, Built] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()

    def get(self, key: Key, position: int) -> Built | None:
        """What was built for ``key`` at mark ``position``; None when nothing was, or it
        was built at another mark (then it is dropped)."""
        with self._lock:
            found = self._held.get(key)
            if found is None:
                return None
            if found.position != position:
                self._drop(key)
                return None
            self._held.move_to_end(key)
            return found

    def put(self, key: Key, built: Built) -> None:
        if len(built.body) * 4 > self.max_bytes:
            return
        with self._lock:
            if key in self._held:
                self._drop(key)
            self._held[key] = built
            self._size += len(built.body)
            while self._size > self.max_bytes:
                self._drop(next(iter(self._held)))

    @property
    def size(self) -> int:
        """Bytes held."""
        return self._size

    def _drop(self, key: Key) -> None:
        self._size -= len(self._held.pop(key).body)

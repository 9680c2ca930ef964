"""Limits on what one client may cost (docs/decisions.md D-fair, D-bounded): token buckets
and the hourly allowances a command spends.

:class:`RateLimiter` keeps a token bucket per key: ``limit`` tokens a period, refilled
continuously, at most ``burst`` held. The API's rate limit and its per-request quotas
(:mod:`api.ratelimit`) are such buckets; so are the allowances below.

An :class:`Allowance` is an hourly quota of one kind of thing a client makes — matches,
above all (``MATCH_QUOTA_PER_HOUR``) — spent by the bus (:mod:`services.bus`) as many at a
time as the command makes, charged to a :class:`Payer`: the client's address always, and
its verified identity too when it has one (a token must not buy more of what tokens are
minted with). It counts a sliding hour exactly (:class:`HourlyCount`: never more than the
quota in any hour, where a bucket refilled as it goes would let nearly twice through).
All or nothing: a command that would take more than every key has left is refused whole
(429 ``quota-exceeded``) and nothing of it is saved; a command that spent and then failed
to save gives it back.
"""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Final

from services.errors import QuotaExceededError

DEFAULT_PER_MINUTE: Final = 600
HOUR_S: Final = 3600.0


@dataclass(frozen=True, slots=True)
class Payer:
    """Who a request's costs are charged to: its keys in the buckets (the client's
    address, and its verified identity when it has one)."""

    keys: tuple[str, ...]


class RateLimiter:
    """Token buckets keyed by client: ``limit`` tokens a ``period_s`` (a minute);
    ``limit=0`` turns limiting off."""

    def __init__(
        self,
        limit: int = DEFAULT_PER_MINUTE,
        *,
        period_s: float = 60.0,
        burst: int | None = None,
        max_clients: int = 100_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if limit < 0:
            raise ValueError(f"limit must be >= 0, got {limit}")
        if period_s <= 0:
            raise ValueError(f"period_s must be > 0, got {period_s}")
        if burst is not None and burst < 1:
            raise ValueError(f"burst must be >= 1, got {burst}")
        if max_clients < 1:
            raise ValueError(f"max_clients must be >= 1, got {max_clients}")
        self.limit = limit
        self.period_s = period_s
        self.per_minute = limit if period_s == 60.0 else round(limit * 60 / period_s)
        self.capacity = float(burst if burst is not None else limit)
        self.rate = limit / period_s
        self.max_clients = max_clients
        self.clock = clock
        self.rejections = 0
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def enabled(self) -> bool:
        return self.limit > 0

    @property
    def period(self) -> str:
        """The period in words (``a minute``, ``an hour``) for problem details."""
        return {60.0: "a minute", 3600.0: "an hour"}.get(self.period_s, f"{self.period_s:g} s")

    def acquire(self, key: str) -> float | None:
        """Take a token for ``key``: None when allowed, else the seconds until one is back."""
        return self.take((key,), 1)

    def take(self, keys: Iterable[str], count: int) -> float | None:
        """Take ``count`` tokens from each of ``keys``, all or none: None when taken, else
        the seconds until every key holds ``count`` (counted as one rejection)."""
        if not self.enabled or count <= 0:
            return None
        now = self.clock()
        wanted = tuple(dict.fromkeys(keys))
        with self._lock:
            held = {key: self._refilled(key, now) for key in wanted}
            short = max((count - tokens for tokens in held.values()), default=0.0)
            if short <= 0.0:
                for key, tokens in held.items():
                    self._buckets[key] = (tokens - count, now)
                wait = None
            else:
                for key, tokens in held.items():
                    self._buckets[key] = (tokens, now)
                self.rejections += 1
                wait = short / self.rate
            while len(self._buckets) > self.max_clients:
                self._buckets.popitem(last=False)
        return wait

    def owe(self, key: str, amount: float) -> None:
        """Take ``amount`` after the fact, below nothing if need be (what a step cost,
        known once it is done): ``key`` then waits until its bucket is above nothing."""
        if not self.enabled or amount <= 0:
            return
        now = self.clock()
        with self._lock:
            self._buckets[key] = (self._refilled(key, now) - amount, now)
            while len(self._buckets) > self.max_clients:
                self._buckets.popitem(last=False)

    def due(self, key: str) -> float | None:
        """None while ``key`` holds more than nothing; else the seconds until it does."""
        if not self.enabled:
            return None
        now = self.clock()
        with self._lock:
            found = self._buckets.get(key)
            if found is None:
                return None
            tokens, stamp = found
            tokens = min(self.capacity, tokens + (now - stamp) * self.rate)
        return None if tokens > 0 else max(-tokens / self.rate, 0.001)

    def _refilled(self, key: str, now: float) -> float:
        """``key``'s tokens now (its bucket moved to the most recently seen end)."""
        tokens, stamp = self._buckets.pop(key, (self.capacity, now))
        return min(self.capacity, tokens + (now - stamp) * self.rate)


class HourlyCount:
    """How many things each key made in the last hour (a sliding hour, exactly: a key may
    make ``limit`` in any hour, never more), each making kept with its time; ``limit=0``
    counts nothing."""

    def __init__(
        self,
        limit: int,
        *,
        period_s: float = HOUR_S,
        max_clients: int = 100_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if limit < 0:
            raise ValueError(f"limit must be >= 0, got {limit}")
        self.limit = limit
        self.period_s = period_s
        self.max_clients = max_clients
        self.clock = clock
        self.rejections = 0
        self._made: OrderedDict[str, deque[list[float]]] = OrderedDict()
        """Per key, its makings of the last period: ``[time, count]``, oldest first."""
        self._lock = threading.Lock()

    @property
    def enabled(self) -> bool:
        return self.limit > 0

    @property
    def period(self) -> str:
        """The period in words (``an hour``) for problem details."""
        return {60.0: "a minute", 3600.0: "an hour"}.get(self.period_s, f"{self.period_s:g} s")

    def take(self, keys: Iterable[str], count: int) -> float | None:
        """Count ``count`` more for each of ``keys``, all or none: None when counted, else
        the seconds until every key may make that many (counted as one rejection)."""
        if not self.enabled or count <= 0:
            return None
        now = self.clock()
        wanted = tuple(dict.fromkeys(keys))
        with self._lock:
            made = {key: self._recent(key, now) for key in wanted}
            waits = [self._wait(entries, count, now) for entries in made.values()]
            if all(w == 0.0 for w in waits):
                for entries in made.values():
                    entries.append([now, float(count)])
                wait = None
            else:
                self.rejections += 1
                wait = max(waits)
            while len(self._made) > self.max_clients:
                self._made.popitem(last=False)
        return wait

    def give_back(self, keys: Iterable[str], count: int) -> None:
        """Uncount ``count`` of each key's latest makings (they were not made after all)."""
        if not self.enabled or count <= 0:
            return
        with self._lock:
            for key in dict.fromkeys(keys):
                entries = self._made.get(key)
                left = float(count)
                while entries and left > 0:
                    taken = min(left, entries[-1][1])
                    entries[-1][1] -= taken
                    left -= taken
                    if entries[-1][1] <= 0:
                        entries.pop()

    def _recent(self, key: str, now: float) -> deque[list[float]]:
        """``key``'s makings of the last period (older ones dropped; the key moved to the
        most recently seen end)."""
        entries = self._made.pop(key, None)
        if entries is None:
            entries = deque()
        while entries and entries[0][0] <= now - self.period_s:
            entries.popleft()
        self._made[key] = entries
        return entries

    def _wait(self, entries: deque[list[float]], count: int, now: float) -> float:
        """Seconds until ``count`` more fit under the limit (0: now; the whole period when
        ``count`` alone is more than the limit)."""
        over = sum(e[1] for e in entries) + count - self.limit
        if over <= 0:
            return 0.0
        if count > self.limit:
            return self.period_s
        for moment, made in entries:
            over -= made
            if over <= 0:
                return max(moment + self.period_s - now, 0.001)
        return self.period_s  # pragma: no cover - the entries sum to more than ``over``


class Allowance:
    """An hourly allowance of one kind of thing a client makes (the module docstring):
    ``name`` in words (``matches created``), sized by ``setting`` (0: no quota): at most
    that many in any hour."""

    def __init__(
        self,
        name: str,
        setting: str,
        per_hour: int,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.name = name
        self.setting = setting
        self.limiter = HourlyCount(per_hour, clock=clock)

    def spend(self, payer: Payer | None, count: int) -> int:
        """Count ``count`` against ``payer``'s allowance (None: the service itself, which
        pays nothing): what was counted, to :meth:`refund` if it is not made after all;
        429 ``quota-exceeded`` when the payer has not that much left."""
        limiter = self.limiter
        if payer is None or count <= 0 or not limiter.enabled:
            return 0
        wait = limiter.take(payer.keys, count)
        if wait is None:
            return count
        if count > limiter.limit:
            raise QuotaExceededError(
                f"{count} more {self.name} are more than {self.setting} allows in an hour "
                f"({limiter.limit}); the operator sets it",
                retry_after=math.ceil(limiter.period_s),
            )
        seconds = max(1, math.ceil(wait))
        raise QuotaExceededError(
            f"{count} more {self.name} are more than this client has left of its "
            f"{limiter.limit} {limiter.period} ({self.setting}); retry in {seconds} s",
            retry_after=seconds,
        )

    def refund(self, payer: Payer | None, count: int) -> None:
        """Give back what :meth:`spend` took for something not made."""
        if payer is not None and count > 0:
            self.limiter.give_back(payer.keys, count)


NO_ALLOWANCE: Final = Allowance("matches created", "MATCH_QUOTA_PER_HOUR", 0)
"""No quota: everything may be made (tools, tests, a bus without limits)."""

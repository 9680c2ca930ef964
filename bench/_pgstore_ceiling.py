"""The database's ceiling under the event table's lock: ``python -m bench.pgstore_bench
--ceiling`` (``make bench-ceiling``; docs/scaling.md, "The event store's global write lock";
docs/decisions.md D-ceiling).

Every save in the database takes ``LOCK TABLE … IN EXCLUSIVE MODE`` first and holds it to the
end of its transaction, the commit's WAL flush included (:mod:`infra.pgstore`, docs/decisions.md
D-pgstore). So the database's saves/s is bounded by one over the time a save holds the lock.

A throwaway cluster is made durable as production is (``fsync``, ``synchronous_commit``,
``full_page_writes`` on: :func:`bench.capacity_bench.make_durable`), with
``track_wal_io_timing`` on so ``pg_stat_wal`` times the WAL flushes. The service's recorder
creates its table and its locking insert function; then the bench defines that function again
from the recorder's own statement with three readings of ``clock_timestamp()`` added — on
entry, when the lock is granted, after the insert and its notification — returned after the
notification ids. The statements under the lock are the service's, unchanged.

What a save is: what a play command saves through the bus (docs/decisions.md D-bus), taken from
a real one at the start of the run — the round's ``CardPlayed`` (the round's next version) and
the Idempotency-Key's ``Recorded`` (a new record, version 1), their topics and stored bytes.
``writers`` threads, one connection each (the recorder's pool), save such pairs in a closed
loop for ``--seconds`` per writer count with the lock, and as long with the same function
without its ``LOCK TABLE`` (the library's function as shipped: no order kept) to show what the
lock itself costs; in two sweeps, up the writer counts and back down (lock, no lock; then no
lock, lock), half the time each, so a load that drifts during the run moves them all alike.

Per save, from the server's clock and the bench's (one machine, one clock):

* **wait** — entry → lock granted: time queued behind other saves;
* **hold** — lock granted → the earlier of (the next save's lock granted, this save's answer
  read by the bench). The lock is released at the end of the commit, after the WAL flush,
  which no statement can see; both ends are later than that release, so ``hold`` is an
  upper bound by the handover (a wake-up) or the answer's trip back (loopback);
* **in function** — lock granted → insert done (the part before the commit);
* **lock busy** — the sum of the holds over the measured window: the lock's utilisation, ρ.

Then an M/G/1 model of the lock, fed by one writer's holds (mean S, squared coefficient of
variation c²): mean wait ``ρ·S·(1+c²) / (2(1-ρ))`` (Pollaczek–Khinchine), and the p99 of the
wait from the heavy-traffic exponential tail, ``P(wait > t) = ρ·exp(-t·ρ/Wq)``; the arrival rate
λ = ρ/S at which that p99 reaches the command p99 budget (150 ms,
:data:`bench.capacity_bench.CMD_P99_MS`) is ``model_saves_per_s``. The last line::

    pgstore-ceiling writers=1,2,4,8,16 saves_per_s=… ratio_to_1=… hold_ms_p50=… hold_ms_p99=…
        wait_ms_p99=… lock_busy=… nolock_saves_per_s=… flush_ms=… model_saves_per_s=…
        model_wait_p99_ms=150 load=<1-min load average at start>-<at end>

(one value per writer count, comma-separated; ``flush_ms`` is the mean WAL flush of the one
writer's pass; ``model_saves_per_s`` one number: the rate at which the model's p99 wait is
``model_wait_p99_ms``).
"""

from __future__ import annotations

import math
import os
import random
import statistics
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID, uuid4

import psycopg
from eventsourcing.persistence import StoredEvent
from psycopg import sql

from bench._core_commands import TimedService, next_command
from bench._tables import new_match, seat_bots
from bench.capacity_bench import CMD_P99_MS, make_durable
from domain.game.actions import action_of
from domain.rules.ruleset import RuleSet
from infra.pgcluster import throwaway_server
from infra.pgstore import LockingInsertRecorder
from infra.settings import Settings
from infra.store import persistence_env
from services.handlers import build_bus
from services.idempotency import RequestKey
from services.round_commands import Act

WARMUP_S = 0.5
"""Seconds of each pass not measured (connections, prepared statements, the first waits)."""

US = "(extract(epoch FROM clock_timestamp()) * 1000000)::bigint"
"""The server's clock in µs since the epoch (the bench's ``time.time()`` is the same clock)."""

LOCK = "LOCK TABLE {table} IN EXCLUSIVE MODE; "


@dataclass(frozen=True, slots=True)
class Shape:
    """A play command's save: the round's event and the key's record, as stored."""

    round_topic: str
    round_state: bytes
    record_topic: str
    record_state: bytes

    def batch(self, round_id: UUID, version: int) -> list[StoredEvent]:
        return [
            StoredEvent(round_id, version, self.round_topic, self.round_state),
            StoredEvent(uuid4(), 1, self.record_topic, self.record_state),
        ]


@dataclass(slots=True)
class Save:
    """One save's readings, µs since the epoch: entry, lock granted, insert done, answer read."""

    entered: int
    locked: int
    inserted: int
    answered: int


@dataclass(slots=True)
class Pass:
    """One writer count, one function: its saves in the measured window."""

    writers: int
    locking: bool
    seconds: float
    saves: list[Save] = field(default_factory=list)
    flush_ms: float = 0.0
    load: float = 0.0

    def holds(self) -> list[float]:
        """ms from lock granted to the earlier of the next grant and the answer read."""
        ordered = sorted(self.saves, key=lambda s: s.locked)
        out = []
        for here, after in zip(ordered, [*ordered[1:], None], strict=True):
            end = here.answered if after is None else min(here.answered, after.locked)
            out.append((end - here.locked) / 1000)
        return out

    def waits(self) -> list[float]:
        return [(s.locked - s.entered) / 1000 for s in self.saves]

    def in_function(self) -> list[float]:
        return [(s.inserted - s.locked) / 1000 for s in self.saves]


def pct(values: Sequence[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def play_shape(service: TimedService, seed: int) -> Shape:
    """The save of a real play command sent with an Idempotency-Key (bots' random moves until
    a card is played that ends no trick)."""
    rng = random.Random(seed)
    bus = build_bus(service)
    mid = new_match(bus, RuleSet(), "ceiling")
    seat_bots(bus, mid)
    recorder = service.recorder
    saved: list[Sequence[StoredEvent]] = []
    original = recorder.insert_events

    def kept(events: Sequence[StoredEvent], **kwargs: object) -> object:
        saved.append(events)
        return original(events, **kwargs)

    recorder.insert_events = kept  # type: ignore[method-assign,assignment]
    try:
        for n in range(400):
            r = service.current_round(service.get_match(mid))
            assert r is not None
            seat, action, cards = next_command(r, rng)
            saved.clear()
            key = RequestKey.of("ceiling", f"key-{n}", f"{n:064x}")
            bus.handle(Act(mid, action_of(action, tuple(cards)), seat=seat), key=key)
            (events,) = saved
            topics = [e.topic.rpartition(":")[2] for e in events]
            if topics == ["CardPlayed", "IdempotencyRecord.Recorded"]:
                played, record = events
                return Shape(played.topic, played.state, record.topic, record.state)
    finally:
        del recorder.insert_events
    raise AssertionError("no play command saved a card and its key alone")


def timed_function(
    recorder: LockingInsertRecorder, conn: psycopg.Connection[Any], lock: bool
) -> str:
    """The recorder's locking insert function with the clock read on entry, on the lock and
    after the insert and its notification, returned after the ids; without its
    ``LOCK TABLE`` when not ``lock``."""
    text = recorder.create_locking_insert_function.as_string(conn)
    table = sql.SQL("{}.{}").format(
        sql.Identifier(recorder.datastore.schema), sql.Identifier(recorder.events_table_name)
    )
    lock_statement = LOCK.format(table=table.as_string(conn))
    edits = [
        (
            " AS $BODY$ DECLARE ids bigint[]; BEGIN ",
            f" AS $BODY$ DECLARE ids bigint[]; t0 bigint := {US}; t1 bigint; BEGIN ",
        ),
        (lock_statement, f"{lock_statement if lock else ''}t1 := {US}; "),
        (
            "RETURN QUERY SELECT unnest(ids); END; $BODY$",
            f"RETURN QUERY SELECT unnest(ids); RETURN NEXT t0; RETURN NEXT t1; RETURN NEXT {US}; "
            "END; $BODY$",
        ),
    ]
    for old, new in edits:  # the service's statement, else the bench measures something else
        if text.count(old) != 1:
            raise AssertionError(f"infra.pgstore's insert function changed: {old!r} not found")
        text = text.replace(old, new)
    return text


def run_pass(
    recorder: LockingInsertRecorder, shape: Shape, writers: int, locking: bool, seconds: float
) -> Pass:
    """``writers`` threads saving ``shape`` pairs for ``seconds`` (after :data:`WARMUP_S`)."""
    start = threading.Barrier(writers + 1)
    window = [0.0, 0.0]
    found: list[list[Save]] = [[] for _ in range(writers)]

    def write(i: int) -> None:
        round_id, version = uuid4(), 0
        start.wait()
        while (now := time.time()) < window[1]:
            version += 1
            answer = recorder.insert_events(shape.batch(round_id, version))
            answered = int(time.time() * 1e6)
            assert answer is not None and len(answer) == 5, answer
            if now >= window[0]:
                found[i].append(Save(answer[2], answer[3], answer[4], answered))

    threads = [threading.Thread(target=write, args=(i,), name=f"w{i}") for i in range(writers)]
    for t in threads:
        t.start()
    with recorder.datastore.get_connection() as conn:
        conn.execute("SELECT pg_stat_reset_shared('wal')")
    window[0] = time.time() + WARMUP_S
    window[1] = window[0] + seconds
    start.wait()
    for t in threads:
        t.join()
    with recorder.datastore.get_connection() as conn:
        row = conn.execute("SELECT wal_sync, wal_sync_time FROM pg_stat_wal").fetchone()
    done = Pass(writers, locking, seconds, [s for saves in found for s in saves])
    if row is not None:
        syncs, sync_ms = row["wal_sync"], row["wal_sync_time"]
        done.flush_ms = float(sync_ms) / syncs if syncs else 0.0
    done.load = os.getloadavg()[0]
    return done


def model_wait_p99(holds_ms: Sequence[float], rho: float) -> float:
    """The p99 wait (ms) of an M/G/1 lock with these service times at utilisation ``rho``:
    S(1+c²)/(2(1-ρ)) · ln(100ρ) (0 while fewer than 1% of saves wait)."""
    s = statistics.fmean(holds_ms)
    c2 = statistics.pvariance(holds_ms) / (s * s)
    return s * (1 + c2) / (2 * (1 - rho)) * max(0.0, math.log(100 * rho))


def model_rate(holds_ms: Sequence[float], budget_ms: float) -> float:
    """Saves/s at which that p99 wait reaches ``budget_ms`` (ρ by bisection, λ = ρ/S)."""
    low, high = 0.0, 1.0 - 1e-9
    for _ in range(100):
        mid = (low + high) / 2
        low, high = (mid, high) if model_wait_p99(holds_ms, mid) < budget_ms else (low, mid)
    return low / statistics.fmean(holds_ms) * 1000


@dataclass(frozen=True, slots=True)
class Store:
    """The service's store on a schema of its own, a play command's save, and the timed
    insert function with and without its lock."""

    recorder: LockingInsertRecorder
    shape: Shape
    functions: dict[bool, str]

    def run(self, writers: int, lock: bool, seconds: float) -> Pass:
        """One pass of ``writers`` with the timed function, locking or not."""
        with self.recorder.datastore.get_connection() as conn:
            conn.execute(self.functions[lock])
        return run_pass(self.recorder, self.shape, writers, lock, seconds)


@contextmanager
def store(url: str, schema: str, pool: int, seed: int) -> Iterator[Store]:
    """:class:`Store` on ``url``'s existing ``schema``, the recorder's pool of ``pool``."""
    env = persistence_env(Settings(backend="postgres", database_url=url, postgres_schema=schema))
    env |= {"POSTGRES_POOL_SIZE": str(pool), "POSTGRES_MAX_OVERFLOW": "0"}
    rng = random.Random(seed)
    service = TimedService(env, seeds=lambda: rng.randbytes(32))
    try:
        recorder = service.recorder
        assert isinstance(recorder, LockingInsertRecorder)
        shape = play_shape(service, seed)
        with recorder.datastore.get_connection() as conn:
            functions = {lock: timed_function(recorder, conn, lock) for lock in (True, False)}
        yield Store(recorder, shape, functions)
    finally:
        service.close()


def ceiling(writer_counts: Sequence[int], seconds: float, seed: int) -> None:
    """Measure, print the table, and end with the machine-readable line."""
    load_start = os.getloadavg()[0]
    passes: dict[tuple[int, bool], list[Pass]] = {}
    with throwaway_server() as cluster:
        make_durable(cluster.url)
        with psycopg.connect(cluster.url, autocommit=True) as conn:
            conn.execute("ALTER SYSTEM SET track_wal_io_timing = on")
            conn.execute("SELECT pg_reload_conf()")
            conn.execute("CREATE SCHEMA ceiling")
            wal = conn.execute("SHOW wal_sync_method").fetchone()
        with store(cluster.url, "ceiling", max(writer_counts) + 1, seed) as bench:
            shape = bench.shape
            print(
                f"PostgreSQL {cluster.url}: fsync, synchronous_commit, full_page_writes on, "
                f"wal_sync_method {wal[0] if wal else '?'}; a save: "
                f"{shape.round_topic.rpartition(':')[2]} ({len(shape.round_state)} B) + "
                f"{shape.record_topic.rpartition(':')[2]} ({len(shape.record_state)} B); per "
                f"writer count {seconds:g} s of saves with the lock and {seconds:g} s without, "
                f"in two sweeps (counts up, then down); {os.cpu_count()} cores; load "
                f"{load_start:.2f}",
                flush=True,
            )
            # two sweeps, up the writer counts and back down, the lock first then last: a
            # load that drifts during the run moves every count and both functions alike
            sweep = [(w, lock) for w in writer_counts for lock in (True, False)]
            for writers, lock in [*sweep, *reversed(sweep)]:
                done = bench.run(writers, lock, seconds / 2)
                passes.setdefault((writers, lock), []).append(done)
    report(writer_counts, passes, load_start)


@dataclass(frozen=True, slots=True)
class Row:
    """One writer count's figures (ms, saves/s), both functions' passes together."""

    writers: int
    rate: float
    ratio: float
    nolock: float
    hold50: float
    hold99: float
    in50: float
    wait50: float
    wait99: float
    busy: float
    flush: float
    load: float
    holds: list[float]

    @classmethod
    def of(cls, locked: list[Pass], free: list[Pass], base: float | None) -> Row:
        holds = [h for p in locked for h in p.holds()]
        waits = [w for p in locked for w in p.waits()]
        span = sum(p.seconds for p in locked)
        rate = sum(len(p.saves) for p in locked) / span
        return cls(
            writers=locked[0].writers,
            rate=rate,
            ratio=rate / (base or rate),
            nolock=sum(len(p.saves) for p in free) / sum(p.seconds for p in free),
            hold50=pct(holds, 0.5),
            hold99=pct(holds, 0.99),
            in50=pct([w for p in locked for w in p.in_function()], 0.5),
            wait50=pct(waits, 0.5),
            wait99=pct(waits, 0.99),
            busy=sum(holds) / 1000 / span,
            flush=statistics.fmean(p.flush_ms for p in locked),
            load=max(p.load for p in (*locked, *free)),
            holds=holds,
        )


def report(
    writer_counts: Sequence[int], passes: dict[tuple[int, bool], list[Pass]], load_start: float
) -> None:
    rows: list[Row] = []
    for writers in writer_counts:
        rows.append(
            Row.of(passes[writers, True], passes[writers, False], rows[0].rate if rows else None)
        )
    print(
        "| writers | saves/s (lock) | ratio to 1 | hold p50 / p99 ms | in function p50 ms "
        "| wait p50 / p99 ms | lock busy | WAL flush ms | saves/s (no lock) | lock / no lock "
        "| load |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(
            f"| {r.writers} | {r.rate:,.0f} | {r.ratio:.2f} | {r.hold50:.2f} / {r.hold99:.2f} "
            f"| {r.in50:.3f} | {r.wait50:.2f} / {r.wait99:.2f} | {r.busy:.2f} | {r.flush:.3f} "
            f"| {r.nolock:,.0f} | {r.rate / r.nolock:.2f} | {r.load:.2f} |"
        )
    one = rows[0].holds
    model = model_rate(one, CMD_P99_MS)
    s = statistics.fmean(one)
    print(
        f"model (M/G/1 on the lock, {rows[0].writers} writer's holds: mean {s:.3f} ms, c² "
        f"{statistics.pvariance(one) / (s * s):.2f}): 1/S = {1000 / s:,.0f} saves/s; the lock's "
        f"p99 wait reaches {CMD_P99_MS:g} ms at {model:,.0f} saves/s (ρ = {model * s / 1000:.3f})"
    )
    print(
        "model p99 wait by utilisation: "
        + "; ".join(
            f"ρ {rho:g} = {rho / s * 1000:,.0f} saves/s: {model_wait_p99(one, rho):.1f} ms"
            for rho in (0.5, 0.7, 0.8, 0.9, 0.95)
        )
    )

    def joined(values: Sequence[float], form: str) -> str:
        return ",".join(format(v, form) for v in values)

    print(
        f"pgstore-ceiling writers={joined([r.writers for r in rows], 'd')} "
        f"saves_per_s={joined([r.rate for r in rows], '.0f')} "
        f"ratio_to_1={joined([r.ratio for r in rows], '.2f')} "
        f"hold_ms_p50={joined([r.hold50 for r in rows], '.3f')} "
        f"hold_ms_p99={joined([r.hold99 for r in rows], '.3f')} "
        f"wait_ms_p99={joined([r.wait99 for r in rows], '.2f')} "
        f"lock_busy={joined([r.busy for r in rows], '.2f')} "
        f"nolock_saves_per_s={joined([r.nolock for r in rows], '.0f')} "
        f"flush_ms={rows[0].flush:.3f} model_saves_per_s={model:.0f} "
        f"model_wait_p99_ms={CMD_P99_MS:g} "
        f"load={load_start:.2f}-{os.getloadavg()[0]:.2f}",
        flush=True,
    )

"""What the PostgreSQL store costs with the eventsourcing library's own recorder, against
the alternatives this project once used instead (docs/performance.md, "PostgreSQL store";
docs/decisions.md D-pgstore): ``python -m bench.pgstore_bench``.

(a) **Saves.** Random-legal bots play complete rounds through ``GameService.act`` (as
:mod:`bench.core_bench` does) on two recorders, alternating A B B A with the same seeds:

* ``library``: ``eventsourcing.postgres``'s ``PostgresApplicationRecorder`` as its authors
  ship it — a pipelined transaction: ``SET LOCAL lock_timeout``, ``LOCK TABLE … IN
  EXCLUSIVE MODE``, ``NOTIFY``, ``INSERT … RETURNING``, ``COMMIT``;
* ``locking function``: the service's recorder (:mod:`infra.pgstore`): the library's
  stored insert function (``POSTGRES_ENABLE_DB_FUNCTIONS``), defined to take the table lock
  first — the same statements in one call per save.

Medians of the command, its load and its save; and the client/server round-trips of a
save (libpq protocol trace). Then ``--writers`` threads, each with a pool of its own, save
2-event batches (a command's usual save) for ``--seconds``: saves/s by writer count, with
each recorder (every save in the database waits for the table lock, so what matters is how
long a save holds it).

(b) **Loads.** Every finished round is fetched by the library's ``select_events``
(``SELECT *``, dict rows; what the service runs) and by the narrower query the project used
to run in an override of it (three columns, tuple rows), interleaved; medians per round.

(c) **The ceiling** (``--ceiling``, ``make bench-ceiling``: only this): the event table's lock
on a durable throwaway cluster — saves/s of a play command's save by writer count, how long a
save holds the lock and waits for it, and the rate at which the lock's queue reaches the
command p99 budget (:mod:`bench._pgstore_ceiling`; its own last line, ``pgstore-ceiling …``).

PostgreSQL comes from :func:`infra.pgcluster.postgres_url` ($DATABASE_URL, else a
throwaway cluster) in fresh schemas dropped afterwards. The last line is machine-readable::

    pgstore-bench library_save_ms=<m> function_save_ms=<m> library_fetch_ms=<m> narrow_fetch_ms=<m>
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from uuid import UUID, uuid4

import psycopg
from eventsourcing.persistence import StoredEvent
from eventsourcing.postgres import PostgresApplicationRecorder
from psycopg import sql
from psycopg.rows import tuple_row

from bench._core_commands import CommandFigures, TimedService, next_command, play_rounds
from bench._pgstore_ceiling import ceiling
from bench._tables import act, new_match, seat_bots
from domain.rules.ruleset import RuleSet
from infra.pgcluster import postgres_url
from infra.settings import Settings
from infra.store import persistence_env
from services.handlers import build_bus


def narrow_fetch(recorder: PostgresApplicationRecorder, originator_id: UUID) -> int:
    """The three columns a load needs, as tuples (the project's former override)."""
    statement = sql.SQL(
        "SELECT originator_version, topic, state FROM {schema}.{table} "
        "WHERE originator_id = %s ORDER BY originator_version ASC"
    ).format(
        schema=sql.Identifier(recorder.datastore.schema),
        table=sql.Identifier(recorder.events_table_name),
    )
    with recorder.datastore.get_connection() as conn, conn.cursor(row_factory=tuple_row) as c:
        c.execute(statement, (originator_id,), prepare=True)
        return len([bytes(state) for _, _, state in c.fetchall()])


LABELS = ("library", "locking function")


def service(env: dict[str, str], label: str, rng: random.Random) -> TimedService:
    """A service on ``env``'s store with the recorder ``label`` names."""
    if label == "library":
        env = {k: v for k, v in env.items() if k != "APPLICATION_RECORDER_TOPIC"}
        env["POSTGRES_ENABLE_DB_FUNCTIONS"] = "n"  # its transaction, the lock included
    svc = TimedService(env, seeds=lambda: rng.randbytes(32))
    assert (type(svc.recorder) is PostgresApplicationRecorder) is (label == "library")
    return svc


def save_rate(url: str, label: str, writers: int, seconds: float) -> float:
    """Saves/s of ``writers`` threads saving 2-event batches, each with its own pool."""
    with fresh_env(url) as shared:
        env = {**shared, "POSTGRES_POOL_SIZE": "1", "POSTGRES_MAX_OVERFLOW": "0"}
        services = [service(env, label, random.Random(i)) for i in range(writers)]
        counts = [0] * writers
        start = threading.Barrier(writers + 1)
        until = [0.0]

        def write(i: int) -> None:
            recorder = services[i].recorder
            start.wait()
            while time.monotonic() < until[0]:
                oid = uuid4()
                batch = [StoredEvent(oid, v, "bench:Event", b"x" * 200) for v in (1, 2)]
                recorder.insert_events(batch)
                counts[i] += 1

        threads = [threading.Thread(target=write, args=(i,)) for i in range(writers)]
        try:
            for t in threads:
                t.start()
            until[0] = time.monotonic() + seconds
            start.wait()
            for t in threads:
                t.join()
        finally:
            for s in services:
                s.close()
        return sum(counts) / seconds


def save_round_trips(env: dict[str, str], label: str, seed: int) -> float:
    """Mean protocol round-trips (libpq ReadyForQuery messages) of a play command's save."""
    rng = random.Random(seed)
    svc = service(env, label, rng)
    recorder = svc.recorder
    assert isinstance(recorder, PostgresApplicationRecorder)
    datastore: Any = recorder.datastore
    original = datastore.get_connection
    trips: list[int] = []
    with tempfile.TemporaryDirectory() as tmp:
        trace = Path(tmp) / "libpq.trace"
        with trace.open("w") as out:

            @contextmanager
            def traced() -> Iterator[Any]:
                with original() as conn:
                    conn.pgconn.trace(out.fileno())
                    conn.pgconn.set_trace_flags(psycopg.pq.Trace.SUPPRESS_TIMESTAMPS)
                    try:
                        yield conn
                    finally:
                        conn.pgconn.untrace()

            real_save = svc.save

            def counted_save(*objs: Any, **kwargs: Any) -> Any:
                before = trace.stat().st_size
                datastore.get_connection = traced
                try:
                    return real_save(*objs, **kwargs)
                finally:
                    datastore.get_connection = original
                    with trace.open() as f:
                        f.seek(before)
                        trips.append(f.read().count("ReadyForQuery"))

            bus = build_bus(svc)
            mid = new_match(bus, RuleSet(), "trace")
            seat_bots(bus, mid)
            svc.save = counted_save  # type: ignore[method-assign]
            for _ in range(60):
                r = svc.current_round(svc.get_match(mid))
                assert r is not None
                act(bus, mid, *next_command(r, rng))
    svc.close()
    return statistics.mean(trips[10:])


@contextmanager
def fresh_env(url: str) -> Iterator[dict[str, str]]:
    """The library's environment on a fresh schema, the library's own recorder."""
    schema = f"bench_{uuid4().hex[:12]}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
    try:
        yield persistence_env(
            Settings(backend="postgres", database_url=url, postgres_schema=schema)
        )
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(schema)))


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bench.pgstore_bench",
        description="PostgreSQL saves and loads: the library's recorder vs the alternatives.",
    )
    parser.add_argument("--rounds", type=int, default=2, help="rounds per pass (%(default)s)")
    parser.add_argument("--passes", type=int, default=5, help="fetches of each round")
    parser.add_argument("--seed", type=int, default=2024, help="run seed (default %(default)s)")
    parser.add_argument("--repeat", type=int, default=2, help="A B B A sequences (%(default)s)")
    parser.add_argument("--writers", default=None, help="concurrent writers (1,4,16)")
    parser.add_argument("--seconds", type=float, default=None, help="per writer count (3)")
    parser.add_argument(
        "--ceiling",
        action="store_true",
        help="only the event table's lock on a durable cluster (bench/_pgstore_ceiling.py): "
        "saves/s, the lock's hold and wait by writer count (--writers 1,2,4,8,16; --seconds 8 "
        "of saves per count with the lock and 8 without, in two sweeps up and down; ~2 minutes)",
    )
    args = parser.parse_args(argv)
    if args.ceiling:
        counts = [int(n) for n in (args.writers or "1,2,4,8,16").split(",")]
        ceiling(counts, args.seconds or 8.0, args.seed)
        return
    args.writers = args.writers or "1,4,16"
    args.seconds = args.seconds or 3.0
    labels = LABELS
    figures = {label: CommandFigures() for label in labels}
    with postgres_url() as url:
        for n, label in enumerate([*labels, *reversed(labels)] * args.repeat):
            with fresh_env(url) as env:
                rng = random.Random(args.seed + n % 2)
                svc = service(env, label, rng)
                try:
                    c = play_rounds(svc, args.rounds, rng)
                finally:
                    svc.close()
            f = figures[label]
            f.ms += c.ms
            f.load_ms += c.load_ms
            f.save_ms += c.save_ms
        rates: dict[tuple[str, int], float] = {}
        for writers in (int(n) for n in args.writers.split(",")):
            for label in [*labels, *reversed(labels)]:
                rate = save_rate(url, label, writers, args.seconds / 2)
                rates[label, writers] = rates.get((label, writers), 0.0) + rate / 2
        trips = {}
        for label in labels:
            with fresh_env(url) as env:
                trips[label] = save_round_trips(env, label, args.seed)
        with fresh_env(url) as env:
            rng = random.Random(args.seed)
            svc = service(env, "library", rng)
            rounds = play_rounds(svc, args.rounds * 2, rng).rounds
            recorder = svc.recorder
            assert isinstance(recorder, PostgresApplicationRecorder)
            fetch: dict[str, list[float]] = {"library": [], "narrow": []}
            events = 0
            try:
                for rid in rounds:  # warm: connections, prepared statements
                    recorder.select_events(rid)
                    narrow_fetch(recorder, rid)
                for _ in range(args.passes):
                    for rid in rounds:
                        start = time.perf_counter()
                        n_library = len(recorder.select_events(rid))
                        fetch["library"].append((time.perf_counter() - start) * 1000)
                        start = time.perf_counter()
                        n_narrow = narrow_fetch(recorder, rid)
                        fetch["narrow"].append((time.perf_counter() - start) * 1000)
                        assert n_library == n_narrow
                        events += n_library
            finally:
                svc.close()
    med = statistics.median
    for label, f in figures.items():
        print(
            f"{label}: {len(f.ms)} commands, median {med(f.ms):.2f} ms = load "
            f"{med(f.load_ms):.2f} + save {med(f.save_ms):.2f}; save round-trips "
            f"{trips[label]:.1f}"
        )
    for (label, writers), rate in rates.items():
        print(f"{label:16s} writers={writers:3d} saves/s={rate:8.0f}")
    per_round = events / max(len(fetch["library"]), 1)
    print(
        f"fetch of a finished round ({per_round:.0f} events): library select_events "
        f"{med(fetch['library']):.2f} ms, narrow query {med(fetch['narrow']):.2f} ms "
        f"(ratio {med(fetch['narrow']) / med(fetch['library']):.2f})"
    )
    print(
        f"pgstore-bench library_save_ms={med(figures['library'].save_ms):.3f} "
        f"function_save_ms={med(figures['locking function'].save_ms):.3f} "
        f"library_fetch_ms={med(fetch['library']):.3f} narrow_fetch_ms={med(fetch['narrow']):.3f}"
    )


if __name__ == "__main__":
    main()

"""What the PostgreSQL store costs with the eventsourcing library's own recorder, against
the alternatives this project once used instead (docs/performance.md, "PostgreSQL store";
docs/decisions.md D-pgstore): ``python -m bench.pgstore_bench``.

(a) **Saves.** Random-legal bots play complete rounds through ``GameService.act`` (as
:mod:`bench.core_bench` does) on two recorders, alternating A B B A with the same seeds:

* ``library``: ``eventsourcing.postgres``'s ``PostgresApplicationRecorder`` as its authors
  ship it — a pipelined transaction: ``SET LOCAL lock_timeout``, ``LOCK TABLE … IN
  EXCLUSIVE MODE``, ``NOTIFY``, ``INSERT … RETURNING``, ``COMMIT``;
* ``one call``: the same statements inside one stored function (the recorder this project
  used to install by replacing the library's function, with ``POSTGRES_ENABLE_DB_FUNCTIONS``).

Medians of the command, its load and its save; and the client/server round-trips of a
save (libpq protocol trace).

(b) **Loads.** Every finished round is fetched by the library's ``select_events``
(``SELECT *``, dict rows) and by the narrower query the project used to run in its own
``select_events`` override (three columns, tuple rows), interleaved; medians per round.

PostgreSQL comes from :func:`infra.pgcluster.postgres_url` ($DATABASE_URL, else a
throwaway cluster) in fresh schemas dropped afterwards. The last line is machine-readable::

    pgstore-bench library_save_ms=<m> onecall_save_ms=<m> library_fetch_ms=<m> narrow_fetch_ms=<m>
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from uuid import UUID, uuid4

import psycopg
from eventsourcing.postgres import PostgresApplicationRecorder
from psycopg import sql
from psycopg.rows import tuple_row

from bench._core_commands import CommandFigures, TimedService, next_command, play_rounds
from domain.rules.ruleset import RuleSet
from infra.pgcluster import postgres_url
from infra.settings import Settings
from infra.store import persistence_env

ONE_CALL_BODY = (
    "BEGIN SET LOCAL lock_timeout = '{timeout}s'; "
    "LOCK TABLE {schema}.{table} IN EXCLUSIVE MODE; NOTIFY {channel}; "
    "RETURN QUERY INSERT INTO {schema}.{table} AS t "
    "(originator_id, originator_version, topic, state) "
    "SELECT originator_id, originator_version, topic, state FROM unnest(events) "
    "RETURNING notification_id; END;"
)


def install_one_call(recorder: PostgresApplicationRecorder) -> None:
    """Replace the library's stored insert function by one that keeps the table lock (what
    the project once did inside its recorder) and turn the function path on."""
    ds = recorder.datastore
    body = sql.SQL(ONE_CALL_BODY).format(
        timeout=ds.lock_timeout,
        schema=sql.Identifier(ds.schema),
        table=sql.Identifier(recorder.events_table_name),
        channel=sql.Identifier(recorder.channel_name),
    )
    statement = sql.SQL(
        "CREATE OR REPLACE FUNCTION {schema}.{fn}(events {schema}.{event}[]) "
        "RETURNS SETOF bigint LANGUAGE plpgsql AS $BODY$ {body} $BODY$"
    ).format(
        schema=sql.Identifier(ds.schema),
        fn=sql.Identifier(recorder.pg_function_name_insert_events),
        event=sql.Identifier(recorder.stored_event_type_name),
        body=body,
    )
    with ds.get_connection() as conn:
        conn.execute(statement)
    ds.enable_db_functions = True


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


def service(env: dict[str, str], label: str, rng: random.Random) -> TimedService:
    svc = TimedService(env, seeds=lambda: rng.randbytes(32))
    if label == "one call":
        assert isinstance(svc.recorder, PostgresApplicationRecorder)
        install_one_call(svc.recorder)
    return svc


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

            mid = svc.create_match(RuleSet(), name="trace")
            for seat in range(4):
                svc.take_seat(mid, seat, f"bot{seat}", "random")
            svc.save = counted_save  # type: ignore[method-assign]
            for _ in range(60):
                r = svc.current_round(svc.get_match(mid))
                assert r is not None
                svc.act(mid, *next_command(r, rng))
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
    args = parser.parse_args(argv)
    labels = ("library", "one call")
    figures = {label: CommandFigures() for label in labels}
    with postgres_url() as url:
        for n, label in enumerate([*labels, *reversed(labels)]):
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
    per_round = events / max(len(fetch["library"]), 1)
    print(
        f"fetch of a finished round ({per_round:.0f} events): library select_events "
        f"{med(fetch['library']):.2f} ms, narrow query {med(fetch['narrow']):.2f} ms "
        f"(ratio {med(fetch['narrow']) / med(fetch['library']):.2f})"
    )
    print(
        f"pgstore-bench library_save_ms={med(figures['library'].save_ms):.3f} "
        f"onecall_save_ms={med(figures['one call'].save_ms):.3f} "
        f"library_fetch_ms={med(fetch['library']):.3f} narrow_fetch_ms={med(fetch['narrow']):.3f}"
    )


if __name__ == "__main__":
    main()

"""The core bench's ``--profile`` and ``--variants`` (:mod:`bench.core_bench`): a cProfile of
PostgreSQL commands and replays, the client/server round-trips per command (libpq protocol
trace), and the medians that each proposed change would give.
"""

from __future__ import annotations

import cProfile
import functools
import io
import pstats
import random
import statistics
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from uuid import UUID

import psycopg

import domain.game.round_events
from bench._core_commands import (
    REPLAY_PASSES,
    CommandFigures,
    TimedService,
    next_command,
    play_rounds,
)
from bench._tables import act, new_match, seat_bots
from domain.rules.ruleset import RuleSet
from infra.pgstore import RECORDER_TOPIC
from services.game import GameService
from services.handlers import build_bus


def count_round_trips(env: dict[str, str], seed: int) -> None:
    """Protocol round-trips per command: ReadyForQuery messages in a libpq trace of every
    connection use inside ``act`` (traced on checkout, untraced — flushed — on return)."""
    rng = random.Random(seed)
    svc = TimedService(env, seeds=lambda: rng.randbytes(32))
    datastore: Any = getattr(svc.recorder, "datastore")  # noqa: B009
    original = datastore.get_connection
    counts: dict[str, list[int]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        trace = Path(tmp) / "libpq.trace"
        with trace.open("w") as out:

            @contextmanager
            def traced_connection() -> Iterator[Any]:
                with original() as conn:
                    conn.pgconn.trace(out.fileno())
                    conn.pgconn.set_trace_flags(psycopg.pq.Trace.SUPPRESS_TIMESTAMPS)
                    try:
                        yield conn
                    finally:
                        conn.pgconn.untrace()

            bus = build_bus(svc)
            mid = new_match(bus, RuleSet(), "trace")
            seat_bots(bus, mid)
            while True:  # round 1 warms the cache and the prepared statements; count round 2
                r = svc.current_round(svc.get_match(mid))
                assert r is not None
                if r.number > 2:
                    break
                command = next_command(r, rng)
                before = trace.stat().st_size
                datastore.get_connection = traced_connection
                act(bus, mid, *command)
                datastore.get_connection = original
                with trace.open() as f:
                    f.seek(before)
                    trips = f.read().count("ReadyForQuery")
                if r.number == 2:
                    counts.setdefault(command[1], []).append(trips)
    svc.close()
    print("postgres round-trips per command (libpq ReadyForQuery; loads + save):")
    for action, per_command in sorted(counts.items()):
        mean = statistics.mean(per_command)
        print(f"  {action}: {mean:.1f} over {len(per_command)} commands")
    print(
        "  (load: 1 SELECT per aggregate to fast-forward the cache, match and round; save: "
        "BEGIN | SET LOCAL lock_timeout + LOCK TABLE + NOTIFY + INSERT | Sync | COMMIT | Sync)"
    )


def profile(env: dict[str, str], rounds: int, seed: int) -> None:
    rng = random.Random(seed)
    svc = TimedService(env, seeds=lambda: rng.randbytes(32))
    profiler = cProfile.Profile()
    bus = build_bus(svc)
    mid = new_match(bus, RuleSet(), "profile")
    seat_bots(bus, mid)
    done: list[UUID] = []
    while len(done) < rounds:
        r = svc.current_round(svc.get_match(mid))
        assert r is not None
        command = next_command(r, rng)
        profiler.enable()
        act(bus, mid, *command)
        profiler.disable()
        if svc.get_match(mid).round_number != r.number:
            done.append(r.id)
    svc.close()
    _print_profile("commands (GameService.act only)", profiler)
    replayer = GameService({**env, "AGGREGATE_CACHE_MAXSIZE": ""})
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(5):
        for rid in done:
            replayer.get_round(rid)
    profiler.disable()
    replayer.close()
    _print_profile("replays (get_round without cache)", profiler)


def _print_profile(title: str, profiler: cProfile.Profile) -> None:
    for order in ("tottime", "cumulative"):
        buf = io.StringIO()
        pstats.Stats(profiler, stream=buf).sort_stats(order).print_stats(22)
        text = buf.getvalue()
        print(f"--- profile of {title}, by {order}")
        print(text[text.find("   ncalls") :].rstrip())


COMMAND_VARIANTS: dict[str, dict[str, str]] = {
    "as is": {},
    "AGGREGATE_CACHE_FASTFORWARD=n": {"AGGREGATE_CACHE_FASTFORWARD": "n"},
    "insert by one locking function call": {"APPLICATION_RECORDER_TOPIC": RECORDER_TOPIC},
    "both": {
        "AGGREGATE_CACHE_FASTFORWARD": "n",
        "APPLICATION_RECORDER_TOPIC": RECORDER_TOPIC,
    },
}


def project_without_protocol_check(aggregate: Any, events: Iterable[Any]) -> Any:
    """The library's ``project_aggregate`` minus its ``isinstance(e, CanMutateProtocol)``
    assertion (a runtime Protocol check, ~40 µs an event on Python 3.11)."""
    for event in events:
        aggregate = event.mutate(aggregate)
    return aggregate


def variants(env: dict[str, str], rounds: Sequence[UUID], seed: int) -> None:
    """Medians of commands and replays on this store with each proposed change, in
    alternating order (commands A B C D D C B A; replays interleaved round by round), so
    that a busy machine slows all of them alike."""
    print("variants on postgres (medians; commands: 2 x 2 rounds each, same seeds):")
    figures = {label: CommandFigures() for label in COMMAND_VARIANTS}
    order = [*COMMAND_VARIANTS, *reversed(COMMAND_VARIANTS)]
    for n, label in enumerate(order):
        rng = random.Random(seed + n % len(COMMAND_VARIANTS))
        svc = TimedService(
            {**env, **COMMAND_VARIANTS[label]}, seeds=functools.partial(rng.randbytes, 32)
        )
        try:
            c = play_rounds(svc, 2, rng)
        finally:
            svc.close()
        f = figures[label]
        f.ms += c.ms
        f.load_ms += c.load_ms
        f.save_ms += c.save_ms
    median = statistics.median
    for label, f in figures.items():
        print(
            f"  command, {label}: {median(f.ms):.2f} ms = load {median(f.load_ms):.2f} "
            f"+ save {median(f.save_ms):.2f}"
        )
    replayer = GameService({**env, "AGGREGATE_CACHE_MAXSIZE": ""})
    repo, recorder = replayer.repository, replayer.recorder
    original = domain.game.round_events.deal_for
    memoized = functools.lru_cache(maxsize=256)(original)
    times: dict[str, list[float]] = {"fetch": [], "as is": [], "unchecked": [], "memo": []}

    def timed(label: str, load: Callable[[], object]) -> None:
        start = time.perf_counter()
        load()
        times[label].append((time.perf_counter() - start) * 1000)

    try:
        for _ in range(REPLAY_PASSES):
            for rid in rounds:
                timed("fetch", lambda: recorder.select_events(rid))  # noqa: B023
                timed("as is", lambda: replayer.get_round(rid))  # noqa: B023
                timed(
                    "unchecked",
                    lambda: repo.get(rid, projector_func=project_without_protocol_check),  # noqa: B023
                )
                domain.game.round_events.deal_for = memoized
                timed(
                    "memo",
                    lambda: repo.get(rid, projector_func=project_without_protocol_check),  # noqa: B023
                )
                domain.game.round_events.deal_for = original
    finally:
        domain.game.round_events.deal_for = original
        replayer.close()
    med = {label: statistics.median(ts) for label, ts in times.items()}
    print(f"  replay, as is: {med['as is']:.2f} ms/round (the fetch alone: {med['fetch']:.2f})")
    print(
        f"  replay, projector without the Protocol isinstance check: {med['unchecked']:.2f} "
        f"ms/round"
    )
    print(f"  replay, that + deal_for memoized (lru_cache): {med['memo']:.2f} ms/round")

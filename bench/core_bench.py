"""Event-sourced core benchmark: GameService commands and round replays on SQLite and
PostgreSQL (docs/decisions.md F1, F4; RULES R34).

(a) **Commands.** Random-legal bots play complete rounds (deal, declare, overcall, bury,
every trick, score — R16–R31) through :meth:`GameService.act`; only the ``act`` call is
timed: load (aggregate cache + fast-forward query), validate, save. Each command's time is
split into load / rules+events / save by a thin subclass.

(b) **Replays.** Every finished round is rebuilt from the store by a service without an
aggregate cache (``repository.get``: fetch + decode + apply, R34), alternating with a raw
fetch of the same stored events plus a plain ``msgspec.json.decode`` of each state, so a
busy machine slows both alike. ``replay_vs_decode`` = events/s of the full replay ÷
events/s of the raw fetch+decode (≤ 1; the target is ≥ 0.25).

PostgreSQL comes from :func:`infra.pgcluster.postgres_url` ($DATABASE_URL, else a
throwaway cluster) in a fresh schema dropped afterwards. ``--profile`` adds a cProfile of
PostgreSQL commands and replays and counts the client/server round-trips per command
(libpq protocol trace). The last line is machine-readable::

    core-bench pg_cmd_ms=<median> pg_replay_ms=<median ms per round> \
        replay_vs_decode=<ratio> sqlite_cmd_ms=<median>

(one line; broken here for width).

Targets: a command ≤ 3 ms median on PostgreSQL, a finished round replays in ≤ 3 ms.
Run ``python -m bench.core_bench``.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from uuid import UUID, uuid4

import msgspec
import psycopg
from psycopg import sql

from bench._core_commands import (
    DEFAULT_ROUNDS,
    REPLAY_PASSES,
    CommandFigures,
    TimedService,
    play_rounds,
)
from bench._core_profile import count_round_trips, profile, variants
from domain.game.round import RoundPhase
from infra.pgcluster import postgres_url
from infra.settings import Settings
from infra.store import persistence_env
from services.game import GameService


@dataclass(slots=True)
class ReplayFigures:
    events: int = 0
    replay_s: float = 0.0
    raw_s: float = 0.0
    mapper_s: float = 0.0
    round_ms: list[float] = field(default_factory=list)

    @property
    def replay_per_s(self) -> float:
        return self.events / self.replay_s if self.replay_s else 0.0

    @property
    def raw_per_s(self) -> float:
        return self.events / self.raw_s if self.raw_s else 0.0

    @property
    def ratio(self) -> float:
        return self.replay_per_s / self.raw_per_s if self.raw_per_s else 0.0


def replay_rounds(env: dict[str, str], rounds: Sequence[UUID], passes: int) -> ReplayFigures:
    """Rebuild each round with no aggregate cache, against raw fetch + msgspec decode
    (and fetch + the service's event mapper, for the breakdown), interleaved."""
    replayer = GameService({**env, "AGGREGATE_CACHE_MAXSIZE": ""})
    recorder, mapper = replayer.recorder, replayer.mapper
    decode = msgspec.json.decode
    figures = ReplayFigures()
    try:
        for rid in rounds:  # warm up: connections, prepared statements, decoders
            replayer.get_round(rid)
        for _ in range(passes):
            for rid in rounds:
                start = time.perf_counter()
                stored = recorder.select_events(rid)
                for s in stored:
                    decode(s.state)
                raw = time.perf_counter() - start

                start = time.perf_counter()
                r = replayer.get_round(rid)
                replay = time.perf_counter() - start

                start = time.perf_counter()
                for s in recorder.select_events(rid):
                    mapper.to_domain_event(s)
                figures.mapper_s += time.perf_counter() - start

                assert r.version == len(stored) and r.phase is RoundPhase.SCORED
                figures.events += len(stored)
                figures.raw_s += raw
                figures.replay_s += replay
                figures.round_ms.append(replay * 1000)
    finally:
        replayer.close()
    return figures


@dataclass(slots=True)
class BackendFigures:
    name: str
    commands: CommandFigures
    replays: ReplayFigures

    @property
    def cmd_ms(self) -> float:
        return statistics.median(self.commands.ms)

    @property
    def replay_ms(self) -> float:
        return statistics.median(self.replays.round_ms)


def run_backend(
    name: str, env: dict[str, str], rounds: int, passes: int, seed: int
) -> BackendFigures:
    rng = random.Random(seed)
    svc = TimedService(env, seeds=lambda: rng.randbytes(32))
    try:
        commands = play_rounds(svc, rounds, rng)
    finally:
        svc.close()
    return BackendFigures(name, commands, replay_rounds(env, commands.rounds, passes))


def report(f: BackendFigures) -> None:
    c, r = f.commands, f.replays
    med = statistics.median
    rules_ms = [t - lo - sv for t, lo, sv in zip(c.ms, c.load_ms, c.save_ms, strict=True)]
    q = statistics.quantiles(c.ms, n=20)
    print(
        f"{f.name}: {len(c.ms)} commands in {len(c.rounds)} rounds: {c.per_s:.0f} commands/s, "
        f"median {f.cmd_ms:.2f} ms (p95 {q[-1]:.2f} ms) = load {med(c.load_ms):.2f} + "
        f"rules/events {med(rules_ms):.2f} + save {med(c.save_ms):.2f}"
    )
    per_round = r.events / max(len(r.round_ms), 1)
    mapper_per_s = r.events / r.mapper_s if r.mapper_s else 0.0
    print(
        f"{f.name}: replay of {len(r.round_ms)} finished rounds ({per_round:.0f} events each): "
        f"median {f.replay_ms:.2f} ms/round, {r.replay_per_s:.0f} events/s; raw fetch+decode "
        f"{r.raw_per_s:.0f} events/s; fetch+mapper {mapper_per_s:.0f} events/s; "
        f"replay_vs_decode={r.ratio:.3f}"
    )


@contextmanager
def postgres_env() -> Iterator[dict[str, str]]:
    """The library's environment for a fresh schema of :func:`postgres_url`'s server."""
    with postgres_url() as url:
        schema = f"bench_{uuid4().hex[:12]}"
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
        try:
            settings = Settings(backend="postgres", database_url=url, postgres_schema=schema)
            yield persistence_env(settings)
        finally:
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(schema)))


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bench.core_bench",
        description="GameService commands and round replays on SQLite and PostgreSQL.",
    )
    parser.add_argument(
        "--rounds", type=int, default=DEFAULT_ROUNDS, help="rounds per store (%(default)s)"
    )
    parser.add_argument(
        "--passes", type=int, default=REPLAY_PASSES, help="replays of each round (%(default)s)"
    )
    parser.add_argument("--seed", type=int, default=2024, help="run seed (default %(default)s)")
    parser.add_argument(
        "--profile", action="store_true", help="cProfile and round-trip counts on PostgreSQL"
    )
    parser.add_argument(
        "--variants",
        action="store_true",
        help="PostgreSQL medians with each proposed change (cache, insert, replay)",
    )
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.passes < 1:
        parser.error("--rounds and --passes must be >= 1")

    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(backend="sqlite", sqlite_path=Path(tmp) / "bench.sqlite3")
        lite = run_backend("sqlite", persistence_env(settings), args.rounds, args.passes, args.seed)
    report(lite)
    with postgres_env() as env:
        pg = run_backend("postgres", env, args.rounds, args.passes, args.seed)
        report(pg)
        if args.variants:
            variants(env, pg.commands.rounds[:8], args.seed)
        if args.profile:
            count_round_trips(env, args.seed)
            profile(env, 2, args.seed)
    print(
        f"core-bench pg_cmd_ms={pg.cmd_ms:.3f} pg_replay_ms={pg.replay_ms:.3f} "
        f"replay_vs_decode={pg.replays.ratio:.3f} sqlite_cmd_ms={lite.cmd_ms:.3f}"
    )


if __name__ == "__main__":
    main()

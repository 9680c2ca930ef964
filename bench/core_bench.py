"""Event-sourced core benchmark: GameService commands and round replays on SQLite and
PostgreSQL (ARCHITECTURE decisions 1 and 4; RULES R34).

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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from uuid import UUID, uuid4

import msgspec
import psycopg
from eventsourcing.domain import DomainEventProtocol, MutableOrImmutableAggregate
from eventsourcing.persistence import Recording
from psycopg import sql

import domain.game.round_events
from domain.game.match import Match
from domain.game.round import Round, RoundPhase
from domain.players.combos import random_lead
from domain.rules.cards import Card
from domain.rules.follow import random_follow
from domain.rules.ruleset import RuleSet
from infra.pgcluster import postgres_url
from infra.pgstore import RECORDER_TOPIC
from infra.settings import Settings, persistence_env
from services.game import GameService

DEFAULT_ROUNDS = 16
REPLAY_PASSES = 5
Command = tuple[int, str, tuple[Card, ...]]


# -- a service that times the parts of each command --------------------------------------


class TimedService(GameService):
    """GameService that adds up, while ``timing`` is on, the time spent loading the match
    and the round and saving them; the rest of ``act`` is rules and events."""

    name = GameService.name  # the same store (table, environment prefix) as the service

    def __init__(self, env: dict[str, str], seeds: Callable[[], bytes]) -> None:
        super().__init__(env, seeds=seeds)
        self.timing = False
        self.load_s = 0.0
        self.save_s = 0.0

    def get_match(self, match_id: UUID, version: int | None = None) -> Match:
        start = time.perf_counter()
        try:
            return super().get_match(match_id, version)
        finally:
            if self.timing:
                self.load_s += time.perf_counter() - start

    def get_round(self, round_id: UUID, version: int | None = None) -> Round:
        start = time.perf_counter()
        try:
            return super().get_round(round_id, version)
        finally:
            if self.timing:
                self.load_s += time.perf_counter() - start

    def save(
        self,
        *objs: MutableOrImmutableAggregate[UUID] | DomainEventProtocol[UUID] | None,
        **kwargs: Any,
    ) -> list[Recording[UUID]]:
        start = time.perf_counter()
        try:
            return super().save(*objs, **kwargs)
        finally:
            if self.timing:
                self.save_s += time.perf_counter() - start


# -- random-legal bots --------------------------------------------------------------------


def next_command(r: Round, rng: random.Random) -> Command:
    """A random legal command for the seat the round waits for (R17–R23)."""
    phase = r.phase
    if phase is RoundPhase.DEALING:  # the deal is not paced here: every card is drawn
        if r.bidding.standing is None:
            for declarer in rng.sample(range(4), 4):
                shows = r.bidding.legal_shows(declarer, r.dealt_hand(declarer))
                if shows and rng.random() < 0.5:
                    return declarer, "declare", shows[0].cards
        return min(set(range(4)) - r.deal_passes), "pass", ()
    seat = r.to_act()
    assert seat is not None, phase
    if phase in (RoundPhase.OVERCALLING, RoundPhase.DECLARING):
        shows = r.bidding.legal_shows(seat, r.hands[seat])
        if shows and rng.random() < 0.3:
            return (
                seat,
                "overcall" if phase is RoundPhase.OVERCALLING else "declare",
                (rng.choice(shows).cards),
            )
        return seat, "pass", ()
    if phase is RoundPhase.BURYING:
        return seat, "bury", tuple(rng.sample([*r.hands[seat], *r.bottom], 8))
    play = r.play
    assert play is not None and phase is RoundPhase.PLAYING
    hand = play.hands[seat]
    if play.lead_shape is None:
        return seat, "play", tuple(random_lead(play.ctx, hand, rng, 0.05))
    return seat, "play", tuple(random_follow(play.ctx, play.lead_shape, hand, rng))


@dataclass(slots=True)
class CommandFigures:
    ms: list[float] = field(default_factory=list)
    load_ms: list[float] = field(default_factory=list)
    save_ms: list[float] = field(default_factory=list)
    rounds: list[UUID] = field(default_factory=list)

    @property
    def per_s(self) -> float:
        return len(self.ms) / (sum(self.ms) / 1000) if self.ms else 0.0


def play_rounds(svc: TimedService, rounds: int, rng: random.Random) -> CommandFigures:
    """Play ``rounds`` complete rounds of one match; time each ``act``."""
    figures = CommandFigures()
    mid = svc.create_match(RuleSet(), name="bench")
    for seat in range(4):
        svc.take_seat(mid, seat, f"bot{seat}", "random")
    while len(figures.rounds) < rounds:
        match = svc.get_match(mid)
        r = svc.current_round(match)
        assert r is not None
        seat, action, cards = next_command(r, rng)
        svc.load_s = svc.save_s = 0.0
        svc.timing = True
        start = time.perf_counter()
        svc.act(mid, seat, action, cards)
        elapsed = time.perf_counter() - start
        svc.timing = False
        figures.ms.append(elapsed * 1000)
        figures.load_ms.append(svc.load_s * 1000)
        figures.save_ms.append(svc.save_s * 1000)
        if svc.get_match(mid).round_number != r.number:
            figures.rounds.append(r.id)
    return figures


# -- replays --------------------------------------------------------------------------------


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


# -- one backend ----------------------------------------------------------------------------


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


# -- profiling ------------------------------------------------------------------------------


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

            mid = svc.create_match(RuleSet(), name="trace")
            for seat in range(4):
                svc.take_seat(mid, seat, f"bot{seat}", "random")
            while True:  # round 1 warms the cache and the prepared statements; count round 2
                r = svc.current_round(svc.get_match(mid))
                assert r is not None
                if r.number > 2:
                    break
                command = next_command(r, rng)
                before = trace.stat().st_size
                datastore.get_connection = traced_connection
                svc.act(mid, *command)
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
    mid = svc.create_match(RuleSet(), name="profile")
    for seat in range(4):
        svc.take_seat(mid, seat, f"bot{seat}", "random")
    done: list[UUID] = []
    while len(done) < rounds:
        r = svc.current_round(svc.get_match(mid))
        assert r is not None
        command = next_command(r, rng)
        profiler.enable()
        svc.act(mid, *command)
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


# -- variants: what the proposed changes would give ---------------------------------------


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


# -- main -----------------------------------------------------------------------------------


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

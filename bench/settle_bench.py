"""What a read's settling costs (docs/decisions.md D-settle): two game services on one
PostgreSQL schema, ``a`` trusting its cache kept by its live hub, ``b`` moving matches
as fast as it can (another replica's commands). Reader threads read tables through ``a``
as a request does (``api.runtime.snapshot`` inside :meth:`services.settling.Settling.read`)
in alternating phases: **off** (no hub tells the settling: a load takes the cache as it
is) and **on** (a read asks the log's end once and waits for the hub to reach it).

Printed per phase: reads, queries of the log's end and queries per read, reads per
second, the mean read time, and **stale reads** — a read that showed a match or round older
than a move ``b`` had acknowledged before the read began. Each figure has the machine's load
(``os.getloadavg``) beside it; the phases alternate in one run (same-run pairs).

    .venv/bin/python -m bench.settle_bench [--matches 12] [--readers 2] [--seconds 8] [--pairs 2]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from uuid import UUID

import msgspec

from api.runtime import snapshot
from domain.game.round import RoundPhase
from domain.rules.ruleset import RuleSet
from infra.hub import PostgresHub
from infra.pgcluster import postgres_url
from infra.settings import Settings
from infra.store import build_service
from services.game import GameService
from services.settling import Settling
from tests.integration.store_bots import Bots, act, new_match, play_until
from tests.resilience.harness import schema_settings


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load {one:.2f} {five:.2f} {fifteen:.2f}"


@dataclass
class Phase:
    name: str
    reads: int = 0
    stale: int = 0
    seconds: float = 0.0
    busy: float = 0.0
    asked: int = 0

    def line(self) -> str:
        per_read = self.asked / max(1, self.reads)
        return (
            f"{self.name:>3}: reads={self.reads} queries={self.asked} "
            f"queries_per_read={per_read:.3f} reads_per_s={self.reads / self.seconds:.0f} "
            f"mean_read_ms={1000 * self.busy / max(1, self.reads):.2f} stale_reads={self.stale} "
            f"({load()})"
        )


class Writer:
    """``b`` moves the matches round robin; ``acked[match]`` is the match's version after
    the last acknowledged move (what a read begun after it must show at least)."""

    def __init__(self, b: GameService, matches: list[UUID]) -> None:
        self.b = b
        self.matches = matches
        self.acked: dict[UUID, int] = {}
        """The version of each match and round after the last move acknowledged."""
        self.stop = threading.Event()
        self.bots = Bots(7)

    def run(self) -> None:
        while not self.stop.is_set():
            for match_id in self.matches:
                if self.stop.is_set():
                    return
                match = self.b.get_match(match_id)
                round_ = self.b.current_round(match)
                if round_ is None or round_.phase in (RoundPhase.SCORED, RoundPhase.ABANDONED):
                    continue
                act(self.b, match_id, self.bots.move(round_, self.b))
                after = self.b.get_match(match_id)
                now = self.b.current_round(after)
                self.acked[match_id] = after.version
                if now is not None:
                    self.acked[now.id] = now.version


def reader(a: GameService, writer: Writer, phase: Phase, until: float, seed: int) -> None:
    rng = random.Random(seed)
    while time.monotonic() < until:
        match_id = rng.choice(writer.matches)
        floors = dict(writer.acked)  # (a copy: the writer goes on)
        started = time.perf_counter()
        match, round_ = Settling.read(snapshot, a, match_id)
        phase.busy += time.perf_counter() - started
        phase.reads += 1
        shown = [match] if round_ is None else [match, round_]
        if any(x.version < floors.get(x.id, 0) for x in shown):
            phase.stale += 1


@contextmanager
def hub_of(settings: Settings, a: GameService) -> Iterator[PostgresHub]:
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    hub = PostgresHub.for_service(settings, a)
    asyncio.run_coroutine_threadsafe(hub.start(), loop).result(30)
    try:
        yield hub
    finally:
        asyncio.run_coroutine_threadsafe(hub.stop(), loop).result(30)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--matches", type=int, default=12)
    p.add_argument("--readers", type=int, default=2)
    p.add_argument("--seconds", type=float, default=8.0)
    p.add_argument("--pairs", type=int, default=2)
    args = p.parse_args(argv)
    with postgres_url() as url, schema_settings(url, aggregate_cache_fastforward=False) as trusted:
        a = build_service(trusted)
        b = build_service(msgspec.structs.replace(trusted, aggregate_cache_fastforward=True))
        try:
            with hub_of(trusted, a):
                while not (a.repository.cache and getattr(a.repository.cache, "kept", False)):
                    time.sleep(0.05)
                matches = [new_match(a, RuleSet()) for _ in range(args.matches)]
                for match_id in matches:  # into play: long rounds of single moves
                    play_until(a, match_id, Bots(3), lambda m, r: r.phase is RoundPhase.PLAYING)
                    a.get_match(match_id)
                writer = Writer(b, matches)
                writing = threading.Thread(target=writer.run, daemon=True)
                writing.start()
                phases: list[Phase] = []
                for pair in range(args.pairs):
                    for name in ("off", "on"):
                        a.settling.followed = name == "on"
                        phase = Phase(name)
                        asked = a.settling.asked
                        began = time.monotonic()
                        until = began + args.seconds
                        readers = [
                            threading.Thread(target=reader, args=(a, writer, phase, until, i))
                            for i in range(args.readers)
                        ]
                        for t in readers:
                            t.start()
                        for t in readers:
                            t.join()
                        phase.seconds = time.monotonic() - began
                        phase.asked = a.settling.asked - asked
                        phases.append(phase)
                        print(f"pair {pair + 1} {phase.line()}", flush=True)
                writer.stop.set()
                writing.join(30)
        finally:
            a.close()
            b.close()
    off = [p for p in phases if p.name == "off"]
    on = [p for p in phases if p.name == "on"]
    ratio = (sum(p.busy for p in on) / max(1, sum(p.reads for p in on))) / max(
        1e-9, sum(p.busy for p in off) / max(1, sum(p.reads for p in off))
    )
    print(
        f"on/off mean read time {ratio:.2f}; stale reads off={sum(p.stale for p in off)} "
        f"on={sum(p.stale for p in on)} ({load()})"
    )


if __name__ == "__main__":
    main()

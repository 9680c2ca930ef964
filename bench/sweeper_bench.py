"""What the worker's sweeper costs per change another process made (docs/decisions.md
D-deadlines), in one process: tables of people with turn limits in play on the embedded
store with a trusted cache (``AGGREGATE_CACHE_FASTFORWARD=n``), their moves made as another
process's would reach a worker (the sweeper told by :meth:`Sweeper.changed`, not by the
saves), a sweep every ``--every`` moves. Two sweepers, one after the other, on the same
tables: **loads** — every change due at once and loaded by the next sweep (what
``changed`` did before) — and **reads** — the next deadline read from the kept cache.

Printed per phase: the sweeper's CPU (``time.process_time`` around ``changed`` and
``sweep``) per move, the matches loaded per move, and the ratio, with the machine's load
(``os.getloadavg``) beside each figure.

    .venv/bin/python -m bench.sweeper_bench [--matches 200] [--moves 4000] [--every 20] [--pairs 2]
"""

from __future__ import annotations

import argparse
import os
import time
from uuid import UUID

from domain.game.match import Match
from domain.game.round import Round, RoundPhase
from domain.game.timers import Timers
from domain.rules.ruleset import RuleSet
from services.game import GameService
from services.sweeper import Sweeper
from tests.commands import bus_of, create_match, take_seat
from tests.conftest import FakeClock, FixedSeeds
from tests.integration.store_bots import Bots, act, play_until

TIMERS = Timers(declare_ms=30_000, bury_ms=60_000, play_ms=30_000)


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load {one:.2f} {five:.2f} {fifteen:.2f}"


class LoadsEveryChange(Sweeper):
    """The sweeper as it was: a change another process made is due at once."""

    def _cached(self, match_id: UUID) -> tuple[Match, Round] | None:
        return None


def tables(service: GameService, count: int) -> list[UUID]:
    """``count`` tables of four people with turn limits, in play."""
    found = []
    for i in range(count):
        match_id = create_match(service, RuleSet(), name=f"bench {i}", timers=TIMERS)
        for seat in range(4):
            take_seat(service, match_id, seat, f"p{i}-{seat}")
        play_until(service, match_id, Bots(i), lambda m, r: r.phase is RoundPhase.PLAYING)
        found.append(match_id)
    return found


def phase(
    service: GameService, sweeper: Sweeper, matches: list[UUID], moves: int, every: int
) -> tuple[float, float]:
    """CPU seconds of the sweeper and matches it looked at, per move."""
    counted = {"loads": 0}
    load_match = service.get_match

    def loading(match_id: UUID, version: int | None = None) -> object:
        counted["loads"] += 1
        return load_match(match_id, version)

    sweeper.sweep()  # the tables are known (their timers, no bots)
    bots = Bots(99)
    spent = 0.0
    for n in range(moves):
        match_id = matches[n % len(matches)]
        round_ = service.current_round(service.get_match(match_id))
        assert round_ is not None
        act(service, match_id, bots.move(round_, service))
        started = time.process_time()
        service.get_match = loading  # type: ignore[method-assign,assignment]
        sweeper.changed({match_id})
        if n % every == every - 1:
            sweeper.sweep()
        service.get_match = load_match  # type: ignore[method-assign]
        spent += time.process_time() - started
    return spent / moves, counted["loads"] / moves


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--matches", type=int, default=200)
    p.add_argument("--moves", type=int, default=4000)
    p.add_argument("--every", type=int, default=20, help="moves between two sweeps [20]")
    p.add_argument("--pairs", type=int, default=2)
    args = p.parse_args(argv)
    service = GameService(
        {"PERSISTENCE_MODULE": "eventsourcing.popo", "AGGREGATE_CACHE_FASTFORWARD": "n"},
        clock=FakeClock(),
        seeds=FixedSeeds(),
    )
    matches = tables(service, args.matches)
    print(f"{len(matches)} tables of people in play ({load()})", flush=True)
    totals = {"loads": 0.0, "reads": 0.0}
    for pair in range(args.pairs):
        for name, kind in (("loads", LoadsEveryChange), ("reads", Sweeper)):
            sweeper = kind(bus_of(service))
            cpu, looked = phase(service, sweeper, matches, args.moves, args.every)
            totals[name] += cpu
            print(
                f"pair {pair + 1} {name}: sweeper CPU {1000 * cpu:.3f} ms per move, "
                f"{looked:.2f} matches loaded per move ({load()})",
                flush=True,
            )
    print(f"reads/loads sweeper CPU per move {totals['reads'] / totals['loads']:.2f} ({load()})")


if __name__ == "__main__":
    main()

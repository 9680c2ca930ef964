"""Duplicate-evening benchmark: what the ranking by matchpoints and the travellers cost a
read (docs/decisions.md D-duplicate-evening) — they read the completed rounds' tables'
matches when asked — on a boards event of bots, on the embedded (popo) store.

Per read, the median over ``--repeat`` reads: the standings with the duplicate ranking
against the standings alone (the tournament loaded each time; the same run's ratio; a
completed round's matchpoints are read once, then kept), a traveller, a round's board index and
the display's data; after one round and after two.

The last line is machine-readable::

    duplicate-bench tables=<n> rounds=<r> standings_ms=<f> ranked_ms=<f> ratio=<f> traveller_ms=<f>

Run ``python -m bench.duplicate_bench [--teams 40 --deals 2]``; give ``uptime`` with the figures.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any
from uuid import UUID

from domain.rules.ruleset import STANDARD
from domain.tournament.events import TeamEntry
from infra.settings import Settings
from infra.store import build_service
from services.bot_driver import run_bots
from services.bus import Bus
from services.game import GameService
from services.handlers import build_bus
from services.tournaments.commands import CreateTournament, ScheduleRound
from services.tournaments.display import display_view
from services.tournaments.exports import standings_answer
from services.tournaments.loading import get_tournament
from services.tournaments.results_policy import ResultsPolicy
from services.tournaments.travellers import board_index, traveller
from services.tournaments.views import standings_view


def median_ms(read: Callable[[], Any], repeat: int) -> float:
    took = []
    for _ in range(repeat):
        started = time.perf_counter()
        read()
        took.append(time.perf_counter() - started)
    return statistics.median(took) * 1000


def plain_standings(service: GameService, tid: UUID) -> Any:
    """The standings as the route read them before the ranking: the tournament loaded, its
    view made."""
    return standings_view(get_tournament(service, tid))


def play_round(service: GameService, bus: Bus, tid: UUID) -> None:
    bus.execute(ScheduleRound(tid))
    for table in get_tournament(service, tid).rounds[-1].tables:
        run_bots(bus, table.match_id)
    ResultsPolicy(bus).catch_up()


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--teams", type=int, default=40)
    parser.add_argument("--deals", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    service = build_service(Settings(backend="popo"))
    try:
        bus = build_bus(service)
        entries = tuple(
            TeamEntry(f"T{i}", (f"a{i}", f"b{i}"), ("random", "random")) for i in range(args.teams)
        )
        command = CreateTournament(
            "bench", STANDARD, entries, "swiss", args.deals, swiss_rounds=2, deals="boards"
        )
        tid = UUID(bus.execute(command).tournament_id)
        line = ""
        for rounds in (1, 2):
            play_round(service, bus, tid)
            t = get_tournament(service, tid)
            assert t.rounds[-1].revealed, "the round did not complete"
            plain = median_ms(partial(plain_standings, service, tid), args.repeat)
            ranked = median_ms(partial(standings_answer, service, tid, False), args.repeat)
            one = median_ms(partial(traveller, service, t, rounds, 1), args.repeat)
            index = median_ms(partial(board_index, service, t, rounds), args.repeat)
            shown = median_ms(partial(display_view, service, t), args.repeat)
            tables = len(t.rounds[-1].tables)
            print(
                f"after round {rounds}: {tables} tables, {args.deals} boards a round: standings "
                f"{plain:.2f} ms, with the ranking {ranked:.2f} ms ({ranked / plain:.1f}x), a "
                f"traveller {one:.2f} ms, the board index {index:.2f} ms, "
                f"the display {shown:.2f} ms"
            )
            line = (
                f"duplicate-bench tables={tables} rounds={rounds} standings_ms={plain:.2f} "
                f"ranked_ms={ranked:.2f} ratio={ranked / plain:.1f} traveller_ms={one:.2f}"
            )
        print(line)
    finally:
        service.close()


if __name__ == "__main__":
    main()

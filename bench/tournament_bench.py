"""Tournament benchmark: a round scheduled in one save, and the results policy following the
log (docs/decisions.md D-results-policy), on a SQLite file in a temporary folder.

* ``schedule``: ``ScheduleRound`` of a Swiss round of people's tables (every table's match
  created, four seats taken, round 1 dealt) — one save — against the same round saved the
  way scheduling used to: ``RoundScheduled``, then a save per table's match and per seat
  (the same steps, each committed alone): milliseconds a round and the same-run ratio;
* ``policy``: every table of a bots round played to its end (match commands only), then
  the results policy caught up from its position: results recorded a second.

The last line is machine-readable::

    tournament-bench tables=<n> one_save_ms=<f> per_seat_ms=<f> ratio=<f> results_per_s=<f>

Run ``python -m bench.tournament_bench [--teams 32]``; give ``uptime`` with the figures.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from uuid import UUID

from domain.rules.ruleset import STANDARD
from domain.tournament.duplicate import seat_teams
from domain.tournament.events import TeamEntry
from domain.tournament.tournament import Tournament
from infra.settings import Settings
from infra.store import build_service
from services.bot_driver import run_bots
from services.bus import Bus
from services.dealer import Dealer
from services.game import GameService
from services.handlers import build_bus, table_deals
from services.match_commands import CreateMatch, create, take_seat
from services.sources import SEAT_ROLE, new_token
from services.tournaments.commands import CreateTournament, ScheduleRound
from services.tournaments.loading import get_tournament
from services.tournaments.results_policy import ResultsPolicy
from services.unit_of_work import UnitOfWork


def teams(n: int, kind: str) -> tuple[TeamEntry, ...]:
    return tuple(TeamEntry(f"T{i}", (f"a{i}", f"b{i}"), (kind, kind)) for i in range(n))


def cup(bus: Bus, n: int, kind: str) -> UUID:
    command = CreateTournament("bench", STANDARD, teams(n, kind), "swiss", 1, swiss_rounds=1)
    return UUID(bus.execute(command).tournament_id)


def one_save(bus: Bus, n: int) -> float:
    tid = cup(bus, n, "human")
    started = time.perf_counter()
    bus.execute(ScheduleRound(tid))
    return time.perf_counter() - started


def per_seat(service: GameService, bus: Bus, n: int) -> float:
    """The same round saved as scheduling used to: ``RoundScheduled``, then each table's
    match, then each of its seats (the fourth deals round 1), a save each."""
    tid = cup(bus, n, "human")
    started = time.perf_counter()
    uow = UnitOfWork(service)
    t = uow.get(tid, Tournament, "tournament")
    state = t.round_state(t.schedule_round(service.seeds(), uow.now))
    uow.commit()
    dealer = Dealer(table_deals(service))
    for table in state.tables:
        uow = UnitOfWork(service)
        command = CreateMatch(STANDARD, tournament=(tid, state.number))
        create(uow, command, table.match_id, "")
        uow.commit()
        seats = seat_teams(table.table, table.first, table.second)
        for seat in range(4):
            uow = UnitOfWork(service)
            uow.get(tid, Tournament, "tournament")  # the dealer reads the round's secret
            team = t.teams[seats[seat]]
            token = new_token(table.match_id, SEAT_ROLE)
            take_seat(
                uow,
                dealer,
                uow.match(table.match_id),
                seat,
                team.players[seat // 2],
                "human",
                token,
            )
            uow.commit()
    return time.perf_counter() - started


def policy_rate(service: GameService, bus: Bus, n: int) -> tuple[int, float]:
    tid = cup(bus, n, "random")
    bus.execute(ScheduleRound(tid))
    tables = [e.match_id for e in get_tournament(service, tid).rounds[0].tables]
    for match_id in tables:
        run_bots(bus, match_id)
    policy = ResultsPolicy(bus)
    started = time.perf_counter()
    recorded = policy.catch_up()
    return recorded, time.perf_counter() - started


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--teams", type=int, default=32)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        settings = Settings(backend="sqlite", sqlite_path=Path(folder) / "events.sqlite3")
        service = build_service(settings)
        try:
            bus = build_bus(service)
            ones = [one_save(bus, args.teams) for _ in range(args.repeat)]
            seats = [per_seat(service, bus, args.teams) for _ in range(args.repeat)]
            recorded, took = policy_rate(service, bus, args.teams)
        finally:
            service.close()
    tables = args.teams // 2
    one_ms, seat_ms = statistics.median(ones) * 1000, statistics.median(seats) * 1000
    print(f"schedule: {tables} tables, one save {one_ms:.1f} ms, a save per seat {seat_ms:.1f} ms")
    print(f"policy: {recorded} results recorded in {took * 1000:.1f} ms")
    print(
        f"tournament-bench tables={tables} one_save_ms={one_ms:.2f} per_seat_ms={seat_ms:.2f} "
        f"ratio={seat_ms / one_ms:.2f} results_per_s={recorded / took:.1f}"
    )


if __name__ == "__main__":
    main()

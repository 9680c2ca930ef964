"""A finished table moves the standings (docs/decisions.md D-results-policy): the results
policy follows the log's ``MatchFinished`` into the tournament, its position saved with each
result, on every store — exactly once across a restart (a new service on the same store
resumes from the saved position) and across two policies racing on one store."""

from __future__ import annotations

import threading
from uuid import UUID

from domain.rules.ruleset import STANDARD
from domain.tournament.events import TableResultRecorded, TeamEntry
from services.game import GameService
from services.handlers import build_bus
from services.positions import PolicyPosition, position_id
from services.tournaments.results_policy import (
    POLICY,
    RecordTableResult,
    ResultsPolicy,
    finished_table,
)
from tests.commands import run_bots
from tests.conftest import Backend
from tests.tournaments import Tournaments


def bot_teams(n: int) -> list[TeamEntry]:
    return [TeamEntry(f"T{i}", (f"a{i}", f"b{i}"), ("heuristic", "random")) for i in range(n)]


def scheduled(service: GameService, teams: int = 4) -> tuple[UUID, list[UUID]]:
    """A round robin of bots with round 1 scheduled: its id and its tables' matches."""
    ts = Tournaments(service)
    t = ts.create(
        name="cup", rules=STANDARD, teams=bot_teams(teams), fmt="round_robin", match_length=1
    )
    ts.schedule_next(t.id)
    return t.id, [e.match_id for e in ts.get(t.id).rounds[0].tables]


def recorded(service: GameService, tournament_id: UUID) -> list[int]:
    """The tables (0-based) of every ``TableResultRecorded`` the tournament holds."""
    return [
        e.table for e in service.events.get(tournament_id) if isinstance(e, TableResultRecorded)
    ]


def position(service: GameService) -> int:
    found: object = service.repository.get(position_id(POLICY))
    assert isinstance(found, PolicyPosition)
    return found.position


def test_a_finished_table_enters_the_standings_once_across_a_restart(backend: Backend) -> None:
    first = backend.service()
    tid, (a, b) = scheduled(first)
    assert run_bots(first, a).steps > 0 and first.get_match(a).finished
    assert ResultsPolicy(build_bus(first)).catch_up() == 1
    assert recorded(first, tid) == [0]
    assert ResultsPolicy(build_bus(first)).catch_up() == 0  # a new one reads the position
    reached = position(first)

    again = backend.service()  # the process restarts: a new service on the same store
    assert run_bots(again, b).steps > 0
    policy = ResultsPolicy(build_bus(again))
    assert policy.position() == reached  # resumed from the saved position
    assert policy.catch_up() == 1
    assert sorted(recorded(again, tid)) == [0, 1]
    t = Tournaments(again).get(tid)
    assert t.round_state(1).revealed  # the last result completed the round (R35)
    assert policy.catch_up() == 0 and position(again) > reached


def test_a_notification_at_or_before_the_position_is_passed_over(backend: Backend) -> None:
    service = backend.service()
    tid, (a, _) = scheduled(service)
    run_bots(service, a)
    policy = ResultsPolicy(build_bus(service))
    assert policy.catch_up() == 1
    # the same notification sent again (a policy that had not saved its position): skipped
    taken = build_bus(service).execute(RecordTableResult(position(service), a))
    assert not taken.recorded and recorded(service, tid) == [0]


def test_two_policies_racing_on_one_store_record_each_table_once(backend: Backend) -> None:
    ours, theirs = backend.service(), backend.service()
    tid, tables = scheduled(ours, teams=8)
    for match_id in tables:
        run_bots(ours, match_id)
    policies = [ResultsPolicy(build_bus(ours)), ResultsPolicy(build_bus(theirs))]
    start = threading.Barrier(2)
    counts: list[int] = []

    def follow(policy: ResultsPolicy) -> None:
        start.wait()
        counts.append(policy.catch_up())

    threads = [threading.Thread(target=follow, args=(p,)) for p in policies]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    while sum(p.catch_up() for p in policies):  # a policy that gave way to a busy store
        pass
    assert sorted(recorded(ours, tid)) == [0, 1, 2, 3]  # each table once, whoever won
    assert sum(counts) <= 4
    # the round revealed in the store, read by a service of its own: on SQLite neither racer's
    # aggregate cache asks the file for the other's saves (one writing process per file)
    assert Tournaments(backend.service()).get(tid).round_state(1).revealed


def test_only_a_save_that_ends_a_table_wakes_the_policy() -> None:
    service = GameService({"PERSISTENCE_MODULE": "eventsourcing.popo"})
    woken: list[bool] = []
    service.saves.stored.add(lambda saved: woken.append(finished_table(saved)))
    _, (a, _) = scheduled(service)
    assert not any(woken)  # scheduling seats and deals: nothing finished
    run_bots(service, a)
    assert woken[-1] and woken.count(True) == 1  # the table's last save ended it

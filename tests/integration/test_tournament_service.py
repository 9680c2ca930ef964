"""The tournament commands on every store (R35, R36): tables created and seated with
``RoundScheduled`` in one save, duplicate seeds derived from the round's secret, results
recorded in the tournament, the secret revealed after the round; people's seats and the
pacing."""

from __future__ import annotations

import csv
import hashlib
import io
from typing import Any
from uuid import UUID

import pytest

from domain.game.round_events import Pacing, deal_for
from domain.rules.errors import IllegalMoveError
from domain.rules.ruleset import STANDARD
from domain.tournament.duplicate import deal_seed
from domain.tournament.events import TeamEntry
from domain.tournament.tournament import Tournament
from services.access import Credential, seat_in
from services.bot_driver import Step, play_one
from services.bus import Bus
from services.dealer import Dealer
from services.errors import VersionConflictError
from services.game import GameService
from services.handlers import table_deals
from services.tournaments.exports import results_csv, standings_csv
from services.tournaments.tables import seat_round, table_result
from services.tournaments.views import tournament_view
from services.unit_of_work import UnitOfWork, save
from tests.commands import run_bots
from tests.conftest import T0, Backend, FakeClock, FixedSeeds
from tests.driving import play_round
from tests.tournaments import Tournaments


def bot_teams(n: int) -> list[TeamEntry]:
    return [TeamEntry(f"T{i}", (f"a{i}", f"b{i}"), ("heuristic", "random")) for i in range(n)]


def popo(pacing: Pacing | None = None) -> GameService:
    return GameService(
        {"PERSISTENCE_MODULE": "eventsourcing.popo"},
        clock=FakeClock(),
        seeds=FixedSeeds(),
        pacing=pacing,
    )


def create(ts: Tournaments, teams: list[TeamEntry], **kw: object) -> Tournament:
    args: dict[str, object] = {"fmt": "round_robin", "match_length": 1, **kw}
    return ts.create(name="cup", rules=STANDARD, teams=teams, **args)  # type: ignore[arg-type]


def test_a_bots_round_plays_the_same_seeds_at_every_table(backend: Backend) -> None:
    service = backend.service()
    ts = Tournaments(service)
    t = create(ts, bot_teams(4))
    assert ts.schedule_next(t.id).seat_tokens == []  # bots need no tokens
    run = play_round(ts, t.id)
    assert run.completed and [r.status for r in run.tables] == ["finished", "finished"]
    t = ts.get(t.id)
    state = t.rounds[0]
    secret = bytes.fromhex(state.secret)
    assert state.revealed and hashlib.sha256(secret).hexdigest() == state.commitment
    for table in state.tables:
        match = service.get_match(table.match_id)
        assert (match.tournament_id, match.tournament_round) == (t.id, 1)
        round_ = service.get_round(match.results[0].round_id)
        # R36: every deal's seed comes from the round's secret (R35: its Dealt commitment)
        assert round_.seed_hex == deal_seed(secret, 1, round_.deal_no).hex()
        assert round_.commitment == hashlib.sha256(bytes.fromhex(round_.seed_hex)).hexdigest()
        entry, result = t.results[(1, table.table)], table_result(table, match)
        assert (entry.winner, entry.levels, entry.points, entry.deals) == (
            result.winner,
            result.levels,
            result.points,
            result.deals,
        )
    # another service on the same store (another process) sees the same tournament
    again = Tournaments(backend.service()).get(t.id)
    assert tournament_view(again) == tournament_view(t)


def test_every_deal_gives_every_table_the_same_hands_seat_for_seat() -> None:
    """R36: deal n of every table has the same seed AND the same four hands and bottom,
    seat for seat, whoever deals there (tournament deals draw from seat 0, whatever the
    dealer: R16 from the dealer would rotate the hands between tables)."""
    service = popo()
    ts = Tournaments(service)
    t = create(ts, bot_teams(4), match_length=3)
    ts.schedule_next(t.id)
    assert play_round(ts, t.id).completed
    tables = ts.get(t.id).rounds[0].tables
    deals: dict[int, list[tuple[object, ...]]] = {}
    dealers: dict[int, set[int | None]] = {}
    for table in tables:
        match = service.get_match(table.match_id)
        for recorded in match.results:
            round_ = service.get_round(recorded.round_id)
            assert round_.dealt is not None
            # seat s holds what the seed gives seat s when drawn from seat 0
            assert round_.dealt.hands == deal_for(round_.seed_hex, 0).hands
            deals.setdefault(round_.number, []).append((round_.dealt.hands, round_.dealt.bottom))
            dealers.setdefault(round_.number, set()).add(round_.dealer)
    assert sorted(deals) == [1, 2, 3]
    for number, seen in deals.items():
        assert len(seen) == len(tables) and len(set(seen)) == 1, f"deal {number} differs"
    # the test means something: some deal was dealt by a seat other than 0 (R16 would
    # have drawn from there, giving that table rotated hands)
    assert any(d not in (None, 0) for n, ds in dealers.items() if n > 1 for d in ds)


def test_a_whole_round_robin_then_no_more_rounds() -> None:
    ts = Tournaments(popo())
    t = create(ts, bot_teams(3), match_length=2)
    for number in (1, 2, 3):
        done = ts.schedule_next(t.id)
        assert done.round.number == number
        assert play_round(ts, t.id).completed
    t = ts.get(t.id)
    assert t.finished and [r.bye for r in t.rounds] == [0, 1, 2]
    assert all(e.deals == 2 for e in t.results.values())  # rounds:2 (R32)
    with pytest.raises(IllegalMoveError) as info:
        ts.schedule_next(t.id)
    assert info.value.code == "tournament-over"
    with pytest.raises(IllegalMoveError) as info:
        ts.finish_table(t.id, 1, 0, "late")
    assert info.value.code == "round-not-current"
    lines = standings_csv(t).splitlines()
    assert lines[0].startswith("rank,team,name") and len(lines) == 4
    rows = list(csv.DictReader(io.StringIO(results_csv(t))))
    assert [r["row"] for r in rows] == ["table"] * 3 + ["bye"] * 3  # one file, byes too
    assert [r["first_team"] for r in rows[3:]] == ["0", "1", "2"]
    assert {r["match_points"] for r in rows[3:]} == {"2"}  # a bye scores as a win


def test_people_get_seat_tokens_and_the_round_waits_for_them() -> None:
    service = popo()
    ts = Tournaments(service)
    people = TeamEntry("Humans", ("Ann", "Bo"), ("human", "human"))
    t = create(ts, [people, *bot_teams(3)])
    done = ts.schedule_next(t.id)
    t = ts.get(t.id)
    human_table = next(e for e in t.rounds[0].tables if 0 in (e.first, e.second))
    assert sorted((s.player, s.team) for s in done.seat_tokens) == [("Ann", 0), ("Bo", 0)]
    match = service.get_match(human_table.match_id)
    for s in done.seat_tokens:
        assert seat_in(service, match, Credential.parse(s.token)) == s.seat
        assert match.seats[s.seat] is not None and match.seats[s.seat].kind == "human"  # type: ignore[union-attr]
    run = play_round(ts, t.id)
    statuses = {r.table - 1: r.status for r in run.tables}
    assert statuses[human_table.table] == "playing" and not run.completed
    with pytest.raises(IllegalMoveError) as info:
        ts.schedule_next(t.id)
    assert info.value.code == "round-in-play"
    assert not ts.get(t.id).rounds[0].revealed  # R35: no reveal while a table plays


def test_tables_are_materialised_once() -> None:
    service = popo()
    ts = Tournaments(service)
    t = create(ts, bot_teams(4))
    ts.schedule_next(t.id)
    uow = UnitOfWork(service)
    t = ts.get(t.id)
    assert seat_round(uow, Dealer(table_deals(service)), t, t.rounds[0]) == (0, ())
    assert uow.changed() == []  # nothing to create, nothing to seat


def test_four_bot_tables_deal_unpaced_and_people_keep_the_pacing() -> None:
    service = popo(Pacing(interval_ms=100, declare_ms=5000, window_ms=0))
    ts = Tournaments(service)
    people = TeamEntry("Humans", ("Ann", "Bo"), ("human", "human"))
    t = create(ts, [people, *bot_teams(3)])
    ts.schedule_next(t.id)
    t = ts.get(t.id)
    intervals = {}
    for e in t.rounds[0].tables:
        round_ = service.current_round(service.get_match(e.match_id))
        assert round_ is not None
        intervals[0 in (e.first, e.second)] = (round_.pacing.interval_ms, round_.pacing.declare_ms)
    assert intervals == {True: (100, 5000), False: (0, 5000)}
    run = play_round(ts, t.id)
    human = {e.table for e in t.rounds[0].tables if 0 in (e.first, e.second)}
    assert {r.table - 1: r.status for r in run.tables} == {
        e.table: "playing" if e.table in human else "finished" for e in t.rounds[0].tables
    }


def test_a_correction_changes_the_standings() -> None:
    ts = Tournaments(popo())
    t = create(ts, bot_teams(2))
    ts.schedule_next(t.id)
    play_round(ts, t.id)
    t = ts.get(t.id)
    table = t.rounds[0].tables[0]
    t = ts.correct(
        t.id, 1, 0, winner=table.second, levels=(0, 4), points=(0, 200), by="TD", reason="typo"
    )
    top = t.standings()[0]
    assert (top.team, top.levels_gained) == (table.second, 4)
    assert t.results[(1, 0)].corrected_by == "TD"


def test_a_stale_write_is_a_version_conflict(backend: Backend) -> None:
    ts = Tournaments(backend.service())
    t = create(ts, bot_teams(2))
    stale = ts.get(t.id)
    Tournaments(backend.service()).schedule_next(t.id)  # another process first
    stale.schedule_round(bytes(32), T0)
    with pytest.raises(VersionConflictError):
        save(ts.game, stale)
    assert len(ts.get(t.id).rounds) == 1  # the store and the cache hold the winner's


def test_an_interrupted_scheduling_is_finished_by_the_next_call() -> None:
    service = popo()
    ts = Tournaments(service)
    people = TeamEntry("Humans", ("Ann", "Bo"), ("human", "human"))
    t = create(ts, [people, *bot_teams(3)])
    t.schedule_round(bytes(range(32)), T0)  # RoundScheduled saved alone (a store of before
    service.save(t)  # scheduling was one save), then the process stopped
    assert [r.status for r in play_round(ts, t.id).tables] == ["playing", "playing"]
    with pytest.raises(IllegalMoveError) as info:
        ts.finish_table(t.id, 1, 0, "no show")
    assert info.value.code == "table-not-seated"
    done = ts.schedule_next(t.id)  # seats round 1's tables: the people's tokens now
    assert done.round.number == 1 and len(done.seat_tokens) == 2
    t = ts.get(t.id)
    assert all(service.get_match(e.match_id).seated for e in t.rounds[0].tables)
    with pytest.raises(IllegalMoveError) as info:
        ts.schedule_next(t.id)
    assert info.value.code == "round-in-play"


def test_collecting_after_another_process_collected_first_is_no_conflict(
    backend: Backend,
) -> None:
    """The results policy (every replica's) and the organiser's bots/run or collect record
    the same results; the second to save read the tournament before the first saved.
    Recording is idempotent, so it reads again rather than answering the organiser a 409
    (found on the served product: the first bots/run of a bots-only round was refused)."""
    ts = Tournaments(backend.service())
    t = create(ts, bot_teams(2))
    ts.schedule_next(t.id)
    table = ts.get(t.id).rounds[0].tables[0]  # our copy, read before the other's save
    assert run_bots(ts.game, table.match_id).steps > 0
    assert ts.game.get_match(table.match_id).finished
    other = Tournaments(backend.service())
    assert other.results(t.id).round_state(1).revealed  # the policy was first
    collected = ts.collect(t.id)
    assert collected.round_state(1).revealed and len(collected.results) == 1
    assert play_round(ts, t.id).completed  # and the organiser's bots/run after it


def test_the_bot_driver_goes_on_past_conflicts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Another process (a replica's driver, a person) may move a table first: the driver's
    step then conflicts, and it looks at the table again rather than leaving it waiting
    (found on the served product: round 1 of a bots-only round robin not completed)."""
    service = popo()
    ts = Tournaments(service)
    t = create(ts, bot_teams(4))
    ts.schedule_next(t.id)
    raced: list[UUID] = []

    def racing(bus: Bus, match_id: UUID, **kw: Any) -> Step:
        if raced.count(match_id) < 3:  # the other process wins the first three times
            raced.append(match_id)
            raise VersionConflictError("another command changed this match first")
        return play_one(bus, match_id, **kw)

    monkeypatch.setattr("services.bot_driver.play_one", racing)
    run = play_round(ts, t.id)
    assert [r.status for r in run.tables] == ["finished", "finished"] and run.completed
    assert len(raced) == 6


@pytest.mark.parametrize("command", ["adjust", "withdraw", "forbid"])
def test_an_organisers_write_after_a_background_save_is_no_conflict(
    backend: Backend, command: str
) -> None:
    """Tournament writes take no If-Match: a conflict is a background writer's or another
    call's save, never the organiser's stale read, so the command is checked again against
    the state that won instead of answering 409 (the handler's attempts)."""
    ours = Tournaments(backend.service())
    t = create(ours, bot_teams(4), fmt="swiss", swiss_rounds=2)
    ours.get(t.id)  # our copy, read before the other's save
    Tournaments(backend.service()).adjust(t.id, 0, 1, reason="fair play", by="TD")  # first
    if command == "adjust":
        ours.adjust(t.id, 1, -1, reason="late", by="TD")
    elif command == "withdraw":
        ours.withdraw(t.id, 3, reason="ill")
    else:
        ours.forbid(t.id, 0, 1, reason="one club")
    t = ours.get(t.id)
    assert t.adjustment_totals()[0] == 1  # the other's save stands
    assert {"adjust": 1 in t.adjustment_totals(), "withdraw": 3 in t.withdrawn,
            "forbid": bool(t.forbidden)}[command]  # fmt: skip

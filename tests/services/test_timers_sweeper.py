"""The sweeper (docs/timers.md) with the bot driver: bots-only matches, paced deals and
stalled seats progress with no request — the sweeper claims deadlines and timeouts and
wakes the driver, the driver moves the bots; the sweeper follows only open matches and
looks only at those due; two drivers on one store (two replicas) race safely.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import UUID

from domain.game.round import RoundPhase
from domain.game.round_events import Pacing, TurnTimedOut
from domain.game.timers import Timers, turn_clock
from domain.rules.ruleset import STANDARD, RuleSet
from infra.workers import Workers
from services.bot_driver import BotDriver
from services.bots import next_move
from services.game import GameService
from services.sweeper import Sweeper, SweepReport
from services.verify import verify_round
from tests.commands import act, bus_of, create_match, finish_match, take_seat
from tests.conftest import Backend, FakeClock, FixedSeeds
from tests.driving import driving

ONE_ROUND = RuleSet.from_mapping({**STANDARD.to_mapping(), "match_end": "rounds:1"})
BOTS = {0: "heuristic", 1: "random", 2: "heuristic", 3: "random"}


def new_service(clock: FakeClock, pacing: Pacing | None = None) -> GameService:
    return GameService(
        {"PERSISTENCE_MODULE": "eventsourcing.popo"}, clock=clock, seeds=FixedSeeds(), pacing=pacing
    )


def seated(
    service: GameService,
    kinds: dict[int, str],
    timers: Timers | None = None,
    rules: RuleSet = ONE_ROUND,
) -> UUID:
    """Seats taken straight through the service: no bot has moved yet."""
    match_id = create_match(service, rules, name="swept", timers=timers)
    for seat in range(4):
        take_seat(service, match_id, seat, f"s{seat}", kinds.get(seat, "human"))
    return match_id


def sweep_and_drive(sweeper: Sweeper, driver: BotDriver) -> SweepReport:
    """A sweep, then the bots it woke moved by the driver (and sweeps that look at their
    saves), until the driver has nothing more to do: the report of the first sweep."""
    report = sweeper.sweep()
    while True:
        steps = driver.stats.steps
        assert driver.idle(60), "the bot driver did not go idle"
        if driver.stats.steps == steps:
            return report
        sweeper.sweep()


def sweep_until(
    sweeper: Sweeper, driver: BotDriver, done: Callable[[], bool], sweeps: int = 50
) -> list[SweepReport]:
    reports: list[SweepReport] = []
    for _ in range(sweeps):
        if done():
            return reports
        reports.append(sweep_and_drive(sweeper, driver))
    raise AssertionError(f"not done after {sweeps} sweeps: {reports[-3:]}")


def test_a_bots_only_match_is_found_by_the_sweeper_and_played_by_the_driver() -> None:
    """Seated before anyone listened (another replica, a restart): the sweeper's scan finds
    the match and wakes the driver, which plays it to its end; the sweeper moves no bot."""
    clock = FakeClock()
    service = new_service(clock)
    match_id = seated(service, BOTS)
    assert service.get_match(match_id).sequence(0) < 20  # nothing moved yet
    with driving(service) as driver:
        sweeper = Sweeper(bus_of(service), wake=driver.wake)
        sweeper.attach()
        first = sweeper.sweep()
        assert first.due == 1 and first.moves == 0  # woke the driver, moved nothing
        assert driver.idle(120)
        assert driver.stats.steps > 50  # a round: passes, bury, every trick (R16-R27)
        sweeper.sweep()
    assert sweeper.due_at(match_id) is None  # a finished match is not followed
    match = service.get_match(match_id)
    assert match.finished and match.results
    assert verify_round(service, match.results[0].round_id).number == 1


def test_the_background_loop_and_the_driver_move_a_bots_only_match() -> None:
    """The sweeper's loop as a process runs it (``infra.workers``: a thread of its own)
    beside the started driver, real time, no request; it stops cleanly."""
    clock = FakeClock()
    service = new_service(clock)
    match_id = seated(service, BOTS)
    started = time.perf_counter()
    with driving(service) as driver:
        workers = Workers([Sweeper(bus_of(service), wake=driver.wake).loop(0.01)])
        workers.start()
        try:
            deadline = time.monotonic() + 60
            while not service.get_match(match_id).finished and time.monotonic() < deadline:
                time.sleep(0.01)
        finally:
            workers.stop()
    assert service.get_match(match_id).finished and time.perf_counter() - started < 60
    assert not service.saves.stored  # the sweeper stopped listening


def test_a_stalled_seat_is_timed_out_by_the_sweeper_at_its_deadline() -> None:
    """Seat 0 (a person) stalls; the bots wait for it; the sweeper looks at the match
    only when its deadline comes (R22 play limit), then the bot moves for it."""
    clock = FakeClock()
    service = new_service(clock)
    match_id = seated(
        service, {1: "heuristic", 2: "heuristic", 3: "heuristic"}, Timers(5_000, 5_000, 15_000)
    )
    with driving(service) as driver:
        sweeper = Sweeper(bus_of(service), wake=driver.wake)
        sweeper.attach()
        for _ in range(20):  # the drawing waits for seat 0's pass until its deadline (R17)
            sweep_and_drive(sweeper, driver)
            due = sweeper.due_at(match_id)
            assert due is not None
            match = service.get_match(match_id)
            round_ = service.current_round(match)
            assert round_ is not None
            running = turn_clock(match.timers, round_)
            if running is not None and round_.phase is RoundPhase.PLAYING and running.seat == 0:
                break
            clock.set(max(clock(), due))
        else:
            raise AssertionError("seat 0 never had to play")
        assert due == running.deadline + timedelta(milliseconds=1)
        version = round_.version
        clock.set(running.deadline)
        assert sweeper.sweep().due == 0  # not due yet: not even loaded
        assert service.current_round(service.get_match(match_id)).version == version  # type: ignore[union-attr]
        clock.set(running.deadline + timedelta(milliseconds=1))
        report = sweep_and_drive(sweeper, driver)
        assert report.due == 1 and report.moves == 1  # the timeout; the bots play on after
    events = list(service.events.get(round_.id, gt=version))
    assert isinstance(events[0], TurnTimedOut)
    assert (events[0].seat, events[0].timer, events[0].claimed_by) == (0, "play", "sweeper")
    assert getattr(events[1], "seat", None) == 0
    assert len(events) > 2  # the bots replied


def test_a_paced_deal_with_bots_progresses_as_time_passes() -> None:
    """R16: one card every 200 ms; bots may declare as cards arrive (R17); the sweeper
    comes back for the next card and wakes the driver, then claims the drawing's end."""
    clock = FakeClock()
    service = new_service(clock, Pacing(interval_ms=200, declare_ms=2_000))
    match_id = seated(service, BOTS)
    with driving(service) as driver:
        sweeper = Sweeper(bus_of(service), wake=driver.wake)
        sweeper.attach()
        sweep_and_drive(sweeper, driver)
        round_ = service.current_round(service.get_match(match_id))
        assert round_ is not None and round_.phase is RoundPhase.DEALING
        due = sweeper.due_at(match_id)
        assert due is not None and due - clock() <= timedelta(milliseconds=200)  # the next card

        def advance() -> bool:
            next_due = sweeper.due_at(match_id)
            if next_due is not None and next_due > clock():
                clock.set(next_due)
            return service.get_match(match_id).finished

        sweep_until(sweeper, driver, advance, sweeps=400)


def test_the_start_up_scan_follows_open_matches_only(backend: Backend) -> None:
    first = backend.service()
    finished = seated(first, {})
    finish_match(first, finished)
    playing = seated(first, {0: "heuristic"})
    waiting = create_match(first, STANDARD, name="seats free")
    sweeper = Sweeper(bus_of(backend.service()))  # another process on the same store
    assert sweeper.scan() == 4  # three MatchCreated, one MatchFinished
    assert sweeper.following == {playing, waiting}
    assert sweeper.scan() == 0  # incremental: nothing new
    report = sweeper.sweep()
    assert report.due == 2 and report.errors == 0
    later = seated(first, {})
    finish_match(sweeper.service, playing)  # (SQLite: one writer per aggregate, its cache)
    sweeper.scan()
    assert sweeper.following == {waiting, later}


def test_two_drivers_on_one_store_race_safely(backend: Backend) -> None:
    """Two bot drivers move the same bots-only match at once: each move is made once (the
    loser of a race gets a version conflict and looks again) and the round verifies.

    On PostgreSQL (and the shared POPO store) they are two replicas, each with its own
    service. The embedded SQLite store has one writer, the process's one service, whose
    aggregate cache does not look for newer events in the file (``infra/settings.py``):
    a second service on the same file would keep a stale cache and is not a supported
    deployment. There the two drivers race as two on the one service."""
    first = backend.service()
    second = first if backend.name == "sqlite" else backend.service()
    match_id = seated(first, BOTS)
    with driving(first) as one, driving(second) as other:
        for _ in range(4000):  # each hears only its own saves: wake both, as sweepers would
            if first.get_match(match_id).finished:
                break
            one.wake(match_id)
            other.wake(match_id)
            time.sleep(0.005)
        assert one.idle(60) and other.idle(60)
        assert not one.stats.errors and not other.stats.errors
    match = first.get_match(match_id)
    assert match.finished
    assert verify_round(first, match.results[0].round_id).number == 1


def test_a_persons_move_in_play_needs_no_reload_to_know_the_next_deadline() -> None:
    """A table of people with turn limits: once swept, a move saved by another thread makes
    the match due at the next seat's limit (from the saved round), not at once — so the
    sweeper does not load the match again for every command."""
    clock = FakeClock()
    service = new_service(clock)
    match_id = seated(service, {}, Timers(5_000, 5_000, 15_000))
    sweeper = Sweeper(bus_of(service))
    sweeper.attach()
    people = {seat: "heuristic" for seat in range(4)}  # how the people choose their moves
    for _ in range(300):  # the people declare, pass and bury; the sweeper claims deadlines
        match = service.get_match(match_id)
        round_ = service.current_round(match)
        assert round_ is not None
        if round_.phase is RoundPhase.PLAYING:
            break
        move = next_move(match, round_, clock(), bots=people)
        if move is not None:
            act(service, match_id, move.seat, move.action)
            continue
        sweeper.sweep()
        due = sweeper.due_at(match_id)
        assert due is not None
        clock.set(max(clock(), due))
    else:
        raise AssertionError("the round never reached its play")
    report = sweeper.sweep()  # the sweeper has looked at the table in play
    for _ in range(3):  # three people play in turn
        move = next_move(match, round_, clock(), bots={round_.play.turn: "heuristic"})  # type: ignore[union-attr]
        assert move is not None
        act(service, match_id, move.seat, move.action)
        match = service.get_match(match_id)
        round_ = service.current_round(match)
        assert round_ is not None and round_.phase is RoundPhase.PLAYING
        running = turn_clock(match.timers, round_)
        assert running is not None and running.seat == move.seat + 1 - 4 * (move.seat == 3)
        assert sweeper.due_at(match_id) == running.deadline + timedelta(milliseconds=1)
        assert sweeper.sweep().due == 0  # nothing loaded until that limit
    assert report.open == 1


def test_a_move_another_process_saved_is_due_at_the_next_limit_without_a_load() -> None:
    """A table of people with turn limits, once swept: a move saved by another process
    (the hub tells the sweeper after bringing the cached copies up to it) makes the match
    due at the next seat's limit, read from the round the trusted cache keeps — the match
    is not loaded again for every command (docs/decisions.md D-deadlines)."""
    clock = FakeClock()
    service = GameService(
        {"PERSISTENCE_MODULE": "eventsourcing.popo", "AGGREGATE_CACHE_FASTFORWARD": "n"},
        clock=clock,
        seeds=FixedSeeds(),
    )
    assert service.trusts_cache
    match_id = seated(service, {}, Timers(5_000, 5_000, 15_000))
    sweeper = Sweeper(bus_of(service))
    sweeper.attach()
    people = {seat: "heuristic" for seat in range(4)}
    for _ in range(300):
        match = service.get_match(match_id)
        round_ = service.current_round(match)
        assert round_ is not None
        if round_.phase is RoundPhase.PLAYING:
            break
        move = next_move(match, round_, clock(), bots=people)
        if move is not None:
            act(service, match_id, move.seat, move.action)
            continue
        sweeper.sweep()
        due = sweeper.due_at(match_id)
        assert due is not None
        clock.set(max(clock(), due))
    else:
        raise AssertionError("the round never reached its play")
    sweeper.sweep()  # the sweeper has looked at the table in play
    sweeper.detach()  # from now on the moves are another process's: the hub tells them
    loads: list[UUID] = []
    load = service.get_match

    def counted(match_id: UUID, version: int | None = None, *, read_only: bool = False) -> Any:
        loads.append(match_id)
        return load(match_id, version, read_only=read_only)

    for _ in range(3):
        move = next_move(match, round_, clock(), bots={round_.play.turn: "heuristic"})  # type: ignore[union-attr]
        assert move is not None
        act(service, match_id, move.seat, move.action)
        match = service.get_match(match_id)
        round_ = service.current_round(match)
        assert round_ is not None and round_.phase is RoundPhase.PLAYING
        running = turn_clock(match.timers, round_)
        assert running is not None
        service.get_match = counted  # type: ignore[method-assign]
        sweeper.changed({match_id})
        assert sweeper.due_at(match_id) == running.deadline + timedelta(milliseconds=1)
        assert sweeper.sweep().due == 0 and loads == []  # nothing loaded until that limit
        service.get_match = load  # type: ignore[method-assign]
    limit = turn_clock(match.timers, round_)
    assert limit is not None
    # a person leaves (another process's save): a bot takes the seat, the match is due at
    # once — the bot driver is woken by the sweep — whatever the turn limit says
    woken: list[UUID] = []
    sweeper.wake = woken.append
    leaving = service.get_match(match_id)
    leaving.leave((round_.play.turn + 1) % 4, "heuristic", clock())  # type: ignore[union-attr]
    service.save(leaving)
    sweeper.changed({match_id})
    assert sweeper.due_at(match_id) == datetime.min.replace(tzinfo=UTC)
    clock.set(limit.deadline + timedelta(milliseconds=2))
    assert sweeper.sweep().moves == 1  # the limit passed: the seat is timed out
    assert woken == [match_id]  # the bot that took the left seat is to act next

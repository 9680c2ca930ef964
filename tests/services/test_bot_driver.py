"""The bot driver (docs/decisions.md D-bot-driver): it hears every save and moves a bot as
soon as one is to act, one step at a time per table so tables take turns, at most
``workers`` decisions at once, each under a CPU budget; it leaves tables of people alone;
a bots-only ``wrap`` match ends after ``bots_only_rounds`` rounds."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Sequence
from uuid import UUID

import pytest

from domain.game.match import Match
from domain.game.round import Round, RoundPhase
from domain.rules.ruleset import STANDARD, RuleSet
from domain.tournament.events import TeamEntry
from services import bot_driver
from services.bot_driver import BotDriver, Step, play_one
from services.bots import cpu_budget, next_move
from services.game import GameService
from tests.commands import act, bus_of, create_match, take_seat
from tests.conftest import FakeClock, FixedSeeds
from tests.driving import driving, record_decisions
from tests.tournaments import Tournaments

ONE_ROUND = RuleSet.from_mapping({**STANDARD.to_mapping(), "match_end": "rounds:1"})


def new_service() -> GameService:
    return GameService(
        {"PERSISTENCE_MODULE": "eventsourcing.popo"}, clock=FakeClock(), seeds=FixedSeeds()
    )


def seat(service: GameService, kinds: list[str], rules: RuleSet = ONE_ROUND) -> UUID:
    match_id = create_match(service, rules, name="driven")
    for n, kind in enumerate(kinds):
        take_seat(service, match_id, n, f"s{n}", kind)
    return match_id


def test_a_seated_table_of_bots_is_played_to_its_end_once_heard() -> None:
    service = new_service()
    with driving(service) as driver:
        match_id = seat(service, ["random", "heuristic", "random", "heuristic"])
        assert driver.idle(120)
    assert service.get_match(match_id).finished
    assert driver.stats.steps > 50 and driver.stats.errors == 0


def test_a_table_of_people_is_left_alone() -> None:
    service = new_service()
    with driving(service) as driver:
        match_id = seat(service, ["human"] * 4)
        assert driver.idle(10)
        steps = driver.stats.steps
        round_ = service.current_round(service.get_match(match_id))
        assert round_ is not None
        act(service, match_id, 0, "pass")  # a person's move: no bot to act
        assert driver.idle(10) and driver.stats.steps == steps == 0


def test_tables_take_turns_a_move_each(monkeypatch: pytest.MonkeyPatch) -> None:
    """One worker, two tables: their moves interleave; neither waits for the other's end."""
    service = new_service()
    order: list[UUID] = []
    step = play_one

    def recorded(game: GameService, match_id: UUID, **kw: object) -> Step:
        order.append(match_id)
        return step(game, match_id, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(bot_driver, "play_one", recorded)
    driver = BotDriver(bus_of(service), workers=1)
    driver.attach()  # heard, not yet moving
    a = seat(service, ["random"] * 4)
    b = seat(service, ["random"] * 4)
    driver.start()
    try:
        assert driver.idle(120)
    finally:
        driver.stop()
    assert service.get_match(a).finished and service.get_match(b).finished
    first_end = min(len(order) - order[::-1].index(m) for m in (a, b))
    assert {a, b} <= set(order[: first_end - 1])  # both moved before either was done
    switches = sum(1 for x, y in itertools.pairwise(order) if x != y)
    assert switches > 20


def test_at_most_workers_decisions_run_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    service = new_service()
    decisions = record_decisions(monkeypatch)
    with driving(service, workers=2) as driver:
        tables = [seat(service, ["heuristic"] * 4) for _ in range(5)]
        assert driver.idle(300)
    assert all(service.get_match(t).finished for t in tables)
    assert 1 <= decisions.most <= 2
    assert {name.rsplit("-", 1)[0] for name in decisions} == {"bot-driver"}


def test_a_decision_stops_at_its_cpu_budget() -> None:
    """A strong bot given no CPU at all still answers a legal move: its search stops at
    once with the best found so far (the heuristic's own choice is always a candidate)."""
    service = new_service()
    match_id = seat(service, ["strong"] * 4)
    for _ in range(400):  # to the first play of the round
        match = service.get_match(match_id)
        round_ = service.current_round(match)
        assert round_ is not None
        if round_.phase is RoundPhase.PLAYING:
            break
        assert play_one(bus_of(service), match_id) in ("moved", "claimed")
    else:
        raise AssertionError("the round never reached its play")
    asked: list[bool] = []
    spent = cpu_budget(0.0)

    def stop() -> bool:
        asked.append(True)
        return spent()

    move = next_move(match, round_, service.clock(), stop=stop)
    assert move is not None and move.action.name == "play" and asked
    act(service, match_id, move.seat, move.action)  # legal (R22)


@pytest.mark.parametrize(("cap", "scored"), [(1, 1), (0, 3)])
def test_a_bots_only_wrap_match_ends_at_the_cap(cap: int, scored: int) -> None:
    """``bots_only_rounds`` 0 is no cap: the match plays on (stopped here after 3 rounds)."""
    service = new_service()
    driver = BotDriver(bus_of(service), bots_only_rounds=cap)
    match_id = seat(service, [], STANDARD)  # wrap (R32): never ends by its rules
    enough = threading.Event()

    def count(saved: Sequence[Match | Round]) -> None:
        if any(isinstance(m, Match) and len(m.results) >= scored for m in saved):
            driver.pause()
            enough.set()

    if not cap:
        service.saves.stored.add(count)
    driver.start()
    try:
        for n in range(4):
            take_seat(service, match_id, n, f"bot {n}", "random")
        assert cap or enough.wait(120)
        assert driver.idle(120)
    finally:
        driver.stop()
    match = service.get_match(match_id)
    assert match.finished == bool(cap) and len(match.results) >= scored
    assert driver.stats.ended == (1 if cap else 0)


# -- bot time shared fairly (docs/decisions.md D-bounded) ------------------------------------


class Steps(list[UUID]):
    """The matches the driver stepped, in order (``play_one`` recorded)."""


@pytest.fixture
def steps(monkeypatch: pytest.MonkeyPatch) -> Steps:
    order = Steps()
    step = play_one

    def recorded(game: GameService, match_id: UUID, **kw: object) -> Step:
        order.append(match_id)
        return step(game, match_id, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(bot_driver, "play_one", recorded)
    return order


def bots_tournament(service: GameService, teams: int) -> list[UUID]:
    """A round of a bots-only tournament scheduled (its tables seated): their matches."""
    ts = Tournaments(service)
    entries = [TeamEntry(f"T{i}", (f"a{i}", f"b{i}"), ("random", "random")) for i in range(teams)]
    t = ts.create(name="bots", rules=ONE_ROUND, teams=entries, fmt="round_robin", match_length=1)
    scheduled = ts.schedule_next(t.id)
    return [UUID(table.match_id) for table in scheduled.round.tables]


def test_a_table_with_a_person_is_stepped_before_queued_bots_only_tables(steps: Steps) -> None:
    """The finding: a person's bots waited 2–11 s behind 32 bots-only tables. Queued
    after eight bots-only tables, the person's table (three bots to pass while declaring,
    R17) is stepped first, and each of its bots before any bots-only table moves."""
    service = new_service()
    driver = BotDriver(bus_of(service), workers=1)
    driver.attach()
    driver.pause()
    tables = bots_tournament(service, 16)
    person = seat(service, ["human", "random", "random", "random"])
    driver.start()
    driver.resume()
    try:
        assert driver.idle(120)
    finally:
        driver.stop()
    assert steps[0] == person
    first_bots_only = next(i for i, m in enumerate(steps) if m in tables)
    assert set(steps[:first_bots_only]) == {person}
    assert first_bots_only >= 3  # every bot of the person's table (R17 passes) went first


def test_owners_take_turns_whatever_their_number_of_tables(steps: Steps) -> None:
    """Eight tables of one tournament and one match of another owner: the match gets
    every other step while both wait, not one step in nine."""
    service = new_service()
    driver = BotDriver(bus_of(service), workers=1)
    driver.attach()
    driver.pause()
    tables = bots_tournament(service, 16)
    alone = seat(service, ["random"] * 4)
    driver.start()
    driver.resume()
    try:
        assert driver.idle(300)
    finally:
        driver.stop()
    assert service.get_match(alone).finished
    last = len(steps) - steps[::-1].index(alone)  # the alone match's last step
    mine = sum(1 for m in steps[:last] if m == alone)
    theirs = sum(1 for m in steps[:last] if m in tables)
    assert abs(mine - theirs) <= 1  # turn about, until the match was over


def test_an_owner_out_of_bot_time_waits_while_others_play_on(steps: Steps) -> None:
    """A quota of 1 CPU ms an hour and steps of 1 ms each: each owner's first step spends
    it. The tournament's tables then wait — queued, not dropped — while the match of
    another owner that still has time plays; an hour later they go on."""
    service = new_service()
    now = [0.0]
    ticks = itertools.count()
    driver = BotDriver(
        bus_of(service),
        workers=1,
        quota_ms=1,
        clock=lambda: now[0],
        cpu=lambda: next(ticks) / 1000,  # a tick a reading: 1 ms a step
    )
    driver.attach()
    driver.pause()
    tables = bots_tournament(service, 4)
    driver.start()
    driver.resume()
    try:
        assert driver.idle(60)
        waiting = driver.stats
        assert waiting.out_of_time == waiting.queued >= 1
        assert sum(1 for m in steps if m in tables) == 1  # one step, then out of time
        alone = seat(service, ["random"] * 4)
        assert driver.idle(60)
        assert steps[-1] == alone and steps.count(alone) == 1
        now[0] += 3600.0  # an hour later: every owner's time is back
        for table in tables:
            driver.wake(table)
        before = len(steps)
        assert driver.idle(60)
        assert len(steps) > before
    finally:
        driver.stop()


def test_bots_only_tables_keep_a_worker_free_for_tables_with_a_person(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two workers: bots-only tables take one at most, and none of their steps starts
    while a step of a table with a person runs."""
    service = new_service()
    people: set[UUID] = set()
    running: dict[UUID, bool] = {}
    lock = threading.Lock()
    seen = {"most_bots_only": 0, "started_beside_a_person": 0}
    step = play_one

    def recorded(game: GameService, match_id: UUID, **kw: object) -> Step:
        with lock:
            person = match_id in people
            if not person and any(running.values()):
                seen["started_beside_a_person"] += 1
            running[match_id] = person
            bots_only = sum(1 for p in running.values() if not p)
            seen["most_bots_only"] = max(seen["most_bots_only"], bots_only)
        try:
            return step(game, match_id, **kw)  # type: ignore[arg-type]
        finally:
            with lock:
                del running[match_id]

    monkeypatch.setattr(bot_driver, "play_one", recorded)
    driver = BotDriver(bus_of(service), workers=2)
    driver.attach()
    driver.pause()
    bots_tournament(service, 8)
    for _ in range(3):
        people.add(seat(service, ["human", "heuristic", "heuristic", "heuristic"]))
    driver.start()
    driver.resume()
    try:
        assert driver.idle(300)
    finally:
        driver.stop()
    assert seen["most_bots_only"] == 1
    assert seen["started_beside_a_person"] == 0

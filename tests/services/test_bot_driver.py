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
from services import bot_driver
from services.bot_driver import BotDriver, Step, play_one
from services.bots import cpu_budget, next_move
from services.game import GameService
from tests.commands import act, bus_of, create_match, take_seat
from tests.conftest import FakeClock, FixedSeeds
from tests.driving import driving, record_decisions

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

"""Turn timers (docs/timers.md): the limits, claiming a timeout early and late for
each kind of limit, what the history records, the views' deadline, and replay.

Matches are driven through the service with the fake clock; every seat that is not being
timed out is moved by the heuristic bot through ``GameService.act``, as a person would.
"""

from __future__ import annotations

import copy
from datetime import timedelta
from typing import Any
from uuid import UUID, uuid4

import msgspec
import pytest

from domain.game.actions import cards_of
from domain.game.match import Match
from domain.game.match_events import MatchCreated
from domain.game.round import Round, RoundPhase
from domain.game.round_events import CardPlayed, DrawingEnded, ThrowFailed, TurnTimedOut
from domain.game.timers import NO_TIMERS, Timers, TurnClock, turn_clock
from domain.rules.errors import IllegalMoveError, InvalidInputError
from domain.rules.ruleset import STANDARD
from services.bots import BotMove, next_move
from services.codec import MsgspecMapper
from services.errors import VersionConflictError
from services.game import GameService
from services.history import match_history
from services.legal import claimed
from services.timers import SWEEPER
from services.views import table_view
from tests.commands import act, claim_deadlines, claim_timeout, create_match, run_bots, take_seat
from tests.conftest import Backend, FakeClock, FixedSeeds

ALL_HEURISTIC = {seat: "heuristic" for seat in range(4)}
LIMITS = {"declare": Timers(declare_ms=5_000), "bury": Timers(bury_ms=6_000)}
LIMITS["play"] = Timers(play_ms=7_000)


def new_service(clock: FakeClock, seed: int = 0) -> GameService:
    return GameService(
        {"PERSISTENCE_MODULE": "eventsourcing.popo"}, clock=clock, seeds=FixedSeeds(seed)
    )


def seated(service: GameService, timers: Timers | None, bots: dict[int, str] | None = None) -> UUID:
    match_id = create_match(service, STANDARD, name="timed", timers=timers)
    for seat in range(4):
        kind = (bots or {}).get(seat, "human")
        take_seat(service, match_id, seat, f"p{seat}", kind)
    return match_id


def table(service: GameService, match_id: UUID) -> tuple[Match, Round]:
    match = service.get_match(match_id)
    round_ = service.current_round(match)
    assert round_ is not None
    return match, round_


def step(service: GameService, match_id: UUID, clock: FakeClock) -> None:
    """One move as a person would make it (the heuristic bot's choice for the seat), or
    the drawing's deadline claimed once nobody declares any more (R16, R17)."""
    match, round_ = table(service, match_id)
    move = next_move(match, claimed(round_, clock()), clock(), ALL_HEURISTIC)
    if move is None:
        clock.set(round_.drawing_deadline() + timedelta(milliseconds=1))
        claim_deadlines(service, match_id)
        return
    act(service, match_id, move.seat, move.action)


def until_clock(service: GameService, match_id: UUID, clock: FakeClock, timer: str) -> TurnClock:
    """Play on until a seat's ``timer`` runs; its clock."""
    for _ in range(300):
        match, round_ = table(service, match_id)
        running = turn_clock(match.timers, round_)
        if running is not None and running.timer == timer:
            return running
        step(service, match_id, clock)
    raise AssertionError(f"no {timer} turn came")


def round_events(service: GameService, round_id: UUID) -> list[Any]:
    return list(service.events.get(round_id))


# -- the limits -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "ok"),
    [
        ({}, True),
        ({"play_ms": 1_000}, True),  # the shortest limit: 1 s
        ({"declare_ms": 86_400_000, "bury_ms": 60_000}, True),  # the longest: 24 h
        ({"play_ms": 999}, False),
        ({"bury_ms": 86_400_001}, False),
        ({"declare_ms": -1}, False),
        ({"play_ms": 1.5}, False),
    ],
)
def test_limits_are_none_or_one_second_to_a_day(fields: dict[str, Any], ok: bool) -> None:
    if ok:
        timers = Timers(**fields)
        assert Timers.from_mapping(timers.to_mapping()) == timers
        assert timers.any == bool(fields)
        return
    with pytest.raises(InvalidInputError) as info:
        Timers(**fields)
    assert f"timers.{next(iter(fields)).removesuffix('_ms')}Ms" in info.value.detail


def test_a_creation_event_without_timers_still_decodes() -> None:
    """Matches created before timers: ``MatchCreated`` has no ``timers``; no limits."""
    match = Match.create(
        STANDARD, FakeClock()(), name="old", timers=Timers(play_ms=9_000), match_id=uuid4()
    )
    (created,) = match.collect_events()
    mapper = MsgspecMapper()
    stored = mapper.to_stored_event(created)
    state = msgspec.json.decode(stored.state)
    assert state["timers"] == {"declare_ms": 0, "bury_ms": 0, "play_ms": 9_000}
    del state["timers"]
    old = copy.copy(stored)
    object.__setattr__(old, "state", msgspec.json.encode(state))
    event = mapper.to_domain_event(old)
    assert isinstance(event, MatchCreated) and event.timers is None
    rebuilt = event.mutate(None)
    assert isinstance(rebuilt, Match) and rebuilt.timers == NO_TIMERS


# -- claiming, for each kind of limit ---------------------------------------------------------


@pytest.mark.parametrize(
    ("timer", "phases"),
    [
        ("declare", {RoundPhase.OVERCALLING, RoundPhase.DECLARING}),  # R18, R20
        ("bury", {RoundPhase.BURYING}),  # R21
        ("play", {RoundPhase.PLAYING}),  # R22, R23
    ],
)
def test_a_stalled_seat_is_moved_by_the_bot_after_its_limit(
    timer: str, phases: set[RoundPhase]
) -> None:
    clock = FakeClock()
    service = new_service(clock)
    match_id = seated(service, LIMITS[timer])
    running = until_clock(service, match_id, clock, timer)
    match, round_ = table(service, match_id)
    assert round_.phase in phases and running.seat == round_.to_act()
    assert running.began == round_.modified_on  # the event that made it its turn
    assert running.deadline == running.began + timedelta(milliseconds=LIMITS[timer].limit(timer))
    before = round_.version

    for at in (running.deadline - timedelta(milliseconds=1), running.deadline):
        clock.set(at)
        with pytest.raises(IllegalMoveError) as info:
            claim_timeout(service, match_id, "seat 1")
        assert info.value.code == "not-timed-out"
        left = (running.deadline - at).total_seconds()
        assert f"{left:.3f} s to {timer}" in info.value.detail
        assert running.deadline.isoformat() in info.value.detail
        assert table(service, match_id)[1].version == before  # nothing saved

    clock.set(running.deadline + timedelta(milliseconds=1))
    expected = next_move(match, round_, clock(), {running.seat: "heuristic"})
    assert expected is not None
    done = claim_timeout(service, match_id, "seat 1")
    assert (done.seat, done.timer, done.action) == (running.seat, timer, expected.action.name)
    events = round_events(service, round_.id)[before:]
    timed_out = events[0]
    assert isinstance(timed_out, TurnTimedOut)
    assert (timed_out.seat, timed_out.timer, timed_out.claimed_by) == (
        running.seat,
        timer,
        "seat 1",
    )
    assert (timed_out.limit_ms, timed_out.turn_began) == (running.limit_ms, running.began)
    assert timed_out.timestamp == clock()
    move = events[1]  # the bot's move for the seat, an ordinary event
    assert getattr(move, "seat", None) == running.seat
    if not isinstance(move, ThrowFailed):  # R22: a failed throw records the attempt first
        assert tuple(getattr(move, "cards", ())) == cards_of(expected.action)


def test_the_history_shows_the_timeout_before_the_move() -> None:
    """Seat 0 is a person at a table of bots; it stalls on its first play (R22)."""
    clock = FakeClock()
    service = new_service(clock, seed=3)
    match_id = seated(
        service, Timers(play_ms=10_000), bots={1: "heuristic", 2: "random", 3: "heuristic"}
    )
    running = until_clock(service, match_id, clock, "play")
    assert running.seat == 0  # bots never stall: the turn that runs is the person's
    run_bots(service, match_id)
    assert turn_clock(*_timers_and_round(service, match_id)) == running  # the bots wait
    clock.set(running.deadline + timedelta(seconds=5))
    claim_timeout(service, match_id, SWEEPER)
    page = match_history(service, match_id, None, limit=1000)
    names = [item.type for item in page.items]
    at = names.index("TurnTimedOut")
    assert page.items[at].data == {
        "seat": 0,
        "timer": "play",
        "limitMs": 10_000,
        "turnBegan": running.began.isoformat(),
        "claimedBy": "sweeper",
    }
    assert names[at + 1] in ("CardPlayed", "ThrowFailed")
    assert page.items[at + 1].data["seat"] == 0
    # after the timeout it is a bot's turn; the bots play on
    assert run_bots(service, match_id).steps > 0


def _timers_and_round(service: GameService, match_id: UUID) -> tuple[Timers, Round]:
    match, round_ = table(service, match_id)
    return match.timers, round_


@pytest.mark.parametrize(
    ("timers", "phase_first", "says"),
    [
        (None, "play", "no time limit for the playing phase (timers.playMs)"),
        (Timers(bury_ms=5_000), "play", "no time limit for the playing phase"),
        (Timers(play_ms=5_000), "dealing", "cards are being drawn"),
    ],
)
def test_no_timer_runs(timers: Timers | None, phase_first: str, says: str) -> None:
    clock = FakeClock()
    service = new_service(clock)
    match_id = seated(service, timers)
    if phase_first == "play":
        for _ in range(300):
            if table(service, match_id)[1].phase is RoundPhase.PLAYING:
                break
            step(service, match_id, clock)
    clock.advance(seconds=3600)  # long past any limit
    _, round_ = table(service, match_id)
    if phase_first == "dealing":
        clock.set(round_.drawing_deadline())  # the drawing has not ended yet (R17)
    with pytest.raises(IllegalMoveError) as info:
        claim_timeout(service, match_id, "organiser")
    assert info.value.code == "no-turn-timer" and says in info.value.detail
    assert table(service, match_id)[1].version == round_.version


def test_a_passed_drawing_deadline_is_claimed_even_when_the_claim_is_early() -> None:
    """R17: the drawing ends at its deadline; the turn it starts has its whole limit."""
    clock = FakeClock()
    service = new_service(clock)
    match_id = seated(service, Timers(declare_ms=5_000, bury_ms=5_000, play_ms=5_000))
    _, round_ = table(service, match_id)
    shows = [(s, round_.bidding.legal_shows(s, round_.hand_at(s, clock()))) for s in range(4)]
    seat, options = next((s, o) for s, o in shows if o)
    act(service, match_id, seat, "declare", options[0].cards)  # R17
    clock.set(round_.drawing_deadline() + timedelta(seconds=1))
    with pytest.raises(IllegalMoveError) as info:
        claim_timeout(service, match_id, "seat 2")
    assert info.value.code == "not-timed-out"
    assert "5.000 s to declare" in info.value.detail  # R20: the window's first turn
    match, after = table(service, match_id)
    assert isinstance(round_events(service, after.id)[-1], DrawingEnded)  # saved all the same
    running = turn_clock(match.timers, after)
    assert running is not None and running.began == clock()


def test_claims_racing_one_wins(backend: Backend) -> None:
    """Two services on one store (two replicas) claim the same timeout: exactly one
    ``TurnTimedOut`` is recorded; the other claim conflicts or finds no timeout."""
    first = backend.service()
    match_id = seated(first, Timers(play_ms=5_000))
    running = until_clock(first, match_id, backend.clock, "play")
    second = backend.service()
    second.get_match(match_id)  # both hold the table in their cache
    backend.clock.set(running.deadline + timedelta(seconds=1))
    claim_timeout(first, match_id, "seat 0")
    with pytest.raises((VersionConflictError, IllegalMoveError)) as info:
        claim_timeout(second, match_id, "seat 2")  # it read the table before the save
    assert info.value.code in ("version-conflict", "not-timed-out")
    _, round_ = table(first, match_id)
    assert sum(isinstance(e, TurnTimedOut) for e in round_events(first, round_.id)) == 1


# -- views and replay -------------------------------------------------------------------------


def test_views_show_the_deadline_of_the_seat_to_act() -> None:
    clock = FakeClock()
    service = new_service(clock)
    match_id = seated(service, Timers(play_ms=20_000))
    running = until_clock(service, match_id, clock, "play")
    match, round_ = table(service, match_id)
    for viewer in (None, 0, 1, 2, 3):
        view = table_view(match, round_, viewer, clock())
        assert view.turn_deadline == running.deadline.isoformat()
        assert view.expected is not None and view.expected.seat == running.seat
        assert b'"turnDeadline":"' in msgspec.json.encode(view)
    untimed = new_service(FakeClock())
    plain = seated(untimed, None)
    assert table_view(*table(untimed, plain), None, clock()).turn_deadline is None


def test_replaying_a_match_with_timeouts_gives_the_same_state(backend: Backend) -> None:
    """Replay needs no clock: a fresh service (no cache) rebuilds the same tables and
    views from the stored events alone."""
    live = backend.service()
    match_id = seated(live, Timers(declare_ms=4_000, bury_ms=4_000, play_ms=4_000))
    timeouts = 0
    for _ in range(120):
        match, round_ = table(live, match_id)
        running = turn_clock(match.timers, round_)
        if running is not None and running.seat in (0, 1):  # seats 0 and 1 stall
            backend.clock.set(running.deadline + timedelta(milliseconds=250))
            claim_timeout(live, match_id, SWEEPER)
            timeouts += 1
        else:
            step(live, match_id, backend.clock)
    assert timeouts >= 10
    fresh = backend.service(clock=lambda: backend.clock() + timedelta(days=365))
    match, round_ = table(live, match_id)
    again_match, again_round = table(fresh, match_id)
    for viewer in (None, 0, 1, 2, 3):
        assert msgspec.json.encode(table_view(match, round_, viewer, backend.clock())) == (
            msgspec.json.encode(table_view(again_match, again_round, viewer, backend.clock()))
        )
    events = round_events(fresh, round_.id)
    replayed: Any = None
    for event in events:
        replayed = event.mutate(replayed)
    assert replayed.version == round_.version and replayed.hands == round_.hands
    assert replayed.modified_on == round_.modified_on
    assert sum(isinstance(e, TurnTimedOut) for e in events) >= 1
    assert any(isinstance(e, CardPlayed) for e in events)


def test_a_bot_move_made_for_a_seat_is_its_own(backend: Backend) -> None:
    """The move that follows ``TurnTimedOut`` is the seat's: a move for another seat is
    never made (BotMove of the seat to act, R22)."""
    service = backend.service()
    match_id = seated(service, Timers(play_ms=2_000))
    running = until_clock(service, match_id, backend.clock, "play")
    backend.clock.set(running.deadline + timedelta(milliseconds=1))
    match, round_ = table(service, match_id)
    move = next_move(match, round_, backend.clock(), {running.seat: "heuristic"})
    assert isinstance(move, BotMove) and move.seat == running.seat
    done = claim_timeout(service, match_id, "organiser")
    assert done.version > match.sequence(round_.version)

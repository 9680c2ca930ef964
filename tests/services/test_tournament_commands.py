"""Every tournament write is one command through the bus and **one** save (docs/decisions.md
D-bus): the tournament, the matches and rounds the command creates or ends, and the
Idempotency-Key's record together. A replay answers byte for byte what the first call
answered, however the tournament moved since (the answer is built from the state as of the
recorded version)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any
from uuid import UUID, uuid4

import msgspec
import pytest

from domain.game.match import Match
from domain.rules.ruleset import STANDARD
from domain.tournament.events import TeamEntry
from domain.tournament.tournament import Tournament
from services import handlers
from services.bus import SERVICE, Bus
from services.game import GameService
from services.idempotency import IdempotencyRecord, RequestKey
from services.tournaments import commands as tc
from services.tournaments import control_commands as cc
from services.tournaments import director_commands as dc
from services.tournaments.answers import ScheduledRound
from services.tournaments.results_policy import RecordTableResult
from tests.commands import bus_of, run_bots
from tests.conftest import FakeClock, FixedSeeds
from tests.driving import play_round
from tests.tournaments import Tournaments


def people(n: int, first: int = 0) -> list[TeamEntry]:
    return [
        TeamEntry(f"T{i}", (f"a{i}", f"b{i}"), ("human", "human")) for i in range(first, first + n)
    ]


def bots(n: int) -> list[TeamEntry]:
    return [TeamEntry(f"B{i}", (f"x{i}", f"y{i}"), ("heuristic", "random")) for i in range(n)]


class Scene:
    """A service of its own (POPO, a fake clock) and its tournament commands."""

    def __init__(self) -> None:
        self.clock = FakeClock()
        self.service = GameService(
            {"PERSISTENCE_MODULE": "eventsourcing.popo"}, clock=self.clock, seeds=FixedSeeds()
        )
        self.ts = Tournaments(self.service)
        self.bus: Bus = bus_of(self.service)

    def cup(self, teams: list[TeamEntry] | None = None, **kw: Any) -> UUID:
        args: dict[str, Any] = {"fmt": "swiss", "swiss_rounds": 2, "match_length": 1, **kw}
        t: Tournament = self.ts.create(
            name="cup", rules=STANDARD, teams=people(4) if teams is None else teams, **args
        )
        tid: UUID = t.id
        return tid

    def in_play(self, **kw: Any) -> UUID:
        """A cup whose round 1 is in play (people's tables: nobody plays them)."""
        tid = self.cup(**kw)
        self.ts.schedule_next(tid)
        return tid

    def send(self, command: Any) -> None:
        self.bus.execute(command)

    def registration(self, teams: int = 0, **kw: Any) -> UUID:
        tid = self.cup([], registration=True, **kw)
        for team in people(teams):
            self.send(cc.RegisterTeam(tid, team))
        return tid


Prepare = Callable[[Scene], Any]
"""Brings a scene to where the command is legal; answers the command."""


def _correct(s: Scene) -> Any:
    tid = s.in_play()
    s.send(tc.FinishTable(tid, 1, 0, "no show"))
    return tc.CorrectResult(tid, 1, 0, None, (1, 1), (0, 0), "TD", "misread")


def _allow(s: Scene) -> Any:
    tid = s.cup()
    s.send(cc.Forbid(tid, 0, 1, "one club"))
    return cc.Allow(tid, 0, 1)


def _resume(s: Scene) -> Any:
    tid = s.in_play()
    s.send(dc.PauseRound(tid, 1, "fire drill"))
    return dc.ResumeRound(tid, 1)


def _deadline(s: Scene) -> Any:
    tid = s.in_play(deadline_rule="finish", round_deadline_s=60)
    s.clock.advance(seconds=120)
    return cc.ApplyDeadline(tid)


def _swiss_bye(s: Scene) -> Any:
    return dc.RequestBye(s.cup(), 0, 2, "away")


CASES: dict[type[Any], tuple[Prepare, frozenset[str]]] = {
    # the command: how to get there, and what its one save holds besides the key's record
    tc.CreateTournament: (
        lambda s: tc.CreateTournament("cup", STANDARD, tuple(people(2)), "round_robin", 1),
        frozenset({"Tournament"}),
    ),
    tc.ScheduleRound: (
        lambda s: tc.ScheduleRound(s.cup()),
        frozenset({"Tournament", "Match", "Round"}),  # every table created, seated, dealt
    ),
    # nothing finished yet: the key's record alone
    tc.RunRoundBots: (lambda s: tc.RunRoundBots(s.in_play(), 1), frozenset()),
    tc.CollectResults: (lambda s: tc.CollectResults(s.in_play()), frozenset()),
    tc.FinishTable: (
        lambda s: tc.FinishTable(s.in_play(), 1, 0, "no show"),
        frozenset({"Tournament", "Match", "Round"}),  # the end and its result
    ),
    tc.CorrectResult: (_correct, frozenset({"Tournament"})),
    cc.RegisterTeam: (
        lambda s: cc.RegisterTeam(s.registration(), people(1)[0]),
        frozenset({"Tournament"}),
    ),
    cc.CheckIn: (
        lambda s: cc.CheckIn(s.registration(4, checkin_required=True), 0),
        frozenset({"Tournament"}),
    ),
    cc.Withdraw: (
        lambda s: cc.Withdraw(s.in_play(), 0, "ill"),
        frozenset({"Tournament", "Match", "Round"}),  # the forfeit and the table's end
    ),
    cc.Start: (lambda s: cc.Start(s.registration(4)), frozenset({"Tournament"})),
    cc.Forbid: (lambda s: cc.Forbid(s.cup(), 0, 1, "one club"), frozenset({"Tournament"})),
    cc.Allow: (_allow, frozenset({"Tournament"})),
    cc.OverridePairings: (
        lambda s: cc.OverridePairings(s.cup(), 1, ((0, 3), (1, 2)), None, "seeding", "TD"),
        frozenset({"Tournament"}),
    ),
    cc.AdjustScore: (
        lambda s: cc.AdjustScore(s.cup(), 0, -1, "late", "TD"),
        frozenset({"Tournament"}),
    ),
    cc.ReissueTokens: (lambda s: cc.ReissueTokens(s.in_play(), 1, 0), frozenset({"Match"})),
    cc.ApplyDeadline: (_deadline, frozenset({"Tournament", "Match", "Round"})),
    dc.EnterResult: (
        lambda s: dc.EnterResult(s.in_play(), 1, 0, (2, 0), (0, 0), "TD", "played offline"),
        frozenset({"Tournament", "Match", "Round"}),  # the result and the match's end
    ),
    dc.ChangeTimeControl: (
        lambda s: dc.ChangeTimeControl(s.cup(), round_deadline_s=600),
        frozenset({"Tournament"}),
    ),
    dc.SetRoundClock: (
        lambda s: dc.SetRoundClock(s.in_play(), 1, 600, None),
        frozenset({"Tournament"}),
    ),
    dc.ExtendTable: (
        lambda s: dc.ExtendTable(s.in_play(), 1, 0, 300, "TD", "late start"),
        frozenset({"Tournament"}),
    ),
    dc.PauseRound: (
        lambda s: dc.PauseRound(s.in_play(), 1, "fire drill"),
        frozenset({"Tournament"}),
    ),
    dc.ResumeRound: (_resume, frozenset({"Tournament"})),
    dc.CancelRound: (
        lambda s: dc.CancelRound(s.in_play(), 1, "wrong seating", "TD"),
        frozenset({"Tournament", "Match", "Round"}),  # the cancellation and its tables' ends
    ),
    dc.RequestBye: (_swiss_bye, frozenset({"Tournament"})),
    dc.Substitute: (
        lambda s: dc.Substitute(s.cup(), 1, 0, 0, "Sub", "human", "ill"),
        frozenset({"Tournament"}),
    ),
    dc.RenameTeam: (
        lambda s: dc.RenameTeam(s.cup(), 0, "New name", "sponsor"),
        frozenset({"Tournament"}),
    ),
    dc.FixTable: (lambda s: dc.FixTable(s.cup(), 0, 1, "access"), frozenset({"Tournament"})),
    dc.PublishPairing: (lambda s: dc.PublishPairing(s.cup()), frozenset({"Tournament"})),
}


@pytest.fixture
def saves(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[set[str]]]:
    """The class names of what each ``GameService.save`` held, in order."""
    seen: list[set[str]] = []
    save = GameService.save

    def counted(self: GameService, *objs: Any, **kwargs: Any) -> Any:
        seen.append({type(o).__name__ for o in objs if o is not None})
        return save(self, *objs, **kwargs)

    monkeypatch.setattr(GameService, "save", counted)
    yield seen


def key() -> RequestKey:
    return RequestKey.of("test", uuid4().hex, "fingerprint")


def test_every_tournament_command_has_a_case() -> None:
    bus = handlers.build_bus(Scene().service)
    tournament_commands = {
        c for c in bus.commands if c.__module__.startswith("services.tournaments")
    }
    assert tournament_commands == {*CASES, RecordTableResult}


@pytest.mark.parametrize("command", list(CASES), ids=lambda c: c.__name__)
def test_each_tournament_write_is_one_save_with_its_key(
    command: type[Any], saves: list[set[str]]
) -> None:
    prepare, holds = CASES[command]
    scene = Scene()
    sent = prepare(scene)
    assert type(sent) is command
    saves.clear()
    done = scene.bus.handle(sent, SERVICE, key=key())
    assert not done.replayed
    assert len(saves) == 1, saves
    assert saves[0] == {*holds, IdempotencyRecord.Recorded.__name__}  # its record's event


def test_the_policys_record_is_one_save_with_its_position(saves: list[set[str]]) -> None:
    scene = Scene()
    tid = scene.cup(bots(4))
    scene.ts.schedule_next(tid)
    state = scene.ts.get(tid).current
    assert state is not None
    table = state.tables[0].match_id
    run_bots(scene.service, table)
    assert scene.service.get_match(table).finished
    saves.clear()
    assert scene.ts.policy.catch_up() == 1
    assert saves == [{"Tournament", "PolicyPosition"}]


# -- a replay answers the first answer --------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Replay:
    """A keyed command, then what moves the tournament on before the key is sent again."""

    first: Callable[[Scene, UUID], Any]
    then: Callable[[Scene, UUID], None]


def _enter_then_correct(s: Scene, tid: UUID) -> None:
    s.send(tc.CorrectResult(tid, 1, 0, None, (1, 1), (0, 0), "TD", "misread"))


def _rename_and_adjust(s: Scene, tid: UUID) -> None:
    s.send(dc.RenameTeam(tid, 0, "Renamed", "sponsor"))
    s.send(cc.AdjustScore(tid, 0, 2, "fair play", "TD"))


def _more_rounds(s: Scene, tid: UUID) -> None:
    play_round(s.ts, tid)
    s.ts.schedule_next(tid)
    play_round(s.ts, tid)


REPLAYS = {
    "a paper result, then corrected": Replay(
        lambda s, tid: dc.EnterResult(tid, 1, 0, (3, 1), (120, 40), "TD", "played offline"),
        _enter_then_correct,
    ),
    "a table ended, then corrected": Replay(
        lambda s, tid: tc.FinishTable(tid, 1, 0, "no show"), _enter_then_correct
    ),
    "a withdrawal, then a rename and an adjustment": Replay(
        lambda s, tid: cc.Withdraw(tid, 1, "ill"), _rename_and_adjust
    ),
}


@pytest.mark.parametrize("case", list(REPLAYS))
def test_a_replay_after_the_state_moved_answers_the_first_answer(case: str) -> None:
    replay = REPLAYS[case]
    scene = Scene()
    tid = scene.in_play()
    command, k = replay.first(scene, tid), key()
    first = scene.bus.handle(command, SERVICE, key=k)
    before = scene.ts.get(tid).version
    replay.then(scene, tid)
    assert scene.ts.get(tid).version > before  # the tournament moved on
    again = scene.bus.handle(command, SERVICE, key=k)
    assert again.replayed and again.status == first.status
    assert msgspec.json.encode(again.body) == msgspec.json.encode(first.body)
    assert scene.ts.get(tid).version > before  # and the replay changed nothing


def test_a_scheduling_replayed_after_later_rounds_answers_its_round() -> None:
    scene = Scene()
    tid = scene.cup(bots(4))
    k = key()
    first = scene.bus.handle(tc.ScheduleRound(tid), SERVICE, key=k)
    _more_rounds(scene, tid)
    t: Tournament = scene.ts.get(tid)
    assert len(t.rounds) == 2 and t.round_state(1).revealed
    again = scene.bus.handle(tc.ScheduleRound(tid), SERVICE, key=k)
    assert again.replayed
    # bots only: no token was minted, so nothing is withheld and the bytes are the same
    assert msgspec.json.encode(again.body) == msgspec.json.encode(first.body)
    assert isinstance(again.body, ScheduledRound)
    assert again.body.round.status == "in_play"  # round 1 as it was answered, not as it is


def test_a_scheduling_seats_every_table_in_its_one_save() -> None:
    scene = Scene()
    tid = scene.cup()
    done = scene.ts.schedule_next(tid)
    t = scene.ts.get(tid)
    assert len(done.seat_tokens) == 8  # four teams of two people
    for table in t.rounds[0].tables:
        match = scene.service.get_match(table.match_id)
        assert isinstance(match, Match) and match.seated
        assert scene.service.current_round(match) is not None  # round 1 dealt (R16)

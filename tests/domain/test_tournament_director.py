"""The director's tools on the Tournament aggregate (R36; docs/tournaments.md, "The
director's room"): each refusal as a problem code with nothing appended, the seats balanced
across rounds, the clock's deadline arithmetic, and every new event through the store's
codec unchanged."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any
from uuid import UUID

import pytest

from domain.rules.ruleset import STANDARD
from domain.tournament import events as ev
from domain.tournament.standings import TableResult
from domain.tournament.tournament import Tournament
from services.codec import MsgspecMapper
from tests.conftest import T0, given, kinds, rejects, seed_bytes, when

TID = UUID("00000000-0000-4000-8000-0000000d1ec7")


def entry(name: str) -> ev.TeamEntry:
    return ev.TeamEntry(name, (f"{name}a", f"{name}b"), ("human", "human"))


def new(n: int = 4, rounds: int = 3, **kw: Any) -> Tournament:
    teams = [entry(f"T{i}") for i in range(n)]
    return given(
        Tournament.create(
            name="cup", rules=STANDARD, teams=teams, fmt="swiss", now=T0, tournament_id=TID,
            match_length=1, swiss_rounds=rounds, **kw,
        )
    )  # fmt: skip


def scheduled(t: Tournament) -> Tournament:
    t.schedule_round(seed_bytes(len(t.rounds) + 1), T0)
    return given(t)


def enter_all(t: Tournament) -> Tournament:
    state = t.rounds[-1]
    for table in state.tables:
        result = TableResult(table.first, table.second, table.first, (1, 0), (0, 0))
        t.enter_result(state.number, table.table, result, by="TD", reason="paper", now=T0)
    return given(t)


Refusal = tuple[str, Callable[[], Tournament], Callable[[Tournament], object], str]
REFUSALS: list[Refusal] = [
    ("R36 a paper result twice", lambda: enter_all(scheduled(new())),
     lambda t: t.enter_result(1, 0, TableResult(0, 2, None, (0, 0), (0, 0)), by="TD",
                              reason="again", now=T0), "round-not-current"),
    ("R36 pause with no round in play", new, lambda t: t.pause("x", T0), "round-not-current"),
    ("R36 pause twice", lambda: given(_paused(scheduled(new()))),
     lambda t: t.pause("again", T0), "round-paused"),
    ("R36 resume a running round", lambda: scheduled(new()), lambda t: t.resume(T0),
     "round-not-paused"),
    ("R36 extend a table of a completed round", lambda: enter_all(scheduled(new())),
     lambda t: t.extend_table(1, 0, 60, by="TD", reason="x", now=T0), "round-not-current"),
    ("R36 a bye for a round scheduled", lambda: scheduled(new()),
     lambda t: t.request_bye(0, 1, "x", T0), "round-started"),
    ("R36 a bye beyond the last round", new, lambda t: t.request_bye(0, 4, "x", T0),
     "round-started"),
    ("R36 a substitute for a round scheduled", lambda: scheduled(new()),
     lambda t: t.substitute(1, 0, 0, "S", "human", "x", T0), "round-started"),
    ("R36 a name taken", new, lambda t: t.rename(0, "T1", "x", T0), "team-name-taken"),
    ("R36 a fixed table taken", lambda: given(_fixed(new())),
     lambda t: t.fix_table(1, 1, "x", T0), "table-taken"),
    ("R36 cancel with no round in play", new,
     lambda t: t.cancel_round(reason="x", by="TD", now=T0), "round-not-current"),
    ("R36 publish after the last round", lambda: enter_all(scheduled(new(rounds=1))),
     lambda t: t.publish(T0), "tournament-over"),
    ("R36 publish a Swiss pairing (it tells the results) while a round is in play",
     lambda: scheduled(new()), lambda t: t.publish(T0), "round-in-play"),
]  # fmt: skip


def _paused(t: Tournament) -> Tournament:
    t.pause("fire alarm", T0)
    return t


def _fixed(t: Tournament) -> Tournament:
    t.fix_table(0, 1, "wheelchair", T0)
    return t


@pytest.mark.parametrize(("case", "make", "command", "code"), REFUSALS)
def test_r36_refusals_append_nothing(
    case: str, make: Callable[[], Tournament], command: Callable[[Tournament], object], code: str
) -> None:
    t = make()
    rejects(t, lambda: command(t), code)


def test_r36_a_pause_moves_the_deadline_and_an_extension_one_table() -> None:
    t = scheduled(new(round_deadline_s=600))
    due = t.deadline()
    assert due == T0 + timedelta(seconds=600)
    t.pause("power cut", T0 + timedelta(seconds=100))
    t = given(t)
    assert t.deadline() is None and t.overdue_tables(T0 + timedelta(days=1)) == []
    t.resume(T0 + timedelta(seconds=400))
    t.extend_table(1, 1, 120, by="TD", reason="late start", now=T0)
    t = given(t)
    assert t.deadline() == T0 + timedelta(seconds=900)
    assert t.table_deadline(1) == T0 + timedelta(seconds=1020)
    assert t.overdue_tables(T0 + timedelta(seconds=901)) == [0]
    assert t.overdue_tables(T0 + timedelta(seconds=1021)) == [0, 1]


def test_r2_r36_seats_are_balanced_over_the_rounds() -> None:
    """Each team sits at seats 0/2 as evenly as the pairing allows: at every table the
    team with fewer rounds at 0/2 so far sits there (two teams equal so far: either)."""
    t = new(8, rounds=7)
    for _ in range(7):
        before = t.seat_counts()
        t = enter_all(scheduled(t))
        for table in t.rounds[-1].tables:
            at_02 = table.first if table.first_parity == 0 else table.second
            at_13 = table.second if at_02 == table.first else table.first
            assert before.get(at_02, 0) <= before.get(at_13, 0), (t.rounds[-1].number, table)
    counts = t.seat_counts()
    assert sum(counts.values()) == 7 * 4 and max(counts.values()) - min(counts.values()) <= 3


def test_r36_a_cancelled_round_is_scheduled_again_on_new_matches() -> None:
    t = scheduled(new())
    first = [table.match_id for table in t.rounds[0].tables]
    assert kinds(when(t, lambda: t.cancel_round(reason="wrong", by="TD", now=T0))) == [
        "RoundCancelled"
    ]
    t = scheduled(given(t))
    assert t.rounds[0].number == 1 and len(t.rounds) == 1
    assert not {table.match_id for table in t.rounds[0].tables} & set(first)


def test_the_director_s_events_go_through_the_codec_unchanged() -> None:
    t = new(5, round_deadline_s=600)
    t.change_time_control(
        timers={"play_ms": 1000}, round_deadline_s=900, deadline_rule="finish",
        requested_bye_points=0, now=T0,
    )  # fmt: skip
    t.request_bye(4, 1, "away", T0)
    t.substitute(1, 0, 1, "Sub", "random", "ill", T0)
    t.rename(1, "Dragons", "sponsor", T0)
    t.fix_table(2, 1, "wheelchair", T0)
    t.publish(T0)
    t.schedule_round(seed_bytes(1), T0)
    t.set_round_time(1, 300, {"play_ms": 2000}, T0)
    t.extend_table(1, 0, 60, by="TD", reason="late", now=T0)
    t.pause("alarm", T0)
    t.resume(T0 + timedelta(seconds=30))
    table = t.rounds[0].tables[0]
    result = TableResult(table.first, table.second, None, (1, 1), (0, 0))
    t.enter_result(1, 0, result, by="TD", reason="paper", now=T0)
    t.cancel_round(reason="wrong boards", by="TD", now=T0)
    events = t.collect_events()
    assert set(kinds(events)) >= {cls.__name__ for cls in ev.DIRECTOR_EVENTS}
    mapper = MsgspecMapper()
    for event in events:
        again = mapper.to_domain_event(mapper.to_stored_event(event))
        assert vars(again) == vars(event), type(event).__name__

"""The Tournament aggregate and duplicate deals (R35, R36): creation checks, scheduling
with the seeds' commitment, results, the round's completion revealing its secret, and
the organiser's recorded corrections; the duplicate seeds and the seating."""

from __future__ import annotations

import hashlib
import hmac
from typing import Any
from uuid import UUID

import pytest

from domain.rules.errors import ShengjiError
from domain.rules.ruleset import STANDARD, MatchEnd, MatchEndKind, preset
from domain.tournament import events as ev
from domain.tournament.duplicate import deal_seed, seat_teams, secret_commitment
from domain.tournament.standings import TableResult
from domain.tournament.tournament import Tournament, table_match_id
from tests.conftest import T0, given, kinds, rejects, seed_bytes, when

TID = UUID("00000000-0000-4000-8000-00000000c0de")

SECRET = bytes(range(32))


def teams(n: int, kinds_: tuple[str, str] = ("heuristic", "random")) -> list[ev.TeamEntry]:
    return [ev.TeamEntry(f"T{i}", (f"a{i}", f"b{i}"), kinds_) for i in range(n)]


def new(n: int = 4, fmt: str = "round_robin", **kw: Any) -> Tournament:
    args: dict[str, Any] = {"match_length": 1, **kw}
    return given(
        Tournament.create(
            name="cup", rules=STANDARD, teams=teams(n), fmt=fmt, now=T0, tournament_id=TID, **args
        )
    )


def play_round(t: Tournament, winner_is_first: bool = True) -> Tournament:
    """Schedule the next round and record a result at every table."""
    t.schedule_round(seed_bytes(len(t.rounds)), T0)
    state = t.rounds[-1]
    for table in state.tables:
        winner = table.first if winner_is_first else table.second
        result = TableResult(table.first, table.second, winner, (1, 0), (40, 90), 1)
        t.record_result(state.number, table.table, result, T0)
    return given(t)


# -- duplicate deals --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("deal", "deal_no", "hex_seed"),
    [  # test vectors: docs/tournaments.md
        (1, 1, "f2619da5dfb53a68981f383bd5ae28e7e90b32b50dda34d99805f7c13e33fde7"),
        (2, 1, "4552fd34ca0d9d8e6605c534e35762ab0a209bea619e596e9e30771203873d99"),
        (1, 2, "cbc02b75d55be646ee8113a69ddb68ccb66ad1cde808e33ed4c28c0efe06cedf"),
    ],
)
def test_deal_seeds_are_hmac_of_the_round_secret(deal: int, deal_no: int, hex_seed: str) -> None:
    message = f"shengji-duplicate:{deal}:{deal_no}".encode()
    assert hmac.new(SECRET, message, hashlib.sha256).hexdigest() == hex_seed
    assert deal_seed(SECRET, deal, deal_no).hex() == hex_seed


@pytest.mark.parametrize(
    ("table", "seats"),
    [(0, (7, 9, 7, 9)), (1, (9, 7, 9, 7)), (2, (7, 9, 7, 9)), (5, (9, 7, 9, 7))],
)
def test_duplicate_seating_alternates_sides_table_by_table(
    table: int, seats: tuple[int, ...]
) -> None:
    # R36: first team 7 holds seats 0/2 on even tables, 1/3 on odd ones (R2 partners)
    assert seat_teams(table, 7, 9) == seats


def test_every_seeds_hands_are_held_by_both_sides_across_tables() -> None:
    t = new(8, "swiss", swiss_rounds=3)
    t.schedule_round(SECRET, T0)
    sides = {seat_teams(e.table, e.first, e.second)[0] for e in t.rounds[0].tables}
    firsts = {e.first for e in t.rounds[0].tables}
    # seats 0/2 (the same hands at every table in deal 1) go to first teams at some
    # tables and to second teams at others
    assert sides & firsts and sides - firsts


# -- creation --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("case", "overrides"),
    [
        ("one team", {"teams": teams(1)}),
        ("same names", {"teams": [*teams(2), teams(1)[0]]}),
        ("a bad kind", {"teams": teams(2, ("human", "robot"))}),
        ("an unknown format", {"fmt": "knockout"}),
        ("swiss without rounds", {"fmt": "swiss"}),
        ("swiss with too many rounds", {"fmt": "swiss", "swiss_rounds": 4}),
        ("round-robin with swiss rounds", {"swiss_rounds": 2}),
        ("zero deals", {"match_length": 0}),
        ("wrap never ends (R32)", {"match_length": "wrap"}),
        ("no name", {"name": ""}),
    ],
)
def test_creation_refuses_bad_input(case: str, overrides: dict[str, Any]) -> None:
    args: dict[str, Any] = {
        "name": "cup",
        "rules": STANDARD,
        "teams": teams(4),
        "fmt": "round_robin",
        "match_length": 1,
        "now": T0,
        "tournament_id": TID,
        **overrides,
    }
    with pytest.raises(ShengjiError) as info:
        Tournament.create(**args)
    assert info.value.code == ("invalid-name" if case == "no name" else "invalid-input"), case


@pytest.mark.parametrize(
    ("length", "match_end"),
    [(2, MatchEnd(MatchEndKind.ROUNDS, 2)), ("finish_at_A", MatchEnd(MatchEndKind.FINISH_AT_A))],
)
def test_the_match_length_is_the_rule_sets_match_end(length: int | str, match_end: Any) -> None:
    t = given(
        Tournament.create(
            name="cup",
            rules=preset("tuolaji"),
            teams=teams(3),
            fmt="round_robin",
            match_length=length,
            now=T0,
            tournament_id=TID,
        )
    )
    assert t.rules.match_end == match_end
    assert t.rules.bottom_multiplier == preset("tuolaji").bottom_multiplier
    assert t.total_rounds == 3  # odd count: n rounds, one bye each


# -- rounds, results, reveal ---------------------------------------------------------------------


def test_scheduling_publishes_the_commitment_and_keeps_the_secret() -> None:
    t = new(5)
    events = when(t, lambda: t.schedule_round(SECRET, T0))
    assert kinds(events) == ["RoundScheduled"]
    scheduled = events[0]
    assert scheduled.commitment == secret_commitment(SECRET) == hashlib.sha256(SECRET).hexdigest()
    assert "secret" in type(scheduled).SECRET_FIELDS  # R35: hidden until the reveal
    assert scheduled.bye == 0 and len(scheduled.tables) == 2
    assert [e.match_id for e in scheduled.tables] == [table_match_id(t.id, 1, i) for i in (0, 1)]
    assert [e.first_parity for e in scheduled.tables] == [0, 1]


def test_the_last_result_completes_the_round_and_reveals_the_secret() -> None:
    t = new(4)
    t.schedule_round(SECRET, T0)
    t = given(t)
    first, second = t.rounds[0].tables
    result = TableResult(first.first, first.second, first.first, (2, 0), (30, 0), 1)
    assert kinds(when(t, lambda: t.record_result(1, 0, result, T0))) == ["TableResultRecorded"]
    assert t.in_play
    rejects(t, lambda: t.schedule_round(seed_bytes(1), T0), "round-in-play")
    rejects(t, lambda: t.record_result(1, 0, result, T0), "result-recorded")
    other = TableResult(second.first, second.second, None, (0, 0), (80, 0), 1)
    events = when(t, lambda: t.record_result(1, 1, other, T0))
    assert kinds(events) == ["TableResultRecorded", "RoundCompleted"]
    assert events[1].secret == SECRET.hex()
    t = given(t)
    assert not t.in_play and t.rounds[0].revealed


def test_results_must_match_the_table() -> None:
    t = new(4)
    t.schedule_round(SECRET, T0)
    table = t.rounds[0].tables[0]
    wrong_teams = TableResult(table.second, table.first, None, (0, 0), (0, 0))
    rejects(t, lambda: t.record_result(1, 0, wrong_teams, T0), "invalid-input")
    outsider = ({0, 1, 2, 3} - {table.first, table.second}).pop()
    wrong_winner = TableResult(table.first, table.second, outsider, (0, 0), (0, 0))
    rejects(t, lambda: t.record_result(1, 0, wrong_winner, T0), "invalid-input")
    rejects(t, lambda: t.record_result(1, 5, wrong_teams, T0), "no-such-table")
    rejects(t, lambda: t.record_result(2, 0, wrong_teams, T0), "round-not-scheduled")


def test_a_correction_is_recorded_with_who_and_why() -> None:
    t = play_round(new(4))
    table = t.rounds[0].tables[0]
    fixed = TableResult(table.first, table.second, table.second, (0, 3), (120, 0))
    events = when(
        t, lambda: t.correct_result(1, 0, fixed, by="chief arbiter", reason="misdeal", now=T0)
    )
    assert kinds(events) == ["ResultCorrected"]
    assert (events[0].by, events[0].reason) == ("chief arbiter", "misdeal")
    t = given(t)
    entry = t.results[(1, 0)]
    assert (entry.winner, entry.levels, entry.corrected_by) == (
        table.second,
        (0, 3),
        "chief arbiter",
    )
    assert entry.deals == 1  # the deals played stay as recorded
    second = next(s for s in t.standings() if s.team == table.second)
    assert second.levels_gained == 3 and second.wins == 1


def test_corrections_need_a_recorded_result_and_a_reason() -> None:
    t = new(4)
    t.schedule_round(SECRET, T0)
    table = t.rounds[0].tables[0]
    fixed = TableResult(table.first, table.second, None, (0, 0), (0, 0))
    rejects(
        t,
        lambda: t.correct_result(1, 0, fixed, by="o", reason="r", now=T0),
        "result-not-recorded",
    )
    t = play_round(new(4))
    rejects(t, lambda: t.correct_result(1, 0, fixed, by=" ", reason="r", now=T0), "invalid-input")


def test_after_the_last_round_the_tournament_is_over() -> None:
    t = new(4)
    for _ in range(3):
        t = play_round(t)
    assert t.finished and not t.in_play
    rejects(t, lambda: t.schedule_round(SECRET, T0), "tournament-over")
    played = {frozenset((r.first, r.second)) for _, _, r in t.table_results()}
    assert len(played) == 6  # round-robin: every pair once


def test_swiss_rounds_follow_the_standings_without_rematches() -> None:
    t = new(8, "swiss", swiss_rounds=3)
    seen: set[frozenset[int]] = set()
    for number in (1, 2, 3):
        t = play_round(t, winner_is_first=number != 2)
        pairs = {frozenset((e.first, e.second)) for e in t.rounds[-1].tables}
        assert not pairs & seen, f"round {number} has a rematch"
        seen |= pairs
        if number == 2:  # round 2 pairs winners with winners (by standing)
            winners = {e.first for e in t.rounds[0].tables}
            for e in t.rounds[1].tables:
                assert (e.first in winners) == (e.second in winners)
    assert t.finished

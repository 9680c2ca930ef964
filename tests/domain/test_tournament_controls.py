"""The organiser's controls on the Tournament aggregate (T16, docs/tournaments.md):
byes never twice to one team while another has none, forbidden pairings, registration,
check-in and the start, late entries, withdrawals and their forfeits, overrides,
adjustments and the configurable tiebreaks; the new events through the store's codec."""

from __future__ import annotations

import random
from collections import Counter
from datetime import timedelta
from typing import Any
from uuid import UUID

import pytest

from domain.rules.ruleset import STANDARD
from domain.tournament import events as ev
from domain.tournament.pairing import Pairing, swiss
from domain.tournament.standings import TableResult, standings
from domain.tournament.tournament import Tournament
from services.codec import MsgspecMapper
from tests.conftest import T0, given, kinds, rejects, seed_bytes, when

TID = UUID("00000000-0000-4000-8000-00000000c0df")


def entry(name: str) -> ev.TeamEntry:
    return ev.TeamEntry(name, (f"{name}a", f"{name}b"), ("heuristic", "random"))


def new(n: int = 4, fmt: str = "swiss", **kw: Any) -> Tournament:
    args: dict[str, Any] = {"match_length": 1, **kw}
    if fmt == "swiss":
        args.setdefault("swiss_rounds", 3)
    teams = [entry(f"T{i}") for i in range(n)]
    return given(
        Tournament.create(
            name="cup", rules=STANDARD, teams=teams, fmt=fmt, now=T0, tournament_id=TID, **args
        )
    )


def finish_round(t: Tournament, rng: random.Random) -> Tournament:
    state = t.rounds[-1]
    for table in state.tables:
        if (state.number, table.table) in t.results:
            continue
        winner = rng.choice([table.first, table.second, None])
        result = TableResult(table.first, table.second, winner, (1, 0), (40, 90), 1)
        t.record_result(state.number, table.table, result, T0)
    return given(t)


# -- byes ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ranking", "byes", "expected_bye"),
    [
        ([0, 1, 2, 3, 4], [], 4),  # the lowest-ranked
        ([0, 1, 2, 3, 4], [4], 3),  # ... that has had none
        ([0, 1, 2, 3, 4], [4, 3, 2, 1, 0], 4),  # all had one: the lowest again
        ([0, 1, 2, 3, 4], [4, 3, 2, 1, 0, 4], 3),  # 4 has two: 3 before it
        ([0, 1, 2, 3, 4], [0, 1, 2, 3], 4),  # 4 the only one without: whoever its rank
    ],
)
def test_the_bye_goes_to_the_lowest_ranked_of_the_teams_with_fewest(
    ranking: list[int], byes: list[int], expected_bye: int
) -> None:
    assert swiss(ranking, set(), byes).bye == expected_bye


@pytest.mark.parametrize("seed", range(6))
def test_no_team_gets_a_second_bye_while_another_has_none(seed: int) -> None:
    rng = random.Random(seed)
    t = new(5, swiss_rounds=4)
    for number in range(1, 5):
        t.schedule_round(seed_bytes(number), T0)
        t = finish_round(given(t), rng)
        counts = Counter(t.byes())
        assert max(counts.values()) <= 1 or all(counts[x] >= 1 for x in range(5)), counts


def test_a_rematch_is_preferred_to_a_second_bye() -> None:
    # 3 teams: 0 and 1 met; 2 had the bye. A rematch-free pairing would give 2 another.
    p = swiss([0, 1, 2], {frozenset((0, 1)), frozenset((0, 2)), frozenset((1, 2))}, [2])
    assert p.bye != 2


# -- forbidden pairings -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ranking", "forbidden", "first_round", "expected"),
    [
        ([0, 1, 2, 3], [(0, 2)], True, Pairing(((0, 1), (2, 3)))),  # the fold 0 v 2 is out
        ([0, 1, 2, 3], [(0, 1)], False, Pairing(((0, 2), (1, 3)))),
        ([0, 1], [(0, 1)], False, Pairing(((0, 1),))),  # impossible to avoid: last resort
    ],
)
def test_forbidden_pairs_are_never_paired_while_avoidable(
    ranking: list[int], forbidden: list[tuple[int, int]], first_round: bool, expected: Pairing
) -> None:
    banned = {frozenset(p) for p in forbidden}
    assert swiss(ranking, set(), [], first_round=first_round, forbidden=banned) == expected


# -- registration, withdrawals, late entries ------------------------------------------------------


def test_registration_check_in_and_the_start() -> None:
    t = new(0, registration=True, checkin_required=True, swiss_rounds=2)
    for name in ("A", "B", "C", "D"):
        t.register_team(entry(name), by="self", token_hash="h" + name, now=T0)
    rejects(
        t, lambda: t.register_team(entry("A"), by="self", token_hash="", now=T0), "team-name-taken"
    )
    rejects(t, lambda: t.schedule_round(seed_bytes(1), T0), "registration-open")
    t.register_team(entry("E"), by="self", token_hash="hE", now=T0)
    for team in (0, 1, 3, 4):
        t.check_in(team, T0)
    assert kinds(when(t, lambda: t.check_in(0, T0))) == []  # already: nothing
    t.withdraw(4, reason="changed plans", by="team 4", now=T0)
    rejects(t, lambda: t.check_in(4, T0), "team-withdrawn")
    events = when(t, lambda: t.start(T0))
    assert kinds(events) == ["TournamentStarted"] and events[0].absent == (2,)
    t = given(t)
    assert t.entrants == (0, 1, 3) and t.active(1) == [0, 1, 3] and t.status == "ready"
    assert t.absent == {2} and set(t.withdrawn) == {2, 4}
    rejects(
        t,
        lambda: t.register_team(entry("F"), by="self", token_hash="", now=T0),
        "registration-closed",
    )


@pytest.mark.parametrize(
    ("adjustments", "ranked"),
    [
        # nobody played yet: the seeding; the absent team (2) is not ranked at all
        ([], [0, 1, 3]),
        # a penalised team that came ranks last, not below a team that never came
        ([(0, -1)], [1, 3, 0]),
        # the organiser scored the absent team: then it is in the standings
        ([(0, -1), (2, 1)], [2, 1, 3, 0]),
    ],
)
def test_a_team_absent_at_the_start_is_not_ranked(
    adjustments: list[tuple[int, int]], ranked: list[int]
) -> None:
    t = new(0, registration=True, checkin_required=True, swiss_rounds=1)
    for name in ("A", "B", "C", "D"):
        t.register_team(entry(name), by="organiser", token_hash="", now=T0)
    for team in (0, 1, 3):
        t.check_in(team, T0)
    t.start(T0)
    for team, points in adjustments:
        t.adjust(team, points, reason="r", by="TD", now=T0)
    lines = given(t).standings()
    assert [s.team for s in lines] == ranked
    assert [s.rank for s in lines] == list(range(1, len(ranked) + 1))


def test_swiss_rounds_must_fit_the_teams_present() -> None:
    t = new(0, registration=True, swiss_rounds=3)
    for name in ("A", "B"):
        t.register_team(entry(name), by="organiser", token_hash="", now=T0)
    rejects(t, lambda: t.start(T0), "too-few-teams")  # two teams: one round at most
    for name in ("C", "D"):
        t.register_team(entry(name), by="organiser", token_hash="", now=T0)
    t.start(T0)
    assert given(t).total_rounds == 3


def test_a_round_needs_two_active_teams() -> None:
    t = new(3, swiss_rounds=2)
    t.withdraw(0, reason="r", by="TD", now=T0)
    t.withdraw(1, reason="r", by="TD", now=T0)
    rejects(t, lambda: t.schedule_round(seed_bytes(1), T0), "too-few-teams")


def test_a_late_entry_is_paired_from_the_next_round_and_a_withdrawal_forfeits() -> None:
    rng = random.Random(1)
    t = new(4)
    t.schedule_round(seed_bytes(1), T0)
    t = finish_round(given(t), rng)
    late = t.register_team(entry("Late"), by="organiser", token_hash="", now=T0)
    assert late == 4 and t.active(1) == [0, 1, 2, 3] and t.active(2) == [0, 1, 2, 3, 4]
    t.schedule_round(seed_bytes(2), T0)
    t = given(t)
    state = t.rounds[1]
    assert state.bye is not None and len(state.tables) == 2
    playing = state.tables[0].first
    other = state.tables[0].second
    events = when(t, lambda: t.withdraw(playing, reason="ill", by="TD", now=T0))
    assert kinds(events) == ["TeamWithdrew", "TableForfeited"]
    t = given(t)
    assert t.results[(2, 0)].forfeit and t.results[(2, 0)].winner == other
    assert other in t.forfeit_wins() and playing not in t.active(3)
    rejects(t, lambda: t.withdraw(playing, reason="x", by="TD", now=T0), "team-withdrawn")
    line = next(s for s in t.standings() if s.team == other)
    assert line.byes >= 1


def test_overrides_and_adjustments_are_recorded_with_their_reasons() -> None:
    t = new(4)
    rejects(
        t,
        lambda: t.override_pairings(1, [(0, 1), (2, 2)], None, reason="r", by="TD", now=T0),
        "pairing-invalid",
    )
    rejects(
        t,
        lambda: t.override_pairings(2, [(0, 1), (2, 3)], None, reason="r", by="TD", now=T0),
        "round-started",
    )
    t.override_pairings(1, [(0, 3), (1, 2)], None, reason="clubs", by="TD", now=T0)
    t.schedule_round(seed_bytes(1), T0)
    t = given(t)
    assert [(x.first, x.second) for x in t.rounds[0].tables] == [(0, 3), (1, 2)]
    assert t.rounds[0].override == "clubs" and t.overrides == {}
    t.adjust(2, -3, reason="slow play", by="TD", now=T0)
    t = given(t)
    assert t.adjustment_totals() == {2: -3}
    assert next(s for s in t.standings() if s.team == 2).match_points == -3


def test_the_round_deadline_lists_the_unfinished_tables_once() -> None:
    t = new(4, round_deadline_s=60)
    t.schedule_round(seed_bytes(1), T0)
    t = given(t)
    assert t.deadline() == T0 + timedelta(seconds=60)
    assert t.overdue_tables(T0 + timedelta(seconds=60)) == []
    assert t.overdue_tables(T0 + timedelta(seconds=61)) == [0, 1]
    t.mark_deadline([0, 1], T0)
    t = given(t)
    assert t.rounds[0].flagged == (0, 1) and t.overdue_tables(T0 + timedelta(days=1)) == []


# -- tiebreaks ------------------------------------------------------------------------------


def res(a: int, b: int, w: int | None, levels: tuple[int, int] = (0, 0)) -> TableResult:
    return TableResult(a, b, w, levels, (0, 0))


@pytest.mark.parametrize(
    ("case", "results", "order", "kw", "expected"),
    [
        (
            "Buchholz: the winners over stronger opponents first",
            # 0 beat 3 (who lost twice); 1 beat 2, who then beat 3
            [res(0, 3, 0), res(1, 2, 1), res(2, 3, 2)],
            ("buchholz",),
            {},
            [1, 2, 0, 3],
        ),
        (
            "head-to-head before levels",
            [res(0, 1, 1, (5, 0)), res(2, 3, 0 + 2, (0, 0)), res(0, 3, 0, (4, 0)), res(1, 2, 2)],
            ("head_to_head", "levels_gained"),
            {},
            [2, 1, 0, 3],
        ),
        (
            "levels before head-to-head",
            [res(0, 1, 1, (5, 0)), res(2, 3, 0 + 2, (0, 0)), res(0, 3, 0, (4, 0)), res(1, 2, 2)],
            ("levels_gained", "head_to_head"),
            {},
            [2, 0, 1, 3],
        ),
        (
            "an adjustment counts in match points",
            [res(0, 1, 0), res(2, 3, 2)],
            ("levels_gained",),
            {"adjustments": {0: -1}},
            [2, 0, 1, 3],
        ),
        (
            "a forfeit win scores as a bye",
            [res(0, 1, 0)],
            (),
            {"forfeits": [3]},
            [0, 3, 1, 2],
        ),
    ],
)
def test_the_tiebreaks_apply_in_the_configured_order(
    case: str,
    results: list[TableResult],
    order: tuple[str, ...],
    kw: dict[str, Any],
    expected: list[int],
) -> None:
    assert [s.team for s in standings(4, results, tiebreaks=order, **kw)] == expected


def test_an_unknown_tiebreak_is_refused() -> None:
    with pytest.raises(Exception, match="tiebreaks"):
        new(4, tiebreaks=["coin_toss"])


# -- the store's codec ------------------------------------------------------------------------


def test_the_new_events_go_through_the_codec_unchanged() -> None:
    t = Tournament.create(
        name="cup",
        rules=STANDARD,
        teams=[],
        fmt="swiss",
        now=T0,
        tournament_id=TID,
        match_length=1,
        swiss_rounds=1,
        registration=True,
        timers={"declare_ms": 0, "bury_ms": 1000, "play_ms": 2000},
        round_deadline_s=60,
    )
    for name in ("A", "B", "C", "D"):
        t.register_team(entry(name), by="self", token_hash="h", now=T0)
    t.check_in(0, T0)
    t.withdraw(3, reason="gone", by="team 3", now=T0)
    t.start(T0)
    t.forbid(0, 1, reason="club", now=T0)
    t.allow(0, 1, T0)
    t.override_pairings(1, [(0, 2)], 1, reason="r", by="TD", now=T0)
    t.adjust(1, 2, reason="r", by="TD", now=T0)
    t.schedule_round(seed_bytes(1), T0)
    t.mark_deadline([0], T0)
    mapper = MsgspecMapper()
    events = t.collect_events()
    names = set(kinds(events))
    assert {"TournamentConfigured", "TeamRegistered", "TeamCheckedIn", "TeamWithdrew"} <= names
    assert {"PairingForbidden", "PairingAllowed", "PairingsOverridden", "ScoreAdjusted"} <= names
    assert "RoundDeadlinePassed" in names
    for event in events:
        again = mapper.to_domain_event(mapper.to_stored_event(event))
        assert vars(again) == vars(event), type(event).__name__

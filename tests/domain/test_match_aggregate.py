"""The ``Match`` aggregate: given events → when a command → then events (or an error).

Seats (R1), rounds opened one at a time, and the policy that carries a round's
``RoundScored`` into the match (R30 levels, R31 next dealer, R32 the end: wrap,
finish_at_A, rounds:N). ``RoundScored`` values are made with the rules engine's own
``settle`` so each row of a table is one attackers' total.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from uuid import UUID

import pytest

from domain.game import match_events as ev
from domain.game.match import Match
from domain.game.round import round_id
from domain.game.round_events import RoundScored
from domain.rules.errors import InvalidInputError
from domain.rules.ruleset import DUIJIA, FINISH_AT_A, MatchEnd, RuleSet
from domain.rules.scoring import next_dealer, settle
from tests.conftest import T0, given, kinds, rejects, when

MATCH = UUID(int=0xA7C4)
STANDARD = RuleSet()
ACE = 12


# -- situations -----------------------------------------------------------------------------


def created(rules: RuleSet = STANDARD, start_level: int = 0) -> Match:
    return Match.create(rules, T0, name="table 1", start_level=start_level, match_id=MATCH)


def seated(rules: RuleSet = STANDARD, start_level: int = 0) -> Match:
    m = created(rules, start_level)
    for seat in range(4):
        m.take_seat(seat, f"p{seat}", "human", f"hash{seat}", T0)
    return m


def scored(dealer: int, total: int, rules: RuleSet = STANDARD) -> RoundScored:
    """A round's ``RoundScored`` for attackers' total ``total`` (R29–R31)."""
    s = settle(total, rules)
    fields: dict[str, Any] = {
        "originator_id": UUID(int=dealer),
        "originator_version": 200,
        "timestamp": T0,
        "trick_points": total,
        "bottom_cards": (0,) * 8,
        "bottom_points": 0,
        "multiplier": 0,
        "bottom_bonus": 0,
        "penalties": (),
        "attackers_total": total,
        "outcome": str(s.outcome),
        "levels_gained": s.levels,
        "band": s.band,
        "defenders_keep": s.defenders_keep,
        "dealer": dealer,
        "next_dealer": next_dealer(dealer, s.defenders_keep),
        "seed": "00" * 32,
        "commitment": "",
    }
    return RoundScored(**fields)


def in_round(m: Match, number: int = 1) -> Match:
    """Open rounds until ``number`` is open (the attackers win each earlier one, T=120)."""
    while True:
        m.begin_round(T0)
        if m.round_number == number:
            return m
        m.record_round(m.round_number, scored(m.dealer or 0, 120, m.rules), T0, round_events=100)


# -- creating and seating (R1, §10) -----------------------------------------------------------


def test_a_match_is_created_with_its_rules_fixed() -> None:
    m = created(DUIJIA, start_level=3)
    (event,) = m.pending_events
    assert isinstance(event, ev.MatchCreated)
    assert (event.name, event.rules, event.start_level) == ("table 1", DUIJIA.to_mapping(), 3)
    m = given(m)
    assert (m.id, m.rules, m.levels, m.laps, m.dealer) == (MATCH, DUIJIA, (3, 3), (0, 0), None)
    assert m.seats == [None] * 4 and not m.seated and m.current_round_id() is None


@pytest.mark.parametrize(
    "make",
    [
        lambda: Match.create(STANDARD, T0, name="x" * 201, match_id=MATCH),
        lambda: Match.create(STANDARD, T0, start_level=13, match_id=MATCH),
        lambda: Match.create(STANDARD, T0, start_level=-1, match_id=MATCH),
    ],
    ids=["long-name", "level-past-A", "negative-level"],
)
def test_impossible_matches_are_invalid_input(make: Callable[[], Match]) -> None:
    with pytest.raises(InvalidInputError):
        make()


def test_taking_a_seat_and_a_taken_seat() -> None:
    m = given(created())
    events = when(m, lambda: m.take_seat(2, "Lin", "heuristic", "abc", T0))
    assert kinds(events) == ["SeatTaken"]
    assert (events[0].seat, events[0].player, events[0].kind) == (2, "Lin", "heuristic")
    assert m.seats[2] == ev.SeatInfo("Lin", "heuristic", "abc")
    rejects(m, lambda: m.take_seat(2, "Wang", "human", "def", T0), "seat-taken")


@pytest.mark.parametrize(
    ("seat", "player", "kind"),
    [
        (4, "p", "human"),
        (-1, "p", "human"),
        (0, "", "human"),
        (0, "p" * 101, "human"),
        (0, "p", "oracle"),
    ],
)
def test_impossible_seats_are_invalid_input(seat: int, player: str, kind: str) -> None:
    m = given(created())
    with pytest.raises(InvalidInputError):
        m.take_seat(seat, player, kind, "h", T0)
    assert m.pending_events == []


# -- rounds -----------------------------------------------------------------------------------


def test_a_round_begins_only_with_four_seats_and_one_at_a_time() -> None:
    m = created()
    for seat in (0, 1, 3):
        m.take_seat(seat, f"p{seat}", "human", "h", T0)
    m = given(m)
    rejects(m, lambda: m.begin_round(T0), "seats-free")
    m.take_seat(2, "p2", "random", "h", T0)
    events = when(m, lambda: m.begin_round(T0))
    assert kinds(events) == ["RoundBegun"]
    begun = events[0]
    assert (begun.number, begun.dealer, begun.levels) == (1, None, (0, 0))
    assert begun.round_id == round_id(MATCH, 1) == m.current_round_id()
    rejects(m, lambda: m.begin_round(T0), "round-in-progress")


def test_a_round_is_recorded_only_while_it_is_the_open_one() -> None:
    m = given(seated())
    rejects(m, lambda: m.record_round(1, scored(0, 40), T0, round_events=100), "round-not-open")
    m.begin_round(T0)
    rejects(m, lambda: m.record_round(2, scored(0, 40), T0, round_events=100), "round-not-open")
    assert kinds(when(m, lambda: m.record_round(1, scored(0, 40), T0, round_events=100))) == [
        "RoundRecorded"
    ]
    rejects(m, lambda: m.record_round(1, scored(0, 40), T0, round_events=100), "round-not-open")
    assert not m.round_open and kinds(when(m, lambda: m.begin_round(T0))) == ["RoundBegun"]


@pytest.mark.parametrize(
    ("dealer", "total", "team_up", "levels", "next_dealer_seat"),
    [
        (0, 0, 0, (3, 0), 2),  # 大光: defenders +3, the partner deals (R30, R31)
        (1, 35, 1, (0, 2), 3),  # 小光: +2
        (2, 75, 0, (1, 0), 0),  # +1
        (3, 80, 0, (0, 0), 0),  # 换庄: attackers take the deal, no level (R31: next player)
        (0, 120, 1, (0, 1), 1),  # take over, +1
        (1, 195, 0, (2, 0), 2),  # +2
        (2, 400, 1, (0, 6), 3),  # the cap: +6 (level_cap 6)
    ],
)
def test_the_policy_carries_the_round_result_into_the_match(
    dealer: int, total: int, team_up: int, levels: tuple[int, int], next_dealer_seat: int
) -> None:
    m = given(in_round(seated()))
    result = scored(dealer, total)
    events = when(m, lambda: m.record_round(1, result, T0, round_events=100))
    assert kinds(events) == ["RoundRecorded"]
    recorded = events[0]
    assert isinstance(recorded, ev.RoundRecorded)
    assert (recorded.team_up, recorded.levels, recorded.next_dealer) == (
        team_up,
        levels,
        next_dealer_seat,
    )
    assert (recorded.attackers_total, recorded.outcome) == (total, result.outcome)
    assert (m.levels, m.dealer, m.results) == (levels, next_dealer_seat, [recorded])


def test_wrap_goes_past_ace_to_2_and_counts_the_laps() -> None:
    m = given(in_round(seated(start_level=ACE - 1)))
    (recorded,) = when(
        m, lambda: m.record_round(1, scored(0, 0), T0, round_events=100)
    )  # defenders +3
    assert (recorded.levels, recorded.laps) == ((1, ACE - 1), (1, 0))  # K → A → 2 → 3
    assert not m.finished


# -- the end of the match (R32) ---------------------------------------------------------------


def test_finish_at_ace_a_team_defending_at_ace_that_keeps_the_deal_wins() -> None:
    rules = RuleSet(match_end=FINISH_AT_A)
    m = given(in_round(seated(rules, start_level=ACE)))
    events = when(m, lambda: m.record_round(1, scored(1, 40, rules), T0, round_events=100))
    assert kinds(events) == ["RoundRecorded", "MatchFinished"]
    finished = events[1]
    assert (finished.reason, finished.winner) == ("finish_at_A", 1)
    assert m.finished and m.winner == 1
    rejects(m, lambda: m.begin_round(T0), "match-finished")


def test_finish_at_ace_attackers_reaching_ace_only_take_the_deal() -> None:
    rules = RuleSet(match_end=FINISH_AT_A)
    m = given(in_round(seated(rules, start_level=ACE)))
    events = when(m, lambda: m.record_round(1, scored(1, 200, rules), T0, round_events=100))
    assert kinds(events) == ["RoundRecorded"]
    assert m.levels == (ACE, ACE) and m.dealer == 2 and not m.finished


@pytest.mark.parametrize(("totals", "winner"), [((0, 0), 0), ((0, 200), None)])
def test_rounds_n_ends_after_the_nth_round(totals: tuple[int, int], winner: int | None) -> None:
    rules = RuleSet(match_end=MatchEnd.parse("rounds:2"))
    m = seated(rules)
    m.begin_round(T0)
    m.record_round(
        1, scored(0, totals[0], rules), T0, round_events=100
    )  # team 0 up 3; deals: seat 2
    m = given(m)
    m.begin_round(T0)
    assert m.dealer == 2
    events = when(m, lambda: m.record_round(2, scored(2, totals[1], rules), T0, round_events=100))
    assert kinds(events)[-1] == "MatchFinished"
    assert (events[-1].reason, events[-1].winner, m.finished) == ("rounds_played", winner, True)


def test_the_organiser_finishes_a_match_and_it_stays_finished() -> None:
    m = given(in_round(seated(start_level=0), 2))
    events = when(m, lambda: m.finish("organiser", T0))
    assert kinds(events) == ["MatchFinished"]
    assert (events[0].reason, events[0].winner) == ("organiser", 1)  # team 1 went up once
    rejects(m, lambda: m.finish("again", T0), "match-finished")
    rejects(m, lambda: m.begin_round(T0), "match-finished")
    rejects(m, lambda: m.take_seat(0, "late", "human", "h", T0), "match-finished")


def test_a_round_ending_after_the_match_was_finished_is_not_recorded() -> None:
    rules = RuleSet(match_end=MatchEnd.parse("rounds:1"))
    m = given(in_round(seated(rules)))
    m.finish("organiser", T0)
    rejects(
        m, lambda: m.record_round(1, scored(0, 0, rules), T0, round_events=100), "match-finished"
    )

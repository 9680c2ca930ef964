"""Ranked matchmaking, a pure function of the queue and the time
(domain/accounts/matchmaking.py): the window schedule, four who fit each other's windows,
oldest first, and partnerships (R2) whose rating sums differ least."""

from __future__ import annotations

from datetime import timedelta
from uuid import UUID, uuid4

import pytest

from domain.accounts.matchmaking import (
    SCHEDULE,
    Entrant,
    WindowSchedule,
    balance,
    fit,
    foursome,
    next_change,
    seating,
)
from tests.conftest import T0


def e(n: int, rating: int, at: int = 0, provisional: bool = False) -> Entrant:
    """Ticket n of account 100+n, queued ``at`` seconds after T0."""
    return Entrant(UUID(int=n), UUID(int=100 + n), rating, provisional, T0 + timedelta(seconds=at))


@pytest.mark.parametrize(
    ("waited_s", "provisional", "width", "widens_after_s"),
    [
        (0, False, 50, 10),
        (9, False, 50, 10),
        (10, False, 75, 20),
        (25, False, 100, 30),
        (60, False, 200, 70),
        (139, False, 375, 140),
        (140, False, 400, None),  # capped
        (3600, False, 400, None),
        (0, True, 150, 10),  # provisional: a wider start
        (10, True, 175, 20),
        (90, True, 375, 100),
        (100, True, 400, None),
    ],
)
def test_the_window_schedule(
    waited_s: int, provisional: bool, width: int, widens_after_s: int | None
) -> None:
    waited = timedelta(seconds=waited_s)
    assert SCHEDULE.width(waited, provisional) == width
    after = SCHEDULE.next_widening(waited, provisional)
    assert after == (None if widens_after_s is None else timedelta(seconds=widens_after_s))


def test_another_schedule_is_its_own() -> None:
    slow = WindowSchedule(start=10, provisional_start=20, step=5, every_s=60, cap=30)
    assert [slow.width(timedelta(seconds=s), False) for s in (0, 59, 60, 240, 600)] == [
        10,
        10,
        15,
        30,
        30,
    ]


@pytest.mark.parametrize(
    ("a", "b", "now_s", "fits"),
    [
        (e(1, 1500), e(2, 1550), 0, True),  # exactly the window
        (e(1, 1500), e(2, 1551), 0, False),
        (e(1, 1500), e(2, 1551), 10, True),  # both widened to 75
        (e(1, 1500, provisional=True), e(2, 1600), 0, False),  # the narrower window holds
        (e(1, 1500, provisional=True), e(2, 1600, provisional=True), 0, True),
        (e(1, 1500, at=0), e(2, 1590, at=30), 30, False),  # 2 has just come: ±50
        (e(1, 1500, at=0), e(2, 1590, at=30), 60, True),  # 2 waited 30 s: ±125 … ±200
    ],
)
def test_two_fit_when_each_is_in_the_others_window(
    a: Entrant, b: Entrant, now_s: int, fits: bool
) -> None:
    now = T0 + timedelta(seconds=now_s)
    assert fit(a, b, now) is fits and fit(b, a, now) is fits


@pytest.mark.parametrize(
    ("waiting", "now_s", "four"),
    [
        ([e(1, 1500), e(2, 1510), e(3, 1520)], 0, None),
        ([e(1, 1500), e(2, 1510), e(3, 1520), e(4, 1530)], 0, [1, 2, 3, 4]),
        ([e(1, 1500), e(2, 1540), e(3, 1520), e(4, 1560)], 0, None),  # 1 and 4: 60 apart
        ([e(1, 1500), e(2, 1540), e(3, 1520), e(4, 1560)], 10, [1, 2, 3, 4]),  # ±75 now
        # the oldest who can be in a four is seated first, with the oldest who fit
        ([e(1, 1000), e(2, 1500), e(3, 1510), e(4, 1520), e(5, 1530)], 0, [2, 3, 4, 5]),
        ([e(1, 1500), e(2, 1510), e(3, 1520), e(4, 1530), e(5, 1505)], 0, [1, 2, 3, 4]),
        # three fit the oldest but not each other: the next three that do
        ([e(1, 1500), e(2, 1450), e(3, 1550), e(4, 1460), e(5, 1470)], 0, [1, 2, 4, 5]),
        # the mutual rule: 2 and 3 each fit 1, not each other
        ([e(1, 1500), e(2, 1450), e(3, 1550), e(4, 1500)], 0, None),
        ([], 0, None),
    ],
)
def test_four_who_fit_each_other(
    waiting: list[Entrant], now_s: int, four: list[int] | None
) -> None:
    found = foursome(waiting, T0 + timedelta(seconds=now_s))
    assert (None if found is None else [x.ticket_id.int for x in found]) == four


def test_matching_is_deterministic_given_the_queue_and_the_time() -> None:
    waiting = [e(n, 1400 + (n * 37) % 200, at=n) for n in range(1, 13)]
    for now_s in (0, 15, 45, 120):
        now = T0 + timedelta(seconds=now_s)
        assert foursome(list(waiting), now) == foursome(list(waiting), now)


@pytest.mark.parametrize(
    ("ratings", "teams"),
    [
        ([1500, 1500, 1500, 1500], ((0, 2), (1, 3))),  # a tie: the first partnership
        ([1400, 1500, 1600, 1700], ((0, 3), (1, 2))),  # 3100 against 3100
        ([1700, 1400, 1600, 1500], ((0, 1), (2, 3))),  # 3100 against 3100
        ([1500, 1510, 1520, 1600], ((0, 3), (1, 2))),  # 3100 against 3030
        ([1500, 1600, 1510, 1520], ((0, 1), (2, 3))),  # 3100 against 3030
        ([1000, 1010, 1990, 2000], ((0, 3), (1, 2))),  # 3000 against 3000
    ],
)
def test_teams_balance_the_sums_of_ratings(
    ratings: list[int], teams: tuple[tuple[int, int], tuple[int, int]]
) -> None:
    assert balance(ratings) == teams


@pytest.mark.parametrize(
    ("ratings", "seats"),
    [
        ([1500, 1510, 1520, 1530], [1, 2, 4, 3]),  # 0 3 | 1 2: 3030 against 3030
        ([1400, 1500, 1600, 1700], [1, 2, 4, 3]),  # R2: partners opposite, the oldest at 0
        ([1700, 1400, 1600, 1500], [1, 3, 2, 4]),
    ],
)
def test_partners_sit_opposite_the_oldest_at_seat_0(ratings: list[int], seats: list[int]) -> None:
    four = [e(n + 1, r) for n, r in enumerate(ratings)]
    assert [x.ticket_id.int for x in seating(four)] == seats


def test_the_next_change_is_the_first_window_to_widen() -> None:
    waiting = [e(1, 1500, at=0), e(2, 1600, at=4), e(3, 1700, at=7), e(4, 1800, at=8)]
    assert next_change(waiting, T0) == T0 + timedelta(seconds=10)
    assert next_change(waiting, T0 + timedelta(seconds=10)) == T0 + timedelta(seconds=14)
    assert next_change(waiting[:3], T0) is None  # fewer than four: nothing to try
    assert next_change(waiting, T0 + timedelta(hours=1)) is None  # every window capped


def test_the_grouping_never_seats_a_blocked_pair_together() -> None:
    now = T0
    five = [Entrant(uuid4(), uuid4(), 1500, False, now) for _ in range(5)]
    blocked = {frozenset((five[0].account_id, five[1].account_id))}

    def apart(a: object, b: object) -> bool:
        return frozenset((a, b)) in blocked

    four = foursome(five, now, apart=apart)
    assert four is not None
    seated = {e.account_id for e in four}
    assert not {five[0].account_id, five[1].account_id} <= seated
    assert foursome(five[:4], now, apart=apart) is None
    assert foursome(five[:4], now) is not None

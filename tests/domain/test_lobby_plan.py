"""The lobby's matchmaking, a pure function (domain/accounts/lobby.py): first come first
seated, partners naming each other sit opposite (R2), a partner not yet waiting holds its
ticket back, and bots fill the free seats only once a party's wait has passed."""

from __future__ import annotations

from datetime import timedelta
from uuid import UUID

import pytest

from domain.accounts.lobby import Waiting, plan
from tests.conftest import T0


def ids(n: int) -> UUID:
    return UUID(int=n)


def w(n: int, partner: int | None = None, bots_s: int | None = None, at: int = 0) -> Waiting:
    """Ticket n of account 100+n, queued ``at`` seconds after T0."""
    return Waiting(
        ids(n),
        ids(100 + n),
        None if partner is None else ids(100 + partner),
        T0 + timedelta(seconds=at),
        None if bots_s is None else bots_s * 1000,
        "random",
    )


def seats(waiting: list[Waiting], now_s: int = 0) -> list[int | str] | None:
    """Per seat: the ticket number seated, or the bot kind."""
    found = plan(waiting, T0 + timedelta(seconds=now_s))
    if found is None:
        return None
    return [t.int if t is not None else kind for _, t, _, kind in found]


@pytest.mark.parametrize(
    ("waiting", "now_s", "expected"),
    [
        ([w(1), w(2), w(3)], 0, None),
        ([w(1), w(2), w(3), w(4)], 0, [1, 2, 3, 4]),
        ([w(1), w(2), w(3), w(4), w(5)], 0, [1, 2, 3, 4]),
        ([w(1, partner=2), w(3), w(2, partner=1), w(4)], 0, [1, 3, 2, 4]),
        ([w(1, partner=2), w(2, partner=1), w(3, partner=4), w(4, partner=3)], 0, [1, 3, 2, 4]),
        ([w(1, partner=9), w(2), w(3), w(4)], 0, None),  # 1's partner is not here
        ([w(1, partner=9), w(2), w(3), w(4), w(5)], 0, [2, 3, 4, 5]),
        ([w(1, partner=2), w(2, partner=1), w(3, partner=4), w(5), w(6)], 0, [1, 5, 2, 6]),
        ([w(1, bots_s=30), w(2)], 29, None),
        ([w(1, bots_s=30), w(2)], 30, [1, 2, "random", "random"]),
        ([w(1, partner=2, bots_s=5), w(2, partner=1)], 5, [1, "random", 2, "random"]),
        ([w(1), w(2, bots_s=5, at=1)], 6, [2, 1, "random", "random"]),  # the due party first
        ([], 100, None),
    ],
)
def test_plan(waiting: list[Waiting], now_s: int, expected: list[int | str] | None) -> None:
    assert seats(waiting, now_s) == expected


def test_a_blocked_pair_never_sits_together() -> None:
    blocks = {frozenset((ids(101), ids(102)))}

    def apart(a: UUID, b: UUID) -> bool:
        return frozenset((a, b)) in blocks

    waiting = [w(1), w(2), w(3), w(4)]
    assert plan(waiting, T0, apart=apart) is None
    found = plan([*waiting, w(5)], T0, apart=apart)
    assert found is not None
    assert [t.int for _, t, _, _ in found if t is not None] == [1, 3, 4, 5]
    due = plan([w(1, bots_s=1), w(2)], T0 + timedelta(seconds=1), apart=apart)
    assert due is not None
    assert [t.int if t is not None else kind for _, t, _, kind in due] == [
        1,
        "random",
        "random",
        "random",
    ]

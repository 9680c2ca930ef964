"""The allowances a command spends (docs/decisions.md D-bounded): a sliding hour counted
exactly, all or nothing across a payer's keys; a command's new matches charged by the bus
before its save and given back when the save fails; the service itself charged nothing."""

from __future__ import annotations

from uuid import uuid4

import pytest

from domain.rules.ruleset import STANDARD
from services.bus import SERVICE
from services.errors import QuotaExceededError, VersionConflictError
from services.game import GameService
from services.handlers import build_bus
from services.limits import Allowance, HourlyCount, Payer
from services.match_commands import CreateMatch
from tests.conftest import FakeClock


class Clock:
    """A monotonic clock moved by hand."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize(
    ("made", "keys", "count", "counted"),
    [
        # what each key made before; a take is all or nothing (docs/decisions.md D-fair)
        ({"a": 0, "b": 0}, ("a", "b"), 3, True),
        ({"a": 0, "b": 3}, ("a", "b"), 3, False),
        ({"a": 3, "b": 0}, ("a", "b"), 3, False),
        ({"a": 0}, ("a", "a"), 5, True),  # a key named twice is one key
        ({"a": 0}, ("a",), 6, False),
    ],
)
def test_a_take_is_all_or_nothing_across_the_keys(
    made: dict[str, int], keys: tuple[str, ...], count: int, counted: bool
) -> None:
    hourly = HourlyCount(5, clock=Clock())
    for key, n in made.items():
        assert hourly.take((key,), n) is None
    assert (hourly.take(keys, count) is None) is counted
    for key, n in made.items():
        left = 5 - n - (count if counted and key in keys else 0)
        assert hourly.take((key,), left) is None
        assert hourly.take((key,), 1) is not None  # nothing left now


def test_never_more_than_the_limit_in_any_hour() -> None:
    """A bucket refilled as it goes lets 60 through at once and 60 more within the hour;
    the count lets 60 in any hour, and says when the oldest leave it."""
    clock = Clock()
    hourly = HourlyCount(60, clock=clock)
    assert hourly.take(("a",), 30) is None
    clock.now = 600.0
    assert hourly.take(("a",), 30) is None
    clock.now = 1000.0
    assert hourly.take(("a",), 2) == 2600.0  # the first 30 leave the hour at 3600
    clock.now = 3599.0
    assert hourly.take(("a",), 1) is not None
    clock.now = 3600.0
    assert hourly.take(("a",), 30) is None
    assert hourly.take(("a",), 1) is not None
    assert hourly.take(("a",), 61) == 3600.0  # more than the limit: never within the hour


def test_what_is_given_back_can_be_made_again() -> None:
    hourly = HourlyCount(4, clock=Clock())
    assert hourly.take(("a", "b"), 4) is None
    hourly.give_back(("a", "b"), 3)
    assert hourly.take(("a", "b"), 3) is None
    assert hourly.take(("a",), 1) is not None


def test_an_allowance_says_when_to_retry_and_when_a_command_never_fits() -> None:
    clock = Clock()
    allowance = Allowance("matches created", "MATCH_QUOTA_PER_HOUR", 60, clock=clock)
    payer = Payer(("addr:1",))
    assert allowance.spend(payer, 59) == 59
    clock.now = 100.0
    with pytest.raises(QuotaExceededError) as soon:
        allowance.spend(payer, 2)
    assert soon.value.retry_after == 3500
    with pytest.raises(QuotaExceededError) as never:
        allowance.spend(Payer(("addr:2",)), 61)
    detail = never.value.detail
    assert "61 more matches created are more than MATCH_QUOTA_PER_HOUR allows" in detail
    assert allowance.spend(None, 1000) == 0  # the service itself pays nothing


def test_the_bus_charges_what_a_command_makes_and_gives_back_what_it_could_not_save() -> None:
    service = GameService({"PERSISTENCE_MODULE": "eventsourcing.popo"}, clock=FakeClock())
    bus = build_bus(service, matches=Allowance("matches created", "MATCH_QUOTA_PER_HOUR", 2))
    payer = Payer(("addr:1",))
    taken = uuid4()
    assert bus.handle(CreateMatch(STANDARD, match_id=taken), None, payer=payer).status == 201
    with pytest.raises(VersionConflictError):  # its id is taken: nothing saved, nothing spent
        bus.handle(CreateMatch(STANDARD, match_id=taken), None, payer=payer)
    assert bus.handle(CreateMatch(STANDARD), None, payer=payer).status == 201
    with pytest.raises(QuotaExceededError):
        bus.handle(CreateMatch(STANDARD), None, payer=payer)
    assert bus.handle(CreateMatch(STANDARD), SERVICE).status == 201  # no payer: free

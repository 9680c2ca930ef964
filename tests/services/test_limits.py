"""The allowances a command spends (docs/decisions.md D-bounded): token buckets taken all
or nothing across a payer's keys, a command's new matches charged by the bus before its
save and given back when the save fails, the service itself charged nothing."""

from __future__ import annotations

from uuid import uuid4

import pytest

from domain.rules.ruleset import STANDARD
from services.bus import SERVICE
from services.errors import QuotaExceededError, VersionConflictError
from services.game import GameService
from services.handlers import build_bus
from services.limits import Allowance, Payer, RateLimiter
from services.match_commands import CreateMatch
from tests.conftest import FakeClock

HOURLY = 3600.0


def frozen() -> float:
    """A monotonic clock that never moves: nothing refills."""
    return 0.0


@pytest.mark.parametrize(
    ("held", "keys", "count", "taken"),
    [
        # each key holds what it had before; a take is all or nothing (docs/decisions.md D-fair)
        ({"a": 5, "b": 5}, ("a", "b"), 3, True),
        ({"a": 5, "b": 2}, ("a", "b"), 3, False),
        ({"a": 2, "b": 5}, ("a", "b"), 3, False),
        ({"a": 5}, ("a", "a"), 5, True),  # a key named twice is one key
        ({"a": 5}, ("a",), 6, False),
    ],
)
def test_a_take_is_all_or_nothing_across_the_keys(
    held: dict[str, int], keys: tuple[str, ...], count: int, taken: bool
) -> None:
    limiter = RateLimiter(5, period_s=HOURLY, clock=frozen)
    for key, tokens in held.items():
        assert limiter.take((key,), 5 - tokens) is None
    assert (limiter.take(keys, count) is None) is taken
    for key, tokens in held.items():
        left = tokens - count if taken and key in keys else tokens
        assert limiter.take((key,), left) is None
        assert limiter.take((key,), 1) is not None  # empty now


def test_what_is_given_back_can_be_taken_again_up_to_the_capacity() -> None:
    limiter = RateLimiter(4, period_s=HOURLY, clock=frozen)
    assert limiter.take(("a",), 4) is None
    limiter.give_back(("a",), 10)
    assert limiter.take(("a",), 4) is None
    assert limiter.take(("a",), 1) is not None


def test_an_allowance_says_when_to_retry_and_when_a_command_never_fits() -> None:
    allowance = Allowance("matches created", "MATCH_QUOTA_PER_HOUR", 60, clock=frozen)
    payer = Payer(("addr:1",))
    assert allowance.spend(payer, 59) == 59
    with pytest.raises(QuotaExceededError) as soon:
        allowance.spend(payer, 2)
    assert soon.value.retry_after == 60  # one match a minute comes back
    with pytest.raises(QuotaExceededError) as never:
        allowance.spend(Payer(("addr:2",)), 61)
    assert "61 more matches created are more than MATCH_QUOTA_PER_HOUR allows" in never.value.detail
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

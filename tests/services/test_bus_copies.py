"""What a command copies and keeps (docs/decisions.md D-bus2): a round command reads its match
from the trusted cache without a copy and copies it only to change it (a scored round,
R29–R32); the cache's own object is never changed in place; a key's record is saved as its
event and not kept in the aggregate cache."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from uuid import uuid4

import pytest

from domain.game.actions import action_of
from domain.game.base import GameAggregate
from domain.game.match import Match
from domain.rules.ruleset import STANDARD
from services.access import Credential
from services.game import GameService
from services.handlers import build_bus
from services.idempotency import RequestKey
from services.match_commands import SeatBot
from services.round_commands import ANY_VERSION, Act
from services.unit_of_work import UnitOfWork
from tests.commands import create_match, run_bots, take_seat
from tests.conftest import FakeClock, FixedSeeds

TRUSTED = {"PERSISTENCE_MODULE": "eventsourcing.popo", "AGGREGATE_CACHE_FASTFORWARD": "n"}
"""A store whose cache is never changed in place (no fast-forward): the owner's, the
embedded store's."""


def _service() -> GameService:
    return GameService(TRUSTED, clock=FakeClock(), seeds=FixedSeeds())


@pytest.fixture
def match_copies(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Match]]:
    """Every match copied (``copy.deepcopy`` of a :class:`Match`)."""
    seen: list[Match] = []
    copy_of = GameAggregate.__deepcopy__

    def counted(self: GameAggregate, memo: dict[int, Any]) -> Any:
        if isinstance(self, Match):
            seen.append(self)
        return copy_of(self, memo)

    monkeypatch.setattr(GameAggregate, "__deepcopy__", counted)
    yield seen


def test_a_round_command_that_leaves_its_match_as_it_was_copies_no_match(
    match_copies: list[Match],
) -> None:
    service = _service()
    bus = build_bus(service)
    match_id = create_match(service, STANDARD, name="copies")
    seats = [Credential.parse(take_seat(service, match_id, n, f"p{n}")[0]) for n in range(4)]
    cached = service.cached(match_id)
    match_copies.clear()
    key = RequestKey.of(seats[0].digest, "pass", "fingerprint")
    done = bus.handle(Act(match_id, action_of("pass"), ANY_VERSION), seats[0], key=key)
    assert done.status == 200
    assert match_copies == []  # authorised, decided and answered on the cache's own
    assert service.cached(match_id) is cached


def test_a_scored_round_changes_a_copy_of_the_match_never_the_cached_one() -> None:
    """Four bots play round 1 to its end: the match records it (R29–R32) on a copy; every
    match object the cache held keeps the version it had (none is changed in place)."""
    service = _service()
    bus = build_bus(service)
    match_id = create_match(service, STANDARD, name="scored")
    for seat in range(4):
        bus.execute(SeatBot(match_id, seat, "random", f"bot{seat}"))
    held: list[tuple[Match, int]] = []
    for _ in range(400):
        cached = service.cached(match_id)
        assert isinstance(cached, Match)
        if not held or held[-1][0] is not cached:
            held.append((cached, cached.version))
        if cached.round_number > 1:
            break
        run_bots(service, match_id, max_steps=1)
    assert service.get_match(match_id).results  # round 1 was recorded
    assert len(held) > 1
    for match, version in held:
        assert match.version == version and not match.pending_events


def test_an_aggregate_held_to_read_that_is_changed_fails_the_save_and_leaves_the_cache() -> None:
    service = _service()
    match_id = create_match(service, STANDARD, name="spoiled")
    uow = UnitOfWork(service)
    match = service.get_match(match_id, read_only=True)
    assert match is service.cached(match_id)
    uow.read(match)
    match.finish("organiser", uow.now)  # changed in place: a bug
    with pytest.raises(AssertionError, match="held to read only was changed"):
        uow.commit()
    assert service.cached(match_id) is None  # the next load reads the store
    assert not service.get_match(match_id).finished


def test_a_match_held_to_read_is_copied_to_change() -> None:
    service = _service()
    match_id = create_match(service, STANDARD, name="changing")
    uow = UnitOfWork(service)
    match = service.get_match(match_id, read_only=True)
    uow.read(match)
    changed = uow.changing(match)
    assert changed is not match and uow.held(match_id) is changed
    assert uow.changing(changed) is changed  # a copy already: itself


def test_a_keys_record_is_saved_but_not_kept_in_the_aggregate_cache() -> None:
    service = _service()
    bus = build_bus(service)
    match_id = create_match(service, STANDARD, name="record")
    seats = [Credential.parse(take_seat(service, match_id, n, f"p{n}")[0]) for n in range(4)]
    key = RequestKey.of(seats[0].digest, uuid4().hex, "fingerprint")
    first = bus.handle(Act(match_id, action_of("pass"), ANY_VERSION), seats[0], key=key)
    cache = service.repository.cache
    assert cache is not None
    with pytest.raises(KeyError):
        cache.get(key.rid)  # saved, not cached
    again = bus.handle(Act(match_id, action_of("pass"), ANY_VERSION), seats[0], key=key)
    assert again.replayed and again.body == first.body  # read from the store

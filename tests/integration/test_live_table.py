"""The live table (services/live.py, D-contract): a match followed event by event gives a
step per version, in order (R34), whether the events come from the store or are handed
over by the hub — whole, in pieces split anywhere (a batch boundary inside a save), or
with a row missing (then the store fills the gap) — and the tables after every step are
the state as of that version."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any
from uuid import UUID

import msgspec
import pytest

from domain.game.round_events import BottomBuried
from domain.rules.ruleset import RuleSet
from services.game import GameService
from services.history import match_history, state_at
from services.live import LiveTable, load_live
from services.views import table_view
from tests.api.sse_driver import new_service, step
from tests.commands import create_match, take_seat


@pytest.fixture
def played() -> Iterator[tuple[GameService, UUID]]:
    service = new_service()
    match_id = create_match(service, RuleSet())
    for seat in range(4):
        take_seat(service, match_id, seat, f"p{seat}")
    yield service, match_id
    service.close()


def views(table: LiveTable) -> bytes:
    return msgspec.json.encode(
        [table_view(table.match, table.round, v, table.last.event.timestamp) for v in (None, 0, 1)]
    )


def follow(table: LiveTable, known: list[Any] | None) -> list[tuple[int, str, bytes]]:
    return [(s.version, type(s.event).__name__, views(table)) for s in table.advance(known)]


class CountingReads:
    def __init__(self, service: GameService) -> None:
        self.reads = 0
        self._select = service.recorder.select_events
        service.recorder.select_events = self  # type: ignore[method-assign]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.reads += 1
        return self._select(*args, **kwargs)


@pytest.mark.parametrize("seed", range(6))
def test_handed_over_events_make_the_same_steps_as_the_store(
    played: tuple[GameService, UUID], seed: int
) -> None:
    service, match_id = played
    rng = random.Random(seed)
    from_store, whole, pieces = (load_live(service, match_id) for _ in range(3))
    start = from_store.version
    for _ in range(rng.randint(60, 140)):  # past a scored round for most seeds
        step(service, match_id)
    new = _commit_order(service, match_id)
    expected = follow(from_store, None)
    assert [v for v, _, _ in expected] == list(range(start + 1, from_store.version + 1))
    # everything handed over at once: the same steps, and the store is not read
    reads = CountingReads(service)
    assert follow(whole, new) == expected
    assert reads.reads == 0
    # handed over in pieces cut anywhere, a row now and then left out (the store fills in)
    got: list[tuple[int, str, bytes]] = []
    position = 0
    while position < len(new):
        size = rng.randint(1, 12)
        piece = new[position : position + size]
        position += size
        if rng.random() < 0.1 and len(piece) > 1:
            piece = piece[:-1] if rng.random() < 0.5 else piece[1:]
        got.extend(follow(pieces, piece))
    got.extend(follow(pieces, []))  # nothing more handed over: nothing more applied
    if pieces.version < from_store.version:
        got.extend(follow(pieces, None))  # a wake-up without events reads the store
    assert got == expected
    # every step's tables are the state as of its version (R34)
    for version, _, _ in expected[:: max(1, len(expected) // 10)]:
        state = state_at(service, match_id, version, 0)
        again = LiveTable.at(service, match_id, version)
        assert table_view(again.match, again.round, 0, again.last.event.timestamp) == state.view


def _commit_order(service: GameService, match_id: UUID) -> list[Any]:
    """The match's events in the order the store committed them (notification ids)."""
    out: list[Any] = []
    match = service.get_match(match_id)
    rounds = {r.round_id for r in match.results}
    rid = match.current_round_id()
    if rid is not None:
        rounds.add(rid)
    for item in service.recorder.select_notifications(start=1, limit=1_000_000):
        if item.originator_id == match_id or item.originator_id in rounds:
            out.append(service.mapper.to_domain_event(item))
    return out


def test_a_token_reissued_mid_round_takes_no_version(played: tuple[GameService, UUID]) -> None:
    """R34: a seat's token re-issued in the middle of a round is no move of the game — no
    version, no history item; the versions stay gap-free and the same live, in the history
    and as of any version; a live table notes the seat (its streams end)."""
    service, match_id = played
    table = load_live(service, match_id)
    start = table.version
    for _ in range(10):
        step(service, match_id)
    match = service.get_match(match_id)
    assert match.round_open
    before = current(service, match_id)
    match.reissue_token(1, "0" * 64, service.clock())
    service.save(match)
    assert current(service, match_id) == before  # no version
    for _ in range(10):
        step(service, match_id)
    steps = [(s.version, type(s.event).__name__) for s in table.advance()]
    assert [v for v, _ in steps] == list(range(start + 1, current(service, match_id) + 1))
    assert "SeatTokenReissued" not in {kind for _, kind in steps}
    assert table.reissued == {1}
    history = match_history(service, match_id, None, after=0, limit=1000).items
    assert [i.version for i in history] == list(range(1, current(service, match_id) + 1))
    assert [(i.version, i.type) for i in history if i.version > start] == steps
    for version in range(before - 2, before + 3):
        again = LiveTable.at(service, match_id, version)
        assert again.version == version and again.last.version == version
        assert (version, type(again.last.event).__name__) in steps


def current(service: GameService, match_id: UUID) -> int:
    match = service.get_match(match_id)
    return match.sequence(0 if (r := service.current_round(match)) is None else r.version)


@pytest.mark.parametrize("order", [(0, 1, 2, 3, None), (None, 3, 2, 1, 0), (2, 0, None, 0, 2)])
def test_a_steps_item_is_shared_only_by_viewers_who_see_the_same(
    played: tuple[GameService, UUID], order: tuple[int | None, ...]
) -> None:
    """Each viewer's frame of a step is the frame built for it alone, in whatever order
    the viewers come: the burier sees its buried bottom (R21), no one else does (R33)."""
    service, match_id = played
    table = load_live(service, match_id)
    buried = 0
    for _ in range(140):
        step(service, match_id)
        for s in table.advance():
            shared = {v: msgspec.json.encode(table.frame(s, v)) for v in order}
            for v in order:
                fresh = LiveTable.frame(_fresh(table), s, v)
                assert shared[v] == msgspec.json.encode(fresh)
            if isinstance(s.event, BottomBuried):
                buried += 1
                seat = s.event.seat
                for v in order:
                    event = msgspec.json.decode(shared[v])["event"]
                    assert ("cards" in event["data"]) == (v == seat), (v, seat)
    assert buried >= 1


def _fresh(table: LiveTable) -> LiveTable:
    """``table`` with no item kept from an earlier frame (the frame built as if alone)."""
    twin = object.__new__(LiveTable)
    twin.__dict__.update(vars(table))
    twin._item = None
    return twin

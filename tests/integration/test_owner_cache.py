"""A match's owner serves loads from its cache (docs/decisions.md D-owner): two game services
on one PostgreSQL schema, each trusting its cache (``AGGREGATE_CACHE_FASTFORWARD=n``),
write the same match. A save lost on ``(originator_id, version)`` to the other's save is
decided again once on fresh copies inside the one bus call — the key's record saved with
the run that won, a replay of the key answering that answer — and a save heard from the
other process (the live hub's rows) brings the cached aggregate up to it. A copy older
than a save heard of is never put in the cache (a load's or a save's put overtaken by the
hub), and while the hub is away loads read the store.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from typing import Any
from uuid import UUID

import asyncpg  # type: ignore[import-untyped]
import psycopg
import pytest

from domain.game.actions import action_of
from domain.game.round import RoundPhase
from domain.rules.ruleset import RuleSet
from infra.hub import PostgresHub
from infra.settings import Settings
from infra.store import build_service
from services.bots import bot_seats
from services.errors import VersionConflictError
from services.game import GameService
from services.idempotency import RequestKey
from services.kept_cache import KeptCache
from services.match_commands import SeatBot
from services.round_commands import Act, Precondition
from services.settling import Settling
from tests.commands import bus_of, create_match, version_of
from tests.conftest import FakeClock, FixedSeeds
from tests.integration.store_bots import (
    Bots,
    Move,
    new_match,
    play_until,
    raw_log,
    round_state,
)
from tests.resilience.harness import schema_settings

pytestmark = pytest.mark.postgres


@pytest.fixture
def trusted(pg_url: str) -> Iterator[Settings]:
    with schema_settings(pg_url, aggregate_cache_fastforward=False) as settings:
        yield settings


@pytest.fixture
def two(trusted: Settings) -> Iterator[tuple[GameService, GameService]]:
    a = build_service(trusted, clock=FakeClock(), seeds=FixedSeeds())
    b = build_service(trusted, clock=FakeClock(), seeds=FixedSeeds())
    for service in (a, b):  # the tests play each one's live hub (``heard``) themselves
        service.hub_caught_up()
    try:
        yield a, b
    finally:
        a.close()
        b.close()


def _act(move: Move, match_id: UUID, expected: int | None = None) -> Act:
    return Act(match_id, action_of(move.action, move.cards), Precondition(expected), seat=move.seat)


def stored_version(service: GameService, match_id: UUID) -> int:
    """The match version the store holds (``service``'s cached copies dropped first: no
    hub keeps them in these tests)."""
    match = service.get_match(match_id)
    current = match.current_round_id()
    service.refresh(match_id, *(() if current is None else (current,)))
    return version_of(service, match_id)


def _playing(service: GameService, match_id: UUID) -> None:
    play_until(service, match_id, Bots(5), lambda m, r: r.phase is RoundPhase.PLAYING)


def test_a_process_with_no_hub_asks_the_store_on_every_load(trusted: Settings) -> None:
    """Nothing tells a process without a live hub (an offline command, a tool) of other
    processes' saves: its loads read the store, never a copy it kept."""
    a = build_service(trusted, clock=FakeClock(), seeds=FixedSeeds())
    b = build_service(trusted, clock=FakeClock(), seeds=FixedSeeds())
    try:
        match_id = create_match(a, RuleSet())
        before = a.get_match(match_id).version
        bus_of(b).execute(SeatBot(match_id, 1, "random"))
        assert a.get_match(match_id).version == before + 1
        assert list(bot_seats(a.get_match(match_id))) == [1]  # seated by b
    finally:
        a.close()
        b.close()


def test_a_save_lost_to_a_stale_copy_is_decided_again_once_in_the_same_call(
    two: tuple[GameService, GameService],
) -> None:
    a, b = two
    assert a.trusts_cache and b.trusts_cache
    match_id = new_match(a, RuleSet())
    _playing(a, match_id)  # a's cache holds the match and its round
    bots = Bots(11)
    # b moves on: a's cached round is now a version behind the store
    round_b = b.current_round(b.get_match(match_id))
    assert round_b is not None
    bus_of(b).execute(_act(bots.move(round_b, b), match_id))
    assert a.current_round(a.get_match(match_id)).version == round_b.version  # type: ignore[union-attr]
    # a's next move, decided on its stale copy, loses its save, then wins on fresh copies
    fresh = b.current_round(b.get_match(match_id))
    assert fresh is not None
    key = RequestKey.of("test-scope", "k-1", "fingerprint-1")
    first = bus_of(a).handle(_act(bots.move(fresh, b), match_id), key=key)
    assert a.stale_retries == 1
    assert first.status == 200 and not first.replayed
    # the key was recorded with the run that won: a replay on either service answers it
    for service in (a, b):
        again = bus_of(service).handle(_act(bots.move(fresh, b), match_id), key=key)
        assert again.replayed and again.body == first.body and again.outcome == first.outcome
    assert first.outcome is not None and first.outcome.version == stored_version(b, match_id)
    # the round's log is contiguous: nothing lost, nothing doubled
    versions = [n.originator_version for n in raw_log(a) if n.originator_id == fresh.id]
    assert versions == list(range(1, len(versions) + 1))


def test_if_match_beyond_a_stale_copy_is_checked_on_fresh_copies(
    two: tuple[GameService, GameService],
) -> None:
    a, b = two
    match_id = new_match(a, RuleSet())
    _playing(a, match_id)
    bots = Bots(12)
    round_b = b.current_round(b.get_match(match_id))
    assert round_b is not None
    bus_of(b).execute(_act(bots.move(round_b, b), match_id))
    seen = version_of(b, match_id)  # what a client of b saw, sent to a as If-Match
    fresh = b.current_round(b.get_match(match_id))
    assert fresh is not None
    answered = bus_of(a).handle(_act(bots.move(fresh, b), match_id, expected=seen))
    assert answered.status == 200
    assert a.stale_retries == 1
    assert version_of(a, match_id) == stored_version(b, match_id) == seen + 1


def test_a_lost_race_with_if_match_stays_the_callers_conflict(
    two: tuple[GameService, GameService],
) -> None:
    a, b = two
    match_id = new_match(a, RuleSet())
    _playing(a, match_id)
    bots = Bots(13)
    seen = version_of(a, match_id)
    round_a = a.current_round(a.get_match(match_id))
    assert round_a is not None
    move = bots.move(round_a, a)
    bus_of(b).execute(_act(move, match_id, expected=seen))  # b wins the race
    with pytest.raises(VersionConflictError):  # a decided on the same version: 409
        bus_of(a).handle(_act(move, match_id, expected=seen))
    assert a.stale_retries == 1


def test_rows_heard_from_another_process_bring_the_cache_up_to_them(
    two: tuple[GameService, GameService],
) -> None:
    a, b = two
    match_id = new_match(a, RuleSet())
    _playing(a, match_id)
    start = max(n.id for n in raw_log(a))
    round_b = b.current_round(b.get_match(match_id))
    assert round_b is not None
    bus_of(b).execute(_act(Bots(14).move(round_b, b), match_id))
    a.heard(raw_log(b, start + 1))  # what a's live hub reads after b's save
    assert a.heard_elsewhere >= 1
    after = b.current_round(b.get_match(match_id))
    cached = a.current_round(a.get_match(match_id))
    assert cached is not None and after is not None
    assert cached.version == after.version
    assert round_state(cached) == round_state(after)


def test_what_authorising_loaded_is_loaded_again_for_the_second_run(
    two: tuple[GameService, GameService],
) -> None:
    """Seating a bot authorises on the match it then changes: the second run, on fresh
    copies, authorises again (the first run's change is not left on it)."""
    a, b = two
    match_id = create_match(a, RuleSet())
    a.get_match(match_id)  # a's cache holds the match with no seat taken
    bus_of(b).execute(SeatBot(match_id, 1, "random"))
    seated = bus_of(a).handle(SeatBot(match_id, 2, "random"))
    assert seated.status == 201
    assert a.stale_retries == 1
    b.refresh(match_id)
    assert sorted(bot_seats(b.get_match(match_id))) == [1, 2]


def _round_version(service: GameService, match_id: UUID) -> int:
    round_ = service.current_round(service.get_match(match_id))
    assert round_ is not None
    return round_.version


def _moves_from_the_store(service: GameService, match_id: UUID, bots: Bots) -> int:
    """``service`` moves on the match as the store holds it (its cached copies dropped
    first): the round's version after the move."""
    match = service.get_match(match_id)
    service.refresh(match_id, *((match.current_round_id(),) if match.current_round_id() else ()))
    round_ = service.current_round(service.get_match(match_id))
    assert round_ is not None
    bus_of(service).execute(_act(bots.move(round_, service), match_id))
    return _round_version(service, match_id)


def test_a_load_that_read_the_store_before_a_save_heard_keeps_no_stale_copy(
    two: tuple[GameService, GameService], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A load that missed the cache reads the store; another process's save is heard
    (its row read by the live hub) before the load puts what it read in the cache."""
    a, b = two
    match_id = new_match(a, RuleSet())
    _playing(a, match_id)
    round_id = a.get_match(match_id).current_round_id()
    assert round_id is not None
    a.refresh(round_id)  # a's next load of the round reads the store
    start = max(n.id for n in raw_log(a))
    moved: list[int] = []
    select = a.recorder.select_events

    def select_then_heard(*args: Any, **kwargs: Any) -> Any:
        found = select(*args, **kwargs)
        if not moved and kwargs.get("originator_id", args[0] if args else None) == round_id:
            moved.append(_moves_from_the_store(b, match_id, Bots(16)))
            a.heard(raw_log(b, start + 1))  # the hub reads b's rows before a's put
        return found

    monkeypatch.setattr(a.recorder, "select_events", select_then_heard)
    a.get_round(round_id)  # read before b's save
    monkeypatch.undo()
    assert moved and _round_version(a, match_id) == moved[0]


def test_a_save_put_after_the_hub_brought_the_copy_further_is_not_kept(
    two: tuple[GameService, GameService], monkeypatch: pytest.MonkeyPatch
) -> None:
    """a saves; before its save puts the aggregates in the cache, b saves after it and
    a's hub brings the cached copy up to b's save: a's put must not take it back."""
    a, b = two
    match_id = new_match(a, RuleSet())
    _playing(a, match_id)
    start = max(n.id for n in raw_log(a))
    moved: list[int] = []
    insert = a.recorder.insert_events

    def insert_then_heard(*args: Any, **kwargs: Any) -> Any:
        recorded = insert(*args, **kwargs)
        if not moved:
            moved.append(_moves_from_the_store(b, match_id, Bots(17)))
            a.heard(raw_log(b, start + 1))  # a's own row and b's, read by a's hub
        return recorded

    round_a = a.current_round(a.get_match(match_id))
    assert round_a is not None
    monkeypatch.setattr(a.recorder, "insert_events", insert_then_heard)
    bus_of(a).execute(_act(Bots(18).move(round_a, a), match_id))
    monkeypatch.undo()
    assert moved and _round_version(a, match_id) == moved[0]


def _kept(service: GameService) -> bool:
    """Loads of ``service`` trust its cache (its hub is connected and has caught up)."""
    cache = service.repository.cache
    return isinstance(cache, KeptCache) and cache.kept


async def _until(check: Callable[[], bool], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.02)


def test_while_the_hub_is_away_loads_read_the_store(
    trusted: Settings, two: tuple[GameService, GameService]
) -> None:
    """a's live hub loses its connection (a PostgreSQL restart) and cannot connect again
    for a while: b's saves meanwhile reach a's loads all the same; once the hub is back and
    has read what it missed, it keeps a's cache again."""
    a, b = two
    refused = [False]
    opened: list[Any] = []

    async def connect(**kwargs: Any) -> Any:
        if refused[0]:
            raise OSError("the server is restarting (test)")
        conn = await asyncpg.connect(**kwargs)
        opened.append(conn)
        return conn

    async def scenario() -> None:
        hub = PostgresHub.for_service(trusted, a, connect=connect, backoff_s=(0.05, 0.2))
        await hub.start()
        try:
            match_id = await asyncio.to_thread(new_match, a, RuleSet())
            await asyncio.to_thread(_playing, a, match_id)  # a's cache holds the round
            refused[0] = True
            assert trusted.database_url is not None
            with psycopg.connect(trusted.database_url, autocommit=True) as conn:
                conn.execute("SELECT pg_terminate_backend(%s)", (opened[-1].get_server_pid(),))
            await _until(lambda: not hub.connected)
            moved = await asyncio.to_thread(_moves_from_the_store, b, match_id, Bots(19))
            assert await asyncio.to_thread(_round_version, a, match_id) == moved
            refused[0] = False
            await _until(lambda: hub.connected and _kept(a))  # it has read what it missed
            heard = a.heard_elsewhere
            await asyncio.to_thread(_round_version, a, match_id)  # cached again
            again = await asyncio.to_thread(_moves_from_the_store, b, match_id, Bots(20))
            await _until(lambda: a.heard_elsewhere > heard)  # the hub keeps the cache
            assert await asyncio.to_thread(_round_version, a, match_id) == again
        finally:
            await hub.stop()

    asyncio.run(scenario())


class _Held:
    """An asyncpg connection whose notifications on the store's channel are held until
    released (a hub whose process has not read them from its socket yet)."""

    def __init__(self, conn: Any, held: list[Callable[[], None]]) -> None:
        self._conn = conn
        self._held = held

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)

    async def add_listener(self, channel: str, callback: Callable[..., None]) -> None:
        def later(*args: Any) -> None:
            self._held.append(lambda: callback(*args))

        await self._conn.add_listener(channel, later)


def _late_hub(trusted: Settings, a: GameService, held: list[Callable[[], None]]) -> PostgresHub:
    async def connect(**kwargs: Any) -> Any:
        return _Held(await asyncpg.connect(**kwargs), held)

    return PostgresHub.for_service(trusted, a, connect=connect, poll_s=3600)


@pytest.mark.parametrize("notified", ["late", "never"])
def test_a_load_sees_a_save_acknowledged_elsewhere_before_its_notification_is_read(
    trusted: Settings,
    two: tuple[GameService, GameService],
    notified: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """b's save is acknowledged; a's hub has not read its notification (held in the
    socket): a's next load still sees it — from the cache once the hub reads the row
    (``late``: the notification is read while the load waits), from the store when the
    hub does not get there within the load's bound (``never``) (D-settle)."""
    a, b = two
    held: list[Callable[[], None]] = []
    if notified == "late":  # (the hub's read is waited for however slow the machine)
        monkeypatch.setattr("services.game.SETTLE_S", 600.0)

    async def scenario() -> None:
        hub = _late_hub(trusted, a, held)
        await hub.start()
        loop = asyncio.get_running_loop()
        try:
            await _until(lambda: _kept(a))
            match_id = await asyncio.to_thread(new_match, a, RuleSet())
            await asyncio.to_thread(_playing, a, match_id)  # a's cache holds the round

            def own_heard() -> bool:  # a's own saves' notifications, as they come: the hub
                for release in held:  # reaches each commit with its own notification
                    release()  # (D-path5: it takes a's rows as a saved them)
                held.clear()
                return a.settling.position >= max(n.id for n in raw_log(a))

            await _until(own_heard)
            asked, heard = a.settling.asked, a.heard_elsewhere
            moved = await asyncio.to_thread(_moves_from_the_store, b, match_id, Bots(21))
            reading = True
            if notified == "late":  # the socket is read once the load has asked

                def read_when_asked() -> None:
                    if a.settling.asked > asked:  # b's notification may come after the ask:
                        for release in held:  # what is held is let through until the read
                            release()  # is done
                        held.clear()
                    if reading:
                        loop.call_later(0.01, read_when_asked)

                loop.call_soon(read_when_asked)
            read = await asyncio.to_thread(Settling.read, _round_version, a, match_id)
            reading = False
            assert read == moved  # a request's read (api.runtime.Runtime.call)
            if notified == "late":
                assert a.heard_elsewhere > heard  # the cache was brought up, not bypassed
        finally:
            await hub.stop()

    asyncio.run(scenario())

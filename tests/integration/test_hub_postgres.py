"""Two app instances on one PostgreSQL database (docs/observability.md, docs/decisions.md F3): a
command handled by instance A reaches an SSE subscriber of instance B through B's
LISTEN hub, within a bounded time; polls through B see the new version. The hub
survives a dropped connection (changes made meanwhile are not lost) and passes over
gaps in notification ids.

Each test gets a fresh schema on the ``pg_url`` server (dropped afterwards); each
instance is a ``GameService`` with its own connections and aggregate cache, a
:class:`~infra.hub.PostgresHub` and a Litestar app with the stream controller.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any
from uuid import UUID, uuid4

import anyio
import asyncpg  # type: ignore[import-untyped]
import msgspec
import psycopg
import pytest
from litestar import Litestar
from psycopg import sql

from api.sse import LiveStreams, StreamSettings
from domain.rules.ruleset import RuleSet
from domain.talk.table_talk import talk_id
from infra.hub import (
    MATCH_CREATED,
    ROUND_STARTED,
    TALK_OPENED,
    PostgresHub,
    build_hub,
    match_of_created,
)
from infra.settings import Settings
from infra.store import build_service
from services.access import Credential
from services.game import GameService
from services.handlers import build_bus
from services.social.presence import PresenceBoard
from services.talk.commands import Say
from services.views import table_view
from tests.api.sse_driver import TIMEOUT, SseStream, build_app, step, stream
from tests.commands import create_match, take_seat
from tests.conftest import FakeClock, FixedSeeds
from tests.resilience.harness import schema_settings

pytestmark = [pytest.mark.postgres, pytest.mark.anyio]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def settings(pg_url: str) -> Iterator[Settings]:
    with schema_settings(pg_url) as settings:
        yield settings


@dataclass
class Instance:
    """One replica: its service, hub, streams and app."""

    service: GameService
    hub: PostgresHub
    live: LiveStreams
    app: Litestar

    def version(self, match_id: UUID) -> int:
        match = self.service.get_match(match_id)
        round_ = self.service.current_round(match)
        return match.sequence(0 if round_ is None else round_.version)

    async def run(self, fn: Callable[..., Any], *args: Any) -> Any:
        """A (blocking) service call on a worker thread, as the API makes it."""
        return await anyio.to_thread.run_sync(fn, *args)


@asynccontextmanager
async def instance(settings: Settings, **hub_options: Any) -> AsyncIterator[Instance]:
    service = build_service(settings, clock=FakeClock(), seeds=FixedSeeds())
    try:
        hub = PostgresHub.for_service(settings, service, **hub_options)
        live = LiveStreams(service, hub, StreamSettings(heartbeat_s=30, lifetime_s=60))
        app = build_app(live)
        async with app.lifespan():
            assert hub.connected
            yield Instance(service, hub, live, app)
        assert live.streams == 0
    finally:
        service.close()


async def seated_match(a: Instance) -> tuple[UUID, list[str]]:
    match_id: UUID = await a.run(create_match, a.service, RuleSet())
    tokens = [(await a.run(take_seat, a.service, match_id, s, f"p{s}"))[0] for s in range(4)]
    return match_id, tokens


async def until(check: Callable[[], bool], timeout: float = TIMEOUT) -> None:
    async with asyncio.timeout(timeout):
        while not check():
            await asyncio.sleep(0.01)


async def frame_at(s: SseStream, version: int) -> dict[str, Any]:
    """Read frames until the one with id ``version`` (ids only grow)."""
    while True:
        ev = await s.next_view()
        assert ev.id is not None and ev.id <= version
        if ev.id == version:
            return ev.view()


# -- across instances ---------------------------------------------------------------------------


async def test_a_command_through_a_reaches_subscribers_of_b(settings: Settings) -> None:
    async with instance(settings) as a, instance(settings) as b:
        match_id, tokens = await seated_match(a)
        path = f"/v1/matches/{match_id}/stream"
        async with (
            stream(b.app, path) as spectator,
            stream(b.app, path, {"Authorization": f"Bearer {tokens[0]}"}) as seat0,
        ):
            v0 = a.version(match_id)
            assert (await spectator.next_view()).id == v0
            assert (await seat0.next_view()).id == v0
            latencies = []
            for _ in range(6):
                started = time.monotonic()
                await a.run(step, a.service, match_id)
                version = a.version(match_id)
                public = await frame_at(spectator, version)
                mine = await frame_at(seat0, version)
                latencies.append(time.monotonic() - started)
                # polls through B see the new version, and the same views
                assert b.version(match_id) == version
                assert public == _view(b, match_id, None)
                assert mine == _view(b, match_id, 0)
                assert "hand" not in public and mine["seat"] == 0
            assert max(latencies) < 2.0, latencies


async def test_and_the_other_way_round(settings: Settings) -> None:
    async with instance(settings) as a, instance(settings) as b:
        match_id, _ = await seated_match(a)
        async with stream(a.app, f"/v1/matches/{match_id}/stream") as s:
            await s.next_view()
            await b.run(step, b.service, match_id)
            await frame_at(s, b.version(match_id))


async def test_the_hub_hands_over_the_new_events_of_watched_matches(settings: Settings) -> None:
    """B's subscriber gets A's new events of the match, decoded, in commit order, so its
    live feed need not read them again (services/live.py); a reconnect hands over none."""
    async with instance(settings) as a, instance(settings) as b:
        match_id, _ = await seated_match(a)
        sub = b.hub.subscribe(match_id)
        try:
            seated = await a.run(a.service.recorder.max_notification_id)
            await until(lambda: b.hub.position >= seated)  # the seats: read and handed over
            sub.take()
            before = a.version(match_id)
            await a.run(step, a.service, match_id)
            events: list[Any] = []
            async with asyncio.timeout(TIMEOUT):  # a wake-up left from the seats may come first
                while len(events) < a.version(match_id) - before:
                    assert await sub.wait()
                    taken = sub.take()
                    assert taken is not None
                    events.extend(taken)
            assert len(events) == a.version(match_id) - before
            match = a.service.get_match(match_id)
            round_id = match.current_round_id()
            assert round_id is not None
            assert {e.originator_id for e in events} <= {match_id, round_id}
            stored = [
                a.service.mapper.to_domain_event(r)
                for r in a.service.recorder.select_events(
                    round_id, gt=events[0].originator_version - 1
                )
            ]
            assert [(e.originator_id, e.originator_version, type(e)) for e in events] == [
                (e.originator_id, e.originator_version, type(e)) for e in stored
            ]
            assert sub.take() == []
        finally:
            sub.close()


def _view(inst: Instance, match_id: UUID, viewer: int | None) -> dict[str, Any]:
    match = inst.service.get_match(match_id)
    view = table_view(match, inst.service.current_round(match), viewer, inst.service.clock())
    decoded: dict[str, Any] = json.loads(msgspec.json.encode(view))
    return decoded


# -- a dropped connection, gaps ----------------------------------------------------------------


async def test_the_hub_reconnects_and_loses_nothing_meanwhile(settings: Settings) -> None:
    gate = asyncio.Event()
    gate.set()

    async def gated_connect(**kwargs: Any) -> Any:
        await gate.wait()
        return await asyncpg.connect(**kwargs)

    async with (
        instance(settings) as a,
        instance(settings, connect=gated_connect, backoff_s=(0.01, 0.1)) as b,
    ):
        match_id, _ = await seated_match(a)
        async with stream(b.app, f"/v1/matches/{match_id}/stream") as s:
            await s.next_view()
            gate.clear()  # B's hub cannot reconnect until the gate opens
            await _terminate(settings, b.hub)
            await until(lambda: not b.hub.connected)
            await a.run(step, a.service, match_id)  # committed while B is not listening
            missed = a.version(match_id)
            gate.set()
            await until(lambda: b.hub.connected)
            assert b.hub.connections == 2
            await frame_at(s, missed)
            await a.run(step, a.service, match_id)  # and the new connection listens
            await frame_at(s, a.version(match_id))


async def test_gaps_in_notification_ids_are_passed_over(settings: Settings) -> None:
    async with instance(settings) as a, instance(settings) as b:
        match_id, _ = await seated_match(a)
        async with stream(b.app, f"/v1/matches/{match_id}/stream") as s:
            await s.next_view()
            table = f'"{settings.postgres_schema}".shengji_events'
            with psycopg.connect(str(settings.database_url), autocommit=True) as conn:
                for _ in range(3):  # what rolled-back inserts leave behind
                    conn.execute(
                        "SELECT nextval(pg_get_serial_sequence(%s, 'notification_id'))", (table,)
                    )
                with pytest.raises(psycopg.errors.UniqueViolation), conn.transaction():
                    conn.execute(
                        sql.SQL(
                            "INSERT INTO {}.shengji_events "
                            "(originator_id, originator_version, topic, state) "
                            "SELECT originator_id, originator_version, topic, state "
                            "FROM {}.shengji_events LIMIT 1"
                        ).format(*[sql.Identifier(settings.postgres_schema)] * 2)
                    )
            for _ in range(3):
                await a.run(step, a.service, match_id)
                await frame_at(s, a.version(match_id))


# -- a worker's paced hub (docs/decisions.md D-pace) --------------------------------------------


async def test_a_paced_hub_reads_the_saves_made_during_its_pace_together(
    settings: Settings,
) -> None:
    """B's hub reads at most every two seconds: the three moves A makes just after B read
    a move are read by one query once the two seconds are up — every row, none lost; B's
    streams get every version. (Unpaced, each move's notification is read alone.)"""
    async with instance(settings) as a, instance(settings, pace_s=2.0) as b:
        reads: list[list[int]] = []
        b.hub.on_stored.append(lambda rows: reads.append([r.originator_version for r in rows]))
        match_id, _ = await seated_match(a)
        async with stream(b.app, f"/v1/matches/{match_id}/stream") as s:
            await s.next_view()
            await a.run(step, a.service, match_id)
            await frame_at(s, a.version(match_id))  # B has read it
            before = len(reads)
            for _ in range(3):
                await a.run(step, a.service, match_id)
            end = await a.run(a.service.recorder.max_notification_id)
            await until(lambda: b.hub.position >= end)
            await frame_at(s, a.version(match_id))
        assert len(reads) == before + 1  # one read for the three moves
        assert len(reads[-1]) >= 3  # each move's rows (a round's event, maybe its match's)
        assert b.version(match_id) == a.version(match_id)


# -- helpers and the hub's pieces ------------------------------------------------------------------


async def _terminate(settings: Settings, hub: PostgresHub) -> None:
    """Kill the hub's LISTEN connection from the server's side."""
    conn = hub._conn
    assert conn is not None
    pid = conn.get_server_pid()
    with psycopg.connect(str(settings.database_url), autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (pid,))


def test_build_hub_picks_the_store(settings: Settings) -> None:
    service = build_service(settings)
    try:
        hub = build_hub(settings, service)
        assert isinstance(hub, PostgresHub)
        assert hub.channel == "shengji_events"  # the recorder's NOTIFY channel
    finally:
        service.close()


def test_which_match_an_aggregate_belongs_to() -> None:
    match_id, round_id = uuid4(), uuid4()
    state = b'{"match_id":"%s","number":1}' % str(match_id).encode()
    assert match_of_created(match_id, MATCH_CREATED, b"{}") == match_id
    assert match_of_created(round_id, ROUND_STARTED, state) == match_id
    assert match_of_created(round_id, ROUND_STARTED, b"not json") is None
    assert match_of_created(round_id, "some.other:Created", b"{}") is None
    assert match_of_created(round_id, None, None) is None


async def test_presence_is_relayed_between_replicas(settings: Settings) -> None:
    """A player's presence seen by one replica reaches the board of another through the
    hubs' relay (docs/decisions.md D-social); a replica passes over its own messages."""
    async with instance(settings) as a, instance(settings) as b:
        boards = {name: PresenceBoard(away_after_s=60, offline_after_s=10) for name in "ab"}
        for name, replica in (("a", a), ("b", b)):
            boards[name].relay = replica.hub.relay
            replica.hub.on_relayed.append(boards[name].heard)
        player = uuid4()
        heard: list[str] = []
        boards["b"].watch(player, lambda _, p: heard.append(p.state))
        boards["a"].opened(player)
        await until(lambda: heard == ["online"])
        boards["a"].hide(player, True)
        await until(lambda: heard == ["online", "offline"])
        assert boards["b"].of(player).state == "offline"
        assert boards["a"].of(player).state == "offline"  # its own choice, not heard back


async def test_talk_said_through_a_reaches_the_stream_of_b(settings: Settings) -> None:
    """A message saved by instance A wakes B's stream of the match (the hub maps the
    table's talk to its match by ``TalkOpened``, R37) and arrives as a talk frame."""
    async with instance(settings) as a, instance(settings) as b:
        match_id, tokens = await seated_match(a)
        bus = build_bus(a.service)
        seat0 = Credential.parse(tokens[0])
        async with stream(b.app, f"/v1/matches/{match_id}/stream") as s:
            v0 = (await s.next_view()).id
            for phrase in ("hello", "good-luck"):
                await a.run(lambda p=phrase: bus.execute(Say(match_id, phrase=p), seat0))
            talk: list[tuple[str | None, str]] = []
            while len(talk) < 2:
                ev = await s.next()
                assert ev is not None
                if ev.event == "talk":
                    talk.append((ev.tag, json.loads(ev.data or "{}")["phrase"]))
            assert talk == [(f"{v0}.1", "hello"), (f"{v0}.2", "good-luck")]


def test_a_tables_talk_belongs_to_its_match() -> None:
    match_id = uuid4()
    state = b'{"match_id":"%s"}' % str(match_id).encode()
    assert match_of_created(talk_id(match_id), TALK_OPENED, state) == match_id

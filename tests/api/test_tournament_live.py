"""The standings stream (api/tournaments/live.py): the current standings at
once, a new frame when a table's result enters the tournament — woken by the hub at the
tournament's save, not at the next poll — and a resumed stream (Last-Event-ID) sends
nothing it has sent before."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import anyio
import msgspec

from api.runtime import Runtime
from api.tournaments.live import standings_frames
from domain.rules.ruleset import STANDARD
from domain.tournament.events import TeamEntry
from infra.localhub import InProcessHub
from infra.settings import Settings
from infra.store import build_service
from services.bot_driver import BotDriver
from services.game import GameService
from tests.commands import bus_of
from tests.conftest import FakeClock, FixedSeeds
from tests.driving import play_round
from tests.tournaments import Tournaments


def test_the_standings_stream_moves_as_tables_finish_and_resumes() -> None:
    service: GameService = build_service(
        Settings(backend="popo"), clock=FakeClock(), seeds=FixedSeeds()
    )
    tournaments = Tournaments(service)
    teams = [TeamEntry(f"T{i}", (f"a{i}", f"b{i}"), ("random", "random")) for i in range(2)]
    t = tournaments.create(
        name="cup", rules=STANDARD, teams=teams, fmt="swiss", match_length=1, swiss_rounds=1
    )
    tournaments.schedule_next(t.id)

    async def main() -> tuple[list[bytes], list[bytes]]:
        runtime = Runtime(bus_of(service), anyio.CapacityLimiter(2), BotDriver(bus_of(service)))
        hub = InProcessHub()
        hub.attach(service)
        await hub.start()
        frames = standings_frames(runtime, hub, t.id, None)
        first = await anext(frames)
        await runtime.call(play_round, tournaments, t.id)  # plays and collects: finished

        async def rest_of(frames: AsyncIterator[bytes]) -> list[bytes]:
            return [frame async for frame in frames]

        # woken at the save (the stream reads again only every POLL_S = 15 s otherwise)
        rest = await asyncio.wait_for(rest_of(frames), 5)
        last = tournaments.get(t.id).version
        resumed = await rest_of(standings_frames(runtime, hub, t.id, last))
        await hub.stop()
        return [first, *rest], resumed

    try:
        frames, resumed = asyncio.run(main())
    finally:
        service.close()
    assert len(frames) == 2 and resumed == []
    ids, played = [], []
    for frame in frames:
        head, data = frame.decode().removesuffix("\n\n").split("\ndata: ")
        assert head.startswith("event: standings\nid: ")
        ids.append(int(head.rsplit(" ", 1)[1]))
        body = msgspec.json.decode(data)
        assert body["version"] == ids[-1]
        played.append([s["played"] for s in body["standings"]])
    assert ids[0] < ids[1] == tournaments.get(t.id).version
    assert played == [[0, 0], [1, 1]]

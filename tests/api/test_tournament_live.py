"""The standings stream (api/tournaments/live.py): the current standings at
once, a new frame when a table's result enters the tournament, and a resumed stream
(Last-Event-ID) sends nothing it has sent before."""

from __future__ import annotations

import asyncio

import anyio
import msgspec

from api.runtime import Runtime
from api.tournaments.live import standings_frames
from domain.rules.ruleset import STANDARD
from domain.tournament.events import TeamEntry
from infra.settings import Settings
from infra.store import build_service
from services.bot_driver import BotDriver
from services.game import GameService
from services.tournaments.service import TournamentService
from tests.commands import bus_of
from tests.conftest import FakeClock, FixedSeeds
from tests.driving import play_round


def test_the_standings_stream_moves_as_tables_finish_and_resumes() -> None:
    service: GameService = build_service(
        Settings(backend="popo"), clock=FakeClock(), seeds=FixedSeeds()
    )
    tournaments = TournamentService(service)
    teams = [TeamEntry(f"T{i}", (f"a{i}", f"b{i}"), ("random", "random")) for i in range(2)]
    t = tournaments.create(
        name="cup", rules=STANDARD, teams=teams, fmt="swiss", match_length=1, swiss_rounds=1
    )
    tournaments.schedule_next(t.id)

    async def main() -> tuple[list[bytes], list[bytes]]:
        runtime = Runtime(bus_of(service), anyio.CapacityLimiter(2), BotDriver(bus_of(service)))
        frames = standings_frames(runtime, t.id, None)
        first = await anext(frames)
        await runtime.call(play_round, tournaments, t.id)  # plays and collects: finished
        rest = [frame async for frame in frames]
        last = tournaments.get(t.id).version
        resumed = [frame async for frame in standings_frames(runtime, t.id, last)]
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

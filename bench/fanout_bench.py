"""A command's fan-out in process: ``python -m bench.fanout_bench`` (docs/decisions.md D-fan).

What an API process spends between a save and the five frames of its version on their
streams: the match's follower woken with the saved events (as the PostgreSQL hub hands a
process's own commits over, D-path5), the new version applied to its table, each viewer's
view and frame built and encoded, and each of four seats' streams and a spectator's sending
its frame through the real app (:func:`infra.bootstrap.build_app`, in memory, the streams
called through ASGI and read chunk by chunk as the app sends them, no socket).

Each step makes one move the table offers, on the bus directly (its CPU is not counted:
the command's own cost is not the fan-out's; a move may make several versions, a trick's
last card and the trick won); the clock (the event loop thread's CPU: the fan-out runs
there) runs from the save's end until all five streams have the step's last version. The
deals are seeded (``--seed``), so two checkouts play the same moves. The figure is the
best of ``--blocks`` blocks of ``--steps`` versions, with two counts that do not move with
the machine's load: the body chunks the streams sent per version (a server's socket
writes) and, with ``--calls``, the Python function calls per version (cProfile on: the
time is then not the figure). ``--profile FILE`` writes that cProfile (pstats). The last
line is machine-readable::

    fanout us_per_version=<f> chunks_per_version=<f> calls_per_version=<f> versions=<n> \\
        load=<1-min load>
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import os
import pstats
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from uuid import UUID

import msgspec
import uvloop
from litestar import Litestar

from bench._capacity_stream import SeatView, choose
from bench._tables import act, new_match, seat_person
from domain.rules.cards import parse_cards
from domain.rules.ruleset import RuleSet
from infra.bootstrap import build_app
from infra.localhub import InProcessHub
from infra.logging import configure_logging
from infra.settings import Settings
from services.bus import Bus
from services.game import GameService
from services.saves import Recorded
from services.views import table_view
from tests.api.sse_driver import get_receive, get_scope

encode = msgspec.json.Encoder().encode


class Arrivals:
    """Waits until every stream has received a frame of a version (one future per step)."""

    def __init__(self, streams: int) -> None:
        self.streams = streams
        self.version = 0
        self.reached = 0
        self.done: asyncio.Future[None] | None = None

    def reach(self, version: int) -> None:
        if version >= self.version and self.done is not None:
            self.reached += 1
            if self.reached == self.streams:
                self.done.set_result(None)
                self.done = None

    async def until(self, version: int, streams: Sequence[Stream]) -> None:
        self.version = version
        self.reached = sum(s.version >= version for s in streams)
        if self.reached < self.streams:
            self.done = asyncio.get_running_loop().create_future()
            await asyncio.wait_for(self.done, 10)


class Stream:
    """One live stream read as the app sends it: the highest version id received."""

    def __init__(
        self, app: Litestar, path: str, headers: list[tuple[bytes, bytes]], arrivals: Arrivals
    ) -> None:
        self.version = 0
        self.frames = 0
        self.chunks = 0
        """Body chunks received: the app's ``send`` calls, a server's socket writes."""
        self.arrivals = arrivals
        self.arrived = asyncio.Event()
        self.stop = asyncio.Event()
        scope = get_scope(path, [(b"host", b"bench"), *headers], "bench")
        self.task = asyncio.create_task(app(scope, get_receive(self.stop), self.send))  # type: ignore[arg-type]

    async def send(self, message: Any) -> None:
        body = message.get("body", b"")
        self.chunks += bool(body)
        at = body.rfind(b"\nid: ")
        if at >= 0:
            end = body.index(b"\n", at + 5)
            self.version = int(body[at + 5 : end].split(b".")[0])
            self.frames += body.count(b"\nid: ")
            self.arrived.set()
            if self.version >= self.arrivals.version:
                self.arrivals.reach(self.version)


class Handing:
    """The app's in-process hub woken with each save's events, as the PostgreSQL hub hands
    a process's own commits over (D-path5): the follower applies them without reading the
    store (the in-process hub alone wakes it with none: read the store)."""

    def __init__(self, hub: InProcessHub, service: GameService) -> None:
        self.hub = hub
        self.match_of: dict[UUID, UUID] = {}
        hub.detach(service)
        service.saves.recorded.add(self.handed)

    def handed(self, news: Recorded) -> None:
        by_match: dict[UUID, list[Any]] = {}
        for recording in news.recordings:
            event = recording.domain_event
            match_id = self.match_of.get(event.originator_id)
            named = getattr(event, "match_id", None)  # a new round's RoundStarted names it
            if match_id is None and isinstance(named, UUID):
                match_id = self.match_of[event.originator_id] = named
            if match_id is not None:
                by_match.setdefault(match_id, []).append(event)
        if by_match:
            self.hub._wake(set(by_match), by_match)  # the hub's own hand-over, as PostgreSQL's


@dataclass
class Figures:
    """What the blocks measured."""

    us_per_version: float = float("inf")
    """The best block's CPU of the event loop's thread per version, in µs."""
    versions: int = 0
    chunks: int = 0
    """Body chunks the five streams sent for those versions (a server's socket writes)."""
    calls: int = 0
    """Python function calls for those versions (``--calls``: cProfile's count)."""


async def run(args: argparse.Namespace) -> Figures:
    rng = random.Random(args.seed)
    deals = random.Random(args.seed)
    service = GameService(
        {"PERSISTENCE_MODULE": "eventsourcing.popo"}, seeds=lambda: deals.randbytes(32)
    )
    settings = Settings(
        backend="popo", rate_limit_per_minute=0, sweep_interval_ms=0, webhook_interval_ms=0
    )
    app = build_app(settings, service=service)
    app_hub = app.state.live.hub
    assert isinstance(app_hub, InProcessHub)
    hub = Handing(app_hub, service)
    bus: Bus = app.state.runtime.bus
    profile = cProfile.Profile() if args.profile or args.calls else None
    out = Figures()
    arrivals = Arrivals(5)
    async with app.lifespan():
        for _block in range(args.blocks):
            match_id, streams = await open_table(app, bus, hub, arrivals)
            spent = 0.0
            versions = 0
            while versions < args.steps:
                before = streams[0].version
                version = move(bus, service, match_id, rng)
                if version is None:  # the round is over: a new table
                    await close(streams)
                    match_id, streams = await open_table(app, bus, hub, arrivals)
                    continue
                chunks = sum(s.chunks for s in streams)
                started = time.thread_time()
                if profile is not None:
                    profile.enable()
                await arrivals.until(version, streams)
                if profile is not None:
                    profile.disable()
                spent += time.thread_time() - started
                versions += version - before
                out.chunks += sum(s.chunks for s in streams) - chunks
            out.versions += versions
            await close(streams)
            out.us_per_version = min(out.us_per_version, spent / versions * 1e6)
    if profile is not None:
        if args.profile:
            profile.dump_stats(args.profile)
        out.calls = pstats.Stats(profile).total_calls  # type: ignore[attr-defined]
    return out


async def open_table(
    app: Litestar, bus: Bus, hub: Handing, arrivals: Arrivals
) -> tuple[UUID, list[Stream]]:
    match_id = new_match(bus, RuleSet(), "bench")
    tokens = [seat_person(bus, match_id, seat, f"p{seat}") for seat in range(4)]
    service = bus.service
    match = service.get_match(match_id)
    hub.match_of[match_id] = match_id
    round_ = service.current_round(match)
    if round_ is not None:
        hub.match_of[round_.id] = match_id
    path = f"/v1/matches/{match_id}/stream"
    seats = [[(b"authorization", f"Bearer {t}".encode())] for t in tokens]
    streams = [Stream(app, path, headers, arrivals) for headers in [*seats, []]]
    await asyncio.gather(*(s.arrived.wait() for s in streams))
    return match_id, streams


def move(bus: Bus, service: GameService, match_id: UUID, rng: random.Random) -> int | None:
    """One move the seats' views offer (R16–R31); the version it made, None when none."""
    match = service.get_match(match_id)
    round_ = service.current_round(match)
    if round_ is None or match.round_number > 1:
        return None
    now = service.clock()
    for seat in range(4):
        seen = msgspec.json.decode(encode(table_view(match, round_, seat, now)), type=SeatView)
        choice = choose(seen, rng)
        if choice is not None:
            action, cards = choice
            act(bus, match_id, seat, action, parse_cards(cards))
            after = service.get_match(match_id)
            new_round = service.current_round(after)
            version: int = after.sequence(0 if new_round is None else new_round.version)
            return version
    return None


async def close(streams: Sequence[Stream]) -> None:
    for s in streams:
        s.stop.set()
    await asyncio.gather(*(s.task for s in streams))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--blocks", type=int, default=7, help="blocks [7]")
    parser.add_argument("--steps", type=int, default=200, help="versions a block [200]")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--profile", help="a cProfile of the timed parts to this file")
    parser.add_argument(
        "--calls", action="store_true", help="count Python calls per version (cProfile on)"
    )
    args = parser.parse_args(argv)
    with open(os.devnull, "w") as sink:
        configure_logging("INFO", stream=sink)  # as a server logs (its lines thrown away)
        got = uvloop.run(run(args))
    load = f"{os.getloadavg()[0]:.2f}"
    chunks = got.chunks / got.versions
    calls = got.calls / got.versions
    print(f"fan-out {got.us_per_version:8.1f} µs/version (five streams)   load {load}")
    print(f"        {chunks:8.2f} body chunks/version   {calls:8.0f} Python calls/version")
    print(
        f"fanout us_per_version={got.us_per_version:.1f} chunks_per_version={chunks:.2f} "
        f"calls_per_version={calls:.0f} versions={got.versions} load={load}"
    )


if __name__ == "__main__":
    main()

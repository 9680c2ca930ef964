"""Bytes on the wire of a live stream: ``make bench-frames`` / ``python -m bench.frames_bench``
(docs/performance.md, docs/decisions.md D-light-frames).

One round of a match is played (``--seed``: the deal) with a paced deal of 250 ms a card
(R16) — a seat's hand grows by about one card per progress frame, as a client sees it with
a paced deal — while seat 0 watches the match in four streams at once, as a client asks:

- ``raw``         whole frames, no ``Accept-Encoding`` (what every stream sent before);
- ``gzip``        whole frames, ``Accept-Encoding: gzip``;
- ``patch``       ``?frames=patch``;
- ``patch+gzip``  both;

and a spectator in ``patch+gzip``. The app is the real one (``infra.bootstrap``, in
process, in memory) and the streams are read through its ASGI interface chunk by chunk as
it sends them; a stream's bytes on the wire are its response head, every body chunk and the
HTTP/1.1 chunked framing around each (TCP/TLS not counted), from the request until the
frame of the round's ``RoundRecorded`` (the next deal is not counted). The moves are made
on the service directly (the streams are what is measured), with a clock that moves one
second a move and four cards a deal tick.

Then, in the same run, the CPU of a frame: the round replayed event by event for seat 0
(:class:`services.live.LiveTable`), timing a whole frame (view + encode), a patch frame on
top of it (the view as JSON values, the diff, the encode) and gzip of each (a
``Z_SYNC_FLUSH`` per frame, as the compression middleware does), as ratios of the whole
frame's cost in the same run. The last line is machine-readable::

    frames seat_raw_kb=<f> seat_gzip_kb=<f> seat_patch_kb=<f> seat_patch_gzip_kb=<f> \\
        spectator_patch_gzip_kb=<f> frames=<n> patch_cpu_ratio=<f> patch_gzip_cpu_ratio=<f>

(one line). Target: ``seat_patch_gzip_kb`` <= 40 (``seat_raw_kb`` was ~400).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import time
import zlib
from collections.abc import Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import UUID

import anyio
import msgspec
from litestar import Litestar

from api.match_follower import DEAL_TICK_S
from bench._capacity_stream import SeatView, choose
from bench._tables import act, new_match, seat_person
from domain.game.round import DRAWS
from domain.game.round_events import Pacing
from domain.rules.cards import parse_cards
from domain.rules.ruleset import RuleSet
from infra.bootstrap import build_app
from infra.settings import Settings
from services.bus import Bus
from services.game import GameService
from services.json_patch import diff
from services.live import LiveTable, view_json
from services.views import table_view
from tests.api.sse_driver import get_receive, get_scope

INTERVAL_MS = 250
"""A card every 250 ms: four cards (one a seat) per deal tick of 250 ms."""
T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
encode = msgspec.json.Encoder().encode


class Clock:
    """The service's clock, moved by the bench."""

    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


@dataclass
class Wire:
    """One stream read chunk by chunk as the app sends it."""

    name: str
    gzip: bool
    head: int = 0
    chunks: list[tuple[int, str]] = field(default_factory=list)
    """Each body chunk: its bytes on the wire (with chunked framing) and its text."""
    inflate: Any = None
    disconnect: asyncio.Event = field(default_factory=asyncio.Event)
    started: asyncio.Event = field(default_factory=asyncio.Event)

    def on_chunk(self, body: bytes) -> None:
        framing = len(f"{len(body):x}") + 4  # "<size>\r\n" + body + "\r\n"
        text = (self.inflate.decompress(body) if self.inflate else body).decode()
        self.chunks.append((len(body) + framing, text))

    def round_bytes(self) -> tuple[int, int]:
        """Bytes on the wire until the round's ``RoundRecorded`` frame, and version frames."""
        total, frames = self.head, 0
        for size, text in self.chunks:
            total += size
            for block in text.split("\n\n"):
                if "\nid: " not in "\n" + block and not block.startswith("id: "):
                    continue
                if "event: view" in block or "event: patch" in block:
                    frames += 1
                data = next(line for line in block.split("\n") if line.startswith("data: "))
                if json.loads(data[6:])["event"]["type"] == "RoundRecorded":
                    return total, frames
        raise RuntimeError(f"{self.name}: the round's end never arrived")


@asynccontextmanager
async def stream(app: Litestar, path: str, headers: dict[str, str], wire: Wire) -> Any:
    """GET ``path`` from ``app`` with ``headers``; every chunk lands in ``wire``."""
    raw = [(b"host", b"bench"), *((k.lower().encode(), v.encode()) for k, v in headers.items())]
    request_line = f"GET {path} HTTP/1.1\r\n"
    wire.head += len(request_line) + sum(len(k) + len(v) + 4 for k, v in raw) + 2
    scope = get_scope(path, raw, "bench")
    receive = get_receive(wire.disconnect)

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            sent = message.get("headers", [])
            wire.head += len("HTTP/1.1 200 OK\r\n") + sum(len(k) + len(v) + 4 for k, v in sent)
            wire.head += len("transfer-encoding: chunked\r\n") + 2
            if dict(sent).get(b"content-encoding") == b"gzip":
                wire.inflate = zlib.decompressobj(wbits=31)
            wire.started.set()
        elif message["type"] == "http.response.body" and message.get("body"):
            wire.on_chunk(message["body"])

    task = asyncio.create_task(app(scope, receive, send))  # type: ignore[arg-type]
    await wire.started.wait()
    try:
        yield wire
    finally:
        wire.disconnect.set()
        await task


def move(bus: Bus, match_id: UUID, clock: Clock, rng: random.Random) -> None:
    """One move the views offer (R16–R31), a second after the last."""
    service = bus.service
    clock.advance(1)
    match = service.get_match(match_id)
    round_ = service.current_round(match)
    assert round_ is not None
    expected = table_view(match, round_, None, clock()).expected
    assert expected is not None, "nobody is to act"
    for seat in range(4) if expected.seat is None else (expected.seat,):
        seen = msgspec.json.decode(encode(table_view(match, round_, seat, clock())), type=SeatView)
        choice = choose(seen, rng)
        if choice is not None:
            action, cards = choice
            act(bus, match_id, seat, action, parse_cards(cards))
            return
    raise RuntimeError(f"no move offered for {expected}")


async def play_round(seed: int) -> tuple[dict[str, tuple[int, int]], GameService, UUID, int]:
    """The round watched by the five streams: each stream's (bytes, version frames), the
    service, the match and the version the streams started at."""
    clock = Clock()
    rng = random.Random(seed)
    service = GameService(
        {"PERSISTENCE_MODULE": "eventsourcing.popo"},
        clock=clock,
        seeds=lambda: rng.randbytes(32),
        pacing=Pacing(interval_ms=INTERVAL_MS, declare_ms=30_000, window_ms=0),
    )
    settings = Settings(
        backend="popo", rate_limit_per_minute=0, sweep_interval_ms=0, webhook_interval_ms=0
    )
    app = build_app(settings, service=service)
    bus: Bus = app.state.runtime.bus
    match_id = new_match(bus, RuleSet(), "")
    token = seat_person(bus, match_id, 0, "p0")
    path = f"/v1/matches/{match_id}/stream"
    seat = {"Authorization": f"Bearer {token}"}
    gz = {"Accept-Encoding": "gzip"}
    wires = {
        "raw": (path, seat),
        "gzip": (path, {**seat, **gz}),
        "patch": (f"{path}?frames=patch", seat),
        "patch+gzip": (f"{path}?frames=patch", {**seat, **gz}),
        "spectator patch+gzip": (f"{path}?frames=patch", gz),
    }
    async with app.lifespan(), AsyncExitStack() as stack:
        out = {
            name: await stack.enter_async_context(
                stream(app, p, h, Wire(name, "gzip" in h.get("Accept-Encoding", "")))
            )
            for name, (p, h) in wires.items()
        }
        start = service.get_match(match_id).version
        for s in (1, 2, 3):
            seat_person(bus, match_id, s, f"p{s}")
        while True:  # the paced deal: four cards a tick
            await asyncio.sleep(DEAL_TICK_S + 0.05)
            match = service.get_match(match_id)
            round_ = service.current_round(match)
            assert round_ is not None
            if round_.drawn_at(clock()) >= DRAWS:
                break
            clock.advance(INTERVAL_MS * 4 / 1000)
        while service.get_match(match_id).round_number < 2:
            await anyio.to_thread.run_sync(move, bus, match_id, clock, rng)
        await asyncio.sleep(0.5)  # the last frames reach the streams
    return {name: w.round_bytes() for name, w in out.items()}, service, match_id, start


@dataclass
class Cpu:
    whole_s: float = 0.0
    patch_s: float = 0.0
    gzip_whole_s: float = 0.0
    gzip_patch_s: float = 0.0
    frames: int = 0


def frame_cpu(service: GameService, match_id: UUID, start: int, repeat: int) -> Cpu:
    """The round's frames for seat 0, built whole and as patches, gzipped one by one."""
    cpu = Cpu()
    timer: Callable[[], float] = time.process_time
    for _ in range(repeat):
        table = LiveTable.at(service, match_id, start + 1)
        base = view_json(table.frame(table.last, 0).view)
        whole_z = zlib.compressobj(6, zlib.DEFLATED, 31)
        patch_z = zlib.compressobj(6, zlib.DEFLATED, 31)
        for step in table.advance():
            t0 = timer()
            frame = table.frame(step, 0)
            whole = encode(frame)
            t1 = timer()
            after = view_json(frame.view)
            patch = encode({"version": step.version, "patch": diff(base, after)})
            base = after
            t2 = timer()
            whole_z.compress(whole)
            whole_z.flush(zlib.Z_SYNC_FLUSH)
            t3 = timer()
            patch_z.compress(patch)
            patch_z.flush(zlib.Z_SYNC_FLUSH)
            t4 = timer()
            cpu.whole_s += t1 - t0
            cpu.patch_s += t2 - t1
            cpu.gzip_whole_s += t3 - t2
            cpu.gzip_patch_s += t4 - t3
            cpu.frames += 1
    return cpu


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=7, help="the deal and the moves")
    parser.add_argument("--repeat", type=int, default=20, help="replays timed for the CPU")
    args = parser.parse_args(argv)
    sizes, service, match_id, start = asyncio.run(play_round(args.seed))
    print(f"one round (seed {args.seed}), seat 0's stream, bytes on the wire:")
    for name, (size, frames) in sizes.items():
        ratio = size / sizes["raw"][0]
        print(f"  {name:22s} {size / 1000:8.1f} KB  {frames:4d} version frames  {ratio:6.1%}")
    cpu = frame_cpu(service, match_id, start, args.repeat)
    n = cpu.frames
    us = 1e6 / n
    print(f"CPU per frame over {n} frames (seat 0, same run; process time):")
    print(f"  whole frame (view + encode)        {cpu.whole_s * us:8.1f} us  1.00")
    print(
        f"  + patch (JSON values, diff, encode) {cpu.patch_s * us:7.1f} us  "
        f"{(cpu.whole_s + cpu.patch_s) / cpu.whole_s:.2f} (whole + patch)"
    )
    print(f"  gzip of a whole frame               {cpu.gzip_whole_s * us:7.1f} us")
    print(f"  gzip of a patch frame               {cpu.gzip_patch_s * us:7.1f} us")
    patch_ratio = (cpu.whole_s + cpu.patch_s) / cpu.whole_s
    gzip_ratio = (cpu.whole_s + cpu.patch_s + cpu.gzip_patch_s) / (cpu.whole_s + cpu.gzip_whole_s)
    service.close()
    kb = {name: size / 1000 for name, (size, _) in sizes.items()}
    print(
        f"frames seat_raw_kb={kb['raw']:.1f} seat_gzip_kb={kb['gzip']:.1f} "
        f"seat_patch_kb={kb['patch']:.1f} seat_patch_gzip_kb={kb['patch+gzip']:.1f} "
        f"spectator_patch_gzip_kb={kb['spectator patch+gzip']:.1f} frames={sizes['raw'][1]} "
        f"patch_cpu_ratio={patch_ratio:.2f} patch_gzip_cpu_ratio={gzip_ratio:.2f}"
    )


if __name__ == "__main__":
    main()

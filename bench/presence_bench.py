"""Presence at rest and in motion (docs/decisions.md D-social): ``make bench-presence``.

For each N (``--players 200,1000``): a fresh server (``python -m infra.serve``, SQLite), N
pairs of friends; the server's CPU over an idle window (``--idle-s``) with no stream open
(the baseline), then with the N watchers' player streams open and nobody doing anything
(per player and as a ratio to the baseline, same run); then the delay from a friend's
presence change (``PUT /v1/players/me/presence``, appear offline and back) to its
``presence`` frame on the watcher's stream, p50 and p99 over ``--samples`` changes.

The last line of each N: ``presence players=N idle_cpu_base=…% idle_cpu_streams=…%
per_player_us_per_s=… ratio=… p50_ms=… p99_ms=…``; the load average is printed too (the
machine is shared: read the figures with it).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from bench._api_server import HOST, Server

Frame = Callable[[str, dict[str, Any], float], None]


class StreamClient:
    """One player stream, read raw (chunked SSE lines), frames handed to ``on_frame``."""

    def __init__(self, port: int, token: str, on_frame: Frame) -> None:
        self.port, self.token, self.on_frame = port, token, on_frame
        self.task: asyncio.Task[None] | None = None
        self.opened = asyncio.Event()

    async def start(self) -> None:
        self.task = asyncio.create_task(self._run())
        await asyncio.wait_for(self.opened.wait(), 30)

    async def _run(self) -> None:
        reader, writer = await asyncio.open_connection(HOST, self.port)
        writer.write(
            (
                f"GET /v1/players/me/stream HTTP/1.1\r\nHost: {HOST}:{self.port}\r\n"
                f"Authorization: Bearer {self.token}\r\nAccept: text/event-stream\r\n\r\n"
            ).encode()
        )
        await writer.drain()
        event = ""
        try:
            while line := await reader.readline():
                text = line.decode(errors="replace").rstrip("\r\n")
                if text.startswith("HTTP/1.1 200"):
                    self.opened.set()
                elif text.startswith("event: "):
                    event = text[7:]
                elif text.startswith("data: ") and event:
                    self.on_frame(event, json.loads(text[6:]), time.perf_counter())
                    event = ""
        finally:
            writer.close()

    async def stop(self) -> None:
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self.task


async def gather_limited(n: int, make: Callable[[int], Any], limit: int = 16) -> list[Any]:
    gate = asyncio.Semaphore(limit)

    async def one(i: int) -> Any:
        async with gate:
            return await make(i)

    return list(await asyncio.gather(*(one(i) for i in range(n))))


async def ok(
    c: httpx.AsyncClient, method: str, path: str, token: str | None = None, **kw: Any
) -> Any:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    r = await c.request(method, path, headers=headers, **kw)
    if r.status_code >= 300:
        raise RuntimeError(f"{method} {path}: {r.status_code} {r.text[:200]}")
    return r.json() if r.content else None


async def idle_cpu(server: Server, seconds: float) -> float:
    """The server's CPU over ``seconds`` of nothing asked of it, in % of a core."""
    t0, c0 = time.perf_counter(), server.cpu_seconds()
    await asyncio.sleep(seconds)
    return 100 * (server.cpu_seconds() - c0) / (time.perf_counter() - t0)


async def run_one(n: int, idle_s: float, samples: int) -> str:
    with tempfile.TemporaryDirectory() as folder:
        server = Server(Path(folder), log_level="WARNING", profile=None)
        try:
            await server.wait_ready()
            base = f"http://{HOST}:{server.port}"
            limits = httpx.Limits(max_connections=32)
            async with httpx.AsyncClient(base_url=base, timeout=60, limits=limits) as c:
                return await measure(c, server, n, idle_s, samples)
        finally:
            server.stop()


async def measure(c: httpx.AsyncClient, server: Server, n: int, idle_s: float, samples: int) -> str:
    t0 = time.perf_counter()

    async def pair(i: int) -> tuple[Json, Json]:
        w = await ok(c, "POST", "/v1/players", json={"displayName": f"w{i}"})
        f = await ok(c, "POST", "/v1/players", json={"displayName": f"f{i}"})
        await ok(
            c,
            "POST",
            "/v1/players/me/friend-requests",
            w["token"],
            json={"playerId": f["playerId"]},
        )
        await ok(
            c,
            "POST",
            f"/v1/players/me/friend-requests/{w['playerId']}/answer",
            f["token"],
            json={"accept": True},
        )
        return w, f

    pairs = await gather_limited(n, pair)
    print(f"  {n} pairs of friends made in {time.perf_counter() - t0:.1f} s")
    await asyncio.sleep(2)  # the friends' view catches up; the first commands settle
    base_cpu = await idle_cpu(server, idle_s)

    waiting: dict[str, tuple[str, float]] = {}
    delays: list[float] = []
    seen = asyncio.Event()

    def on_frame(event: str, data: dict[str, Any], at: float) -> None:
        if event != "presence":
            return
        wanted = waiting.get(data.get("playerId", ""))
        if wanted is not None and data.get("state") == wanted[0]:
            delays.append(at - wanted[1])
            del waiting[data["playerId"]]
            seen.set()

    streams = [StreamClient(server.port, w["token"], on_frame) for w, _ in pairs]
    t0 = time.perf_counter()
    for chunk in range(0, n, 50):
        await asyncio.gather(*(s.start() for s in streams[chunk : chunk + 50]))
    print(f"  {n} player streams open in {time.perf_counter() - t0:.1f} s")
    await asyncio.sleep(3)
    stream_cpu = await idle_cpu(server, idle_s)

    for k in range(samples):
        _, friend = pairs[k % n]
        hide = (k // n) % 2 == 0
        seen.clear()
        waiting[friend["playerId"]] = ("offline" if hide else "online", time.perf_counter())
        await ok(c, "PUT", "/v1/players/me/presence", friend["token"], json={"appearOffline": hide})
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(5):
                while friend["playerId"] in waiting:
                    await seen.wait()
                    seen.clear()
        waiting.pop(friend["playerId"], None)
    for s in streams:
        await s.stop()

    lost = samples - len(delays)
    delays.sort()
    p50 = 1000 * statistics.median(delays) if delays else float("nan")
    p99 = 1000 * delays[min(len(delays) - 1, int(0.99 * len(delays)))] if delays else float("nan")
    per_player = 1e4 * max(0.0, stream_cpu - base_cpu) / n  # µs of CPU per player per second
    ratio = stream_cpu / base_cpu if base_cpu > 0 else float("inf")
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"  load average {load}; {lost} of {samples} changes not seen within 5 s")
    return (
        f"presence players={n} idle_cpu_base={base_cpu:.1f}% idle_cpu_streams={stream_cpu:.1f}% "
        f"per_player_us_per_s={per_player:.1f} ratio={ratio:.2f} p50_ms={p50:.1f} "
        f"p99_ms={p99:.1f}"
    )


Json = dict[str, Any]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", default="200,1000", help="N of each run, comma-separated")
    parser.add_argument("--idle-s", type=float, default=10.0, help="each idle window, seconds")
    parser.add_argument("--samples", type=int, default=200, help="presence changes timed")
    args = parser.parse_args()
    for n in (int(x) for x in args.players.split(",")):
        print(f"N = {n}")
        print(asyncio.run(run_one(n, args.idle_s, args.samples)), flush=True)


if __name__ == "__main__":
    main()

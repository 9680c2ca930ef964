"""The closed-loop loads of the API bench (:mod:`bench.api_bench`): hello, poll304 and play,
each measured in slices taken in turn with the others'.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from bench._api_server import HOST, BenchError, CpuWindow, Server
from bench._api_table import Table, Tally
from bench._http import Connection, build_request, connect


@dataclass
class Load:
    """Workers in a closed loop (each sends its next request when the last is answered),
    measured in slices interleaved with the other loads' slices, so a change in what
    else runs on the machine touches every load alike."""

    name: str
    workers: list[Callable[[], Awaitable[None]]]
    counter: Callable[[], int]
    cpu: CpuWindow
    count: int = 0
    seconds: float = 0.0
    slices: list[float] = field(default_factory=list)
    """requests/s of each slice."""
    note: str = ""

    @property
    def rps(self) -> float:
        return self.count / self.seconds if self.seconds > 0 else 0.0

    async def run(self, warmup: float, duration: float) -> None:
        """One slice: ``warmup`` seconds not counted, then ``duration`` counted."""
        stop = False

        async def loop(work: Callable[[], Awaitable[None]]) -> None:
            while not stop:
                await work()

        tasks = [asyncio.create_task(loop(w)) for w in self.workers]
        try:
            await asyncio.sleep(warmup)
            _check(tasks)
            window = CpuWindow(self.cpu.server)
            window.start()
            n0, t0 = self.counter(), time.perf_counter()
            await asyncio.sleep(duration)
            n1, t1 = self.counter(), time.perf_counter()
            window.stop()
            _check(tasks)
        finally:
            stop = True
            done, pending = await asyncio.wait(tasks, timeout=10)
            for t in pending:
                t.cancel()
        for t in done:
            if not t.cancelled() and t.exception() is not None:
                raise BenchError(f"{self.name}: a worker failed: {t.exception()!r}")
        self.count += n1 - n0
        self.seconds += t1 - t0
        self.slices.append((n1 - n0) / (t1 - t0))
        self.cpu.add(window)

    def report(self) -> str:
        spread = " ".join(f"{x:,.0f}" for x in self.slices)
        return (
            f"  {self.name}: {self.rps:,.0f} requests/s ({self.count} in {self.seconds:.1f} s; "
            f"slices {spread}){self.note}\n    {self.cpu.describe(self.count)}"
        )


def _check(tasks: list[asyncio.Task[None]]) -> None:
    for t in tasks:
        if t.done() and not t.cancelled() and t.exception() is not None:
            raise BenchError(f"a load worker failed: {t.exception()!r}")


async def open_connections(port: int, n: int) -> list[Connection]:
    return list(await asyncio.gather(*(connect(HOST, port) for _ in range(n))))


async def hello_load(server: Server, args: argparse.Namespace, tally: Tally) -> Load:
    conns = await open_connections(server.port, args.conns)
    raw = build_request("GET", "/healthz", host=f"{HOST}:{server.port}")

    def worker(conn: Connection) -> Callable[[], Awaitable[None]]:
        async def one() -> None:
            r = await conn.request(raw)
            tally.count("hello", r.status)

        return one

    return Load(
        "hello (GET /healthz)",
        [worker(c) for c in conns],
        lambda: tally.answers[("hello", 200)],
        CpuWindow(server),
    )


async def poll_load(
    server: Server, args: argparse.Namespace, tables: list[Table], tally: Tally
) -> Load:
    """Pollers of the seats of ``tables`` (which stay still while polled), each with the
    ETag its view answered once."""
    conns = await open_connections(server.port, args.conns)
    authority = f"{HOST}:{server.port}"
    requests: list[bytes] = []
    for i, conn in enumerate(conns):
        table, seat = tables[i % len(tables)], (i // len(tables)) % 4
        path = f"{table.url}/view"
        auth = ("authorization", f"Bearer {table.tokens[seat]}")
        r = await conn.request(build_request("GET", path, host=authority, headers=[auth]))
        tag = r.header("etag")
        if r.status != 200 or tag is None:
            raise BenchError(f"GET view: {r.status}, ETag {tag!r}")
        requests.append(
            build_request("GET", path, host=authority, headers=[auth, ("if-none-match", tag)])
        )

    def worker(conn: Connection, raw: bytes) -> Callable[[], Awaitable[None]]:
        async def one() -> None:
            r = await conn.request(raw)
            tally.count("poll", r.status)

        return one

    return Load(
        f"poll304 (GET view + If-None-Match → 304, {len(tables) * 4} seats)",
        [worker(c, raw) for c, raw in zip(conns, requests, strict=True)],
        lambda: tally.answers[("poll", 304)],
        CpuWindow(server),
    )


async def set_tables(
    server: Server, n: int, tally: Tally, name: str, *, advance: int = 0
) -> list[Table]:
    """``n`` matches with four seats claimed, each at its first play (+ ``advance``
    commands)."""
    authority = f"{HOST}:{server.port}"
    conns = await open_connections(server.port, n)
    tables = [Table(c, authority, tally) for c in conns]

    async def ready(i: int, t: Table) -> None:
        await t.create(f"{name} {i}")
        await t.to_play()
        for _ in range(advance):
            await t.step()

    await asyncio.gather(*(ready(i, t) for i, t in enumerate(tables)))
    return tables


def play_load(server: Server, tables: list[Table]) -> Load:
    tally = tables[0].tally

    def worker(t: Table) -> Callable[[], Awaitable[None]]:
        async def one() -> None:
            await t.step()

        return one

    return Load(
        f"play (POST …/actions/play, {len(tables)} matches at once)",
        [worker(t) for t in tables],
        lambda: tally.plays,
        CpuWindow(server),
    )

"""The SSE fan-out of the API bench (:mod:`bench.api_bench`): spectators stream one match,
commands are sent one at a time, and each is timed until the last subscriber has its frame.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections import Counter
from dataclasses import dataclass
from datetime import datetime

from bench._api_load import set_tables
from bench._api_server import HOST, BenchError, CpuWindow, Server
from bench._api_table import Table, Tally
from bench._http import Board, SseSubscriber, build_request


@dataclass
class Delivery:
    version: int
    action: str
    sent: float
    answered: float
    first: float
    """The first subscriber's frame."""
    delivered: float
    """The last subscriber's frame."""
    committed: float | None = None


@dataclass
class SseResult:
    subscribers: int
    deliveries: list[Delivery]
    connect_s: float
    cpu: CpuWindow
    frames: int
    timeouts: int

    @staticmethod
    def p99(values: list[float]) -> float:
        if not values:
            return float("inf")
        if len(values) == 1:
            return values[0]
        return statistics.quantiles(values, n=100, method="inclusive")[98]

    def from_commit(self) -> list[float]:
        return [1000 * (d.delivered - d.committed) for d in self.deliveries if d.committed]

    def from_sent(self) -> list[float]:
        return [1000 * (d.delivered - d.sent) for d in self.deliveries]

    def from_answer(self) -> list[float]:
        return [1000 * (d.delivered - d.answered) for d in self.deliveries]

    def first_from_commit(self) -> list[float]:
        return [1000 * (d.first - d.committed) for d in self.deliveries if d.committed]

    def spread(self) -> list[float]:
        return [1000 * (d.delivered - d.first) for d in self.deliveries]

    @property
    def p99_ms(self) -> float:
        if self.timeouts:
            return float("inf")
        committed = self.from_commit()
        if len(committed) == len(self.deliveries):
            return self.p99(committed)
        return self.p99(self.from_sent())  # no event timestamps: the upper bound

    def report(self) -> str:
        def line(name: str, xs: list[float]) -> str:
            if not xs:
                return f"    {name}: -"
            return (
                f"    {name}: p50 {statistics.median(xs):.1f} ms, p99 {self.p99(xs):.1f} ms, "
                f"max {max(xs):.1f} ms"
            )

        actions = Counter(d.action for d in self.deliveries)
        return "\n".join(
            [
                f"  sse: {self.subscribers} subscribers on one match (connected and first "
                f"frame in {self.connect_s:.1f} s); {len(self.deliveries)} commands one at a "
                f"time ({', '.join(f'{a} {n}' for a, n in actions.items())}), "
                f"{self.timeouts} not delivered to all within the timeout",
                "    last subscriber's frame after:",
                line("the commit (event timestamp)", self.from_commit()),
                line("the command sent", self.from_sent()),
                line("its answer read", self.from_answer()),
                "    first subscriber's frame after the commit, and first → last:",
                line("commit → first", self.first_from_commit()),
                line("first → last", self.spread()),
                f"    {self.frames} frames received while commands ran; "
                f"{self.cpu.describe(self.frames, 'frame')}",
            ]
        )


async def bench_sse(server: Server, args: argparse.Namespace, tally: Tally) -> SseResult:
    (table,) = await set_tables(server, 1, tally, "sse")
    board = Board()
    raw = build_request(
        "GET",
        f"{table.url}/stream",
        host=table.authority,
        headers=[("accept", "text/event-stream")],
    )
    subs = [SseSubscriber(board, raw) for _ in range(args.sse_subscribers)]
    board.subscribers = subs
    board.aim(table.version)
    loop = asyncio.get_running_loop()
    t0 = time.perf_counter()
    try:
        for i in range(0, len(subs), 100):
            batch = subs[i : i + 100]
            await asyncio.gather(
                *(loop.create_connection(s.factory, HOST, server.port) for s in batch)
            )
        try:
            await asyncio.wait_for(board.done.wait(), 60)
        except TimeoutError:
            raise BenchError(
                f"only {len(subs) - board.remaining} of {len(subs)} subscribers got the first "
                f"frame in 60 s; refused: {board.failed[:3]}"
            ) from None
        if board.failed:
            raise BenchError(f"a subscription was refused: {board.failed[0]}")
        connect_s = time.perf_counter() - t0
        await asyncio.sleep(0.5)
        deliveries: list[Delivery] = []
        timeouts = 0
        frames0 = board.frames
        cpu = CpuWindow(server)
        cpu.start()
        for _ in range(args.sse_commands):
            target = table.version + 1
            board.aim(target)
            action = await table.step()
            if action is None:
                continue
            try:
                await asyncio.wait_for(board.done.wait(), args.sse_timeout)
            except TimeoutError:
                timeouts += 1
                continue
            if min(s.last for s in subs) < 0 or any(s.closed for s in subs):
                raise BenchError("a subscriber's stream ended during the measurement")
            deliveries.append(
                Delivery(
                    target,
                    action,
                    table.sent_at,
                    table.answered_at,
                    board.first_at,
                    board.done_at,
                )
            )
            await asyncio.sleep(args.sse_gap)
        cpu.stop()
        frames = board.frames - frames0
        await add_commit_times(table, deliveries)
        return SseResult(len(subs), deliveries, connect_s, cpu, frames, timeouts)
    finally:
        for s in subs:
            s.close()
        table.conn.close()


async def add_commit_times(table: Table, deliveries: list[Delivery]) -> None:
    """Each command's first event's timestamp, from the match history (public)."""
    if not deliveries:
        return
    wanted = {d.version: d for d in deliveries}
    after = min(wanted) - 1
    last = max(wanted)
    while after < last:
        page = await table._call(
            "history", table._req("GET", f"{table.url}/history?after={after}&limit=1000"), 200
        )
        for item in page["items"]:
            d = wanted.get(item["version"])
            if d is not None:
                d.committed = datetime.fromisoformat(item["timestamp"]).timestamp()
        if not page.get("more") or not page["items"]:
            break
        after = page["next"]

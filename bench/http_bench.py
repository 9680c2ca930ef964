"""The HTTP layer's share of a command, in process: ``make bench-http`` /
``python -m bench.http_bench`` (docs/decisions.md D-http).

The real app (:func:`infra.bootstrap.build_app` on the tests' in-memory settings: the
same middleware, hooks, exception handlers and compression as a server's, logging set up
as ``infra.serve`` does, its lines thrown away) is called through its ASGI interface, with
no server and no socket, so what is timed is the app's own CPU:

* ``hello`` — ``GET /healthz``, the capacity bench's bare request;
* ``command`` — ``POST /v1/matches/{id}/actions/play`` as a seat sends it (bearer token,
  a fresh ``Idempotency-Key``, a JSON body), the bus's answer given back at once (one real
  command's, recorded): the HTTP layer alone — routing, the middleware, the handler's
  dependencies and signature, the body, the answer's encoding, the access line;
* ``cycle`` — a whole command with its fan-out: a match's four seats and a spectator each
  watch their live stream (``GET …/stream``, read chunk by chunk as the app sends it), the
  seat the frames offer a move plays it (the bus and the in-memory store for real), and
  the command counts once its five frames arrived: the process's CPU per command,
  worker threads included (the driver's own small share too);
* ``--connections`` (a server, not in process): ``python -m infra.serve`` on its own
  (:class:`bench._api_server.Server`, SQLite, ``LOG_LEVEL=INFO``) answers ``GET /healthz``
  on one kept-alive connection and on a new connection per request, blocks alternated: the
  server's CPU a request each, and what a connection opened and closed adds (a seat's
  command after the server closed its idle connection).

Each figure is the best of ``--blocks`` blocks (the machine is shared), the load average
printed with it. Run it in two checkouts alternately to compare them (the script only uses
what both have). The last line is machine-readable::

    http hello_us=<f> command_us=<f> command_x=<command/hello> cycle_us=<f> \\
        cycle_x=<cycle/hello> load=<1-min load>
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from litestar import Litestar

from bench._api_server import HOST, Server
from bench._http import build_request, connect
from infra.logging import configure_logging
from tests.api.rest import choose
from tests.apps import make_app

Scope = dict[str, Any]


def load() -> str:
    return f"{os.getloadavg()[0]:.2f}"


def scope_of(method: str, path: str, headers: list[tuple[bytes, bytes]]) -> Scope:
    target, _, query = path.partition("?")
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": target,
        "raw_path": target.encode(),
        "root_path": "",
        "query_string": query.encode(),
        "headers": [(b"host", b"bench"), *headers],
        "client": ("127.0.0.1", 40000),
        "server": ("bench", 80),
        "state": {},
    }


class Answer:
    """One answer as the app sent it."""

    def __init__(self) -> None:
        self.status = 0
        self.headers: list[tuple[bytes, bytes]] = []
        self.body = b""

    async def send(self, message: Any) -> None:
        if message["type"] == "http.response.start":
            self.status = message["status"]
            self.headers = list(message.get("headers", ()))
        else:
            self.body += message.get("body", b"")


async def call(
    app: Litestar,
    method: str,
    path: str,
    headers: list[tuple[bytes, bytes]] = [],  # noqa: B006 - read only
    body: bytes = b"",
) -> Answer:
    answer = Answer()
    sent = False

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        await asyncio.Event().wait()
        return {"type": "http.disconnect"}

    await app(scope_of(method, path, headers), receive, answer.send)  # type: ignore[arg-type]
    return answer


def bearer(token: str) -> list[tuple[bytes, bytes]]:
    return [(b"authorization", f"Bearer {token}".encode())]


JSON = [(b"content-type", b"application/json")]


class Stream:
    """One live stream read as the app sends it: the last frame's id and view."""

    def __init__(self, app: Litestar, path: str, headers: list[tuple[bytes, bytes]]) -> None:
        self.version = 0
        self.view: dict[str, Any] | None = None
        self.arrived = asyncio.Event()
        self.frames = 0
        self._stop = asyncio.Event()
        self._pending = b""
        scope = scope_of("GET", path, [(b"accept", b"text/event-stream"), *headers])
        self.task = asyncio.create_task(app(scope, self.receive, self.send))  # type: ignore[arg-type]

    async def receive(self) -> dict[str, Any]:
        if not hasattr(self, "_asked"):
            self._asked = True
            return {"type": "http.request", "body": b"", "more_body": False}
        await self._stop.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: Any) -> None:
        if message["type"] != "http.response.body":
            return
        self._pending += message.get("body", b"")
        while b"\n\n" in self._pending:
            block, _, self._pending = self._pending.partition(b"\n\n")
            self.frame(block)

    def frame(self, block: bytes) -> None:
        fields: dict[bytes, bytes] = {}
        for line in block.split(b"\n"):
            key, _, value = line.partition(b": ")
            fields[key] = value
        if b"id" not in fields or b"data" not in fields:
            return
        self.frames += 1
        self.version = int(fields[b"id"].split(b".")[0])
        self.view = json.loads(fields[b"data"]).get("view")
        self.arrived.set()

    async def until(self, version: int) -> None:
        while self.version < version:
            self.arrived.clear()
            await asyncio.wait_for(self.arrived.wait(), 10)

    async def close(self) -> None:
        self._stop.set()
        await asyncio.wait_for(self.task, 10)


class Table:
    """A match of four seats, each with its live stream, and a spectator's stream."""

    def __init__(self, app: Litestar) -> None:
        self.app = app
        self.streams: list[Stream] = []
        self.tokens: list[str] = []
        self.url = ""

    async def open(self) -> None:
        r = await call(self.app, "POST", "/v1/matches", JSON, b'{"name":"bench"}')
        assert r.status == 201, r.body
        match = json.loads(r.body)
        self.url = f"/v1/matches/{match['matchId']}"
        for seat in range(4):
            r = await call(
                self.app, "POST", f"{self.url}/seats/{seat}", JSON, b'{"name":"p%d"}' % seat
            )
            assert r.status == 201, r.body
            self.tokens.append(json.loads(r.body)["token"])
        for seat in range(4):
            self.streams.append(Stream(self.app, f"{self.url}/stream", bearer(self.tokens[seat])))
        self.streams.append(Stream(self.app, f"{self.url}/stream", []))
        await asyncio.gather(*(s.arrived.wait() for s in self.streams))

    def move(self) -> tuple[int, str, list[str]] | None:
        for seat, s in enumerate(self.streams[:4]):
            if s.view is not None and (choice := choose(s.view)) is not None:
                return seat, *choice
        return None

    async def step(self) -> bool:
        """One command the frames offer, and its five frames; False when none is offered."""
        move = self.move()
        if move is None:
            return False
        seat, action, cards = move
        r = await self.command(seat, action, cards)
        if r.status != 200:
            return False  # a race with the frames (a stale view): the next step asks again
        version = json.loads(r.body)["version"]
        await asyncio.gather(*(s.until(version) for s in self.streams))
        return True

    async def command(self, seat: int, action: str, cards: list[str]) -> Answer:
        headers = [
            *bearer(self.tokens[seat]),
            *JSON,
            (b"idempotency-key", uuid.uuid4().hex.encode()),
        ]
        body = json.dumps({"cards": cards}).encode()
        return await call(self.app, "POST", f"{self.url}/actions/{action}", headers, body)

    async def close(self) -> None:
        for s in self.streams:
            await s.close()


def per_call(n: int, run: Callable[[], Awaitable[Any]]) -> Callable[[], Awaitable[float]]:
    async def block() -> float:
        started = time.process_time()
        for _ in range(n):
            await run()
        return (time.process_time() - started) / n

    return block


async def main_async(args: argparse.Namespace) -> None:
    with open(os.devnull, "w") as sink:
        configure_logging("INFO", stream=sink)
        await in_process(args)


async def in_process(args: argparse.Namespace) -> None:
    """The in-process figures (the module docstring)."""
    app = make_app()
    async with app.lifespan():
        table = Table(app)
        await table.open()
        for _ in range(20):  # past the deal's first moves, the views in their caches
            await table.step()
        # One real command's answer, kept: the ``command`` figure gives it back at once.
        runtime = app.state.runtime
        kept: list[Any] = []
        real_call = runtime.call

        async def keep(fn: Any, *a: Any) -> Any:
            done = await real_call(fn, *a)
            kept.append(done)
            return done

        runtime.call = keep
        while not kept:
            assert await table.step()
        runtime.call = real_call
        seat, action, cards = 0, "play", ["AS"]

        async def answered(fn: Any, *a: Any) -> Any:
            return kept[0]

        async def hello() -> None:
            r = await call(app, "GET", "/healthz")
            assert r.status == 200

        async def command() -> None:
            runtime.call = answered
            try:
                r = await table.command(seat, action, cards)
            finally:
                runtime.call = real_call
            assert r.status == 200, r.body

        async def cycle() -> None:
            if not await table.step():
                await table.close()  # the round over or a stale view: a new table
                table.__init__(app)  # type: ignore[misc]
                await table.open()
                await table.step()

        runs = {
            "hello": per_call(args.hello, hello),
            "command": per_call(args.hello // 4, command),
            "cycle": per_call(args.cycle, cycle),
        }
        best = dict.fromkeys(runs, float("inf"))
        for _ in range(args.blocks):
            for name, run in runs.items():
                best[name] = min(best[name], await run())
        await table.close()
    h, c, y = (best[k] * 1e6 for k in ("hello", "command", "cycle"))
    print(f"hello   {h:8.1f} µs/request   load {load()}")
    print(
        f"command {c:8.1f} µs/request   {c / h:5.2f}x hello (HTTP only, the bus answered at once)"
    )
    print(f"cycle   {y:8.1f} µs/command   {y / h:5.2f}x hello (a command and its five frames)")
    print(
        f"http hello_us={h:.1f} command_us={c:.1f} command_x={c / h:.2f} cycle_us={y:.1f} "
        f"cycle_x={y / h:.2f} load={load()}"
    )


async def connections(args: argparse.Namespace) -> None:
    """The ``--connections`` figures (the module docstring)."""
    with tempfile.TemporaryDirectory() as workdir:
        server = Server(Path(workdir), log_level="INFO", profile=None)
        try:
            await server.wait_ready()
            raw = build_request("GET", "/healthz", host=f"{HOST}:{server.port}")
            kept = await connect(HOST, server.port)

            async def on_kept() -> None:
                await kept.request(raw)

            async def on_new() -> None:
                conn = await connect(HOST, server.port)
                await conn.request(raw)
                conn.close()

            best = {"kept": float("inf"), "new": float("inf")}
            for _ in range(args.blocks):
                for name, run in (("kept", on_kept), ("new", on_new)):
                    started = server.cpu_seconds()
                    for _ in range(args.hello):
                        await run()
                    used = (server.cpu_seconds() - started) / args.hello
                    best[name] = min(best[name], used)
            kept.close()
        finally:
            server.stop()
    k, n = best["kept"] * 1e6, best["new"] * 1e6
    print(f"server, GET /healthz on one kept-alive connection {k:8.1f} µs CPU/request")
    print(f"server, GET /healthz on a new connection each     {n:8.1f} µs CPU/request")
    print(f"http-connections kept_us={k:.1f} new_us={n:.1f} opened_us={n - k:.1f} load={load()}")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--blocks", type=int, default=7, help="blocks of each, alternated [7]")
    p.add_argument("--hello", type=int, default=2000, help="hello requests a block [2000]")
    p.add_argument("--cycle", type=int, default=200, help="commands a block [200]")
    p.add_argument(
        "--connections", action="store_true", help="a server's CPU per new connection instead"
    )
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    asyncio.run(connections(args) if args.connections else main_async(args))


if __name__ == "__main__":
    main()

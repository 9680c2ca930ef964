"""HTTP API benchmark (issue 4, "Benchmark"): ``make bench-api`` / ``python -m bench.api_bench``.

Starts the real server (``python -m infra.serve``: uvicorn, the app of ``api.app``) on a
free loopback port with the embedded SQLite store in a temporary folder (rate limiting
off: ``RATE_LIMIT_PER_MINUTE=0``; streams live an hour: ``SSE_LIFETIME_S=3600``; the deal
at once), waits for ``/readyz``, then measures in the same run:

(a) **hello** — ``GET /healthz``: a bare Litestar route answering ``{"status":"ok"}``
    (async, no store, no worker thread; the app's middleware and its JSON access line —
    ``--log-level`` INFO, as ``make serve`` — apply to it as to every route), in the same
    process: the yardstick the others are divided by.
(b) **poll304** — ``GET /v1/matches/{id}/view`` with a seat token and ``If-None-Match``
    of the current ETag → ``304 Not Modified``, over the 16 seats of 4 matches that stand
    still mid-round (``--poll-advance`` commands into their play).
(c) **play** — ``POST /v1/matches/{id}/actions/play`` on ``--matches`` matches at once,
    each with four claimed seats that the load generator plays as fast as the server
    answers: a single card led, a single of the led suit category followed (R22, R23),
    from the hands each seat's own command answers show (no extra read per move); the
    next deal's passes and bury go through the same endpoint (counted apart); a refused
    move makes the driver read the seat's view and play its legal hint. Only successful
    ``play`` commands count in ``play_rps``.
(d) **SSE fan-out** — ``--sse-subscribers`` spectators (default 2,000) stream one match
    (``GET …/stream``), then commands are sent one at a time; for each, the time until the
    LAST subscriber has received a frame whose ``id`` is at least the command's version.
    The clock starts at the command's own event timestamp, read back from the match
    history: the service's ``now`` when it began the command, a little before the commit,
    so the figure errs high. Times from the request sent and from the answer read are
    printed too.

(a), (b) and (c) are closed loops (each connection sends its next request when the last
is answered) measured in ``--slices`` slices taken in turn, a, b, c, a, b, c, …, so a
change in whatever else runs on the machine touches the three alike; the ratios by slice
are printed. The load generator is a raw asyncio HTTP/1.1 client (:mod:`bench._http`,
uvloop when installed) in this process; the server is one uvicorn process. They share the
machine's cores (with anything else running), so each figure comes with the CPU the
server, the client and other processes used: the client must not be what limits it.

``--profile`` runs the server under cProfile (all threads, :mod:`bench._profiled_serve`)
and prints its hottest functions at the end (figures measured so are slower; do not
compare them); ``--gc-trace`` records the server's garbage collections and prints how
much of each slow SSE delivery they took. The last line is machine-readable::

    api-bench hello_rps=<f> poll304_rps=<f> play_rps=<f> poll_ratio=<b/a> \
        play_ratio=<c/a> sse_subscribers=<n> sse_p99_ms=<f>

(one line; broken here for width). Targets: poll_ratio >= 0.6, play_ratio >= 0.25,
sse_p99_ms <= 250 with >= 2,000 subscribers.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ctypes
import io
import os
import pstats
import resource
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import msgspec

from bench._http import (
    Board,
    Connection,
    HttpError,
    Response,
    SseSubscriber,
    build_request,
    connect,
)
from domain.rules.cards import NUM_KINDS, card_name, parse_rank, parse_suit
from domain.rules.context import TrumpContext, trump_context

HOST = "127.0.0.1"
ROOT = Path(__file__).resolve().parent.parent
CLK_TCK = os.sysconf("SC_CLK_TCK")
PR_SET_PDEATHSIG = 1
CARD_OF = {card_name(k): k for k in range(NUM_KINDS)}
Json = dict[str, Any]
_encode = msgspec.json.encode


class BenchError(RuntimeError):
    """The bench cannot go on (the server failed, an answer was not what the API says)."""


# -- the server ------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        port: int = s.getsockname()[1]
        return port


def _die_with_parent() -> None:
    """In the child before exec: SIGTERM it if the bench dies first (Linux), so even a
    killed bench leaves no server behind."""
    with contextlib.suppress(Exception):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


class Server:
    """``python -m infra.serve`` in a subprocess, on SQLite in ``workdir``."""

    def __init__(
        self, workdir: Path, *, log_level: str, profile: Path | None, clock: str = "cpu"
    ) -> None:
        self.port = free_port()
        self.log_path = workdir / "server.log"
        self.profile = profile
        dropped = ("DATABASE_URL", "PERSISTENCE", "PYTHONUNBUFFERED")
        env = {k: v for k, v in os.environ.items() if k not in dropped}
        env.update(
            HOST=HOST,
            PORT=str(self.port),
            PERSISTENCE="sqlite",
            SQLITE_PATH=str(workdir / "bench.sqlite3"),
            LOG_LEVEL=log_level,
            RATE_LIMIT_PER_MINUTE="0",
            SSE_LIFETIME_S="3600",
            DEAL_INTERVAL_MS="0",
            WINDOW_MS="0",
            CREATE_TABLES="true",
            SHUTDOWN_TIMEOUT="3",
        )
        module = ["-m", "infra.serve"]
        if profile is not None:
            module = ["-m", "bench._profiled_serve", str(profile), clock]
        self._log = self.log_path.open("wb")
        self.proc = subprocess.Popen(
            [sys.executable, *module],
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_die_with_parent,  # noqa: PLW1509 - no other thread runs yet
        )

    @property
    def pid(self) -> int:
        return self.proc.pid

    def log_tail(self, lines: int = 30) -> str:
        try:
            text = self.log_path.read_text(errors="replace").splitlines()
        except OSError:
            return ""
        return "\n".join(text[-lines:])

    async def wait_ready(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        ready = build_request("GET", "/readyz", host=f"{HOST}:{self.port}")
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise BenchError(f"the server exited ({self.proc.returncode}):\n{self.log_tail()}")
            try:
                conn = await connect(HOST, self.port)
            except OSError:
                await asyncio.sleep(0.1)
                continue
            try:
                r = await asyncio.wait_for(conn.request(ready), 5)
            except (HttpError, TimeoutError):
                r = None
            finally:
                conn.close()
            if r is not None and r.status == 200:
                return
            await asyncio.sleep(0.1)
        raise BenchError(f"the server was not ready within {timeout:g} s:\n{self.log_tail()}")

    def cpu_seconds(self) -> float:
        """User + system CPU of the server process (all its threads) so far."""
        try:
            fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return 0.0
        return (int(fields[11]) + int(fields[12])) / CLK_TCK

    def stop(self) -> None:
        """SIGTERM (graceful), then SIGKILL after a while; always closes the log."""
        try:
            if self.proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    self.proc.send_signal(signal.SIGTERM)
                try:
                    self.proc.wait(timeout=15 if self.profile else 8)
                except subprocess.TimeoutExpired:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(self.proc.pid, signal.SIGKILL)
                    self.proc.wait(timeout=5)
        finally:
            self._log.close()


# -- CPU accounting ----------------------------------------------------------------------------


def machine_ticks() -> tuple[int, int]:
    """(busy, total) jiffies of all CPUs (/proc/stat)."""
    parts = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = parts[3] + (parts[4] if len(parts) > 4 else 0)
    total = sum(parts[:8])
    return total - idle, total


@dataclass
class CpuWindow:
    """CPU used between :meth:`start` and :meth:`stop` by this process, the server and
    the whole machine (windows can be summed with :meth:`add`)."""

    server: Server
    wall: float = 0.0
    client_s: float = 0.0
    server_s: float = 0.0
    busy_ticks: int = 0
    total_ticks: int = 0
    _t: tuple[float, float, float, int, int] = (0.0, 0.0, 0.0, 0, 0)

    def start(self) -> None:
        busy, total = machine_ticks()
        self._t = (time.perf_counter(), time.process_time(), self.server.cpu_seconds(), busy, total)

    def stop(self) -> None:
        busy, total = machine_ticks()
        t0, c0, s0, b0, n0 = self._t
        self.wall += time.perf_counter() - t0
        self.client_s += time.process_time() - c0
        self.server_s += self.server.cpu_seconds() - s0
        self.busy_ticks += busy - b0
        self.total_ticks += total - n0

    def add(self, other: CpuWindow) -> None:
        self.wall += other.wall
        self.client_s += other.client_s
        self.server_s += other.server_s
        self.busy_ticks += other.busy_ticks
        self.total_ticks += other.total_ticks

    def describe(self, requests: int, unit: str = "request") -> str:
        cores = os.cpu_count() or 1
        wall = max(self.wall, 1e-9)
        busy = self.busy_ticks / max(1, self.total_ticks)
        others = max(0.0, busy * cores - (self.client_s + self.server_s) / wall)
        per = ""
        if requests:
            per = (
                f"; per {unit}: server {1e6 * self.server_s / requests:.0f} µs, "
                f"client {1e6 * self.client_s / requests:.0f} µs"
            )
        return (
            f"CPU: server {100 * self.server_s / wall:.0f}% of a core, client "
            f"{100 * self.client_s / wall:.0f}%, other processes {100 * others:.0f}%; machine "
            f"{100 * busy:.0f}% busy ({cores} cores){per}"
        )


# -- a table of four seats played over HTTP --------------------------------------------------


def choose_play(ctx: TrumpContext, hand: list[str], trick: list[Json]) -> list[str] | None:
    """A legal play without asking the server: lead a single (always legal, R22); follow
    a single lead with a single of its suit category if the hand has one, else any card
    (R23). None for a lead of more cards (the driver then asks the view's hints)."""
    if not hand:
        return None
    if not trick:
        return [hand[0]]
    lead = trick[0]["cards"]
    if len(lead) != 1:
        return None
    category = ctx.category
    wanted = category[CARD_OF[lead[0]]]
    for name in hand:
        if category[CARD_OF[name]] == wanted:
            return [name]
    return [hand[0]]


def choose(view: Json) -> tuple[str, list[str]] | None:
    """From what a view offers (as ``tests/api/rest.py``): bury the first cards offered,
    play the first hint (or the first card when leading), else pass."""
    legal = view["legal"]
    actions = legal["actions"]
    if "bury" in actions:
        return "bury", legal["buryFrom"][: legal["buryCount"]]
    if "play" in actions:
        return "play", legal["follows"][0] if legal["follows"] else view["hand"][:1]
    if "pass" in actions:
        return "pass", []
    if "declare" in actions and not view["declarations"]:
        return "declare", legal["shows"][0]
    return None


@dataclass
class Tally:
    """Answers by (what, status), shared by every driver of a phase."""

    answers: Counter[tuple[str, int]] = field(default_factory=Counter)
    plays: int = 0
    commands: int = 0

    def count(self, what: str, status: int) -> None:
        self.answers[(what, status)] += 1

    def unexpected(self) -> dict[str, int]:
        ok = {
            ("view", 200),
            ("public", 200),
            ("hello", 200),
            ("poll", 304),
            ("history", 200),
            ("create", 201),
            ("claim", 201),
        }
        return {
            f"{w} {s}": n
            for (w, s), n in sorted(self.answers.items())
            if not (w.startswith("act:") and s == 200) and (w, s) not in ok
        }


class Table:
    """A match with four claimed seats, played by the load generator over one connection."""

    def __init__(self, conn: Connection, authority: str, tally: Tally) -> None:
        self.conn = conn
        self.authority = authority
        self.tally = tally
        self.match_id = ""
        self.tokens: list[str] = []
        self.version = 0
        self.round_id: str | None = None
        self.expected: tuple[int | None, str] | None = None
        self.trick: list[Json] = []
        self.hands: dict[int, list[str]] = {}
        self.ctx: TrumpContext | None = None
        self.pass_key: tuple[str | None, str] = (None, "")
        self.passed: set[int] = set()
        self.sent_at = 0.0
        """``time.time()`` when the last command was sent."""
        self.answered_at = 0.0
        """``time.time()`` when its answer was read."""

    @property
    def url(self) -> str:
        return f"/v1/matches/{self.match_id}"

    def _req(
        self, method: str, path: str, seat: int | None = None, body: bytes | None = None
    ) -> bytes:
        headers = [] if seat is None else [("authorization", f"Bearer {self.tokens[seat]}")]
        return build_request(method, path, host=self.authority, headers=headers, body=body)

    async def _call(self, what: str, raw: bytes, status: int) -> Json:
        r = await self.conn.request(raw)
        self.tally.count(what, r.status)
        if r.status != status:
            raise BenchError(f"{what}: {r.status} {r.body[:300]!r}")
        body: Json = r.json()
        return body

    async def create(self, name: str) -> None:
        body = _encode({"name": name})
        created = await self._call("create", self._req("POST", "/v1/matches", body=body), 201)
        self.match_id = created["matchId"]
        for seat in range(4):
            claim = _encode({"name": f"p{seat}"})
            r = await self._call(
                "claim", self._req("POST", f"{self.url}/seats/{seat}", body=claim), 201
            )
            self.tokens.append(r["token"])
        await self.resync()

    def absorb(self, view: Json, seat: int | None) -> None:
        """What the driver learns from a view (a seat's, or the public one)."""
        rid = view.get("roundId")
        if rid != self.round_id:
            self.round_id, self.hands, self.ctx = rid, {}, None
        self.version = max(self.version, view["version"])
        exp = view.get("expected")
        self.expected = None if exp is None else (exp["seat"], exp["action"])
        self.trick = view.get("trick") or []
        if self.ctx is None and view.get("trumpDecided") and view.get("levelRank"):
            self.ctx = trump_context(parse_rank(view["levelRank"]), parse_suit(view["trump"]))
        if seat is not None:
            self.hands[seat] = view["hand"]

    async def resync(self) -> None:
        self.absorb(await self._call("public", self._req("GET", f"{self.url}/public"), 200), None)

    async def view(self, seat: int) -> Json:
        view = await self._call("view", self._req("GET", f"{self.url}/view", seat), 200)
        self.absorb(view, seat)
        return view

    async def act(self, seat: int, action: str, cards: list[str]) -> bool:
        """One command; True when done (200)."""
        raw = self._req("POST", f"{self.url}/actions/{action}", seat, _encode({"cards": cards}))
        self.sent_at = time.time()
        r: Response = await self.conn.request(raw)
        self.answered_at = time.time()
        self.tally.count("act:" + action, r.status)
        if r.status != 200:
            if r.status not in (409, 412):
                raise BenchError(f"{action} by seat {seat}: {r.status} {r.body[:300]!r}")
            return False
        done: Json = r.json()
        self.absorb(done["view"], seat)
        self.version = max(self.version, done["version"])
        self.tally.commands += 1
        if action == "play":
            self.tally.plays += 1
        return True

    async def step(self) -> str | None:
        """One command, the cheapest way the table allows; the action done, or None."""
        exp = self.expected
        if exp is None:
            return await self.generic()
        seat, action = exp
        if action == "play" and seat is not None:
            hand = self.hands.get(seat)
            cards = (
                None
                if hand is None or self.ctx is None
                else choose_play(self.ctx, hand, self.trick)
            )
            if cards is None:
                view = await self.view(seat)
                follows = view["legal"]["follows"]
                cards = follows[0] if follows else view["hand"][:1]
            if await self.act(seat, "play", cards):
                return "play"
            self.expected = None  # refused: read the table again next time
            return None
        if action in ("declare_or_pass", "overcall_or_pass"):
            key = (self.round_id, action)
            if key != self.pass_key:
                self.pass_key, self.passed = key, set()
            seats = [seat] if seat is not None else [s for s in range(4) if s not in self.passed]
            for s in seats:
                self.passed.add(s)
                if await self.act(s, "pass", []):
                    return "pass"
            return await self.generic()
        if action == "bury" and seat is not None:
            legal = (await self.view(seat))["legal"]
            if await self.act(seat, "bury", legal["buryFrom"][: legal["buryCount"]]):
                return "bury"
            self.expected = None
            return None
        return await self.generic()

    async def generic(self) -> str | None:
        """The slow way: read the public view, then the views of the seats that may act,
        and do what one of them offers."""
        await self.resync()
        exp = self.expected
        if exp is None:
            raise BenchError(f"match {self.match_id}: no action is expected")
        seats = range(4) if exp[0] is None else [exp[0]]
        for seat in seats:
            choice = choose(await self.view(seat))
            if choice is not None:
                return choice[0] if await self.act(seat, *choice) else None
        await asyncio.sleep(0.05)  # e.g. a redeal under way
        return None

    async def to_play(self, limit: int = 100) -> None:
        """Commands until a seat is expected to play a card."""
        for _ in range(limit):
            if self.expected is not None and self.expected[1] == "play":
                return
            await self.step()
        raise BenchError(f"match {self.match_id} did not reach its play in {limit} commands")


# -- closed-loop load ----------------------------------------------------------------------


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


# -- SSE fan-out -------------------------------------------------------------------------------


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


# -- the run -----------------------------------------------------------------------------------


def raise_nofile(wanted: int) -> int:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(hard, max(soft, wanted))
    if target > soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def print_profile(path: Path, top: int) -> None:
    if not path.exists():
        print(f"(no profile written at {path})")
        return
    for key in ("tottime", "cumulative"):
        out = io.StringIO()
        pstats.Stats(str(path), stream=out).sort_stats(key).print_stats(top)
        text = out.getvalue()
        start = text.find("   ncalls")
        print(f"\nserver profile, by {key} (all threads, whole run):")
        print(text[start:] if start >= 0 else text)


def print_gc(path: Path, sse: SseResult | None) -> None:
    """The server's collections, and the share they took of the slowest SSE deliveries."""
    if not path.exists():
        print(f"(no GC trace written at {path})")
        return
    runs = [msgspec.json.decode(line) for line in path.read_bytes().splitlines() if line]
    print("\nserver garbage collections (whole run):")
    for gen in (0, 1, 2):
        ms = [1000 * r[1] for r in runs if r[2] == gen]
        if ms:
            print(
                f"  generation {gen}: {len(ms)} collections, {sum(ms):.0f} ms in all, "
                f"longest {max(ms):.1f} ms"
            )
    if sse is None or not sse.deliveries:
        return

    def overlap(a: float, b: float) -> tuple[float, int]:
        spans = [(max(a, s), min(b, s + d)) for s, d, g in runs if s < b and s + d > a]
        return 1000 * sum(y - x for x, y in spans), sum(
            1 for s, d, g in runs if g == 2 and a < s < b
        )

    print("  the slowest SSE deliveries (commit → last subscriber) and the GC inside them:")
    slowest = sorted(sse.deliveries, key=lambda d: d.delivered - (d.committed or d.sent))
    for d in reversed(slowest[-5:]):
        start = d.committed or d.sent
        gc_ms, gen2 = overlap(start, d.delivered)
        print(
            f"    v{d.version}: {1000 * (d.delivered - start):.0f} ms, of it GC {gc_ms:.0f} ms "
            f"({gen2} full collections)"
        )
    total = sum(overlap(d.committed or d.sent, d.delivered)[0] for d in sse.deliveries)
    print(f"  GC inside all {len(sse.deliveries)} deliveries: {total:.0f} ms")


PHASES = ("hello", "poll", "play", "sse")


async def run(args: argparse.Namespace, workdir: Path) -> str:
    task = asyncio.current_task()
    assert task is not None
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, task.cancel)
    phases = set(args.phases)
    limit = raise_nofile(args.sse_subscribers + 1000)
    if "sse" in phases and limit < args.sse_subscribers + 100:
        raise BenchError(f"open files limit {limit} is too low for {args.sse_subscribers} streams")
    profile = workdir / "server.prof" if args.profile or args.gc_trace else None
    mode = "gc" if args.gc_trace else args.profile or "cpu"
    server = Server(workdir, log_level=args.log_level, profile=profile, clock=mode)
    tally = Tally()
    hello: Load | None = None
    poll: Load | None = None
    play: Load | None = None
    sse: SseResult | None = None
    try:
        t_start = time.perf_counter()
        await server.wait_ready()
        print(
            f"server: python -m infra.serve, pid {server.pid}, http://{HOST}:{server.port}, "
            f"SQLite {workdir / 'bench.sqlite3'}, LOG_LEVEL={args.log_level}, rate limit off, "
            "SSE lifetime 3600 s"
            f"{f', observed ({mode})' if profile else ''}; ready in "
            f"{time.perf_counter() - t_start:.1f} s",
            flush=True,
        )
        print(
            f"client: raw asyncio HTTP/1.1 ({type(asyncio.get_running_loop()).__module__}), "
            f"{args.conns} connections for hello/poll, {args.matches} matches for play; "
            f"{args.seconds:g} s each in {args.slices} interleaved slices (warm-up "
            f"{args.warmup:g} s, then {args.slice_warmup:g} s a slice); {os.cpu_count()} "
            "cores shared by the client, the server and anything else running",
            flush=True,
        )
        loads: list[Load] = []
        tables: list[Table] = []
        if "hello" in phases:
            hello = await hello_load(server, args, tally)
            loads.append(hello)
        if "poll" in phases:
            still = await set_tables(server, 4, tally, "poll", advance=args.poll_advance)
            tables += still
            poll = await poll_load(server, args, still, tally)
            loads.append(poll)
        if "play" in phases:
            players = await set_tables(server, args.matches, tally, "play")
            tables += players
            play = play_load(server, players)
            loads.append(play)
        before = Counter(tally.answers)
        commands0, plays0 = tally.commands, tally.plays
        per_slice = args.seconds / args.slices
        for i in range(args.slices):
            for load in loads:
                await load.run(args.warmup if i == 0 else args.slice_warmup, per_slice)
        if play is not None:
            during = tally.answers - before
            other = {k: v for k, v in sorted(during.items()) if k[0].startswith("act:")}
            play.note = (
                f"\n    all commands while playing, warm-ups included: "
                f"{tally.commands - commands0} done ({tally.plays - plays0} plays); answers "
                + ", ".join(f"{w[4:]} {s}: {n}" for (w, s), n in other.items())
            )
        for load in loads:
            print(load.report(), flush=True)
        if hello is not None and len(hello.slices) == args.slices:
            for other_load in (poll, play):
                if other_load is not None:
                    pairs = zip(other_load.slices, hello.slices, strict=True)
                    print(
                        f"  {other_load.name.split(' ')[0]} / hello by slice: "
                        + " ".join(f"{x / h:.3f}" for x, h in pairs if h)
                    )
        for t in tables:
            t.conn.close()
        if "sse" in phases:
            sse = await bench_sse(server, args, tally)
            print(sse.report(), flush=True)
            if args.sse_detail:
                for d in sse.deliveries:
                    c = d.committed or d.sent
                    print(
                        f"    v{d.version} {d.action}: commit→first "
                        f"{1000 * (d.first - c):.1f} ms, first→last "
                        f"{1000 * (d.delivered - d.first):.1f} ms"
                    )
        odd = tally.unexpected()
        if odd:
            print(f"  other answers: {odd}")
        print(f"run time {time.perf_counter() - t_start:.0f} s", flush=True)
    finally:
        server.stop()
        if server.proc.returncode not in (0, -signal.SIGTERM, None):
            print(f"server exit code {server.proc.returncode}; log tail:\n{server.log_tail()}")
    if profile is not None and args.gc_trace:
        print_gc(profile, sse)
    elif profile is not None:
        print_profile(profile, args.profile_top)

    nan = float("nan")
    a = hello.rps if hello else nan
    b = poll.rps if poll else nan
    c = play.rps if play else nan
    poll_ratio = b / a if a > 0 else nan
    play_ratio = c / a if a > 0 else nan
    subscribers = sse.subscribers if sse else 0
    p99 = sse.p99_ms if sse else nan
    targets = [
        ("poll_ratio >= 0.6", poll_ratio >= 0.6),
        ("play_ratio >= 0.25", play_ratio >= 0.25),
        ("sse_p99_ms <= 250", p99 <= 250),
        ("sse_subscribers >= 2000", subscribers >= 2000),
    ]
    print("targets: " + ", ".join(f"{name} {'met' if ok else 'MISSED'}" for name, ok in targets))
    return (
        f"api-bench hello_rps={a:.1f} poll304_rps={b:.1f} play_rps={c:.1f} "
        f"poll_ratio={poll_ratio:.3f} play_ratio={play_ratio:.3f} "
        f"sse_subscribers={subscribers} sse_p99_ms={p99:.1f}"
    )


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python -m bench.api_bench", description=__doc__.split("\n")[0]
    )
    p.add_argument("--seconds", type=float, default=10.0, help="measured seconds per rate [10]")
    p.add_argument("--slices", type=int, default=5, help="interleaved slices per rate [5]")
    p.add_argument("--warmup", type=float, default=1.5, help="first warm-up seconds [1.5]")
    p.add_argument("--slice-warmup", type=float, default=0.3, help="warm-up of later slices [0.3]")
    p.add_argument(
        "--poll-advance", type=int, default=40, help="commands played before polling [40]"
    )
    p.add_argument("--conns", type=int, default=32, help="connections for hello/poll [32]")
    p.add_argument("--matches", type=int, default=16, help="matches played at once [16]")
    p.add_argument("--sse-subscribers", type=int, default=2000, help="SSE subscribers [2000]")
    p.add_argument("--sse-commands", type=int, default=40, help="commands timed [40]")
    p.add_argument("--sse-timeout", type=float, default=10.0, help="seconds per delivery [10]")
    p.add_argument("--sse-gap", type=float, default=0.02, help="pause between commands [0.02]")
    p.add_argument("--sse-detail", action="store_true", help="print every SSE delivery")
    p.add_argument("--log-level", default="INFO", help="the server's LOG_LEVEL [INFO]")
    p.add_argument(
        "--profile",
        nargs="?",
        const="cpu",
        choices=["cpu", "wall"],
        help="cProfile the server (per-thread CPU time, or wall time) and print hot spots",
    )
    p.add_argument(
        "--phases",
        default="hello,poll,play,sse",
        help="comma-separated subset of hello,poll,play,sse (for profiling) [all]",
    )
    p.add_argument("--profile-top", type=int, default=30, help="functions printed [30]")
    p.add_argument("--gc-trace", action="store_true", help="trace the server's garbage collections")
    args = p.parse_args(argv)
    args.phases = [x.strip() for x in args.phases.split(",") if x.strip()]
    unknown = sorted(set(args.phases) - set(PHASES))
    if unknown or not args.phases:
        p.error(f"--phases: one or more of {','.join(PHASES)}, not {unknown or 'nothing'}")
    if args.profile and args.gc_trace:
        p.error("--profile and --gc-trace: one at a time")
    if min(args.sse_subscribers, args.matches, args.conns, args.slices) < 1:
        p.error("--sse-subscribers, --matches, --conns and --slices must be >= 1")
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    runner: Callable[[Coroutine[Any, Any, str]], str] = asyncio.run
    with contextlib.suppress(ImportError):
        import uvloop  # noqa: PLC0415 - optional: a cheaper client

        runner = uvloop.run
    with tempfile.TemporaryDirectory(prefix="api-bench-") as tmp:
        try:
            line = runner(run(args, Path(tmp)))
        except (BenchError, HttpError, OSError) as e:
            sys.stderr.write(f"api-bench failed: {e!r}\n")
            raise SystemExit(1) from None
        except asyncio.CancelledError:
            sys.stderr.write("api-bench stopped (SIGTERM); the server was stopped\n")
            raise SystemExit(128 + signal.SIGTERM) from None
    print(line, flush=True)


if __name__ == "__main__":
    main()

"""The capacity bench's players: a match of four seat clients and a spectator.

A :class:`Match` creates a match over the API (``POST /v1/matches``), claims its four
seats (``POST …/seats/{n}``, one connection per seat, as four phones would), then opens
five live streams (``GET …/stream``): each seat's with its seat token, and a
spectator's. A seat acts when its stream (or its own last answer) shows a view whose
``legal`` offers it something: after a think time drawn uniformly from ``think``, it
sends the move :func:`~bench._capacity_stream.choose` picks from its newest view
(``POST …/actions/{action}`` with an ``Idempotency-Key``). A refused move (409/412,
e.g. another seat spoke first while declaring) waits for a newer view (or looks
at the same one again after ``REFUSED_RETRY_S``).

What is measured (into the :class:`Step` the crowd (:mod:`bench._capacity_crowd`) is filling):

* command latency: the POST sent → its answer read, every command answered while the
  step measures;
* push latency: a ``200`` answer's version ``v`` read by the actor → the first frame with
  an id ``>= v`` on each of the match's other four streams (three seats, the spectator);
  a stream that had such a frame before the answer counts 0;
* lost: an answered version that some other stream of the match never delivered a frame
  at or beyond — counted when the crowd drains (actions stopped, ``grace`` seconds for the
  last frames) and when a match ends or a stream breaks — and every version a stream
  skipped (the service sends one frame per version).
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from uuid import uuid4

import msgspec

from bench._capacity_stream import SeatView, ViewStream, choose, decode_done, decode_frame
from bench._http import Connection, HttpError, Response, build_request

if TYPE_CHECKING:
    from bench._capacity_crowd import Crowd

SPECTATOR = 4
"""Index of the spectator's stream (seats are 0..3)."""
COMMAND_TIMEOUT_S = 30.0
CLAIM_ATTEMPTS = 20
REFUSED_RETRY_S = 3.0
_encode = msgspec.json.encode


class BenchError(RuntimeError):
    """The bench cannot go on (the server failed, an answer was not what the API says)."""


@dataclass
class Step:
    """What one rung of the ladder measured (latencies in seconds)."""

    matches: int
    measuring: bool = False
    commands: int = 0
    """``200`` answers read while measuring."""
    latencies: list[float] = field(default_factory=list)
    sent: list[tuple[float, str]] = field(default_factory=list)
    """Per latency, when its command was sent (``perf_counter``) and its action."""
    pushes: list[float] = field(default_factory=list)
    answers: Counter[str] = field(default_factory=Counter)
    """Command answers while measuring, by ``action status``."""
    acked: int = 0
    """``200`` answers in the whole step (ramp and drain included): each must be pushed."""
    lost: int = 0
    retries: int = 0
    opened: int = 0
    """Seat connections opened while measuring (the server closed them while idle)."""
    broken: list[str] = field(default_factory=list)
    """Streams that ended while in use, and why."""
    seconds: float = 0.0


@dataclass
class Pending:
    """An answered version not yet seen on every other stream of its match."""

    version: int
    answered: float
    waiting: set[int]
    timed: bool
    step: Step


@dataclass(eq=False)
class Seat:
    index: int
    conn: Connection
    token: str = ""
    view: SeatView | None = None
    busy: bool = False
    """Thinking, or its command in flight."""
    refused_at: int = -1
    """The version of the view a refused move was chosen from: wait for a newer one."""


class Match:
    """One match in play (see the module docstring)."""

    def __init__(self, crowd: Crowd, serial: int) -> None:
        self.crowd = crowd
        self.serial = serial
        self.match_id = ""
        self.seats = [Seat(i, Connection(crowd.host, crowd.port_of(serial + i))) for i in range(4)]
        self.streams: list[ViewStream] = []
        self.pending: list[Pending] = []
        self.done = asyncio.Event()
        self.error: str | None = None

    def __hash__(self) -> int:
        return self.serial

    @property
    def url(self) -> str:
        return f"/v1/matches/{self.match_id}"

    def _request(self, method: str, path: str, seat: Seat | None, body: bytes | None) -> bytes:
        headers = [] if seat is None else [("authorization", f"Bearer {seat.token}")]
        if method == "POST" and seat is not None and seat.token:
            headers.append(("idempotency-key", uuid4().hex))
        return build_request(method, path, host=self.crowd.authority, headers=headers, body=body)

    async def _call(self, seat: Seat, raw: bytes) -> Response:
        """One request on the seat's connection; a connection the server closed while
        idle (``KEEP_ALIVE_TIMEOUT``) is opened again and the request sent again once — a
        command keeps its Idempotency-Key, so this is safe."""
        step = self.crowd.step
        if step.measuring and (seat.conn.closed or seat.conn.transport is None):
            step.opened += 1
        async with asyncio.timeout(COMMAND_TIMEOUT_S):
            try:
                return await seat.conn.request(raw)
            except HttpError:
                self.crowd.step.retries += 1
                seat.conn.close()
                return await seat.conn.request(raw)

    async def run(self) -> None:
        try:
            await self._start()
            await self.done.wait()
            give_up = time.perf_counter() + self.crowd.grace
            while self.pending and time.perf_counter() < give_up:
                await asyncio.sleep(0.05)  # the last frames of a match that ended
        except (HttpError, OSError, TimeoutError, BenchError, KeyError, ValueError) as e:
            self.error = f"match {self.serial}: {e!r}"
        finally:
            self.give_up()
            self.close()
        self.crowd.ended(self, self.error)

    async def _start(self) -> None:
        crowd = self.crowd
        host = self.seats[0]
        r = await self._call(host, self._request("POST", "/v1/matches", None, crowd.create_body))
        if r.status != 201:
            raise BenchError(f"create: {r.status} {r.body[:300]!r}")
        self.match_id = r.json()["matchId"]
        crowd.started += 1

        async def claim(seat: Seat) -> None:
            """Claim the seat; another seat's claim may change the match first (a
            409 version conflict): try again, as a client told to reload would."""
            body = _encode({"name": f"player {seat.index}"})
            path = f"{self.url}/seats/{seat.index}"
            for _ in range(CLAIM_ATTEMPTS):
                answer = await self._call(seat, self._request("POST", path, None, body))
                if answer.status == 201:
                    seat.token = answer.json()["token"]
                    return
                if answer.status != 409:
                    break
                await asyncio.sleep(crowd.rng.uniform(0.01, 0.1))
            raise BenchError(f"claim: {answer.status} {answer.body[:300]!r}")

        await asyncio.gather(*(claim(s) for s in self.seats))
        loop = asyncio.get_running_loop()
        for index in range(5):
            seat = self.seats[index] if index < SPECTATOR else None
            headers = [("accept", "text/event-stream")]
            if seat is not None:
                headers.append(("authorization", f"Bearer {seat.token}"))
            raw = build_request("GET", f"{self.url}/stream", host=crowd.authority, headers=headers)
            stream = ViewStream(raw, self._sink(index), self._ender(index))
            self.streams.append(stream)
        for index, stream in enumerate(self.streams):
            port = crowd.port_of(self.serial + index + 1)
            await loop.create_connection(stream.factory, crowd.host, port)

    def _sink(self, index: int) -> Callable[[int, bytes, float], None]:
        def on_frame(version: int, data: bytes, at: float) -> None:
            self.delivered(index, version, at)
            if index < SPECTATOR:
                seat = self.seats[index]
                if seat.view is None or version > seat.view.version:
                    self._absorb(seat, decode_frame(data).view)

        return on_frame

    def _ender(self, index: int) -> Callable[[str], None]:
        def on_end(reason: str) -> None:
            if not self.done.is_set():
                self.crowd.step.broken.append(f"match {self.serial} stream {index}: {reason}")
                self.done.set()

        return on_end

    def _absorb(self, seat: Seat, view: SeatView) -> None:
        seat.view = view
        if view.match_finished:
            self.done.set()
            return
        self.consider(seat)

    def consider(self, seat: Seat) -> None:
        """Think about a move when the seat's newest view offers one."""
        view = seat.view
        crowd = self.crowd
        if (
            seat.busy
            or crowd.paused
            or self.done.is_set()
            or view is None
            or not view.legal.actions
            or view.version <= seat.refused_at
        ):
            return
        seat.busy = True
        low, high = crowd.think
        asyncio.get_running_loop().call_later(crowd.rng.uniform(low, high), self._decide, seat)

    def _decide(self, seat: Seat) -> None:
        crowd = self.crowd
        view = seat.view
        move = (
            None if view is None or crowd.paused or self.done.is_set() else choose(view, crowd.rng)
        )
        if view is None or move is None:
            seat.busy = False
            return
        crowd.track(self._act(seat, view, *move))

    async def _act(self, seat: Seat, view: SeatView, action: str, cards: list[str]) -> None:
        crowd = self.crowd
        raw = self._request("POST", f"{self.url}/actions/{action}", seat, _encode({"cards": cards}))
        crowd.in_flight += 1
        try:
            sent = time.perf_counter()
            r = await self._call(seat, raw)
            answered = time.perf_counter()
        except (HttpError, OSError, TimeoutError) as e:
            crowd.step.answers[f"{action} error"] += 1
            crowd.step.broken.append(f"match {self.serial} seat {seat.index} {action}: {e!r}")
            seat.conn.close()
            self._refused(seat, view)
            return
        finally:
            crowd.in_flight -= 1
            seat.busy = False
        step = crowd.step
        if step.measuring:
            step.latencies.append(answered - sent)
            step.sent.append((sent, action))
            step.answers[f"{action} {r.status}"] += 1
        if r.status != 200:
            if r.status not in (409, 412):
                step.broken.append(f"{action} {r.status}: {r.body[:200]!r}")
            self._refused(seat, view)
            return
        try:
            done = decode_done(r.body)
        except msgspec.DecodeError as e:
            step.broken.append(f"{action} 200 unreadable: {e!r}")
            self._refused(seat, view)
            return
        step.acked += 1
        if step.measuring:
            step.commands += 1
        self.acked(seat.index, done.version, answered, step)
        current = seat.view
        if current is None or done.view.version >= current.version:
            self._absorb(seat, done.view)
        else:
            self.consider(seat)

    def _refused(self, seat: Seat, view: SeatView) -> None:
        """Wait for a newer view; the same one is looked at again after a while (a
        refusal with no newer version must not stall the match)."""
        seat.refused_at = view.version

        def again() -> None:
            if seat.refused_at == view.version:
                seat.refused_at = -1
                self.consider(seat)

        asyncio.get_running_loop().call_later(REFUSED_RETRY_S, again)

    # -- push latency ---------------------------------------------------------------------

    def acked(self, actor: int, version: int, answered: float, step: Step) -> None:
        waiting = set()
        for index, stream in enumerate(self.streams):
            if index == actor:
                continue
            if stream.last >= version:
                if step.measuring:
                    step.pushes.append(0.0)
            else:
                waiting.add(index)
        if waiting:
            self.pending.append(Pending(version, answered, waiting, step.measuring, step))

    def delivered(self, index: int, version: int, at: float) -> None:
        if not self.pending:
            return
        kept = []
        for p in self.pending:
            if index in p.waiting and p.version <= version:
                p.waiting.discard(index)
                if p.timed:
                    p.step.pushes.append(max(0.0, at - p.answered))
            if p.waiting:
                kept.append(p)
        self.pending = kept

    def give_up(self) -> None:
        """Whatever is still owed now is lost."""
        for p in self.pending:
            p.step.lost += 1
        self.pending = []
        for stream in self.streams:  # a frame per version: an id skipped is a version lost
            self.crowd.step.lost += stream.skipped
            stream.skipped = 0

    def close(self) -> None:
        for stream in self.streams:
            stream.close()
        for seat in self.seats:
            seat.conn.close()

"""A minimal HTTP/1.1 keep-alive client on asyncio protocols, for the API bench.

Cheap on purpose (the bench shares two cores with the server): one request at a time
per connection, requests prebuilt as bytes, responses framed by ``Content-Length`` only
(the API's JSON and 304 answers), and a separate protocol for Server-Sent Events that
only looks for ``id:`` lines. Loopback only; not a general-purpose client.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable
from typing import Any, NamedTuple, cast

import msgspec

_json_decoder = msgspec.json.Decoder()


class HttpError(RuntimeError):
    """A response the bench did not expect, or a connection that broke."""


class Response(NamedTuple):
    status: int
    head: bytes
    body: bytes

    def header(self, name: str) -> str | None:
        """The first header ``name`` (case-insensitive), else None."""
        needle = b"\r\n" + name.lower().encode() + b":"
        lower = self.head.lower()
        i = lower.find(needle)
        if i < 0:
            return None
        j = self.head.find(b"\r\n", i + len(needle))
        value = self.head[i + len(needle) : j if j >= 0 else len(self.head)]
        return value.strip().decode("latin-1")

    def json(self) -> Any:
        return _json_decoder.decode(self.body)


def build_request(
    method: str,
    path: str,
    *,
    host: str,
    headers: Iterable[tuple[str, str]] = (),
    body: bytes | None = None,
) -> bytes:
    """The request's bytes (keep-alive; ``body`` is sent as JSON)."""
    lines = [f"{method} {path} HTTP/1.1", f"host: {host}"]
    lines += [f"{k}: {v}" for k, v in headers]
    if body is not None:
        lines += ["content-type: application/json", f"content-length: {len(body)}"]
    raw = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
    return raw + body if body is not None else raw


class Connection(asyncio.Protocol):
    """One keep-alive connection: ``await request(raw)`` → :class:`Response`. Opened
    again when the server has closed it (idle for ``KEEP_ALIVE_TIMEOUT``, 75 s)."""

    def __init__(self, host: str, port: int) -> None:
        self.host = host
        self.port = port
        self.transport: asyncio.Transport | None = None
        self._buf = bytearray()
        self._waiter: asyncio.Future[Response] | None = None
        self.closed = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is no subclass

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_exception(HttpError(f"connection lost: {exc!r}"))

    def data_received(self, data: bytes) -> None:
        self._buf += data
        waiter = self._waiter
        if waiter is None:
            return
        buf = self._buf
        end = buf.find(b"\r\n\r\n")
        if end < 0:
            return
        head = bytes(buf[:end])
        lower = head.lower()
        i = lower.find(b"\r\ncontent-length:")
        if i >= 0:
            j = lower.find(b"\r\n", i + 17)
            length = int(lower[i + 17 : j if j >= 0 else len(lower)])
        elif b"\r\ntransfer-encoding:" in lower:
            waiter.set_exception(HttpError("chunked responses are not supported"))
            self._waiter = None
            return
        else:
            length = 0
        total = end + 4 + length
        if len(buf) < total:
            return
        body = bytes(buf[end + 4 : total])
        del buf[:total]
        self._waiter = None
        waiter.set_result(Response(int(head[9:12]), head, body))

    async def open(self) -> None:
        self.closed = False
        self._buf.clear()
        loop = asyncio.get_running_loop()
        await loop.create_connection(self._itself, self.host, self.port)

    def _itself(self) -> Connection:
        return self

    async def request(self, raw: bytes) -> Response:
        if self.closed or self.transport is None:
            await self.open()
        assert self.transport is not None
        fut: asyncio.Future[Response] = asyncio.get_running_loop().create_future()
        self._waiter = fut
        self.transport.write(raw)
        return await fut

    def close(self) -> None:
        if self.transport is not None and not self.closed:
            self.transport.close()


async def connect(host: str, port: int) -> Connection:
    conn = Connection(host, port)
    await conn.open()
    return conn


class Board:
    """Where a crowd of SSE subscribers stands: the moments (``time.time()``) the first
    and the last of them received a frame with ``id >= target``."""

    def __init__(self) -> None:
        self.subscribers: list[SseSubscriber] = []
        self.target = 0
        self.remaining = 0
        self.first_at = 0.0
        self.done_at = 0.0
        self.done = asyncio.Event()
        self.frames = 0
        self.failed: list[str] = []

    def aim(self, target: int) -> None:
        """Wait for ``target`` from now on (call before the command that makes it)."""
        self.target = target
        self.remaining = sum(1 for s in self.subscribers if s.last < target)
        self.first_at = 0.0
        self.done.clear()
        if self.remaining == 0:
            self.first_at = self.done_at = time.time()
            self.done.set()

    def reached(self) -> None:
        if not self.first_at:
            self.first_at = time.time()
        self.remaining -= 1
        if self.remaining == 0:
            self.done_at = time.time()
            self.done.set()


class SseSubscriber(asyncio.Protocol):
    """One ``GET …/stream`` subscriber: tracks the highest ``id:`` received."""

    def __init__(self, board: Board, request: bytes) -> None:
        self.board = board
        self.request = request
        self.last = -1
        self._tail = b""
        self._started = False
        self.transport: asyncio.Transport | None = None
        self.closed = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is no subclass
        self.transport.write(self.request)

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True

    def data_received(self, data: bytes) -> None:
        if not self._started:
            self._started = True
            if not data.startswith(b"HTTP/1.1 200"):
                self.board.failed.append(data[:200].decode("latin-1", "replace"))
                return
        buf = self._tail + data
        end = len(buf)
        vid = -1
        while True:
            i = buf.rfind(b"\nid: ", 0, end)
            if i < 0:
                self._tail = buf[-24:]
                break
            j = buf.find(b"\n", i + 5)
            if j < 0:  # a partial id line at the end: keep it for the next chunk
                self._tail = buf[i:]
                end = i
                continue
            vid = int(buf[i + 5 : j])
            if end == len(buf):
                self._tail = buf[-24:]
            break
        if vid > self.last:
            board = self.board
            board.frames += 1
            if self.last < board.target <= vid:
                self.last = vid
                board.reached()
            else:
                self.last = vid

    def close(self) -> None:
        if self.transport is not None and not self.closed:
            self.transport.close()

    def factory(self) -> SseSubscriber:
        """``loop.create_connection(sub.factory, …)``: this very subscriber."""
        return self

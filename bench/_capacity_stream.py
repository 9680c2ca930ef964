"""The capacity bench's live-stream client and the seat views it reads (``make bench-capacity``).

:class:`ViewStream` is one ``GET /v1/matches/{id}/stream`` on an asyncio protocol: it
checks the ``200``, undoes the chunked transfer coding (uvicorn's for a streamed body),
splits the Server-Sent Events into frames (``event: view`` / ``id: <match version>`` /
``data: {"version", "event", "view"}``; ``: ping``, ``retry:`` and a paced deal's
``event: deal`` blocks carry no id) and reports, once per read from the socket, the
highest ``id`` among the frames completed by that read, with that frame's ``data`` — a
seat only needs the newest view. The service sends one frame per version: every id that
does not follow the one before counts the versions skipped (:attr:`ViewStream.skipped`).

:class:`SeatView` decodes only the fields of the seat view (:class:`services.view_types.
SeatView`, R33) that a player looks at to choose a move: the version, the hand and the
``legal`` hints (:class:`services.legal.LegalActions`). :func:`choose` is the player's
choice among them. Loopback only; not a general-purpose client.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable
from typing import cast

import msgspec


class Legal(msgspec.Struct, rename="camel"):
    """What the service accepts from the seat now (``legal`` of the seat view)."""

    actions: list[str] = []
    shows: list[list[str]] = []
    bury_from: list[str] = []
    bury_count: int = 0
    lead: str | None = None
    follows: list[list[str]] = []


class SeatView(msgspec.Struct, rename="camel"):
    """The few fields of a seat's view the player reads (other fields are skipped)."""

    version: int
    match_finished: bool = False
    hand: list[str] = []
    legal: Legal = msgspec.field(default_factory=Legal)


class Frame(msgspec.Struct):
    """A live frame: the view after its version (the event is not read)."""

    view: SeatView


class CommandDone(msgspec.Struct):
    """A command's ``200`` answer: the version it left and the actor's view."""

    version: int
    view: SeatView


decode_frame = msgspec.json.Decoder(Frame).decode
decode_done = msgspec.json.Decoder(CommandDone).decode

DECLARE_CHANCE = 0.5
"""How often a seat offered a declaration (R17) makes one rather than passing."""
OVERCALL_CHANCE = 0.15
"""How often a seat offered an overcall (R20) makes one rather than passing."""


def choose(view: SeatView, rng: random.Random) -> tuple[str, list[str]] | None:
    """A move among those the view offers (R33: nothing else is known): bury 8 cards
    drawn from those offered (R21); follow with one of the offered plays (R23) or lead a
    single card of the hand, always a legal lead (R22); declare or overcall now and then
    with one of the offered shows (R17, R20), else pass; never ask for a redeal."""
    legal = view.legal
    actions = legal.actions
    if "bury" in actions:
        return "bury", rng.sample(legal.bury_from, legal.bury_count)
    if "play" in actions:
        if legal.follows:
            return "play", rng.choice(legal.follows)
        return ("play", [rng.choice(view.hand)]) if view.hand else None
    for action, chance in (("declare", DECLARE_CHANCE), ("overcall", OVERCALL_CHANCE)):
        if action in actions and legal.shows and rng.random() < chance:
            return action, rng.choice(legal.shows)
    if "pass" in actions:
        return "pass", []
    return None


FrameSink = Callable[[int, bytes, float], None]
"""``(highest id, its frame's data, time.perf_counter() of the read)``."""


class ViewStream(asyncio.Protocol):
    """One live stream; ``on_frame`` per read that completed frames, ``on_end(reason)``
    once when it stops (refused, or the connection closed)."""

    def __init__(self, request: bytes, on_frame: FrameSink, on_end: Callable[[str], None]) -> None:
        self.request = request
        self.on_frame = on_frame
        self.on_end = on_end
        self.transport: asyncio.Transport | None = None
        self.ended = False
        self.last = -1
        """The highest id received."""
        self.skipped = 0
        """Versions between two consecutive frames' ids that no frame carried."""
        self._head = True
        self._chunked = False
        self._raw = bytearray()
        self._text = bytearray()
        self._data_left = 0
        """Bytes of the current chunk still to come, then its CRLF (``_crlf_left``)."""
        self._crlf_left = 0

    def factory(self) -> ViewStream:
        """``loop.create_connection(stream.factory, …)``: this very stream."""
        return self

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is no subclass
        self.transport.write(self.request)

    def connection_lost(self, exc: Exception | None) -> None:
        self._end(f"connection closed ({exc!r})" if exc else "connection closed")

    def _end(self, reason: str) -> None:
        if not self.ended:
            self.ended = True
            self.on_end(reason)

    def close(self) -> None:
        self.ended = True  # closed on purpose: not reported
        if self.transport is not None:
            self.transport.close()

    def data_received(self, data: bytes) -> None:
        now = time.perf_counter()
        if self._head:
            self._raw += data
            end = self._raw.find(b"\r\n\r\n")
            if end < 0:
                return
            head = bytes(self._raw[:end]).lower()
            if not head.startswith(b"http/1.1 200"):
                self._end(f"refused: {bytes(self._raw[:300])!r}")
                self.close()
                return
            self._head = False
            self._chunked = b"\r\ntransfer-encoding: chunked" in head
            rest = bytes(self._raw[end + 4 :])
            self._raw.clear()
            data = rest
        if self._chunked:
            self._raw += data
            self._dechunk()
        else:
            self._text += data
        self._frames(now)

    def _dechunk(self) -> None:
        """Move the chunks' payload from ``_raw`` to ``_text`` (RFC 9112 §7.1)."""
        raw, pos = self._raw, 0
        while True:
            if self._data_left:
                take = min(self._data_left, len(raw) - pos)
                self._text += raw[pos : pos + take]
                pos += take
                self._data_left -= take
                if self._data_left:
                    break
            if self._crlf_left:
                take = min(self._crlf_left, len(raw) - pos)
                pos += take
                self._crlf_left -= take
                if self._crlf_left:
                    break
            eol = raw.find(b"\r\n", pos)
            if eol < 0:
                break
            size = int(bytes(raw[pos:eol]).split(b";")[0], 16)
            pos = eol + 2
            if size == 0:  # the last chunk: the server ended the stream
                self._end("the server ended the stream")
                break
            self._data_left, self._crlf_left = size, 2
        del raw[:pos]

    def _frames(self, now: float) -> None:
        text = self._text
        end = text.rfind(b"\n\n")
        if end < 0:
            return
        best, best_data = -1, b""
        for block in bytes(text[:end]).split(b"\n\n"):
            vid, data = -1, b""
            for line in block.split(b"\n"):
                if line.startswith(b"id: "):
                    vid = int(line[4:])
                elif line.startswith(b"data: "):
                    data = line[6:]
            if vid >= 0:
                seen = max(self.last, best)
                if seen >= 0 and vid > seen + 1:
                    self.skipped += vid - seen - 1
            if vid > best:
                best, best_data = vid, data
        del text[: end + 2]
        if best > self.last:
            self.last = best
            self.on_frame(best, best_data, now)

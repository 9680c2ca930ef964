"""The capacity bench's client pieces (``make bench-capacity``), without a server: the
live-stream parser, the seat's choice of move (R17–R23, only what ``legal`` offers, R33)
and the definition of a lost frame."""

from __future__ import annotations

import random

import msgspec
import pytest

from bench._capacity_crowd import Crowd
from bench._capacity_match import Match, Step
from bench._capacity_stream import Legal, SeatView, ViewStream, choose

HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"


def chunk(payload: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(payload), payload)


def frame(version: int) -> bytes:
    data = msgspec.json.encode({"version": version, "hand": ["5C"]})
    return b"event: view\nid: %d\ndata: %s\n\n" % (version, data)


BODY = HEAD + b"".join(
    chunk(p) for p in (b"retry: 1000\n\n", frame(3), b": ping\n\n", frame(4), frame(7))
)


class Recorder:
    def __init__(self) -> None:
        self.frames: list[tuple[int, bytes]] = []
        self.ends: list[str] = []

    def stream(self) -> ViewStream:
        return ViewStream(b"", lambda v, d, _t: self.frames.append((v, d)), self.ends.append)


@pytest.mark.parametrize("size", [1, 2, 3, 7, 50, len(BODY)])
def test_the_stream_reports_every_newest_id_whatever_the_reads(size: int) -> None:
    rec = Recorder()
    stream = rec.stream()
    for i in range(0, len(BODY), size):
        stream.data_received(BODY[i : i + size])
    assert rec.frames[-1][0] == 7 and stream.last == 7
    assert [v for v, _ in rec.frames] == sorted({v for v, _ in rec.frames})  # only newer ids
    assert msgspec.json.decode(rec.frames[-1][1])["version"] == 7  # the newest frame's data
    assert rec.ends == []
    stream.data_received(b"0\r\n\r\n")  # the last chunk: the server ended the stream
    assert rec.ends == ["the server ended the stream"]


def test_the_stream_reads_an_unchunked_body_and_reports_a_refusal() -> None:
    rec = Recorder()
    plain = rec.stream()
    plain.data_received(b"HTTP/1.1 200 OK\r\n\r\n" + frame(5))
    assert [v for v, _ in rec.frames] == [5]
    refused = rec.stream()
    refused.data_received(b"HTTP/1.1 401 Unauthorized\r\ncontent-length: 0\r\n\r\n")
    assert rec.ends and rec.ends[0].startswith("refused")


HAND = ["5C", "7C", "AS"]
CHOICES = [
    # (legal, what may be chosen) — one row per rule the player follows
    (Legal(actions=["bury"], bury_from=[*HAND, "2D"], bury_count=2), "bury"),  # R21
    (Legal(actions=["play"], follows=[["7C"], ["5C"]]), "follow"),  # R23: an offered play
    (Legal(actions=["play"], lead="lead any single…"), "lead"),  # R22: a single leads
    (Legal(actions=["declare", "pass"], shows=[["5C"]]), "declare or pass"),  # R17
    (Legal(actions=["overcall", "pass"], shows=[["BJ", "BJ"]]), "overcall or pass"),  # R20
    (Legal(actions=["pass"]), "pass"),
    (Legal(actions=["redeal"]), None),  # never asks for a redeal
    (Legal(), None),
]


@pytest.mark.parametrize(("legal", "kind"), CHOICES)
def test_a_seat_chooses_only_what_its_view_offers(legal: Legal, kind: str | None) -> None:
    view = SeatView(version=1, hand=HAND, legal=legal)
    for seed in range(30):
        move = choose(view, random.Random(seed))
        if kind is None:
            assert move is None
            continue
        assert move is not None
        action, cards = move
        if kind == "bury":
            assert action == "bury" and len(cards) == 2 and set(cards) <= set(legal.bury_from)
        elif kind == "follow":
            assert action == "play" and cards in legal.follows
        elif kind == "lead":
            assert action == "play" and len(cards) == 1 and cards[0] in HAND
        elif kind == "pass":
            assert move == ("pass", [])
        else:
            assert action in legal.actions
            assert cards in legal.shows if action != "pass" else cards == []


def table(lasts: list[int]) -> tuple[Match, Step]:
    crowd = Crowd("127.0.0.1", (1,), think=(0, 0), grace=0, rng=random.Random(0), create_body=b"{}")
    step = crowd.step = Step(1, measuring=True)
    match = Match(crowd, 1)
    match.streams = [Recorder().stream() for _ in lasts]
    for stream, last in zip(match.streams, lasts, strict=True):
        stream.last = last
    return match, step


# (ids each of the 5 streams had at the answer, seat 0 acting at version 10, frames
#  (stream, id) after it, pushes timed, lost) — streams 1-3 are seats, 4 the spectator
LOST = [
    ([9, 9, 9, 9, 9], [(1, 10), (2, 10), (3, 11), (4, 10)], 4, 0),
    ([9, 10, 10, 10, 10], [], 4, 0),  # frames before the answer count 0
    ([9, 9, 9, 9, 9], [(1, 10), (2, 10), (3, 10)], 3, 1),  # the spectator never got it
    ([9, 9, 9, 9, 9], [(1, 9), (2, 10), (3, 10), (4, 10)], 3, 1),  # an older frame is no push
    ([9, 9, 9, 9, 9], [(0, 10), (2, 10), (3, 10), (4, 10)], 3, 1),  # the actor's own stream
]


@pytest.mark.parametrize(("lasts", "frames", "timed", "lost"), LOST)
def test_a_version_is_lost_when_another_stream_never_delivers_it(
    lasts: list[int], frames: list[tuple[int, int]], timed: int, lost: int
) -> None:
    match, step = table(lasts)
    match.acked(0, 10, 1.0, step)
    for index, version in frames:
        match.delivered(index, version, 1.5)
    match.give_up()
    assert (len(step.pushes), step.lost) == (timed, lost)
    assert all(p in (0.0, 0.5) for p in step.pushes)

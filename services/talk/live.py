"""A table's talk followed for the match's live stream (R37, docs/decisions.md D-talk).

A :class:`LiveTalk` is the match's ``TableTalk`` as the stream's follower last read it,
advanced by applying the talk events saved since (the library's ``project_aggregate``, as
:class:`services.live.LiveTable` does the match's). A stream sends each message as an
``event: talk`` frame once the frame of the match version it was said at is sent, in the
order the messages were said; a viewer's own mutes apply (a seat's stream), and
spectators' streams carry the talk only where the table allows it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from uuid import UUID

import msgspec
from eventsourcing.application import project_aggregate

from domain.game.match import Match
from domain.talk.table_talk import Message, TableTalk, talk_id
from services.game import GameService
from services.live import StoreNeededError
from services.talk.reads import message_view, talk_of

_ENCODER = msgspec.json.Encoder()


@dataclass(frozen=True, slots=True)
class Listening:
    """Whose talk a stream carries: ``key``, the viewer's mutes (a seat's; None: none);
    ``allowed``: the viewer reads the table's talk at all."""

    key: str | None
    allowed: bool


def listening(match: Match, seat: int | None) -> Listening:
    """A seat's stream (its mutes), or a spectator's: the talk where the table allows
    spectator talk and is no tournament's table (R37)."""
    if seat is not None:
        return Listening(f"seat:{seat}", True)
    return Listening(None, match.talk.spectators and match.tournament_id is None)


def talk_block(version: int, message: Message) -> bytes:
    """A message's frame: ``event: talk``, its id the stream's version and the message's
    number (``V.T``: ``Last-Event-ID`` resumes both)."""
    data = _ENCODER.encode(message_view(message))
    return b"event: talk\nid: %d.%d\ndata: %s\n\n" % (version, message.number, data)


def with_said(block: bytes, version: int, said: int) -> bytes:
    """A version's frame with the id ``V.T`` once the stream sent messages (``T``: the
    last one's number), so ``Last-Event-ID`` says where both stand."""
    if not said:
        return block
    return block.replace(b"\nid: %d\n" % version, b"\nid: %d.%d\n" % (version, said), 1)


class LiveTalk:
    """A match's talk as followed by its stream (the module docstring)."""

    def __init__(self, service: GameService, match_id: UUID) -> None:
        self.service = service
        self.id = talk_id(match_id)
        self.match_id = match_id
        self.talk: TableTalk | None = talk_of(service, match_id)

    @property
    def said(self) -> int:
        """The number of the last message said at the table."""
        return 0 if self.talk is None else len(self.talk.messages)

    def advance(self, known: Sequence[Any] | None = None, *, offline: bool = False) -> None:
        """Apply the talk events saved since (``known``: the events the hub handed over,
        used where they follow on; else the store is read) — blocking. ``offline``: never
        read the store; :class:`~services.live.StoreNeededError` instead, nothing applied."""
        after = 0 if self.talk is None else self.talk.version
        events = [
            e for e in known or () if e.originator_id == self.id and e.originator_version > after
        ]
        if [e.originator_version for e in events] != list(
            range(after + 1, after + 1 + len(events))
        ) or known is None:
            if offline:
                raise StoreNeededError(f"talk {self.id} after {after}: not handed over")
            stored = self.service.recorder.select_events(self.id, gt=after)
            events = [self.service.mapper.to_domain_event(s) for s in stored]
        if events:
            self.talk = project_aggregate(self.talk, events)

    def due(self, listening: Listening, said: int, upto: int) -> tuple[list[Message], int]:
        """The messages after number ``said`` said at match versions up to ``upto`` that
        ``listening`` reads, in order (a message waits for its version, and those after it
        for it), and the number of the last one passed (muted ones are passed silently)."""
        talk = self.talk
        if talk is None or not listening.allowed:
            return [], said
        muted = talk.mutes.get(listening.key, frozenset()) if listening.key else frozenset()
        out = []
        for m in talk.messages[said:]:
            if m.at_version > upto:
                break
            if m.source not in muted:
                out.append(m)
            said = m.number
        return out, said

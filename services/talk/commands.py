"""The commands of table talk (R37, docs/decisions.md D-talk): say something, mute and
unmute a source, report a message — each through the bus (:mod:`services.bus`), one save
of the match's ``TableTalk`` with the key's record.

**Who speaks**: a seat (its seat token, or the player token of the account holding it),
or a spectator with a player token where the table allows spectator talk (quick chat
only). **Free text** only where the table's creator allowed it, from a seat, and never at
a tournament table before its match is over (R37). A message records the match version it
was said at; it never moves the match's version nor conflicts with a move.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Final
from uuid import UUID

import msgspec
from msgspec import Meta

from domain.game.match import Match
from domain.talk.table_talk import TableTalk, talk_id
from services.access import presented
from services.bus import Caller, Handler, Outcome, Service
from services.errors import ForbiddenError
from services.game import GameService
from services.talk.reads import Listener, TalkMessage, listener_of, message_view
from services.unit_of_work import Reading, UnitOfWork

ATTEMPTS: Final = 8
"""Runs of a talk command against another saved first at the same table (chat is busy)."""
TALK: Final = "talk"


@dataclass(frozen=True, slots=True)
class Say:
    """Say a quick-chat ``phrase`` or a free ``text`` at the match's table."""

    match_id: UUID
    phrase: str | None = None
    text: str | None = None


@dataclass(frozen=True, slots=True)
class Mute:
    """Hide ``source``'s messages (``seat-N``, ``spectator-K``) from the caller's reads."""

    match_id: UUID
    source: str


@dataclass(frozen=True, slots=True)
class Unmute:
    """Show ``source``'s messages to the caller again."""

    match_id: UUID
    source: str


@dataclass(frozen=True, slots=True)
class Report:
    """Report message ``number`` of the table's talk for ``reason``."""

    match_id: UUID
    number: int
    reason: str


class Said(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """The message said."""

    message: Annotated[TalkMessage, Meta(description="The message, as the table reads it")]


class MuteView(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """The caller's mutes at this table after the command."""

    muted: Annotated[
        list[str], Meta(description="The sources this viewer muted (`seat-N`, `spectator-K`)")
    ]


class Reported(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """The report recorded (the operator reads it with the messages around it)."""

    number: Annotated[int, Meta(description="The message reported")]
    reports: Annotated[int, Meta(description="The reports this person made at this table")]


def free_text_refusal(match: Match, seat: int | None) -> str | None:
    """Why free text may not be said at ``match`` by ``seat`` now (R37); None: it may."""
    if seat is None:
        return "spectators send quick chat only (R37)"
    if match.tournament_id is not None and not match.finished:
        return "no free text at a tournament table while it is played: quick chat only (R37)"
    if not match.talk.free_text:
        return "the table's creator did not allow free text: quick chat only (R37)"
    return None


def _talk(uow: UnitOfWork, match_id: UUID) -> TableTalk:
    found = uow.find(talk_id(match_id), TableTalk)
    if found is None:
        found = TableTalk.open(match_id, uow.now)
        uow.add(found)
    return found


class _TalkHandler:
    attempts = ATTEMPTS

    def __init__(self, service: GameService) -> None:
        self.service = service

    def _listener(self, match_id: UUID, caller: Caller) -> Listener:
        if isinstance(caller, Service):
            raise ForbiddenError("table talk is a person's")
        # for any match id, one that exists or not (D-hidden)
        caller = presented(
            caller, "a seat or player token is needed to talk: Authorization: Bearer <token>"
        )
        match = self.service.get_match(match_id)
        listener = listener_of(self.service, match, caller)
        if listener.key is None:
            raise ForbiddenError("the organiser token does not talk at the table: a seat's does")
        return listener


class SayHandler(_TalkHandler, Handler[Say, Listener, Said]):
    def authorise(self, command: Say, caller: Caller) -> Listener:
        return self._listener(command.match_id, caller)

    def handle(self, uow: UnitOfWork, command: Say, who: Listener) -> Outcome:
        match = uow.match(command.match_id)
        current = uow.current_round(match)
        version = match.sequence(0 if current is None else current.version)
        talk = _talk(uow, match.id)
        assert who.key is not None
        talk.say(
            who.key,
            uow.now,
            at_version=version,
            limits=self.service.table.talk,
            seat=who.seat,
            account_id=match.accounts.get(who.seat) if who.seat is not None else _account(who),
            phrase=command.phrase,
            text=command.text,
            free_text=free_text_refusal(match, who.seat),
        )
        return Outcome(201, talk.id, talk.version, who.seat)

    def answer(self, command: Say, who: Listener, outcome: Outcome, state: Reading) -> Said:
        talk = state.get(outcome.subject, TableTalk, TALK, outcome.version)
        return Said(message=message_view(talk.messages[-1]))


def _account(who: Listener) -> UUID | None:
    """A spectator's account (their key ``player:<id>``)."""
    assert who.key is not None
    return UUID(who.key.removeprefix("player:")) if who.key.startswith("player:") else None


class MuteHandler(_TalkHandler, Handler[Mute, Listener, MuteView]):
    def authorise(self, command: Mute, caller: Caller) -> Listener:
        return self._listener(command.match_id, caller)

    def handle(self, uow: UnitOfWork, command: Mute, who: Listener) -> Outcome:
        talk = _talk(uow, uow.match(command.match_id).id)
        assert who.key is not None
        talk.mute(who.key, command.source, uow.now)
        return Outcome(200, talk.id, talk.version, who.seat)

    def answer(self, command: Mute, who: Listener, outcome: Outcome, state: Reading) -> MuteView:
        return _mutes(state, outcome, who)


class UnmuteHandler(_TalkHandler, Handler[Unmute, Listener, MuteView]):
    def authorise(self, command: Unmute, caller: Caller) -> Listener:
        return self._listener(command.match_id, caller)

    def handle(self, uow: UnitOfWork, command: Unmute, who: Listener) -> Outcome:
        talk = _talk(uow, uow.match(command.match_id).id)
        assert who.key is not None
        talk.unmute(who.key, command.source, uow.now)
        return Outcome(200, talk.id, talk.version, who.seat)

    def answer(self, command: Unmute, who: Listener, outcome: Outcome, state: Reading) -> MuteView:
        return _mutes(state, outcome, who)


def _mutes(state: Reading, outcome: Outcome, who: Listener) -> MuteView:
    talk = state.get(outcome.subject, TableTalk, TALK, outcome.version)
    assert who.key is not None
    return MuteView(muted=sorted(talk.mutes.get(who.key, ())))


class ReportHandler(_TalkHandler, Handler[Report, Listener, Reported]):
    def authorise(self, command: Report, caller: Caller) -> Listener:
        return self._listener(command.match_id, caller)

    def handle(self, uow: UnitOfWork, command: Report, who: Listener) -> Outcome:
        talk = _talk(uow, uow.match(command.match_id).id)
        assert who.key is not None
        talk.report(
            who.key, command.number, command.reason, uow.now, limits=self.service.table.talk
        )
        return Outcome(201, talk.id, talk.version, who.seat)

    def answer(self, command: Report, who: Listener, outcome: Outcome, state: Reading) -> Reported:
        talk = state.get(outcome.subject, TableTalk, TALK, outcome.version)
        mine = sum(1 for r in talk.reports if r.reporter == who.key)
        return Reported(number=command.number, reports=mine)

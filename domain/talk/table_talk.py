"""The ``TableTalk`` aggregate: a match's table talk — its messages, who muted whom, the
reports (rule R37, docs/decisions.md D-talk).

One per match, its id derived from the match's (:func:`talk_id`), made by the first thing
said, muted or reported at the table. It is an aggregate of its own, not events of the
``Match``: talk never moves the match's version (an ``If-Match`` sent by a player stays
good while others chat), a message never conflicts with a move, and a match's loads do
not replay its chatter. Each message records the match version it was said at
(``at_version``), which orders it with the play.

**Who speaks** (a *sender*, by their key): a seat (``seat:N``) or a spectator with a player
account (``player:<id>``), shown to others as a *source* — ``seat-N``, or ``spectator-K``
(numbered as they first speak here, never their account). **What**: a phrase of the
quick-chat catalogue (:mod:`domain.talk.phrases`), or free text where the table allows it,
from a seat (R37): the name policy's checks of characters and scripts
(:func:`domain.names.checked_text`), bounded in length, and at most ``per_minute``
messages a minute per sender. Free text is personal:
stored sealed under the sender's account key (``PERSONAL_FIELDS``), so erasing the
player erases it (crypto-shredding, docs/players.md).

**Mutes** are per viewer (their key, ``seat:N`` or ``player:<id>``): a viewer hides a
source's messages from their own reads and streams. **Reports**: a viewer reports a message (once
each, at most ``max_reports`` per reporter and match); the operator reads them with the
messages around them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar, Final
from uuid import NAMESPACE_URL, UUID, uuid5

from eventsourcing.domain import Aggregate

from domain.game.base import GameAggregate
from domain.names import checked_text
from domain.rules.errors import IllegalMoveError, InvalidInputError, ShengjiError
from domain.talk.phrases import BY_ID
from domain.values import Value

RULE: Final = "R37"
RATE_WINDOW: Final = timedelta(minutes=1)
REPORT_REASONS: Final = ("abuse", "cheating", "spam", "other")
"""Why a message is reported."""


def talk_id(match_id: UUID) -> UUID:
    """The id of a match's table talk: deterministic, so the match finds it."""
    return uuid5(NAMESPACE_URL, f"shengji:match:{match_id}:talk")


def seat_key(seat: int) -> str:
    return f"seat:{seat}"


def player_key(account_id: UUID) -> str:
    return f"player:{account_id}"


class TalkRateLimitedError(ShengjiError):
    """429: a sender said more in the last minute than the table allows (R37);
    ``retry_after``: whole seconds until they may speak again."""

    code = "talk-rate-limited"
    rule = RULE
    status: ClassVar[int] = 429

    def __init__(self, detail: str, *, retry_after: int) -> None:
        super().__init__(detail)
        self.retry_after = retry_after


class ReportsExceededError(ShengjiError):
    """429: a reporter made as many reports at this table as one may (R37)."""

    code = "reports-exceeded"
    rule = RULE
    status: ClassVar[int] = 429
    retry_after = 3600


@dataclass(frozen=True, slots=True)
class Limits:
    """The bounds of talk at a table (the service's settings)."""

    max_text: int = 200
    per_minute: int = 10
    max_reports: int = 5


class Message(Value):
    """One message said at the table (the state's copy of a ``MessageSent``)."""

    __slots__ = (
        "account_id",
        "at",
        "at_version",
        "number",
        "phrase",
        "seat",
        "sender",
        "spectator",
        "text",
    )

    def __init__(self, event: MessageSent) -> None:
        self.number = event.number
        self.account_id = event.account_id
        self.sender = event.sender
        self.seat = event.seat
        self.spectator = event.spectator
        self.phrase = event.phrase
        self.text = event.text
        self.at_version = event.at_version
        self.at = event.timestamp

    @property
    def source(self) -> str:
        """Who said it, as others name them to mute them (``seat-N``, ``spectator-K``)."""
        return f"seat-{self.seat}" if self.seat is not None else f"spectator-{self.spectator}"


class Report(Value):
    """A message reported by a viewer."""

    __slots__ = ("at", "number", "reason", "reporter")

    def __init__(self, event: MessageReported) -> None:
        self.reporter = event.reporter
        self.number = event.number
        self.reason = event.reason
        self.at = event.timestamp


class TalkOpened(Aggregate.Created):
    """The table talk of ``match_id`` began (the first message, mute or report)."""

    class_version: ClassVar[int] = 1
    match_id: UUID

    def apply(self, aggregate: Any) -> None:
        talk: TableTalk = aggregate
        talk.match_id = self.match_id
        talk.messages = []
        talk.reports = []


class TalkEvent(Aggregate.Event):
    class_version: ClassVar[int] = 1
    SECRET_FIELDS: ClassVar[tuple[str, ...]] = ()

    def apply(self, aggregate: Any) -> None:
        self.apply_to(aggregate)

    def apply_to(self, talk: TableTalk) -> None:  # pragma: no cover - every event overrides
        raise NotImplementedError


class MessageSent(TalkEvent):
    """``sender`` said a quick-chat ``phrase`` or free ``text`` at match version
    ``at_version`` (R37). ``seat``: the seat that spoke, else ``spectator``: the
    spectator's number at this table. ``account_id``: the sender's account, whose key
    seals ``text`` (crypto-shredding); None for a guest's seat."""

    SECRET_FIELDS: ClassVar[tuple[str, ...]] = ("sender", "account_id")
    PERSONAL_FIELDS: ClassVar[dict[str, str]] = {"text": "account_id"}
    """Free text is stored encrypted under its sender's account key (docs/players.md)."""
    number: int
    sender: str
    seat: int | None
    spectator: int | None
    account_id: UUID | None
    phrase: str | None
    text: str | None
    at_version: int

    def apply_to(self, talk: TableTalk) -> None:
        talk.messages.append(Message(self))
        if self.spectator is not None and self.sender not in talk.spectators:
            talk.spectators = {**talk.spectators, self.sender: self.spectator}


class Muted(TalkEvent):
    """``viewer`` hides the messages of ``source`` (``seat-N``, ``spectator-K``) from
    their own reads and streams."""

    SECRET_FIELDS: ClassVar[tuple[str, ...]] = ("viewer",)
    viewer: str
    source: str

    def apply_to(self, talk: TableTalk) -> None:
        mine = talk.mutes.get(self.viewer, frozenset())
        talk.mutes = {**talk.mutes, self.viewer: mine | {self.source}}


class Unmuted(TalkEvent):
    """``viewer`` shows ``source``'s messages again."""

    SECRET_FIELDS: ClassVar[tuple[str, ...]] = ("viewer",)
    viewer: str
    source: str

    def apply_to(self, talk: TableTalk) -> None:
        mine = talk.mutes.get(self.viewer, frozenset()) - {self.source}
        others = {v: s for v, s in talk.mutes.items() if v != self.viewer}
        talk.mutes = {**others, self.viewer: mine} if mine else others


class MessageReported(TalkEvent):
    """``reporter`` reported message ``number`` for ``reason`` (the operator reads it)."""

    SECRET_FIELDS: ClassVar[tuple[str, ...]] = ("reporter",)
    reporter: str
    number: int
    reason: str

    def apply_to(self, talk: TableTalk) -> None:
        talk.reports.append(Report(self))


class TableTalk(GameAggregate):
    """A match's table talk (the module docstring)."""

    if TYPE_CHECKING:
        match_id: UUID
        messages: list[Message]
        reports: list[Report]
        spectators: Mapping[str, int]
        """A spectator's player key → their number at this table (as they first spoke)."""
        mutes: Mapping[str, frozenset[str]]
        """A viewer → the sources they muted (``seat-N``, ``spectator-K``)."""

    # class defaults, replaced (never changed in place) by the events that set them
    spectators = MappingProxyType({})
    mutes = MappingProxyType({})

    @classmethod
    def open(cls, match_id: UUID, now: datetime) -> TableTalk:
        return cls._create(TalkOpened, id=talk_id(match_id), match_id=match_id, timestamp=now)

    # -- commands ------------------------------------------------------------------------------

    def say(
        self,
        sender: str,
        now: datetime,
        *,
        at_version: int,
        limits: Limits,
        seat: int | None = None,
        account_id: UUID | None = None,
        phrase: str | None = None,
        text: str | None = None,
        free_text: str | None = None,
    ) -> Message:
        """``sender`` (a seat, else a spectator's player key) says ``phrase`` or ``text``.
        ``free_text``: why free text may not be said here now (R37), None when it may."""
        if (phrase is None) == (text is None):
            raise InvalidInputError("a message is a quick-chat phrase or a text, one of them")
        if phrase is not None and phrase not in BY_ID:
            raise InvalidInputError(
                f"{phrase[:40]!r} is no quick-chat phrase (GET /v1/talk/phrases)", rule=RULE
            )
        if text is not None:
            if free_text is not None:
                raise IllegalMoveError(free_text, rule=RULE, code="free-text-off")
            text = checked_text(text, "text", max_length=limits.max_text)
        recent = [m for m in self.messages if m.sender == sender and now - m.at < RATE_WINDOW]
        if len(recent) >= limits.per_minute:
            wait = RATE_WINDOW - (now - recent[-limits.per_minute].at)
            raise TalkRateLimitedError(
                f"at most {limits.per_minute} messages a minute per seat or spectator (R37)",
                retry_after=max(1, int(wait.total_seconds()) + 1),
            )
        spectator = None
        if seat is None:
            spectator = self.spectators.get(sender, len(self.spectators) + 1)
        self._emit(
            MessageSent,
            now,
            number=len(self.messages) + 1,
            sender=sender,
            seat=seat,
            spectator=spectator,
            account_id=account_id,
            phrase=phrase,
            text=text,
            at_version=at_version,
        )
        return self.messages[-1]

    def mute(self, viewer: str, source: str, now: datetime) -> None:
        """``viewer`` mutes ``source`` (``seat-N`` or ``spectator-K``); muting twice is
        muting once."""
        self._check_source(source)
        if source not in self.mutes.get(viewer, frozenset()):
            self._emit(Muted, now, viewer=viewer, source=source)

    def unmute(self, viewer: str, source: str, now: datetime) -> None:
        self._check_source(source)
        if source in self.mutes.get(viewer, frozenset()):
            self._emit(Unmuted, now, viewer=viewer, source=source)

    def report(
        self, reporter: str, number: int, reason: str, now: datetime, *, limits: Limits
    ) -> None:
        """``reporter`` reports message ``number`` (not their own; once each)."""
        if reason not in REPORT_REASONS:
            raise InvalidInputError(f"a report's reason is one of {', '.join(REPORT_REASONS)}")
        if type(number) is not int or not 1 <= number <= len(self.messages):
            raise IllegalMoveError(
                f"no message {number!r} at this table", rule=RULE, code="no-such-message"
            )
        if self.messages[number - 1].sender == reporter:
            raise IllegalMoveError("one's own message is not reported", rule=RULE)
        mine = [r for r in self.reports if r.reporter == reporter]
        if any(r.number == number for r in mine):
            return  # reported already: once is enough
        if len(mine) >= limits.max_reports:
            raise ReportsExceededError(
                f"at most {limits.max_reports} reports per person at one table (R37)"
            )
        self._emit(MessageReported, now, reporter=reporter, number=number, reason=reason)

    # -- queries -------------------------------------------------------------------------------

    def shown_to(
        self, viewer: str | None, *, upto: int | None = None, after: int = 0
    ) -> list[Message]:
        """The messages ``viewer`` reads (their mutes applied; None: no one's mutes),
        numbered after ``after``, said at match versions up to ``upto``."""
        muted = self.mutes.get(viewer, frozenset()) if viewer is not None else frozenset()
        return [
            m
            for m in self.messages[after:]
            if m.source not in muted and (upto is None or m.at_version <= upto)
        ]

    def _check_source(self, source: str) -> None:
        kind, _, n = source.partition("-")
        ok = n.isdigit() and (
            (kind == "seat" and int(n) < 4)
            or (kind == "spectator" and 1 <= int(n) <= len(self.spectators))
        )
        if not ok:
            raise InvalidInputError(
                f"{source[:40]!r} is not a seat (seat-0 … seat-3) or a spectator who spoke "
                "here (spectator-K)"
            )

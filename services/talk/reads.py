"""What a viewer reads of a table's talk (R37, docs/decisions.md D-talk): the catalogue,
the messages a viewer may read with their own mutes applied, and the operator's reports
with the messages around each.

Who reads: the seats always; spectators when the table allows spectator talk (and the
table is open to them: a tournament table in play is closed, R36); the operator every
report. A message of an erased player reads with no text (``erased``): its text was
sealed under their key, now destroyed (crypto-shredding, docs/players.md). Talk is an
aggregate of its own (:mod:`domain.talk.table_talk`), outside the public feed and the
dumps, which know only the match's and its rounds' events.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Final
from uuid import UUID

import msgspec
from eventsourcing.application import AggregateNotFoundError
from msgspec import Meta

from domain.game.match import Match
from domain.talk.phrases import PHRASES
from domain.talk.table_talk import (
    REPORT_REASONS,
    Message,
    TableTalk,
    player_key,
    seat_key,
    talk_id,
)
from services import field_docs
from services.access import Credential, check_visible, seat_in, signed_player
from services.accounts.keys import ERASED
from services.accounts.players import seat_for
from services.errors import ForbiddenError
from services.game import GameService
from services.sources import PLAYER_ROLE

CONTEXT: Final = 3
"""Messages shown before and after a reported one (the operator's context)."""


class PhraseView(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """A quick-chat phrase or emote: none names a card, suit or rank (R37)."""

    id: Annotated[str, Meta(description="The phrase's id (what a message sends)")]
    en: Annotated[str, Meta(description="Its words in English")]
    zh: Annotated[str, Meta(description="Its words in Simplified Chinese")]
    emote: Annotated[bool, Meta(description="An emote (one emoji), the same in both languages")]


class Phrases(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """The quick-chat catalogue, in the order apps show it."""

    phrases: Annotated[list[PhraseView], Meta(description="Every phrase, in order")]
    report_reasons: Annotated[list[str], Meta(description="Why a message may be reported")]


def phrases() -> Phrases:
    return Phrases(
        phrases=[PhraseView(id=p.id, en=p.en, zh=p.zh, emote=p.emote) for p in PHRASES],
        report_reasons=list(REPORT_REASONS),
    )


class TalkMessage(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """A message said at a table (R37)."""

    number: Annotated[int, Meta(description="The message's number at this table, from 1")]
    seat: Annotated[int | None, Meta(description="The seat that said it; null: a spectator")]
    spectator: Annotated[
        int | None,
        Meta(description="The spectator who said it, numbered as they first spoke here"),
    ]
    phrase: Annotated[
        str | None, Meta(description="The quick-chat phrase's id (GET /v1/talk/phrases)")
    ]
    text: Annotated[
        str | None,
        Meta(description="Free text (where the table allows it); null once its writer is erased"),
    ]
    erased: Annotated[bool, Meta(description="Its writer was erased: the text is gone")] = False
    at_version: Annotated[
        int, Meta(description="The match version it was said at: it follows that version's event")
    ]
    at: Annotated[
        datetime, Meta(description="When it was said", examples=[field_docs.EXAMPLE_TIME])
    ]


def message_view(m: Message) -> TalkMessage:
    erased = m.text == ERASED and m.account_id is not None
    return TalkMessage(
        number=m.number,
        seat=m.seat,
        spectator=m.spectator,
        phrase=m.phrase,
        text=None if erased else m.text,
        erased=erased,
        at_version=m.at_version,
        at=m.at,
    )


class TalkPage(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """The messages a viewer reads at a table, after a number (their mutes applied)."""

    messages: Annotated[list[TalkMessage], Meta(description="In the order they were said")]
    last: Annotated[
        int, Meta(description="The last message's number at the table (ask again after it)")
    ]
    muted: Annotated[
        list[str], Meta(description="The sources this viewer muted (`seat-N`, `spectator-K`)")
    ]
    free_text: Annotated[bool, Meta(description="The table's creator allowed free text (R37)")]
    spectators: Annotated[bool, Meta(description="Spectators read the talk and send quick chat")]


@dataclass(frozen=True, slots=True)
class Listener:
    """Who reads a table's talk: their mute key (None: an anonymous spectator, no
    mutes) and their seat."""

    key: str | None
    seat: int | None = None


def listener_of(service: GameService, match: Match, cred: Credential | None) -> Listener:
    """Who ``cred`` is at ``match``'s talk: a seat (its seat or player token), a spectator
    with a player token, an anonymous spectator; 403 for spectators where the table keeps
    its talk to its seats (R37)."""
    check_visible(service, match, cred)
    if cred is not None and cred.role == PLAYER_ROLE:
        account = signed_player(service, cred).account
        seat = seat_for(account, match.id)
        if seat is not None:
            return Listener(seat_key(seat), seat)
        spectator_may(match)
        return Listener(player_key(account.id))
    if cred is not None and cred.role is not None and cred.owner == match.id:
        if cred.matches(match.organiser_token_hash):
            spectator_may(match)
            return Listener(None)
        seat = seat_in(service, match, cred)
        return Listener(seat_key(seat), seat)
    spectator_may(match)
    return Listener(None)


def spectator_may(match: Match) -> None:
    """Spectators read the table's talk only where its creator allows it, and never at a
    tournament's table (its talk is its seats', R37)."""
    if not match.talk.spectators:
        raise ForbiddenError("this table keeps its talk to its seats (R37)", rule="R37")
    if match.tournament_id is not None:
        raise ForbiddenError("a tournament table's talk is its seats' (R37)", rule="R37")


def talk_of(service: GameService, match_id: UUID, version: int | None = None) -> TableTalk | None:
    """The match's table talk (as of its own ``version``), None when nothing was said."""
    try:
        found: object = service.repository.get(talk_id(match_id), version=version)
    except AggregateNotFoundError:
        return None
    return found if isinstance(found, TableTalk) else None


def messages_said(service: GameService, match_id: UUID) -> int:
    """How many messages were said at the match's table (as stored now)."""
    talk = talk_of(service, match_id)
    return 0 if talk is None else len(talk.messages)


def talk_page(
    service: GameService,
    match: Match,
    listener: Listener,
    *,
    after: int = 0,
    upto: int | None = None,
) -> TalkPage:
    """What ``listener`` reads of the table's talk: the messages numbered after ``after``
    and said at match versions up to ``upto``."""
    talk = talk_of(service, match.id)
    messages: list[Message] = (
        [] if talk is None else talk.shown_to(listener.key, after=after, upto=upto)
    )
    muted = [] if talk is None or listener.key is None else sorted(talk.mutes.get(listener.key, ()))
    return TalkPage(
        messages=[message_view(m) for m in messages],
        last=0 if talk is None else len(talk.messages),
        muted=muted,
        free_text=match.talk.free_text,
        spectators=match.talk.spectators,
    )


def said_by(
    service: GameService, match: Match, viewer: int | None, version: int
) -> list[TalkMessage]:
    """The talk ``viewer`` (a seat; None: a spectator) reads as of match ``version``
    (``state?version=``): none for spectators where the table keeps its talk to its seats."""
    if viewer is None and (not match.talk.spectators or match.tournament_id is not None):
        return []
    talk = talk_of(service, match.id)
    if talk is None:
        return []
    key = None if viewer is None else seat_key(viewer)
    return [message_view(m) for m in talk.shown_to(key, upto=version)]


class ReportView(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """A reported message with the messages around it (the operator's)."""

    number: Annotated[int, Meta(description="The reported message's number")]
    reason: Annotated[str, Meta(description="Why it was reported")]
    reporter: Annotated[
        str, Meta(description="Who reported it: `seat:N` or the spectator's `player:<id>`")
    ]
    at: Annotated[datetime, Meta(description="When it was reported")]
    message: Annotated[TalkMessage, Meta(description="The message reported")]
    context: Annotated[
        list[TalkMessage],
        Meta(description=f"Up to {CONTEXT} messages before it and {CONTEXT} after, in order"),
    ]


class Reports(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """The reports of one table's talk, in the order they were made (the operator's)."""

    match_id: Annotated[str, field_docs.MATCH_ID]
    reports: Annotated[list[ReportView], Meta(description="Every report, oldest first")]


def reports_of(service: GameService, match_id: UUID) -> Reports:
    """Every report of the table's talk, each with its context (the operator's read)."""
    talk = talk_of(service, match_id)
    out = []
    for r in [] if talk is None else talk.reports:
        shown = talk.messages  # type: ignore[union-attr]
        i = r.number - 1
        out.append(
            ReportView(
                number=r.number,
                reason=r.reason,
                reporter=r.reporter,
                at=r.at,
                message=message_view(shown[i]),
                context=[
                    message_view(m)
                    for m in shown[max(0, i - CONTEXT) : i + CONTEXT + 1]
                    if m.number != r.number
                ],
            )
        )
    return Reports(match_id=str(match_id), reports=out)

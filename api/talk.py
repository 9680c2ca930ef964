"""Table talk (R37, docs/decisions.md D-talk): the quick-chat catalogue, a table's messages
as the caller may read them, saying something, muting and unmuting a source, reporting a
message, and the operator's reports of a table.

Every write is a command through the bus (:mod:`services.talk.commands`); the reads load
the match's ``TableTalk`` (:mod:`services.talk.reads`).
"""

from __future__ import annotations

from typing import Annotated, Literal
from uuid import UUID

from litestar import Controller, Response, delete
from litestar.di import NamedDependency
from litestar.params import FromPath, PathParameter, QueryParameter
from msgspec import Meta

from api.calls import BEARER, CHECKED, OPTIONAL_BEARER, Reading, Writing, write_route
from api.dto import _Request
from api.feed import Archive
from api.routes import route
from api.runtime import snapshot
from domain.talk.table_talk import REPORT_REASONS
from services.access import Credential
from services.game import GameService
from services.talk.commands import Mute, MuteView, Report, Reported, Said, Say, Unmute
from services.talk.reads import (
    Phrases,
    Reports,
    TalkPage,
    listener_of,
    phrases,
    reports_of,
    talk_page,
)

SOURCE_PATTERN = "^(seat-[0-3]|spectator-[1-9][0-9]{0,5})$"
Source = Annotated[
    str,
    Meta(
        pattern=SOURCE_PATTERN,
        description="Whose messages: `seat-N` (a seat) or `spectator-K` (a spectator who spoke)",
        examples=["seat-1"],
    ),
]
Reason = Literal["abuse", "cheating", "spam", "other"]
assert set(REPORT_REASONS) == set(Reason.__args__)  # type: ignore[attr-defined]


class SayRequest(_Request, frozen=True, kw_only=True):
    """What to say: a quick-chat phrase, or free text where the table allows it (R37)."""

    phrase: Annotated[
        Annotated[str, Meta(max_length=40)] | None,
        Meta(description="A phrase's id (GET /v1/talk/phrases)", examples=["good-game"]),
    ] = None
    text: Annotated[
        Annotated[str, Meta(max_length=4000)] | None,
        Meta(
            description="Free text: only where the table's creator allowed it, from a seat, "
            "never at a tournament table in play (R37); at most `TALK_TEXT_MAX` characters",
            examples=["nice one!"],
        ),
    ] = None


class MuteRequest(_Request, frozen=True, kw_only=True):
    """Whose messages to hide from your own reads and streams."""

    source: Source


class ReportRequest(_Request, frozen=True, kw_only=True):
    """The message reported, and why."""

    number: Annotated[int, Meta(ge=1, description="The message's number at this table")]
    reason: Annotated[Reason, Meta(description="Why it is reported")] = "abuse"


After = Annotated[
    int,
    QueryParameter(ge=0, le=1_000_000, description="Messages numbered after this one"),
]
EVERY = 10**9
"""``upto`` by default: every message."""
UpTo = Annotated[
    int,
    QueryParameter(
        ge=0,
        le=EVERY,
        description="Only messages said at match versions up to this one (as `state?version=`); "
        "by default every one",
    ),
]
SourcePath = Annotated[
    str,
    PathParameter(pattern=SOURCE_PATTERN, description="`seat-N` or `spectator-K`"),
]


def read_talk(
    service: GameService, cred: Credential | None, match_id: UUID, after: int, upto: int
) -> TalkPage:
    match, _ = snapshot(service, match_id)
    listener = listener_of(service, match, cred)
    return talk_page(service, match, listener, after=after, upto=upto)


def operator_reports(service: GameService, match_id: UUID) -> Reports:
    snapshot(service, match_id)  # 404 for no match
    return reports_of(service, match_id)


class TalkController(Controller):
    tags = ["talk"]  # noqa: RUF012 - Litestar declares it an instance attribute

    @route("/v1/talk/phrases")
    async def list_talk_phrases(self) -> Phrases:
        """The quick-chat catalogue, in English and Chinese

        Every phrase and emote a seat or spectator may send (`POST /v1/matches/{id}/talk
        {phrase}`): none names a card, suit or rank in either language (R37). Also the reasons
        a message may be reported for.
        """
        return phrases()

    @route("/v1/matches/{match_id:uuid}/talk", 401, 403, 404, security=OPTIONAL_BEARER)
    async def get_talk(
        self, read: Reading, match_id: FromPath[UUID], after: After = 0, upto: UpTo = EVERY
    ) -> TalkPage:
        """The table's talk as you may read it (R37)

        The seats read it (seat or player token); spectators where the table allows spectator
        talk (not at a tournament table: 403). Your own mutes are applied. `after` pages on;
        `upto` keeps the messages said up to a match version.
        """
        return await read.call(read_talk, read.service, read.credential, match_id, after, upto)

    @write_route("/v1/matches/{match_id:uuid}/talk", 201, *CHECKED, 422, 429, body=SayRequest)
    async def say_at_table(self, write: Writing, match_id: FromPath[UUID]) -> Response[Said]:
        """Say something at the table (a seat, or a spectator with a player token)

        A quick-chat `phrase`, or free `text` where the table's creator allowed it
        (`talk.freeText` when creating the match), from a seat, never at a tournament table
        before its match is over (409 `free-text-off`, R37). Text passes the name policy's
        checks of characters (422 `invalid-text`: invisible, control, bidirectional or spoofing
        characters). At most `TALK_PER_MINUTE` messages a minute per seat or spectator (429
        `talk-rate-limited`).
        """
        data = await write.body()
        return await write.send(Say(match_id, data.phrase, data.text))

    @write_route("/v1/matches/{match_id:uuid}/talk/mutes", 200, *CHECKED, 422, body=MuteRequest)
    async def mute_source(self, write: Writing, match_id: FromPath[UUID]) -> Response[MuteView]:
        """Mute a seat or spectator at this table (for your own reads and streams only)

        Muting twice is muting once.
        """
        data = await write.body()
        return await write.send(Mute(match_id, data.source))

    @write_route(
        "/v1/matches/{match_id:uuid}/talk/mutes/{source:str}",
        200,
        *CHECKED,
        422,
        handler=delete,
    )
    async def unmute_source(
        self, write: Writing, match_id: FromPath[UUID], source: SourcePath
    ) -> Response[MuteView]:
        """Unmute a seat or spectator at this table

        Their messages show in your reads and streams again.
        """
        return await write.send(Unmute(match_id, source))

    @write_route(
        "/v1/matches/{match_id:uuid}/talk/reports", 201, *CHECKED, 422, 429, body=ReportRequest
    )
    async def report_message(self, write: Writing, match_id: FromPath[UUID]) -> Response[Reported]:
        """Report a message of the table's talk

        The operator reads it with the messages around it. Once per message; at most
        `TALK_REPORTS_PER_TABLE` per person and table (429 `reports-exceeded`).
        """
        data = await write.body()
        return await write.send(Report(match_id, data.number, data.reason))

    @route("/v1/matches/{match_id:uuid}/talk/reports", 401, 403, 404, security=BEARER)
    async def list_talk_reports(
        self, read: Reading, archive: NamedDependency[Archive], match_id: FromPath[UUID]
    ) -> Reports:
        """The reports of a table's talk, each with its context (operator)

        Each reported message with up to three messages before and after it.
        """
        archive.operator.require(read.credential, "talk reports")
        return await read.call(operator_reports, read.service, match_id)

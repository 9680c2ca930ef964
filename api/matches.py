"""Matches and seats: create, list, get; claim a seat, seat a bot, wake the bots, finish.

``POST /v1/matches`` answers the organiser token once (stored hashed in
``MatchCreated``). Seats are claimed first come (R1), each answering its seat token once;
the organiser seats bots. When the fourth seat fills, round 1 is dealt in the same save
(R16). Bots move off the request path, as soon as they are to act (the bot driver,
:mod:`services.bot_driver`): their moves reach clients as stream frames.
"""

from __future__ import annotations

from typing import Annotated
from uuid import UUID

from litestar import Controller, Response
from litestar.params import FromPath, PathParameter, QueryParameter

from api.calls import CHECKED, OPTIONAL_BEARER, Reading, Writing, write_route
from api.dto import (
    LOCATION_HEADER,
    After,
    ClaimSeatRequest,
    CreateMatchRequest,
    FinishRequest,
    Limit,
    SeatBotRequest,
)
from api.etag import IfNoneMatch, etag, not_modified, not_modified_response, tagged
from api.routes import route
from api.runtime import snapshot
from domain.rules.ruleset import STANDARD, RuleSet, preset
from services.access import Credential, check_visible
from services.embargo import embargo_of
from services.game import GameService
from services.match_commands import (
    AskRematch,
    BotSeated,
    BotsRun,
    ClaimSeat,
    CreateMatch,
    FinishedMatch,
    FinishMatch,
    NewMatch,
    RematchView,
    Resign,
    ResignationView,
    SeatBot,
    SeatClaimed,
    WakeBots,
)
from services.readmodels.lists import list_matches
from services.summaries import MatchList, MatchSummary, Origin, match_summary

SeatParam = Annotated[int, PathParameter(ge=0, le=3, description="Seat 0..3 (R1)")]
OriginFilter = Annotated[
    Origin | None,
    QueryParameter(
        description="`played` (here) or `imported` (records stored with "
        "`POST /v1/records?store=true`); every match without it"
    ),
]


def summary_of(service: GameService, cred: Credential | None, match_id: UUID) -> MatchSummary:
    """The match as anyone may see it (blocking): a tournament table's results withheld
    until its tournament round completes (R36, :func:`services.embargo.embargo_of`); a
    private table's to the people of the table only — 404 to anyone else
    (:func:`services.access.check_visible`)."""
    match, current = snapshot(service, match_id)
    check_visible(service, match, cred)
    return match_summary(match, current, embargo=embargo_of(service, match))


def rule_set(data: CreateMatchRequest) -> RuleSet:
    """The preset (standard by default) with the given §10 fields over it."""
    base = preset(data.preset) if data.preset is not None else STANDARD
    if data.rules is None:
        return base
    return RuleSet.from_mapping({**base.to_mapping(), **data.rules.fields()})


class MatchController(Controller):
    path = "/v1/matches"
    tags = ["matches"]  # noqa: RUF012 - Litestar declares it an instance attribute

    @write_route(
        "/", 201, 409, security=None, headers=(LOCATION_HEADER,), body=CreateMatchRequest | None
    )
    async def create_match(self, write: Writing) -> Response[NewMatch]:
        """Create a match (a preset and/or §10 rule fields)

        Answers the organiser token once; it authorises seating bots, running them and ending the
        match. The rules are fixed for good (RULES §10).
        """
        body = await write.body() or CreateMatchRequest()
        command = CreateMatch(
            rule_set(body),
            name=body.name,
            preset=body.preset,
            timers=body.timers.value() if body.timers else None,
            visibility=body.visibility,
            talk=body.talk.value() if body.talk else None,
        )
        return await write.send(command, location=lambda m: f"/v1/matches/{m.match_id}")

    @route("/")
    async def list_matches(
        self, read: Reading, after: After = 0, limit: Limit = 50, origin: OriginFilter = None
    ) -> MatchList:
        """List matches, oldest first (paged)

        The matches, oldest first, a page at a time: `after` is the `next` of the
        page before; `origin` keeps the played or the imported ones only.
        """
        return await read.call(
            lambda: list_matches(read.runtime.lists, after=after, limit=limit, origin=origin)
        )

    @route("/{match_id:uuid}", 404, tagged=True, security=OPTIONAL_BEARER)
    async def get_match(
        self, read: Reading, match_id: FromPath[UUID], if_none_match: IfNoneMatch = None
    ) -> Response[MatchSummary]:
        """A match: rules, seats, levels, dealer, rounds and results

        A match as anyone may see it: rules (§10), seats, the teams' levels (R5),
        the next dealer (R31), its rounds with their results, and the winner once
        finished (R32). Nothing secret (R33). A tournament table's results, levels,
        dealers and winner wait for its tournament round to complete (`embargo`, R36).
        A private table is 404 but to its seats (their seat or player tokens) and its organiser.
        ETag: the match version (`-e` while withheld).
        """
        summary = await read.call(summary_of, read.service, read.credential, match_id)
        tag = etag(summary.version, "" if summary.embargo is None else "e")
        if not_modified(if_none_match, tag):
            return not_modified_response(tag)
        return tagged(summary, tag)

    @write_route(
        "/{match_id:uuid}/seats/{seat:int}",
        201,
        *CHECKED,
        security=OPTIONAL_BEARER,
        body=ClaimSeatRequest,
    )
    async def claim_seat(
        self, write: Writing, match_id: FromPath[UUID], seat: SeatParam
    ) -> Response[SeatClaimed]:
        """Claim a seat (R1); answers its token once

        When the fourth seat fills, round 1 is dealt at once (R16). A private table's seats are
        taken with an invite code, or here with its organiser token (403 otherwise).
        """
        data = await write.body()
        return await write.send(ClaimSeat(match_id, seat, data.name))

    @write_route("/{match_id:uuid}/seats/{seat:int}/bot", 201, *CHECKED, body=SeatBotRequest)
    async def seat_bot(
        self, write: Writing, match_id: FromPath[UUID], seat: SeatParam
    ) -> Response[BotSeated]:
        """Seat a bot (organiser)

        The bot plays through the same commands as a person, off the request path: it moves as soon
        as it is to act, so four bots play the match on their own (a bots-only match that never ends
        by its rules is ended after a number of rounds, `BOTS_ONLY_ROUNDS`). The answer is the
        version of the seating itself.
        """
        data = await write.body()
        return await write.send(SeatBot(match_id, seat, data.kind, data.name))

    @write_route("/{match_id:uuid}/bots/run", 202, 401, 403, 404)
    async def run_bots(self, write: Writing, match_id: FromPath[UUID]) -> Response[BotsRun]:
        """Wake the match's bots now (organiser)

        Bots move on their own, off the request path, as soon as they are to act; this asks the bot
        driver to look at the match now (a passed deadline is claimed on the way, R17, R20) and
        answers at once: 202 with the match version and whether a bot is to act. Their moves follow
        as new versions (and live frames).
        """
        return await write.send(WakeBots(match_id))

    @write_route("/{match_id:uuid}/finish", 200, *CHECKED, body=FinishRequest | None)
    async def finish_match(
        self, write: Writing, match_id: FromPath[UUID]
    ) -> Response[FinishedMatch]:
        """End the match (organiser, R32)

        A round being played is abandoned unscored; no command is accepted after.
        """
        data = await write.body()
        return await write.send(FinishMatch(match_id, data.reason if data else "organiser"))

    @write_route("/{match_id:uuid}/resign", 200, *CHECKED)
    async def resign_match(
        self, write: Writing, match_id: FromPath[UUID]
    ) -> Response[ResignationView]:
        """Resign the match for your team (a seat or player token, R32)

        The team concedes once each of its seats held by a person has resigned — a bot partner
        concedes with them: the match ends (`MatchFinished`, reason `resigned`), the round in play
        is abandoned unscored and the other team wins. Until the partner resigns too, the match
        goes on (`waitingFor`). 409 `already-resigned`, `match-finished`.
        """
        return await write.send(Resign(match_id))

    @write_route("/{match_id:uuid}/rematch", 201, *CHECKED)
    async def rematch(self, write: Writing, match_id: FromPath[UUID]) -> Response[RematchView]:
        """Ask for a rematch of a finished match, or confirm your seat in it

        The first to ask opens it: a new match with the same rules, turn limits, visibility and
        seats — bots seated at once, each person's seat kept for them (403 for anyone else). Each
        person of the finished match confirms by asking too (their seat taken there: `SeatTaken`);
        when the last one has, round 1 is dealt (R16). Answers the rematch, the caller's seat token
        there (once), and the seats still waiting. The organiser who opens it gets its organiser
        token. 409 `match-not-finished`, `rematch-confirmed`, `tournament-table`.
        """
        return await write.send(
            AskRematch(match_id), location=lambda r: f"/v1/matches/{r.match_id}"
        )

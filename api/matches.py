"""Matches and seats: create, list, get; claim a seat, seat a bot, wake the bots, finish.

``POST /v1/matches`` answers the organiser token once (stored hashed in
``MatchCreated``). Seats are claimed first come (R1), each answering its seat token once;
the organiser seats bots. When the fourth seat fills, round 1 is dealt in the same save
(R16). Bots move off the request path, as soon as they are to act (the bot driver,
:mod:`services.bot_driver`): their moves reach clients as stream frames.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated
from uuid import UUID, uuid4

from litestar import Controller, Response
from litestar.params import FromPath, PathParameter, QueryParameter

from api.calls import CHECKED, OPTIONAL_BEARER, Reading, Write, Writing, write_route
from api.dto import (
    LOCATION_HEADER,
    After,
    BotSeated,
    BotsRun,
    ClaimSeatRequest,
    CreateMatchRequest,
    FinishedMatch,
    FinishRequest,
    Limit,
    NewMatch,
    RematchView,
    ResignationView,
    SeatBotRequest,
    SeatClaimed,
)
from api.etag import IfNoneMatch, etag, not_modified, not_modified_response, tagged
from api.routes import route
from api.runtime import snapshot
from domain.game.match import Match
from domain.rules.ruleset import STANDARD, RuleSet, preset
from services import table_life
from services.access import organiser_of, seat_in, seat_or_organiser
from services.accounts.seating import check_admitted
from services.bots import bot_seats, bot_to_act
from services.idempotency import Receipt, Stamp
from services.sources import ORGANISER_ROLE, SEAT_ROLE, new_token, token_hash
from services.summaries import MatchList, MatchSummary, Origin, list_matches, match_summary
from services.view_types import rules_view

SeatParam = Annotated[int, PathParameter(ge=0, le=3, description="Seat 0..3 (R1)")]
OriginFilter = Annotated[
    Origin | None,
    QueryParameter(
        description="`played` (here) or `imported` (records stored with "
        "`POST /v1/records?store=true`); every match without it"
    ),
]


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
        body = await write.body(CreateMatchRequest | None) or CreateMatchRequest()
        service = write.runtime.service

        def work(_: None, stamp: Stamp) -> tuple[int, NewMatch]:
            rules = rule_set(body)
            match_id = uuid4()
            token = new_token(match_id, ORGANISER_ROLE)
            service.create_match(
                rules,
                name=body.name,
                preset=body.preset,
                match_id=match_id,
                organiser_token_hash=token_hash(token),
                attach=stamp.attach(lambda p: Receipt(201, match_id, p.result.version)),
                timers=body.timers.value() if body.timers else None,
                visibility=body.visibility,
            )
            return 201, NewMatch(
                match_id=str(match_id), version=1, organiser_token=token, rules=rules_view(rules)
            )

        def replay(_: None, outcome: Receipt) -> NewMatch:
            match = service.get_match(outcome.subject, version=1)
            return NewMatch(
                match_id=str(match.id),
                version=outcome.version,
                organiser_token=None,
                rules=rules_view(match.rules),
                token_withheld=True,
            )

        return await write.run(
            lambda: None, work, replay, location=lambda m: f"/v1/matches/{m.match_id}"
        )

    @route("/")
    async def list_matches(
        self, read: Reading, after: After = 0, limit: Limit = 50, origin: OriginFilter = None
    ) -> MatchList:
        """List matches, oldest first (paged)

        The matches, oldest first, a page at a time: `after` is the `next` of the
        page before; `origin` keeps the played or the imported ones only.
        """
        return await read.call(
            lambda: list_matches(read.service, after=after, limit=limit, origin=origin)
        )

    @route("/{match_id:uuid}", 404, tagged=True)
    async def get_match(
        self, read: Reading, match_id: FromPath[UUID], if_none_match: IfNoneMatch = None
    ) -> Response[MatchSummary]:
        """A match: rules, seats, levels, dealer, rounds and results

        A match as anyone may see it: rules (§10), seats, the teams' levels (R5),
        the next dealer (R31), its rounds with their results, and the winner once
        finished (R32). Nothing secret (R33). ETag: the match version.
        """
        match, current = await read.call(snapshot, read.service, match_id)
        summary = match_summary(match, current)
        tag = etag(summary.version)
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
        data = await write.body(ClaimSeatRequest)
        service = write.runtime.service

        def admit() -> None:
            """A private table's seats: the organiser's token only (invites seat others);
            a rematch's seats are kept for their people (403)."""
            match = service.get_match(match_id)
            cred = write.credential
            organiser = cred is not None and cred.role == ORGANISER_ROLE
            if organiser:
                organiser_of(match, cred)
            check_admitted(match, seat, organiser=organiser)

        def work(_: None, stamp: Stamp) -> tuple[int, SeatClaimed]:
            token = new_token(match_id, SEAT_ROLE)
            done = service.take_seat(
                match_id,
                seat,
                data.name,
                token=token,
                attach=stamp.attach(lambda p: Receipt(201, match_id, p.result.version, seat)),
            )[1]
            return 201, SeatClaimed(seat=seat, token=token, version=done.version)

        def replay(_: None, outcome: Receipt) -> SeatClaimed:
            return SeatClaimed(seat=seat, token=None, version=outcome.version, token_withheld=True)

        return await write.run(admit, work, replay)

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
        data = await write.body(SeatBotRequest)
        service = write.runtime.service

        def work(_: Match, stamp: Stamp) -> tuple[int, BotSeated]:
            done = service.take_seat(
                match_id,
                seat,
                data.name or f"{data.kind} bot {seat}",
                data.kind,
                attach=stamp.attach(lambda p: Receipt(201, match_id, p.result.version, seat)),
            )[1]
            return 201, BotSeated(seat=seat, kind=data.kind, version=done.version)

        def replay(_: Match, outcome: Receipt) -> BotSeated:
            return BotSeated(seat=seat, kind=data.kind, version=outcome.version)

        return await write.run(self._organiser(write, match_id), work, replay)

    @write_route("/{match_id:uuid}/bots/run", 202, 401, 403, 404)
    async def run_bots(self, write: Writing, match_id: FromPath[UUID]) -> Response[BotsRun]:
        """Wake the match's bots now (organiser)

        Bots move on their own, off the request path, as soon as they are to act; this asks the bot
        driver to look at the match now (a passed deadline is claimed on the way, R17, R20) and
        answers at once: 202 with the match version and whether a bot is to act. Their moves follow
        as new versions (and live frames).
        """
        runtime = write.runtime

        def work(_: Match, stamp: Stamp) -> tuple[int, BotsRun]:
            match, round_ = snapshot(runtime.service, match_id)
            bots = bot_seats(match)
            queued = not match.finished and round_ is not None and bot_to_act(round_, bots)
            version = match.sequence(0 if round_ is None else round_.version)
            runtime.bots.wake(match_id)
            outcome = Receipt(202, match_id, version, facts={"queued": queued})
            stamp.save_after(runtime.service, outcome)
            return 202, BotsRun(version=version, queued=queued)

        def replay(_: Match, outcome: Receipt) -> BotsRun:
            return BotsRun(version=outcome.version, queued=bool(outcome.facts.get("queued")))

        return await write.run(self._organiser(write, match_id), work, replay)

    @write_route("/{match_id:uuid}/finish", 200, *CHECKED, body=FinishRequest | None)
    async def finish_match(
        self, write: Writing, match_id: FromPath[UUID]
    ) -> Response[FinishedMatch]:
        """End the match (organiser, R32)

        A round being played is abandoned unscored; no command is accepted after.
        """
        data = await write.body(FinishRequest | None)
        reason = data.reason if data else "organiser"
        service = write.runtime.service

        def work(_: Match, stamp: Stamp) -> tuple[int, FinishedMatch]:
            done = service.finish_match(
                match_id,
                reason,
                attach=stamp.attach(lambda p: Receipt(200, match_id, p.result.version)),
            )
            return 200, FinishedMatch(version=done.version)

        def replay(_: Match, outcome: Receipt) -> FinishedMatch:
            return FinishedMatch(version=outcome.version)

        return await write.run(self._organiser(write, match_id), work, replay)

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
        service = write.runtime.service

        def who() -> int:
            return seat_in(service, service.get_match(match_id), write.credential)

        def work(seat: int, stamp: Stamp) -> tuple[int, ResignationView]:
            done = table_life.resign(
                service,
                match_id,
                seat,
                lambda r: stamp.records(
                    Receipt(200, match_id, r.version, seat, facts={"seat": seat})
                ),
            )
            view = ResignationView(
                seat=seat,
                finished=done.ended,
                waiting_for=done.waiting_for,
                version=done.result.version,
            )
            return 200, view

        def replay(seat: int, outcome: Receipt) -> ResignationView:
            match = service.get_match(match_id)
            waiting = [s for s in match.humans(seat % 2) if s not in match.resigned]
            finished = match.finished and seat not in waiting
            return ResignationView(
                seat=seat,
                finished=finished,
                waiting_for=[] if finished else waiting,
                version=outcome.version,
            )

        return await write.run(who, work, replay)

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
        service = write.runtime.service

        def who() -> table_life.Caller:
            match = service.get_match(match_id)
            who = seat_or_organiser(service, match, write.credential)
            if who == "organiser":
                return table_life.Caller(None)
            cred = write.credential
            assert cred is not None
            account = match.accounts.get(who)
            digest = "" if account is not None else cred.digest
            return table_life.Caller(who, account, digest)

        def work(caller: table_life.Caller, stamp: Stamp) -> tuple[int, RematchView]:
            done = table_life.rematch(
                service,
                match_id,
                caller,
                lambda r: stamp.records(Receipt(201, r.match_id, r.version, caller.seat)),
            )
            return 201, RematchView(
                match_id=str(done.match_id),
                seat=done.seat,
                token=done.token,
                waiting_for=done.waiting_for,
                version=done.result.version,
            )

        def replay(caller: table_life.Caller, outcome: Receipt) -> RematchView:
            match = service.get_match(outcome.subject)
            return RematchView(
                match_id=str(match.id),
                seat=caller.seat,
                token=None,
                waiting_for=table_life.waiting_for(match),
                version=outcome.version,
                token_withheld=True,
            )

        return await write.run(who, work, replay, location=lambda r: f"/v1/matches/{r.match_id}")

    @staticmethod
    def _organiser(write: Write, match_id: UUID) -> Callable[[], Match]:
        """The organiser's check of ``match_id`` (401/403/404): the match, as loaded."""
        service = write.runtime.service

        def check() -> Match:
            match = service.get_match(match_id)
            organiser_of(match, write.credential)
            return match

        return check

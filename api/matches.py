"""Matches and seats: create, list, get; claim a seat, seat a bot, run the bots, finish.

``POST /v1/matches`` answers the organiser token once (stored hashed in
``MatchCreated``). Seats are claimed first come (R1), each answering its seat token once;
the organiser seats bots. When the fourth seat fills, round 1 is dealt in the same save
(R16), and after every command the bots play their pending moves (``services.bots``), a
bounded number per request, so a table of four bots plays a match on its own.
"""

from __future__ import annotations

import logging
from typing import Annotated, Any, cast
from uuid import UUID, uuid4

from litestar import Controller, Request, Response, get, post
from litestar.di import NamedDependency
from litestar.params import FromPath, HeaderParameter, PathParameter, QueryParameter

from api.auth import bearer, require_organiser, scope_of
from api.dto import (
    ETAG_HEADER,
    LOCATION_HEADER,
    NOT_MODIFIED,
    REPLAYED_HEADER,
    BotSeated,
    BotsRun,
    ClaimSeatRequest,
    CreateMatchRequest,
    FinishedMatch,
    FinishRequest,
    NewMatch,
    RunBotsRequest,
    SeatBotRequest,
    SeatClaimed,
    problems,
)
from api.etag import etag, not_modified, not_modified_response, tagged
from api.idempotency import KEY_DOC, Answer, Key, field_of, run
from api.runtime import Runtime, snapshot
from api.strict import json_body, read_body
from domain.rules.ruleset import STANDARD, RuleSet, preset
from services.bots import Stopped, run_bots
from services.game import GameService
from services.idempotency import Outcome
from services.sources import ORGANISER_ROLE, SEAT_ROLE, new_token, token_hash
from services.summaries import MatchList, MatchSummary, Origin, list_matches, match_summary
from services.view_types import rules_view

log = logging.getLogger(__name__)

IdempotencyKey = Annotated[
    str | None,
    HeaderParameter(name="Idempotency-Key", min_length=1, max_length=255, description=KEY_DOC),
]
IfNoneMatch = Annotated[
    str | None,
    HeaderParameter(
        name="If-None-Match", description='"<version>" of a previous answer: 304 if current'
    ),
]
SeatParam = Annotated[int, PathParameter(ge=0, le=3, description="Seat 0..3 (R1)")]
BEARER: list[dict[str, list[str]]] = [{"bearer": []}]


def rule_set(data: CreateMatchRequest) -> RuleSet:
    """The preset (standard by default) with the given §10 fields over it."""
    base = preset(data.preset) if data.preset is not None else STANDARD
    if data.rules is None:
        return base
    return RuleSet.from_mapping({**base.to_mapping(), **data.rules.fields()})


def play_bots(service: GameService, match_id: UUID, steps: int) -> None:
    """After a command: the bots' pending moves. Their failure never fails the command."""
    try:
        run_bots(service, match_id, steps)
    except Exception:  # pragma: no cover - defensive: the command is already saved
        log.exception("bots failed after a command on match %s", match_id)


class MatchController(Controller):
    path = "/v1/matches"
    tags = ["matches"]  # noqa: RUF012 - Litestar declares it an instance attribute

    @post(
        "/",
        status_code=201,
        summary="Create a match (a preset and/or §10 rule fields)",
        description="Answers the organiser token once; it authorises seating bots, running "
        "them and ending the match. The rules are fixed for good (RULES §10).",
        responses=problems(409, body=True),
        response_headers=[LOCATION_HEADER, REPLAYED_HEADER],
        opt=json_body(CreateMatchRequest | None),
    )
    async def create(
        self,
        request: Request[Any, Any, Any],
        runtime: NamedDependency[Runtime],
        idempotency_key: IdempotencyKey = None,
    ) -> Response[NewMatch]:
        body = await read_body(request, CreateMatchRequest | None) or CreateMatchRequest()
        service = runtime.service

        def work(key: Key) -> Answer[NewMatch]:
            rules = rule_set(body)
            match_id = uuid4()
            token = new_token(match_id, ORGANISER_ROLE)
            service.create_match(
                rules,
                name=body.name,
                preset=body.preset,
                match_id=match_id,
                organiser_token_hash=token_hash(token),
                attach=key.attach(lambda p: Outcome(201, match_id, p.result.version)),
                timers=body.timers.value() if body.timers else None,
            )
            return Answer(
                201,
                NewMatch(
                    match_id=str(match_id),
                    version=1,
                    organiser_token=token,
                    rules=rules_view(rules),
                ),
            )

        def replay(outcome: Outcome) -> NewMatch:
            match = service.get_match(outcome.subject, version=1)
            return NewMatch(
                match_id=str(match.id),
                version=outcome.version,
                organiser_token=None,
                rules=rules_view(match.rules),
                token_withheld=True,
            )

        scope = scope_of(bearer(request), request.client.host if request.client else None)
        response = await run(runtime, request, idempotency_key, scope, work, replay)
        response.headers["Location"] = f"/v1/matches/{field_of(response, 'matchId')}"
        return response

    @get("/", summary="List matches, oldest first (paged)", responses=problems())
    async def index(
        self,
        runtime: NamedDependency[Runtime],
        after: Annotated[
            int, QueryParameter(ge=0, le=10**15, description="`next` of the previous page")
        ] = 0,
        limit: Annotated[int, QueryParameter(ge=1, le=100)] = 50,
        origin: Annotated[
            Origin | None,
            QueryParameter(
                description="`played` (here) or `imported` (records stored with "
                "`POST /v1/records?store=true`); every match without it"
            ),
        ] = None,
    ) -> MatchList:
        return await runtime.call(
            lambda: list_matches(runtime.service, after=after, limit=limit, origin=origin)
        )

    @get(
        "/{match_id:uuid}",
        summary="A match: rules, seats, levels, dealer, rounds and results",
        responses={304: NOT_MODIFIED, **problems(404)},
        response_headers=[ETAG_HEADER],
    )
    async def get_match(
        self,
        runtime: NamedDependency[Runtime],
        match_id: FromPath[UUID],
        if_none_match: IfNoneMatch = None,
    ) -> Response[MatchSummary]:
        match, current = await runtime.call(snapshot, runtime.service, match_id)
        summary = match_summary(match, current)
        tag = etag(summary.version)
        if not_modified(if_none_match, tag):
            return not_modified_response(tag)
        return tagged(summary, tag)

    @post(
        "/{match_id:uuid}/seats/{seat:int}",
        status_code=201,
        summary="Claim a seat (R1); answers its token once",
        description="When the fourth seat fills, round 1 is dealt at once (R16).",
        responses=problems(404, 409, body=True),
        response_headers=[REPLAYED_HEADER],
        opt=json_body(ClaimSeatRequest),
    )
    async def claim_seat(
        self,
        request: Request[Any, Any, Any],
        runtime: NamedDependency[Runtime],
        match_id: FromPath[UUID],
        seat: SeatParam,
        idempotency_key: IdempotencyKey = None,
    ) -> Response[SeatClaimed]:
        data = await read_body(request, ClaimSeatRequest)
        service = runtime.service

        def work(key: Key) -> Answer[SeatClaimed]:
            token = new_token(match_id, SEAT_ROLE)
            _, done = service.take_seat(
                match_id,
                seat,
                data.name,
                token=token,
                attach=key.attach(lambda p: Outcome(201, match_id, p.result.version, seat)),
            )
            play_bots(service, match_id, runtime.bot_steps)
            return Answer(201, SeatClaimed(seat=seat, token=token, version=done.version))

        def replay(outcome: Outcome) -> SeatClaimed:
            return SeatClaimed(seat=seat, token=None, version=outcome.version, token_withheld=True)

        scope = scope_of(bearer(request), request.client.host if request.client else None)
        return await run(runtime, request, idempotency_key, scope, work, replay)

    @post(
        "/{match_id:uuid}/seats/{seat:int}/bot",
        status_code=201,
        summary="Seat a bot (organiser)",
        description="The bot plays through the same commands as a person; it moves after "
        "every command, so four bots play the match on their own.",
        responses=problems(401, 403, 404, 409, body=True),
        security=BEARER,
        response_headers=[REPLAYED_HEADER],
        opt=json_body(SeatBotRequest),
    )
    async def seat_bot(
        self,
        request: Request[Any, Any, Any],
        runtime: NamedDependency[Runtime],
        match_id: FromPath[UUID],
        seat: SeatParam,
        idempotency_key: IdempotencyKey = None,
    ) -> Response[BotSeated]:
        data = await read_body(request, SeatBotRequest)
        service = runtime.service
        token = bearer(request)

        def organiser() -> None:
            require_organiser(service, service.get_match(match_id), token)

        def work(key: Key) -> Answer[BotSeated]:
            organiser()
            name = data.name or f"{data.kind} bot {seat}"
            _, done = service.take_seat(
                match_id,
                seat,
                name,
                data.kind,
                attach=key.attach(lambda p: Outcome(201, match_id, p.result.version, seat)),
            )
            play_bots(service, match_id, runtime.bot_steps)
            return Answer(201, BotSeated(seat=seat, kind=data.kind, version=done.version))

        def replay(outcome: Outcome) -> BotSeated:
            return BotSeated(seat=seat, kind=data.kind, version=outcome.version)

        return await run(
            runtime, request, idempotency_key, scope_of(token), work, replay, organiser
        )

    @post(
        "/{match_id:uuid}/bots/run",
        status_code=200,
        summary="Play the bots' pending moves now (organiser)",
        description="Bots move after every command anyway; this also claims a passed "
        "deadline (R17, R20) and lets a table of bots go on after the per-request budget.",
        responses=problems(401, 403, 404, body=True),
        security=BEARER,
        response_headers=[REPLAYED_HEADER],
        opt=json_body(RunBotsRequest | None),
    )
    async def bots(
        self,
        request: Request[Any, Any, Any],
        runtime: NamedDependency[Runtime],
        match_id: FromPath[UUID],
        idempotency_key: IdempotencyKey = None,
    ) -> Response[BotsRun]:
        data = await read_body(request, RunBotsRequest | None)
        service = runtime.service
        token = bearer(request)

        def organiser() -> None:
            require_organiser(service, service.get_match(match_id), token)

        steps = (data.max_steps if data else None) or runtime.bot_steps

        def work(key: Key) -> Answer[BotsRun]:
            organiser()
            done = run_bots(service, match_id, steps)
            facts = {"steps": done.steps, "stopped": done.stopped}
            records = key.records(Outcome(200, match_id, done.version, facts=facts))
            if records:  # bot moves are saved one by one: the key is saved after them
                service.save(*records)
            return Answer(
                200, BotsRun(steps=done.steps, version=done.version, stopped=done.stopped)
            )

        def replay(outcome: Outcome) -> BotsRun:
            facts = outcome.facts
            return BotsRun(
                steps=int(facts.get("steps") or 0),
                version=outcome.version,
                stopped=cast("Stopped", facts.get("stopped") or "waiting"),
            )

        return await run(
            runtime, request, idempotency_key, scope_of(token), work, replay, organiser
        )

    @post(
        "/{match_id:uuid}/finish",
        status_code=200,
        summary="End the match (organiser, R32)",
        description="A round being played is abandoned unscored; no command is accepted after.",
        responses=problems(401, 403, 404, 409, body=True),
        security=BEARER,
        response_headers=[REPLAYED_HEADER],
        opt=json_body(FinishRequest | None),
    )
    async def finish(
        self,
        request: Request[Any, Any, Any],
        runtime: NamedDependency[Runtime],
        match_id: FromPath[UUID],
        idempotency_key: IdempotencyKey = None,
    ) -> Response[FinishedMatch]:
        data = await read_body(request, FinishRequest | None)
        service = runtime.service
        token = bearer(request)

        def organiser() -> None:
            require_organiser(service, service.get_match(match_id), token)

        reason = data.reason if data else "organiser"

        def work(key: Key) -> Answer[FinishedMatch]:
            organiser()
            done = service.finish_match(
                match_id,
                reason,
                attach=key.attach(lambda p: Outcome(200, match_id, p.result.version)),
            )
            return Answer(200, FinishedMatch(version=done.version))

        def replay(outcome: Outcome) -> FinishedMatch:
            return FinishedMatch(version=outcome.version)

        return await run(
            runtime, request, idempotency_key, scope_of(token), work, replay, organiser
        )

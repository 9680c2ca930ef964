"""Turn timers over REST (docs/timers.md): ``POST /v1/matches/{match_id}/timeout`` claims
the timeout of the seat to act, and :class:`SweeperTask` runs the sweeper
(:mod:`services.sweeper`) as a background task of the app, from start-up to shutdown.

Anyone at the table may claim: a seat token of the match or its organiser token (401
without or with a bad token, 403 for another match's). The timeout bot (``TIMEOUT_BOT``,
the heuristic by default) then moves for the timed-out seat and ``TurnTimedOut`` precedes
its move in the history. A claim before the deadline is refused with 409 ``not-timed-out``
(the detail says how long is left); 409 ``no-turn-timer`` when no limit runs (no limits in
this match, or no seat to act). If-Match and Idempotency-Key work as on every command.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any
from uuid import UUID

import msgspec
from litestar import Controller, Request, Response, post
from litestar.di import NamedDependency
from litestar.params import FromPath

from api.auth import UnauthorizedError, bearer, require_organiser, scope_of, seat_of
from api.commands import IfMatch
from api.dto import REPLAYED_HEADER, problems
from api.etag import expected_version
from api.idempotency import Answer, Key, run
from api.matches import BEARER, IdempotencyKey, play_bots
from api.runtime import Runtime
from domain.game.match import Match
from services.bots import bot_seats
from services.commands import Pending
from services.game import GameService
from services.idempotency import Fact, Outcome
from services.sources import ORGANISER_ROLE
from services.sweeper import Sweeper
from services.timers import ORGANISER, TIMEOUT_KIND, TimedOut, by_seat, claim_timeout

TIMEOUT_DOC = """The seat to act is over its time limit (the match's `timers`, counted from the
event that made it that seat's turn; views show it as `turnDeadline`): a bot (the
service's `TIMEOUT_BOT`, by default `heuristic`) moves for it, recorded as `TurnTimedOut`
followed by the move's own events. Any seat token of the match, or its organiser token.
Answers the match version after the move, the seat, its timer (`declare`, `bury`, `play`)
and the bot's action (no cards: a buried bottom is secret, R33); then the bots play their
pending moves.

409 `not-timed-out`: the seat still has time (the detail says how long);
409 `no-turn-timer`: no limit runs now; 409 `version-conflict`: another command won the
race. 412: `If-Match` is not the current version."""


class TimeoutClaimed(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    version: int
    """The match version right after the bot's move for the seat."""
    seat: int
    timer: str
    """``declare``, ``bury`` or ``play``."""
    limit_ms: int
    action: str
    """What the timeout bot did for the seat (``play``, ``bury``, ``pass``, …)."""


def claimer(service: GameService, match: Match, token: str | None) -> str:
    """Who claims: ``organiser`` or ``seat N`` (``TurnTimedOut.claimed_by``)."""
    if token is None:
        raise UnauthorizedError(
            "a seat token or the organiser token of this match is needed: "
            "Authorization: Bearer <token>"
        )
    if token.startswith(ORGANISER_ROLE + "."):
        require_organiser(service, match, token)
        return ORGANISER
    return by_seat(seat_of(service, match, token))


class TimeoutController(Controller):
    path = "/v1/matches"
    tags = ["commands"]  # noqa: RUF012 - Litestar declares it an instance attribute

    @post(
        "/{match_id:uuid}/timeout",
        status_code=200,
        summary="Claim the turn timeout of the seat to act (the bot moves for it)",
        description=TIMEOUT_DOC,
        responses=problems(401, 403, 404, 409, 412),
        response_headers=[REPLAYED_HEADER],
        security=BEARER,
    )
    async def claim(
        self,
        request: Request[Any, Any, Any],
        runtime: NamedDependency[Runtime],
        match_id: FromPath[UUID],
        if_match: IfMatch = None,
        idempotency_key: IdempotencyKey = None,
    ) -> Response[TimeoutClaimed]:
        service = runtime.service
        token = bearer(request)

        def authorize() -> None:  # before an Idempotency-Key replay, too
            claimer(service, service.get_match(match_id), token)

        def work(key: Key) -> Answer[TimeoutClaimed]:
            match = service.get_match(match_id)
            who = claimer(service, match, token)
            expected = expected_version(if_match)  # after auth: 401/403 before 412

            def attach(p: Pending, done: TimedOut) -> list[Any]:
                facts: dict[str, Fact] = {
                    "timer": done.timer,
                    "limitMs": done.limit_ms,
                    "action": done.action,
                }
                return key.records(Outcome(200, match_id, p.result.version, done.seat, facts))

            kind = getattr(request.app.state, "timeout_kind", TIMEOUT_KIND)
            done = claim_timeout(
                service, match_id, who, expected_version=expected, attach=attach, kind=kind
            )
            if bot_seats(match):
                play_bots(service, match_id, runtime.bot_steps)
            assert done.result is not None
            answer = TimeoutClaimed(
                version=done.result.version,
                seat=done.seat,
                timer=done.timer,
                limit_ms=done.limit_ms,
                action=done.action,
            )
            return Answer(200, answer)

        def replay(outcome: Outcome) -> TimeoutClaimed:
            facts = outcome.facts
            return TimeoutClaimed(
                version=outcome.version,
                seat=outcome.seat if outcome.seat is not None else -1,
                timer=str(facts.get("timer")),
                limit_ms=int(facts.get("limitMs") or 0),
                action=str(facts.get("action")),
            )

        return await run(
            runtime, request, idempotency_key, scope_of(token), work, replay, authorize
        )


class SweeperTask:
    """The sweeper as a background task of the app: ``Litestar(lifespan=[…,
    task.lifespan])`` starts it after start-up and stops it cleanly at shutdown (the
    sweep in progress ends after its current match). ``interval_ms`` 0: no sweeper."""

    def __init__(self, sweeper: Sweeper, runtime: Runtime, interval_ms: int) -> None:
        self.sweeper = sweeper
        self.runtime = runtime
        self.interval_ms = interval_ms
        self.task: asyncio.Task[None] | None = None

    @classmethod
    def build(
        cls, runtime: Runtime, interval_ms: int, timeout_kind: str = TIMEOUT_KIND
    ) -> SweeperTask:
        """The sweeper of ``runtime``'s service; ``timeout_kind`` moves for late seats."""
        return cls(Sweeper(runtime.service, timeout_kind=timeout_kind), runtime, interval_ms)

    @contextlib.asynccontextmanager
    async def lifespan(self, _app: object = None) -> AsyncIterator[None]:
        if self.interval_ms <= 0:
            yield
            return
        self.sweeper.attach()
        self.task = asyncio.create_task(
            self.sweeper.run(self.interval_ms / 1000, self.runtime.call), name="sweeper"
        )
        try:
            yield
        finally:
            self.sweeper.stop()
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.task
            self.task = None
            self.sweeper.detach()

"""Turn timers over REST (docs/timers.md): ``POST /v1/matches/{match_id}/timeout`` claims
the timeout of the seat to act. The sweeper (:mod:`services.sweeper`) claims them without
a request, beside the bot driver (:mod:`services.bot_driver`): background work the
process's runner runs (``infra.workers``, docs/decisions.md D-rooms).

Anyone at the table may claim: a seat token of the match or its organiser token (401
without or with a bad token, 403 for another match's). The timeout bot (``TIMEOUT_BOT``,
the heuristic by default) then moves for the timed-out seat, under the bot driver's
per-decision CPU budget, and ``TurnTimedOut`` precedes its move in the history. A claim
before the deadline is refused with 409 ``not-timed-out`` (the detail says how long is
left); 409 ``no-turn-timer`` when no limit runs (no limits in this match, or no seat to
act). If-Match and Idempotency-Key work as on every command.
"""

from __future__ import annotations

from uuid import UUID

from litestar import Controller, Response
from litestar.params import FromPath

from api.calls import CHECKED, Writing, write_route
from api.etag import IfMatch, precondition
from services.timers import ClaimTimeout, TimeoutClaimed

TIMEOUT_DOC = """The seat to act is over its time limit (the match's `timers`, counted from the
event that made it that seat's turn; views show it as `turnDeadline`): a bot (the
service's `TIMEOUT_BOT`, by default `heuristic`) moves for it, recorded as `TurnTimedOut`
followed by the move's own events. Any seat token of the match, or its organiser token.
Answers the match version after the move, the seat, its timer (`declare`, `bury`, `play`)
and the bot's action (no cards: a buried bottom is secret, R33); the bots at the table
reply after it, off the request.

409 `not-timed-out`: the seat still has time (the detail says how long);
409 `no-turn-timer`: no limit runs now; 409 `version-conflict`: another command won the
race. 412: `If-Match` is not the current version."""


class TimeoutController(Controller):
    path = "/v1/matches"
    tags = ["commands"]  # noqa: RUF012 - Litestar declares it an instance attribute

    @write_route("/{match_id:uuid}/timeout", 200, *CHECKED, 412, description=TIMEOUT_DOC)
    async def claim_timeout(
        self, write: Writing, match_id: FromPath[UUID], if_match: IfMatch = None
    ) -> Response[TimeoutClaimed]:
        """Claim the turn timeout of the seat to act (the bot moves for it)"""
        return await write.send(ClaimTimeout(match_id, precondition(if_match)))

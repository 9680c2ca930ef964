"""Claiming a turn timeout (docs/timers.md): a bot (the heuristic, by default) moves for a
seat over its time.

:class:`ClaimTimeout` takes the path every round command takes
(:func:`services.round_commands.ready`): the match and its round are loaded, a passed deal
deadline is claimed first (R16, R17, R20), then — with the command's ``now`` —
:func:`domain.game.timers.check_timed_out` decides whether the seat to act is over its
limit. If it is, the bot of the service's ``TIMEOUT_BOT`` kind (:mod:`domain.bots`, from the
same redacted view :mod:`services.bots` builds, R33) chooses the seat's move,
``TurnTimedOut`` is recorded and the move's own events follow, in one save. If not, the
claim is refused (``not-timed-out``, saying how long is left; ``no-turn-timer`` when no
limit runs) — a deadline claimed on the way is saved all the same, as a refused command's
is.

Anyone at the table may claim (a seat token of the match or its organiser token), and the
sweeper does for every match (:mod:`services.sweeper`). Two claims racing (two clients, or
the sweepers of several replicas) are safe: the store's optimistic concurrency lets one
win; the other gets ``version-conflict``.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Annotated, Final, cast
from uuid import UUID

import msgspec
from msgspec import Meta

from domain.game.actions import perform
from domain.game.match import Match
from domain.game.timers import check_timed_out, record_timeout
from services.access import seat_or_organiser
from services.bots import Stop, cpu_budget, next_move
from services.bus import Caller, Handler, Outcome, Service
from services.dealer import Dealer
from services.game import GameService
from services.round_commands import ANY_VERSION, Precondition, outcome, ready, settle
from services.unit_of_work import Reading, UnitOfWork

SWEEPER: Final = "sweeper"
ORGANISER: Final = "organiser"
TIMEOUT_KIND: Final = "heuristic"
"""The default bot policy that moves for a timed-out seat (``domain.bots.PLAYERS``;
the service's ``TIMEOUT_BOT`` setting chooses another)."""


def by_seat(seat: int) -> str:
    """``claimed_by`` of a claim made with a seat token."""
    return f"seat {seat}"


@dataclass(frozen=True, slots=True)
class ClaimTimeout:
    """Claim the turn timeout of the seat to act: the timeout bot moves for it
    (docs/timers.md)."""

    match_id: UUID
    expected: Precondition = ANY_VERSION
    claimed_by: str = SWEEPER
    """Who claims when the service itself does (``sweeper``); a request's claimer is its
    credential's (``seat N`` or ``organiser``)."""


class TimeoutClaimed(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """A seat that ran out of time: what the timeout bot did for it."""

    version: Annotated[
        int, Meta(description="The match version right after the bot's move for the seat.")
    ]
    seat: Annotated[int, Meta(description="The seat that ran out of time")]
    timer: Annotated[str, Meta(description="`declare`, `bury` or `play`.")]
    limit_ms: Annotated[int, Meta(description="Its turn limit, in milliseconds")]
    action: Annotated[
        str,
        Meta(description="What the timeout bot did for the seat (`play`, `bury`, `pass`, …)."),
    ]


@dataclass(frozen=True, slots=True)
class Claimant:
    claimed_by: str
    """``seat N``, ``organiser`` or ``sweeper`` (recorded in ``TurnTimedOut``)."""
    match: Match | None


class ClaimTimeoutHandler(Handler[ClaimTimeout, Claimant, TimeoutClaimed]):
    """A claim before the deadline is refused (409 ``not-timed-out``, saying how long is
    left; ``no-turn-timer`` when no limit runs) — a deadline claimed on the way is saved all
    the same, as a refused command's is. Two claims racing: one wins, the other gets
    ``version-conflict``."""

    def __init__(
        self, service: GameService, dealer: Dealer, kind: str, decision_cpu_s: float
    ) -> None:
        self.service = service
        self.dealer = dealer
        self.kind = kind
        self.decision_cpu_s = decision_cpu_s

    def authorise(self, command: ClaimTimeout, caller: Caller) -> Claimant:
        if isinstance(caller, Service):
            return Claimant(command.claimed_by, None)
        match = self.service.get_match(command.match_id)
        who = seat_or_organiser(self.service, match, caller)
        return Claimant(by_seat(who) if isinstance(who, int) else ORGANISER, match)

    def handle(self, uow: UnitOfWork, command: ClaimTimeout, who: Claimant) -> Outcome:
        if who.match is not None:
            uow.add(who.match)
        match = uow.match(command.match_id)
        round_, _ = ready(uow, self.dealer, match, command.expected.required())
        if round_.pending_events:
            uow.kept.append(round_)
        stop: Stop = cpu_budget(self.decision_cpu_s)
        clock = check_timed_out(match.timers, round_, uow.now)
        move = next_move(match, round_, uow.now, bots={clock.seat: self.kind}, stop=stop)
        if move is None or move.seat != clock.seat:  # pragma: no cover - a seat to act moves
            raise AssertionError(f"the bot found no move for seat {clock.seat}")
        # The move is tried on a copy first: TurnTimedOut is recorded only with a move.
        perform(copy.deepcopy(round_), move.seat, move.action, uow.now)
        record_timeout(round_, clock, uow.now, who.claimed_by)
        perform(round_, move.seat, move.action, uow.now)
        match, current = settle(uow, self.dealer, match, round_)
        return outcome(
            self.service,
            match,
            current,
            clock.seat,
            timer=clock.timer,
            limitMs=clock.limit_ms,
            action=move.action.name,
        )

    def answer(
        self, command: ClaimTimeout, who: Claimant, outcome: Outcome, state: Reading
    ) -> TimeoutClaimed:
        facts = outcome.facts
        return TimeoutClaimed(
            version=outcome.version,
            seat=outcome.seat if outcome.seat is not None else -1,
            timer=str(facts.get("timer")),
            limit_ms=int(cast("int", facts.get("limitMs") or 0)),
            action=str(facts.get("action")),
        )

"""Claiming a turn timeout (docs/timers.md): a bot (the heuristic, by default) moves for a seat over
its time.

:func:`claim_timeout` runs through the command path every move takes
(:meth:`GameService.act`): the match and its round are loaded, a passed deal deadline is
claimed first (R16, R17, R20), then — with the command's ``now`` —
:func:`domain.game.timers.check_timed_out` decides whether the seat to act is over its
limit. If it is, the bot of kind ``kind`` (:mod:`domain.bots`, from the same redacted view
:mod:`services.bots` builds, R33) chooses the seat's move, ``TurnTimedOut`` is recorded
and the move's own events follow, in one save. If not, the claim is refused
(``not-timed-out``, saying how long is left; ``no-turn-timer`` when no limit runs) — a
deadline claimed on the way is saved all the same, as a refused command's is.

Two claims racing (two clients, or the sweepers of several replicas) are safe: the
store's optimistic concurrency lets one win; the other gets ``version-conflict``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final
from uuid import UUID

from domain.game.match import Match
from domain.game.round import Round
from domain.game.timers import check_timed_out, record_timeout
from domain.rules.cards import Card
from services.bots import Stop, next_move
from services.commands import CommandResult, Pending
from services.game import GameService

SWEEPER: Final = "sweeper"
ORGANISER: Final = "organiser"
TIMEOUT_KIND: Final = "heuristic"
"""The default bot policy that moves for a timed-out seat (``domain.bots.PLAYERS``;
the service's ``TIMEOUT_BOT`` setting chooses another)."""


def by_seat(seat: int) -> str:
    """``claimed_by`` of a claim made with a seat token."""
    return f"seat {seat}"


@dataclass(frozen=True, slots=True)
class TimedOut:
    """A claimed timeout: the seat, its timer and the action the bot made for it (the
    cards are left out: a buried bottom is secret, R21, R33)."""

    seat: int
    timer: str
    limit_ms: int
    action: str
    result: CommandResult | None = None
    """The command's result (None while it is being saved)."""


TimeoutAttach = Callable[[Pending, TimedOut], Sequence[Any]]
"""Like ``services.game.Attach``, also told what timed out (an idempotency record)."""


def claim_timeout(
    service: GameService,
    match_id: UUID,
    claimed_by: str,
    *,
    match: Match | None = None,
    expected_version: int | None = None,
    attach: TimeoutAttach | None = None,
    kind: str = TIMEOUT_KIND,
    stop: Stop | None = None,
) -> TimedOut:
    """Claim the timeout of the seat to act; the bot of ``kind`` moves for it (``stop``:
    its decision's budget, :func:`services.bots.cpu_budget`). ``match``: the match as the
    caller loaded it."""
    decided: list[TimedOut] = []

    def decide(match: Match, round_: Round, now: datetime) -> tuple[int, str, tuple[Card, ...]]:
        clock = check_timed_out(match.timers, round_, now)
        move = next_move(match, round_, now, bots={clock.seat: kind}, stop=stop)
        if move is None or move.seat != clock.seat:  # pragma: no cover - a seat to act moves
            raise AssertionError(f"the bot found no move for seat {clock.seat}")
        # The move is tried on a copy first: TurnTimedOut is recorded only with a move.
        GameService._dispatch(copy.deepcopy(round_), move.seat, move.action, move.cards, now)
        record_timeout(round_, clock, now, claimed_by)
        decided.append(TimedOut(clock.seat, clock.timer, clock.limit_ms, move.action))
        return move.seat, move.action, move.cards

    def attached(pending: Pending) -> Sequence[Any]:
        assert attach is not None and decided
        return attach(pending, decided[-1])

    result = service.act(
        match_id,
        -1,  # the seat, action and cards are chosen by decide()
        "timeout",
        match=match,
        expected_version=expected_version,
        attach=None if attach is None else attached,
        decide=decide,
    )
    done = decided[-1]
    return TimedOut(done.seat, done.timer, done.limit_ms, done.action, result)

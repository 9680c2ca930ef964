"""A command's outcome and the round actions: what ``GameService``'s commands return and
take (:mod:`services.game`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from uuid import UUID

from domain.game.match import Match
from domain.game.round import Round
from domain.rules.cards import Card
from domain.rules.errors import InvalidInputError


@dataclass(frozen=True, slots=True)
class CommandResult:
    """What a command changed: the match and round versions after it."""

    match_id: UUID
    match_version: int
    round_id: UUID | None
    """The round the command acted on (for ``act``: also when it scored and a new began)."""
    round_version: int | None
    version: int = 0
    """The match's version after the command (:meth:`Match.sequence`: how many events
    the match and its rounds hold)."""
    match: Match | None = field(default=None, compare=False, repr=False)
    """The match as the command saved it (to answer from, after the save)."""
    current: Round | None = field(default=None, compare=False, repr=False)
    """The match's current round as the command saved it (the next one if it scored)."""


@dataclass(frozen=True, slots=True)
class Pending:
    """A command's outcome just before it is saved: the aggregates as they will be stored."""

    result: CommandResult
    match: Match
    round: Round | None
    """The match's current round after the command (the next one if it scored a round)."""


Attach = Callable[[Pending], Sequence[Any]]
"""Extra aggregates (an idempotency record) to save in the command's own ``save``, so
they commit atomically with its events; built from the outcome about to be saved."""
Decide = Callable[[Match, Round, datetime], tuple[int, str, tuple[Card, ...]]]
"""Chooses a command's seat, action and cards on the round as it finds it (a turn
timeout, :mod:`services.timers`)."""


ACTIONS = ("declare", "overcall", "pass", "bury", "play", "redeal")


def dispatch(
    round_: Round,
    seat: int,
    action: str,
    cards: tuple[Card, ...],
    now: datetime,
    *,
    dry: bool = False,
) -> None:
    """Run one of :data:`ACTIONS` for ``seat`` on ``round_`` (its events pending, not saved);
    the one place an action name becomes a round command (``act``, the record replay).
    ``dry``: a dry run — a throw is judged by its shape, never against the other hands
    (R22, R33; docs/decisions.md D-dry-run)."""
    if action == "declare":
        round_.declare(seat, cards, now)
    elif action == "overcall":
        round_.overcall(seat, cards, now)
    elif action == "pass":
        round_.pass_turn(seat, now)
    elif action == "bury":
        round_.bury(seat, cards, now)
    elif action == "play":
        round_.play_cards(seat, cards, now, test_throw=not dry)
    elif action == "redeal":
        round_.request_redeal(seat, now)
    else:
        raise InvalidInputError(f"unknown action {action!r}; one of {', '.join(ACTIONS)}")

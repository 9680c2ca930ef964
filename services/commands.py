"""What the write paths not yet moved onto the bus (:mod:`services.bus`) pass around: a
command's result and the aggregates about to be saved with an Idempotency-Key's record."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from domain.game.match import Match
from domain.game.round import Round


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

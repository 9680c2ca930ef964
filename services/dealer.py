"""Dealing a round and beginning the next one (R16, R19, R35, R36), on aggregates a command
holds — nothing is saved here (the bus saves the command's unit of work).

Where a deal's seed, pacing and first seat come from is a port, :class:`DealSource`, given
to the :class:`Dealer` by whoever composes the handlers: fresh seeds from the service's seed
source for an ordinary match (R35), the tournament round's secret for a tournament table
(R36, :mod:`services.tournaments.seeds`), the record's own deals for a record's replay
(:mod:`services.records.steps`). The game core imports none of them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Final, Protocol, TypeVar
from uuid import UUID

from domain.game.match import Match
from domain.game.round import Round, RoundPhase
from domain.game.round_events import Pacing
from domain.rules.board import Board

T = TypeVar("T")

STAND_IN_SEED: Final = bytes(32)
"""The seed a dry run deals a void deal again from: the real seed is drawn only when a
command acts (R35), and a dry run shows nothing it could not know (R33)."""


class Loader(Protocol):
    """What a deal source may read: an aggregate of the command's unit of work (so a
    tournament scheduled in the same command is read as it will be saved)."""

    def get(self, aggregate_id: UUID, cls: type[T], what: str) -> T: ...


@dataclass(frozen=True, slots=True)
class Dealing:
    """One dealing of a round: its seed (R35), the pacing of its draw (R16, R17, R20) and
    the seat that draws first (None: the dealer, R16; round 1 from seat 0)."""

    seed: bytes
    pacing: Pacing
    first_seat: int | None = None


class DealSource(Protocol):
    """Where a match's deals come from (the module docstring)."""

    def dealing(self, loader: Loader, match: Match, round_: Round) -> Dealing:
        """The next dealing of ``round_`` (its ``deal_no + 1``-th)."""
        ...

    def board(self, loader: Loader, match: Match, number: int) -> Board | None:
        """The board round ``number`` of ``match`` plays (R36); None for an ordinary deal."""
        ...


@dataclass(frozen=True, slots=True)
class FreshDeals:
    """An ordinary match's deals: a fresh 256-bit seed each (R35), the service's pacing."""

    seeds: Callable[[], bytes]
    pacing: Pacing

    def dealing(self, loader: Loader, match: Match, round_: Round) -> Dealing:
        return Dealing(self.seeds(), self.pacing)

    def board(self, loader: Loader, match: Match, number: int) -> Board | None:
        return None


class Dealer:
    """Deals rounds and begins them, from its :class:`DealSource`."""

    def __init__(self, source: DealSource) -> None:
        self.source = source

    def deal(
        self, loader: Loader, match: Match, round_: Round, now: datetime, *, dry: bool = False
    ) -> None:
        """Deal ``round_`` (R16, R35). ``dry`` (a dry run): from :data:`STAND_IN_SEED`, so
        no seed is drawn or shown. A board dealt with a weak hand is dealt again at once,
        as at every table (R36, §10; ``Round.deal`` stops redealing after
        ``MAX_DEALINGS``)."""
        while True:
            if dry:
                round_.deal(STAND_IN_SEED, now)  # the pacing of the dealing it replaces
                return
            dealing = self.source.dealing(loader, match, round_)
            round_.deal(dealing.seed, now, dealing.pacing, first_seat=dealing.first_seat)
            if round_.phase is not RoundPhase.REDEAL:
                return

    def begin_round(self, loader: Loader, match: Match, now: datetime) -> Round:
        """The match's next round begun (``RoundBegun``) and dealt: its board's dealer for a
        board (R36), else the match's next dealer (R31; round 1: whoever declares, R18)."""
        number = match.round_number + 1
        board = self.source.board(loader, match, number)
        match.begin_round(now, dealer=None if board is None else board.dealer)
        round_ = Round.start(
            match.id,
            match.round_number,
            match.rules,
            match.levels,
            match.dealer if board is None else board.dealer,
            now,
            board=board,
        )
        self.deal(loader, match, round_, now)
        return round_

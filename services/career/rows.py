"""The rows of the player's career (docs/decisions.md D-career).

* :class:`MatchRow` — a finished match as the career keeps it (:class:`Facts`: its
  family, its four seats — an account, a bot kind, a guest, or an erased player — the
  winner, and each account seat's :class:`Tally` of the rounds it played), with where
  the career released it into the players' histories (``released``: the log position of
  its ``MatchFinished``, or of its tournament round's ``RoundCompleted``, R36; None while
  it is held);
* :class:`EntryRow` — one finished match in one player's history, ordered by the release
  position (the history's cursor);
* :class:`TotalsRow` — a player's counts in one family (``""``: every family together):
  matches, outcomes, the current streak and the rounds' statistics;
* :class:`PartnerRow` — matches a player played with one partner (an account or a bot
  kind) in one family, and how many of them they won;
* :class:`ReleasedRow` — a tournament round the log has completed (its tables are
  released as they finish).

No row holds a person's name (docs/players.md): a name is read where the account keeps it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final, Literal
from uuid import UUID

import msgspec

ALL: Final = ""
"""The family of a player's totals over every family."""
CUSTOM: Final = "custom"
"""The family of a match whose rule set is close to no preset (it is not rated)."""
GUEST: Final = "guest"
ERASED: Final = "erased"
Outcome = Literal["won", "lost", "drawn", "left"]
"""``won``, ``lost``, ``drawn`` (no winner, R32) or ``left`` (a bot finished the seat)."""


def account_key(account: UUID) -> str:
    return f"account:{account}"


def bot_key(kind: str) -> str:
    return f"bot:{kind}"


def account_of(who: str) -> UUID | None:
    """The account a participant key names (None: a bot, a guest, an erased player)."""
    return UUID(who.removeprefix("account:")) if who.startswith("account:") else None


class Tally(msgspec.Struct, frozen=True, kw_only=True):
    """What one seat did in the rounds it played of one match (R22, R28–R30)."""

    rounds_attacking: int = 0
    rounds_defending: int = 0
    points_attacking: int = 0
    """The attackers' totals of the rounds the seat's team attacked (R29)."""
    points_conceded: int = 0
    """The attackers' totals of the rounds the seat's team defended."""
    levels_gained: int = 0
    """Levels the seat's team went up in those rounds (R30)."""
    failed_throws: int = 0
    """Throws of the seat that failed (R22)."""
    bottoms_won: int = 0
    """Rounds the seat's team, attacking, won the last trick (R28)."""
    bottom_points: int = 0
    """The bottom bonus those rounds gave (bottom points × multiplier, R28)."""

    def plus(self, other: Tally) -> Tally:
        return Tally(**{f: getattr(self, f) + getattr(other, f) for f in self.__struct_fields__})


class Seat(msgspec.Struct, frozen=True, kw_only=True):
    """Who played a seat of a recorded match."""

    who: str
    """``account:<id>``, ``bot:<kind>``, ``guest`` or ``erased``."""
    left: bool = False
    """The person left the table and a bot finished the seat."""


class Facts(msgspec.Struct, frozen=True, kw_only=True):
    """A finished match as the career keeps it."""

    name: str
    """The match's name."""
    family: str
    finished_at: int
    """When it finished (microseconds since the epoch)."""
    winner: int | None
    reason: str
    rounds: int
    """Rounds scored."""
    listed: bool
    """A public table (a private one is shown to its own people only)."""
    seats: tuple[Seat, Seat, Seat, Seat]
    tallies: dict[int, Tally]
    """Per account seat, the rounds it played."""

    def outcome(self, seat: int) -> Outcome:
        if self.seats[seat].left:
            return "left"
        if self.winner is None:
            return "drawn"
        return "won" if self.winner == seat % 2 else "lost"


class MatchRow(msgspec.Struct, frozen=True, kw_only=True):
    """A finished match the career keeps (the module docstring)."""

    match_id: UUID
    tournament_id: UUID | None
    tournament_round: int
    released: int | None
    """The log position it entered the histories at; None: held until its tournament
    round completes (R36)."""
    facts: Facts


class EntryRow(msgspec.Struct, frozen=True, kw_only=True):
    """A finished match in a player's history."""

    player_id: UUID
    match_id: UUID
    seat: int
    position: int
    """Where the match entered the player's history (the history's order and cursor)."""
    listed: bool


class Totals(msgspec.Struct, frozen=True, kw_only=True):
    """A player's counts (the module docstring)."""

    matches: int = 0
    won: int = 0
    lost: int = 0
    drawn: int = 0
    left: int = 0
    streak: int = 0
    """The current streak: n > 0 won n in a row, n < 0 lost (or left) n in a row, 0 none."""
    tally: Tally = Tally()

    def add(self, outcome: Outcome, tally: Tally) -> Totals:
        lost = outcome in ("lost", "left")
        if outcome == "won":
            streak = max(self.streak, 0) + 1
        elif lost:
            streak = min(self.streak, 0) - 1
        else:
            streak = 0
        return Totals(
            matches=self.matches + 1,
            won=self.won + (outcome == "won"),
            lost=self.lost + (outcome == "lost"),
            drawn=self.drawn + (outcome == "drawn"),
            left=self.left + (outcome == "left"),
            streak=streak,
            tally=self.tally.plus(tally),
        )


class TotalsRow(msgspec.Struct, frozen=True, kw_only=True):
    player_id: UUID
    family: str
    totals: Totals


class PartnerRow(msgspec.Struct, frozen=True, kw_only=True):
    player_id: UUID
    family: str
    partner: str
    """``account:<id>`` or ``bot:<kind>``."""
    matches: int
    won: int


class ReleasedRow(msgspec.Struct, frozen=True, kw_only=True):
    tournament_id: UUID
    round: int
    position: int
    """Where its ``RoundCompleted`` is in the log."""


EntryKey = tuple[UUID, UUID]
TotalsKey = tuple[UUID, str]
PartnerKey = tuple[UUID, str, str]
Row = MatchRow | EntryRow | TotalsRow | PartnerRow | ReleasedRow


@dataclass(slots=True)
class Change:
    """Rows written together, the last of each key (None: the row is deleted)."""

    matches: dict[UUID, MatchRow | None] = field(default_factory=dict)
    entries: dict[EntryKey, EntryRow | None] = field(default_factory=dict)
    totals: dict[TotalsKey, TotalsRow | None] = field(default_factory=dict)
    partners: dict[PartnerKey, PartnerRow | None] = field(default_factory=dict)
    released: dict[tuple[UUID, int], ReleasedRow] = field(default_factory=dict)

    def merge(self, other: Change) -> None:
        self.matches.update(other.matches)
        self.entries.update(other.entries)
        self.totals.update(other.totals)
        self.partners.update(other.partners)
        self.released.update(other.released)


def key_of(row: Row) -> str:
    """A row's table and key as text (``shengji rebuild --check``'s keys)."""
    if isinstance(row, MatchRow):
        return f"match {row.match_id}"
    if isinstance(row, EntryRow):
        return f"entry {row.player_id} {row.match_id}"
    if isinstance(row, TotalsRow):
        return f"totals {row.player_id} {row.family}"
    if isinstance(row, PartnerRow):
        return f"partner {row.player_id} {row.family} {row.partner}"
    return f"released {row.tournament_id} {row.round}"


def plain(row: Row) -> dict[str, Any]:
    """``row`` as JSON-ready values."""
    out: dict[str, Any] = msgspec.to_builtins(row)
    return out

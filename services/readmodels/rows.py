"""The rows of the read models (docs/decisions.md D-readmodels).

A row holds what its list shows, encoded once when the row is written (the answer's own
JSON), and the keys the lists page and filter on: positions in the log (the notification
ids of ``MatchCreated``, ``MatchImported``, ``TournamentCreated``, ``SeatClaimed``,
``MatchLeft``), never a name of a person (docs/players.md: names are sealed in the events
and shown only as the sealed source allows).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

import msgspec


class MatchRow(msgspec.Struct, frozen=True, kw_only=True):
    """A match: its list item (``GET /v1/matches``) and its item in a player's matches."""

    match_id: UUID
    position: int
    """Where its ``MatchCreated`` is in the log (the list's order and cursor)."""
    imported_position: int | None
    """Where its ``MatchImported`` is (the imported matches' order); None: played here."""
    listed: bool
    """Public (a private table is never listed, docs/decisions.md D-table-life)."""
    match_version: int
    """The match aggregate's version this row shows."""
    round_id: UUID | None
    """The current round this row shows (None before round 1)."""
    round_version: int
    """That round's version (0: none)."""
    item: bytes
    """The ``MatchListItem`` as JSON."""
    mine: bytes
    """The ``MyMatch`` as JSON, for seat 0: a player's item takes their seat."""

    @property
    def played(self) -> bool:
        return self.imported_position is None


class SeatRow(msgspec.Struct, frozen=True, kw_only=True):
    """A seat an account claimed (R1) and whether it left it."""

    account_id: UUID
    match_id: UUID
    seat: int
    claimed: int
    """Where its ``SeatClaimed`` is in the log (the player's order of matches)."""
    left: int | None
    """Where its ``MatchLeft`` is (the order of the matches left); None: still seated."""


class TournamentRow(msgspec.Struct, frozen=True, kw_only=True):
    """A tournament: its list item (``GET /v1/tournaments``)."""

    tournament_id: UUID
    position: int
    """Where its ``TournamentCreated`` is in the log."""
    status: str
    version: int
    """The tournament aggregate's version this row shows."""
    item: bytes
    """The ``TournamentListItem`` as JSON."""


@dataclass(slots=True)
class Change:
    """Rows written together (a batch keeps the last row of each key)."""

    matches: dict[UUID, MatchRow] = field(default_factory=dict)
    seats: dict[tuple[UUID, UUID], SeatRow] = field(default_factory=dict)
    tournaments: dict[UUID, TournamentRow] = field(default_factory=dict)

    def merge(self, other: Change) -> None:
        self.matches.update(other.matches)
        self.seats.update(other.seats)
        self.tournaments.update(other.tournaments)

    def __len__(self) -> int:
        return len(self.matches) + len(self.seats) + len(self.tournaments)


@dataclass(frozen=True, slots=True)
class Page:
    """A page of list items (their JSON) in log order, with the list's cursor: ``next``
    is the position to pass as ``after`` for the next page, ``more`` whether one follows."""

    items: list[bytes]
    next: int
    more: bool


def plain(row: msgspec.Struct) -> dict[str, Any]:
    """``row`` as JSON-ready values (``shengji rebuild --check`` compares these)."""
    out: dict[str, Any] = msgspec.to_builtins(row)
    for key in ("item", "mine"):
        if key in out:
            out[key] = msgspec.json.decode(getattr(row, key))
    return out

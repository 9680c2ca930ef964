"""The rows of the ratings' read model (docs/decisions.md D-ratings).

* :class:`RatingRow` — a player's rating on one board: a family's all-time board
  (``season`` ``""``) or one season's; ``key`` is what boards order by (the conservative
  rating, negated: ascending keys with the player's id as tie-break make one index order);
* :class:`HistoryRow` — one rated match of a player in a family (all-time): the belief
  before and after, the match's weight, when; ``GET /v1/players/{id}/ratings?at=`` reads
  the last one at or before a time;
* :class:`SeasonRow` — a season of a family's board that has rated matches.

No row holds a person's name (docs/players.md: names are sealed; a board reads them
where the accounts keep them).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

import msgspec

ALL_TIME = ""
"""The season id of a family's all-time board."""


class RatingRow(msgspec.Struct, frozen=True, kw_only=True):
    """A player's rating on one board."""

    family: str
    season: str
    player_id: UUID
    mu: float
    sigma: float
    matches: int
    """Rated matches on this board."""
    last_at: int
    """When the last of them finished (microseconds since the epoch)."""
    provisional: bool
    key: float
    """Minus the conservative rating: the board's order, ascending."""

    def board(self) -> tuple[str, str]:
        return self.family, self.season


class HistoryRow(msgspec.Struct, frozen=True, kw_only=True):
    """One rated match of a player in a family (the all-time rating's history)."""

    player_id: UUID
    family: str
    match_id: UUID
    position: int
    """Where the match's ``MatchFinished`` is in the log."""
    at: int
    """When it finished (microseconds since the epoch)."""
    mu_before: float
    sigma_before: float
    mu_after: float
    sigma_after: float
    weight: float
    foursome: str
    """A digest of the match's four participants (accounts and bot kinds), for the
    repeat weight."""


class SeasonRow(msgspec.Struct, frozen=True, kw_only=True):
    """A season of a family's board that has rated matches."""

    family: str
    season: str
    first_at: int
    """When its first rated match finished (microseconds since the epoch)."""


RatingKey = tuple[str, str, UUID]
"""(family, season, player)."""


@dataclass(slots=True)
class Change:
    """Rows written together: ratings (the last of each key), history rows added, seasons
    seen, players erased (their every row removed)."""

    ratings: dict[RatingKey, RatingRow] = field(default_factory=dict)
    history: list[HistoryRow] = field(default_factory=list)
    seasons: dict[tuple[str, str], SeasonRow] = field(default_factory=dict)
    erased: set[UUID] = field(default_factory=set)

    def merge(self, other: Change) -> None:
        for player in other.erased:
            self.erase(player)
        self.ratings.update(other.ratings)
        self.history.extend(other.history)
        for key, season in other.seasons.items():
            self.seasons.setdefault(key, season)

    def erase(self, player: UUID) -> None:
        self.erased.add(player)
        self.ratings = {k: r for k, r in self.ratings.items() if k[2] != player}
        self.history = [h for h in self.history if h.player_id != player]


def plain(row: msgspec.Struct) -> dict[str, Any]:
    """``row`` as JSON-ready values (``shengji rebuild --check`` compares these; floats
    as their exact ``repr``)."""
    out: dict[str, Any] = msgspec.to_builtins(row)
    return {k: repr(v) if isinstance(v, float) else v for k, v in out.items()}

"""The boards and a player's ratings, read from the ratings' view (docs/decisions.md
D-ratings).

* :func:`leaderboard` — ``GET /v1/leaderboards/{family}``: a family's all-time board or a
  season's, ranked by the conservative rating, in keyset pages (``after`` is the opaque
  cursor of the previous page's last entry), or the entries around a player; established
  players and provisional ones are two boards (``provisional``); the caller's own entry
  and rank when the caller is a rated player;
* :func:`seasons` — ``GET /v1/leaderboards/{family}/seasons``;
* :func:`player_ratings` — ``GET /v1/players/{id}/ratings``: now, or ``at`` a time (the
  last rated match at or before it: a replay of the log stopped there).

Names are the accounts' display names, read where the player's profile reads them (sealed
in the events, docs/players.md); an erased player has no row anywhere.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated
from uuid import UUID

import msgspec
from eventsourcing.application import AggregateNotFoundError
from msgspec import Meta

from domain.accounts.account import Account
from domain.rules.errors import InvalidInputError
from services.cursors import decode_cursor, encode_cursor
from services.errors import NotFoundError
from services.game import GameService
from services.ratings.model import FAMILIES, MODEL, Rating
from services.ratings.projection import micros
from services.ratings.rows import ALL_TIME, RatingRow
from services.ratings.runner import RatingsFollower
from services.ratings.seasons import season_bounds, valid_season
from services.ratings.view import Board, MemoryRatingsView, RatingsView, cursor_of
from services.readmodels.runner import Freshness

log = logging.getLogger(__name__)

MAX_PAGE = 100


@dataclass(frozen=True, slots=True)
class RatingModels:
    """The ratings' view on the service's store and what brings it up to the log."""

    service: GameService
    view: RatingsView
    freshness: Freshness
    schedule: str = "monthly"

    @classmethod
    def in_memory(cls, service: GameService, schedule: str = "monthly") -> RatingModels:
        view = MemoryRatingsView()
        return cls(service, view, RatingsFollower(service, view, schedule=schedule), schedule)

    def standing(self, player: UUID, family: str) -> tuple[Rating, bool]:
        """The player's all-time rating in ``family`` and whether it is provisional (never
        rated: the model's start, provisional) — what a ranked ticket queues with."""
        row = self.fresh().rating(family, ALL_TIME, player)
        if row is None:
            return MODEL.start(), True
        return Rating(row.mu, row.sigma), row.provisional

    def fresh(self) -> RatingsView:
        target = self.service.recorder.max_notification_id() or 0
        if not self.freshness.reach(target):
            log.warning("ratings: behind the log (at %d of %d)", self.view.position(), target)
        return self.view


Family = Annotated[str, Meta(description="The rule-set family: standard, tuolaji or duijia.")]
ShownRating = Annotated[int, Meta(description="The shown rating (1500 for a new player).")]
Deviation = Annotated[int, Meta(description="Its uncertainty, on the same scale (500 new).")]
Conservative = Annotated[
    float, Meta(description="What the boards rank by: the rating less two deviations.")
]
Provisional = Annotated[
    bool, Meta(description="Fewer rated matches than an established player has.")
]
ModelName = Annotated[str, Meta(description="The rating model and its version (docs: ratings).")]
PlayerId = Annotated[UUID, Meta(description="The player's account.")]


class BoardEntry(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """A player on a board."""

    rank: Annotated[int, Meta(description="1 for the top of this board.")]
    player_id: PlayerId
    name: Annotated[str, Meta(description="The player's display name.")]
    rating: ShownRating
    deviation: Deviation
    conservative: Conservative
    matches: Annotated[int, Meta(description="Rated matches on this board.")]
    provisional: Provisional


class Leaderboard(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """A page of a board."""

    family: Family
    season: Annotated[str | None, Meta(description="The season; null: all-time.")]
    provisional: Annotated[bool, Meta(description="The board of provisional players.")]
    model: ModelName
    entries: Annotated[list[BoardEntry], Meta(description="The page's players, best first.")]
    next: Annotated[
        str | None, Meta(description="The cursor of the next page (`after`); null: the last.")
    ]
    me: Annotated[
        BoardEntry | None, Meta(description="The caller's own entry, when rated on this board.")
    ] = None


class Season(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """A season of a family's board."""

    id: Annotated[str, Meta(description="`2026-W49` (weekly) or `2026-12` (monthly).")]
    starts: Annotated[datetime, Meta(description="When it starts (UTC).")]
    ends: Annotated[datetime, Meta(description="When the next one starts.")]
    current: Annotated[bool, Meta(description="The season in play now.")]


class SeasonList(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """A family's seasons with rated matches, oldest first."""

    family: Family
    schedule: Annotated[str, Meta(description="weekly or monthly.")]
    seasons: Annotated[list[Season], Meta(description="The seasons, oldest first.")]


class FamilyRating(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """A player's all-time rating in one family."""

    family: Family
    rating: ShownRating
    deviation: Deviation
    conservative: Conservative
    matches: Annotated[int, Meta(description="Rated matches up to then.")]
    provisional: Provisional
    last_match_id: Annotated[UUID | None, Meta(description="The last rated match (at `at`).")]


class PlayerRatings(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """A player's ratings per family, now or at a time."""

    player_id: PlayerId
    at: Annotated[datetime | None, Meta(description="The time asked for; null: now.")]
    model: ModelName
    ratings: Annotated[
        list[FamilyRating], Meta(description="One per family the player is rated in.")
    ]


def _check_family(family: str) -> None:
    if family not in FAMILIES:
        raise NotFoundError(f"no family {family!r}; one of {', '.join(FAMILIES)}")


def _account(service: GameService, player: UUID) -> Account | None:
    try:
        found: object = service.repository.get(player)
    except AggregateNotFoundError:
        return None
    return found if isinstance(found, Account) else None


def _name(service: GameService, player: UUID) -> str:
    found = _account(service, player)
    return found.display_name if found is not None and not found.erased else ""


def _entry(service: GameService, row: RatingRow, rank: int) -> BoardEntry:
    rating = Rating(row.mu, row.sigma)
    return BoardEntry(
        rank=rank,
        player_id=row.player_id,
        name=_name(service, row.player_id),
        rating=rating.shown,
        deviation=rating.deviation,
        conservative=-row.key,
        matches=row.matches,
        provisional=row.provisional,
    )


def model_name() -> str:
    return f"{MODEL.name}/{MODEL.version}"


def leaderboard(
    ratings: RatingModels,
    family: str,
    *,
    season: str | None = None,
    provisional: bool = False,
    limit: int = 50,
    after: str | None = None,
    around: UUID | None = None,
    me: UUID | None = None,
) -> Leaderboard:
    """A page of a board (module docstring): the top, the page after ``after``, or the
    entries around the player ``around`` (half above, them, the rest below)."""
    _check_family(family)
    if type(limit) is not int or not 1 <= limit <= MAX_PAGE:
        raise InvalidInputError(f"limit must be 1..{MAX_PAGE}, got {limit!r}")
    if season is not None and not valid_season(ratings.schedule, season):
        raise InvalidInputError(f"season is a {ratings.schedule} season id, got {season!r}")
    if after is not None and around is not None:
        raise InvalidInputError("after and around are two ways to page: give one")
    view = ratings.fresh()
    board: Board = (family, ALL_TIME if season is None else season, provisional)
    own_rank = -1
    service = ratings.service
    if around is not None:
        row = view.rating(family, board[1], around)
        if row is None or row.provisional != provisional:
            raise NotFoundError(f"player {around} is not on this board")
        at = cursor_of(row)
        above = view.above(board, at, limit // 2)
        rows = [*above, row, *view.board(board, at, limit - len(above) - 1)]
        own_rank = view.rank(board, at)  # one count on the index, shared with ``me``
        first = own_rank - len(above) + 1
    else:
        start = None if after is None else decode_cursor(after, float)
        rows = view.board(board, start, limit + 1)
        first = 1 if start is None else view.rank(board, start) + 2
    more = len(rows) > limit if around is None else False
    rows = rows[:limit]
    entries = [_entry(service, r, first + i) for i, r in enumerate(rows)]
    mine: BoardEntry | None = None
    if me is not None:
        own = view.rating(family, board[1], me)
        if own is not None and own.provisional == provisional:
            rank = own_rank if own.player_id == around else view.rank(board, cursor_of(own))
            mine = _entry(service, own, rank + 1)
    return Leaderboard(
        family=family,
        season=season,
        provisional=provisional,
        model=model_name(),
        entries=entries,
        next=encode_cursor(*cursor_of(rows[-1])) if more and rows else None,
        me=mine,
    )


def seasons(ratings: RatingModels, family: str, now: datetime) -> SeasonList:
    _check_family(family)
    found: list[Season] = []
    for s in ratings.fresh().seasons(family):
        starts, ends = season_bounds(s.season)
        found.append(Season(id=s.season, starts=starts, ends=ends, current=starts <= now < ends))
    return SeasonList(family=family, schedule=ratings.schedule, seasons=found)


def player_ratings(ratings: RatingModels, player: UUID, at: datetime | None) -> PlayerRatings:
    view = ratings.fresh()
    out: list[FamilyRating] = []
    if at is None:
        for row in sorted(view.ratings_of(player), key=lambda r: r.family):
            if row.season != ALL_TIME:
                continue
            rating = Rating(row.mu, row.sigma)
            out.append(
                FamilyRating(
                    family=row.family,
                    rating=rating.shown,
                    deviation=rating.deviation,
                    conservative=rating.conservative,
                    matches=row.matches,
                    provisional=row.provisional,
                    last_match_id=None,
                )
            )
    else:
        if at.tzinfo is None:
            raise InvalidInputError("at is an RFC 3339 time with its offset")
        for family in FAMILIES:
            h = view.history_at(player, family, micros(at))
            if h is None:
                continue
            rating = Rating(h.mu_after, h.sigma_after)
            matches = view.history_count(player, family, micros(at))
            out.append(
                FamilyRating(
                    family=family,
                    rating=rating.shown,
                    deviation=rating.deviation,
                    conservative=rating.conservative,
                    matches=matches,
                    provisional=matches < MODEL.provisional_matches,
                    last_match_id=h.match_id,
                )
            )
    if not out and _account(ratings.service, player) is None:
        raise NotFoundError(f"no player {player}")
    return PlayerRatings(player_id=player, at=at, model=model_name(), ratings=out)

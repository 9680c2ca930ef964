"""The player's career, read (docs/decisions.md D-career; docs/players.md "The career"):

* :func:`profile` — ``GET /v1/players/{id}/profile``, public: the display name, the
  rating per family (shown rating, deviation, provisional, the rank on the family's
  all-time board once established), matches, wins and the current streak;
* :func:`statistics` — ``GET /v1/players/me/statistics``, the player's own: per family,
  the outcomes, the rounds as attackers and as defenders, the attackers' average points
  in each role (R29), levels gained a round (R30), failed throws (R22), bottoms won and
  their points (R28), the favourite partners with their win share;
* :func:`history` — ``GET /v1/players/{id}/matches``: the finished matches, newest first,
  in keyset pages: family, seat, partner, opponents, outcome, and the rating's move of a
  rated match. Another caller sees the public tables only; a tournament table is in it
  once its tournament round completes (R36), for everyone.

An erased player, or an id that is no player (a guest has none), is a 404.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Annotated, Final, Literal
from uuid import UUID

import msgspec
from eventsourcing.application import AggregateNotFoundError
from msgspec import Meta

from domain.accounts.account import Account
from domain.rules.errors import InvalidInputError
from services import field_docs
from services.career.rebuild import follower
from services.career.rows import ALL, CUSTOM, ERASED, GUEST, EntryRow, Facts, MatchRow, Seat
from services.career.rows import Totals as Counts
from services.career.view import CareerView, MemoryCareerView
from services.cursors import decode_cursor, encode_cursor
from services.errors import NotFoundError
from services.game import GameService
from services.ratings.boards import RatingModels, model_name
from services.ratings.model import FAMILIES, Rating
from services.ratings.rows import ALL_TIME
from services.ratings.view import RatingsView, cursor_of
from services.readmodels.runner import Freshness

log = logging.getLogger(__name__)

MAX_PAGE: Final = 100
TOP_PARTNERS: Final = 5
CAREER_FAMILIES: Final = (*FAMILIES, CUSTOM)
EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class CareerModels:
    """The career's view on the service's store and what brings it up to the log."""

    service: GameService
    view: CareerView
    freshness: Freshness

    @classmethod
    def in_memory(cls, service: GameService) -> CareerModels:
        view = MemoryCareerView()
        return cls(service, view, follower(service, view))

    def fresh(self) -> CareerView:
        target = self.service.recorder.max_notification_id() or 0
        if not self.freshness.reach(target):
            log.warning("career: behind the log (at %d of %d)", self.view.position(), target)
        return self.view


# -- the answers -----------------------------------------------------------------------------

FamilyName = Annotated[
    str, Meta(description="The rule-set family: standard, tuolaji, duijia (custom: unrated).")
]
PlayerId = Annotated[UUID, Meta(description="The player's account.")]


class Streak(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """The player's current run of one result."""

    result: Annotated[
        Literal["won", "lost"], Meta(description="`won`, or `lost` (leaving counts as lost).")
    ]
    length: Annotated[int, Meta(description="Matches in a row, up to the last one.")]


class ProfileRating(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """The player's all-time rating in one family."""

    family: FamilyName
    rating: Annotated[int, Meta(description="The shown rating (1500 for a new player).")]
    deviation: Annotated[int, Meta(description="Its uncertainty, on the same scale.")]
    provisional: Annotated[
        bool, Meta(description="Fewer rated matches than an established player has.")
    ]
    matches: Annotated[int, Meta(description="Rated matches in the family.")]
    rank: Annotated[
        int | None,
        Meta(description="The place on the family's all-time board; null while provisional."),
    ]


class PublicProfile(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """What anyone may see of a player."""

    player_id: PlayerId
    name: Annotated[str, Meta(description="The player's display name.")]
    model: Annotated[str, Meta(description="The rating model and its version.")]
    ratings: Annotated[
        list[ProfileRating], Meta(description="One per family the player is rated in.")
    ]
    matches: Annotated[int, Meta(description="Finished matches in the player's history.")]
    wins: Annotated[int, Meta(description="Those the player's team won.")]
    streak: Annotated[
        Streak | None, Meta(description="The current streak; null after a draw or none yet.")
    ]


class Partner(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """A partner (R2) the player played with, and how it went."""

    kind: Annotated[Literal["player", "bot"], Meta(description="A player or a bot.")]
    player_id: Annotated[UUID | None, Meta(description="The partner's account (a player).")]
    bot: Annotated[str | None, Meta(description="The bot's kind (a bot).")]
    name: Annotated[str | None, Meta(description="The player's display name (a player).")]
    matches: Annotated[int, Meta(description="Matches together in the family.")]
    won: Annotated[int, Meta(description="Those won.")]
    win_share: Annotated[float, Meta(description="won / matches.")]


class FamilyStatistics(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """The player's own statistics in one family (rounds counted while they held their seat)."""

    family: FamilyName
    matches: Annotated[int, Meta(description="Finished matches.")]
    won: Annotated[int, Meta(description="Won by the player's team.")]
    lost: Annotated[int, Meta(description="Lost by the player's team.")]
    drawn: Annotated[int, Meta(description="Ended without a winner (R32).")]
    left: Annotated[int, Meta(description="Left (a bot finished the seat): counted as lost.")]
    rounds_attacking: Annotated[int, Meta(description="Rounds the player's team attacked.")]
    rounds_defending: Annotated[
        int, Meta(description="Rounds the player's team defended (the dealer's team, R18).")
    ]
    average_points_attacking: Annotated[
        float | None, Meta(description="The attackers' average total (R29) when attacking.")
    ]
    average_points_defending: Annotated[
        float | None,
        Meta(description="The attackers' average total (R29) against the player's team."),
    ]
    levels_per_round: Annotated[
        float | None, Meta(description="Levels the player's team gained a round (R30).")
    ]
    failed_throws: Annotated[int, Meta(description="The player's throws that failed (R22).")]
    bottoms_won: Annotated[
        int,
        Meta(description="Rounds the player's team, attacking, won the last trick (R28)."),
    ]
    bottom_points: Annotated[
        int, Meta(description="The bottom bonus of those rounds: points × multiplier (R28).")
    ]
    partners: Annotated[
        list[Partner],
        Meta(description="The partners with the most matches together, at most 5."),
    ]


class Statistics(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """The player's own statistics, per family."""

    player_id: PlayerId
    families: Annotated[
        list[FamilyStatistics], Meta(description="One per family the player has played.")
    ]


class Participant(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """Who played a seat of a match in the player's history."""

    seat: Annotated[int, Meta(description="The seat (R1); partners sit opposite (R2).")]
    kind: Annotated[
        Literal["player", "bot", "guest", "erased"],
        Meta(description="A player, a bot, a guest (no account) or an erased player."),
    ]
    player_id: Annotated[UUID | None, Meta(description="The player's account (a player).")]
    bot: Annotated[str | None, Meta(description="The bot's kind (a bot).")]
    name: Annotated[
        str | None, Meta(description="The player's display name (a player); null otherwise.")
    ]
    left: Annotated[bool, Meta(description="Left the table: a bot finished the seat.")]


class RatingStep(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """How a rated match moved the player's rating."""

    before: Annotated[int, Meta(description="The shown rating before the match.")]
    after: Annotated[int, Meta(description="The shown rating after it.")]
    delta: Annotated[int, Meta(description="after − before.")]
    model: Annotated[str, Meta(description="The rating model and its version.")]


class PastMatch(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """A finished match in a player's history."""

    match_id: Annotated[UUID, field_docs.MATCH_ID]
    name: Annotated[str, Meta(description="The match's name.")]
    finished_at: Annotated[datetime, Meta(description="When it finished (R32).")]
    family: FamilyName
    seat: Annotated[int, Meta(description="The player's seat (R1).")]
    partner: Annotated[Participant, Meta(description="The seat opposite (R2).")]
    opponents: Annotated[list[Participant], Meta(description="The other team's two seats.")]
    outcome: Annotated[
        Literal["won", "lost", "drawn", "left"],
        Meta(description="For the player: won, lost, drawn (no winner, R32), or left."),
    ]
    reason: Annotated[str, Meta(description="Why the match ended (R32).")]
    rounds: Annotated[int, Meta(description="Rounds scored.")]
    rating: Annotated[
        RatingStep | None, Meta(description="The rating's move; null: the match was not rated.")
    ]


class PastMatches(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """A page of a player's history, newest first."""

    player_id: PlayerId
    items: Annotated[list[PastMatch], field_docs.ITEMS]
    next: Annotated[
        str | None, Meta(description="The cursor of the next page (`after`); null: the last.")
    ]


# -- the reads -------------------------------------------------------------------------------


def account_of_id(service: GameService, player: UUID) -> Account:
    """The player's account; 404 for no player, or an erased one."""
    try:
        found: object = service.repository.get(player)
    except AggregateNotFoundError:
        found = None
    if not isinstance(found, Account) or found.erased:
        raise NotFoundError(f"no player {player}")
    return found


def _counts(view: CareerView, player: UUID, family: str) -> Counts:
    row = view.stored_totals(player, family)
    return Counts() if row is None else row.totals


def profile(career: CareerModels, ratings: RatingModels, player: UUID) -> PublicProfile:
    account = account_of_id(career.service, player)
    counts = _counts(career.fresh(), player, ALL)
    boards = ratings.fresh()
    found: list[ProfileRating] = []
    for row in sorted(boards.ratings_of(player), key=lambda r: r.family):
        if row.season != ALL_TIME:
            continue
        rating = Rating(row.mu, row.sigma)
        rank = None
        if not row.provisional:
            rank = boards.rank((row.family, ALL_TIME, False), cursor_of(row)) + 1
        found.append(
            ProfileRating(
                family=row.family,
                rating=rating.shown,
                deviation=rating.deviation,
                provisional=row.provisional,
                matches=row.matches,
                rank=rank,
            )
        )
    streak = None
    if counts.streak:
        result: Literal["won", "lost"] = "won" if counts.streak > 0 else "lost"
        streak = Streak(result=result, length=abs(counts.streak))
    return PublicProfile(
        player_id=player,
        name=account.display_name,
        model=model_name(),
        ratings=found,
        matches=counts.matches,
        wins=counts.won,
        streak=streak,
    )


def _average(total: int, count: int) -> float | None:
    return None if count == 0 else round(total / count, 2)


def statistics(career: CareerModels, account: Account, family: str | None) -> Statistics:
    if family is not None and family not in CAREER_FAMILIES:
        raise InvalidInputError(f"family is one of {', '.join(CAREER_FAMILIES)}, got {family!r}")
    view = career.fresh()
    service = career.service
    out: list[FamilyStatistics] = []
    for row in sorted(view.stored_totals_of(account.id), key=lambda r: r.family):
        if row.family == ALL or (family is not None and row.family != family):
            continue
        t, c = row.totals.tally, row.totals
        rounds = t.rounds_attacking + t.rounds_defending
        partners = [
            _partner(service, p.partner, p.matches, p.won)
            for p in view.top_partners(account.id, row.family, TOP_PARTNERS)
        ]
        out.append(
            FamilyStatistics(
                family=row.family,
                matches=c.matches,
                won=c.won,
                lost=c.lost,
                drawn=c.drawn,
                left=c.left,
                rounds_attacking=t.rounds_attacking,
                rounds_defending=t.rounds_defending,
                average_points_attacking=_average(t.points_attacking, t.rounds_attacking),
                average_points_defending=_average(t.points_conceded, t.rounds_defending),
                levels_per_round=_average(t.levels_gained, rounds),
                failed_throws=t.failed_throws,
                bottoms_won=t.bottoms_won,
                bottom_points=t.bottom_points,
                partners=partners,
            )
        )
    return Statistics(player_id=account.id, families=out)


def _name(service: GameService, player: UUID) -> str | None:
    try:
        found: object = service.repository.get(player)
    except AggregateNotFoundError:
        return None
    return found.display_name if isinstance(found, Account) and not found.erased else None


def _partner(service: GameService, who: str, matches: int, won: int) -> Partner:
    share = round(won / matches, 4) if matches else 0.0
    if who.startswith("bot:"):
        bot = who.removeprefix("bot:")
        return Partner(
            kind="bot",
            player_id=None,
            bot=bot,
            name=None,
            matches=matches,
            won=won,
            win_share=share,
        )
    player = UUID(who.removeprefix("account:"))
    return Partner(
        kind="player",
        player_id=player,
        bot=None,
        name=_name(service, player),
        matches=matches,
        won=won,
        win_share=share,
    )


def _participant(service: GameService, seat: int, taken: Seat) -> Participant:
    who = taken.who
    if who.startswith("account:"):
        player = UUID(who.removeprefix("account:"))
        return Participant(
            seat=seat,
            kind="player",
            player_id=player,
            bot=None,
            name=_name(service, player),
            left=taken.left,
        )
    if who.startswith("bot:"):
        return Participant(
            seat=seat, kind="bot", player_id=None, bot=who[4:], name=None, left=taken.left
        )
    kind: Literal["guest", "erased"] = "guest" if who == GUEST else "erased"
    assert who in (GUEST, ERASED)
    return Participant(seat=seat, kind=kind, player_id=None, bot=None, name=None, left=taken.left)


def history(
    career: CareerModels,
    ratings: RatingModels,
    player: UUID,
    *,
    own: bool,
    limit: int = 20,
    after: str | None = None,
) -> PastMatches:
    """A page of ``player``'s history (module docstring); ``own``: the caller is the
    player (private tables too)."""
    if type(limit) is not int or not 1 <= limit <= MAX_PAGE:
        raise InvalidInputError(f"limit must be 1..{MAX_PAGE}, got {limit!r}")
    start = None if after is None else decode_cursor(after, int)
    service = career.service
    account_of_id(service, player)
    view = career.fresh()
    entries = view.history(player, start, limit + 1, listed_only=not own)
    more = len(entries) > limit
    entries = entries[:limit]
    matches = view.matches([e.match_id for e in entries])
    boards = ratings.fresh() if entries else None
    items: list[PastMatch] = []
    for e in entries:
        row = matches.get(e.match_id)
        if row is None:  # pragma: no cover - written with its entries
            continue
        items.append(_item(service, boards, e, row))
    last = entries[-1] if entries else None
    return PastMatches(
        player_id=player,
        items=items,
        next=encode_cursor(last.position, str(last.match_id)) if more and last else None,
    )


def _item(
    service: GameService, boards: RatingsView | None, entry: EntryRow, row: MatchRow
) -> PastMatch:
    facts: Facts = row.facts
    seat = entry.seat
    return PastMatch(
        match_id=row.match_id,
        name=facts.name,
        finished_at=EPOCH + timedelta(microseconds=facts.finished_at),
        family=facts.family,
        seat=seat,
        partner=_participant(service, (seat + 2) % 4, facts.seats[(seat + 2) % 4]),
        opponents=[
            _participant(service, s, facts.seats[s]) for s in ((seat + 1) % 4, (seat + 3) % 4)
        ],
        outcome=facts.outcome(seat),
        reason=facts.reason,
        rounds=facts.rounds,
        rating=_step(boards, entry, facts),
    )


def _step(boards: RatingsView | None, entry: EntryRow, facts: Facts) -> RatingStep | None:
    if boards is None or facts.family not in FAMILIES:
        return None
    found = boards.history_at(entry.player_id, facts.family, facts.finished_at)
    if found is None or found.match_id != entry.match_id:
        return None
    before = Rating(found.mu_before, found.sigma_before).shown
    after = Rating(found.mu_after, found.sigma_after).shown
    return RatingStep(before=before, after=after, delta=after - before, model=model_name())

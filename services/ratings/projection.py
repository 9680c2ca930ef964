"""The ratings as an eventsourcing ``Projection`` of the game's notification log
(docs/decisions.md D-ratings).

Two events move the view; every other one moves its position alone:

* ``MatchFinished`` — :func:`what_counts` reads the finished match from the store (its
  own events up to the finish, the last round's events) and says whether it is rated and
  how: the family, each seat's account or bot kind, who is rated as having lost whatever
  their team did, the winner. A rated match moves each account's rating on the family's
  all-time board and on the board of the season it finished in, adds a history row per
  account (all-time) and weighs the match by how often the same four played together
  lately (:meth:`~services.ratings.model.RatingModel.repeat_weight`);
* ``AccountErased`` — the player's every row goes (every board, every history row).

Everything :func:`what_counts` reads is the finished match as it stands at the finish
(the import of a record is saved with its replayed events, in the same transaction, so an
imported match is seen as imported at its ``MatchFinished``): a replay of the log gives
the same rows, bit for bit.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Final, Literal
from uuid import UUID

from eventsourcing.dispatch import singledispatchmethod
from eventsourcing.persistence import Tracking
from eventsourcing.projection import Projection

from domain.accounts.account import AccountErased
from domain.game.match import ENTERED_PREFIX
from domain.game.match_events import (
    MatchCreated,
    MatchFinished,
    MatchImported,
    RoundRecorded,
    SeatLeft,
    SeatTaken,
)
from domain.game.round import round_id
from domain.game.round_events import CardPlayed, TurnTimedOut
from services.game import GameService
from services.ratings.model import ANCHORS, MODEL, Rating, RatingModel, family
from services.ratings.rows import ALL_TIME, Change, HistoryRow, RatingRow, SeasonRow
from services.ratings.seasons import season_of
from services.ratings.view import LAYOUT, RatingsView

EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
DAY_US: Final = 86_400_000_000


def micros(at: datetime) -> int:
    """``at`` in microseconds since the epoch (exact)."""
    return (at - EPOCH) // timedelta(microseconds=1)


@dataclass(frozen=True, slots=True)
class Seat:
    """Who played a seat of a rated match: an account (a person) or a bot kind."""

    account: UUID | None
    bot: str | None
    lost: bool
    """Rated as having lost whatever the team did (left, or timed out to the end)."""

    @property
    def participant(self) -> str:
        return f"account:{self.account}" if self.account is not None else f"bot:{self.bot}"


@dataclass(frozen=True, slots=True)
class Rated:
    """A finished match that counts: its family, seats 0–3, winner (0, 1; None a draw)."""

    family: str
    seats: tuple[Seat, Seat, Seat, Seat]
    winner: int | None
    at: datetime

    @property
    def foursome(self) -> str:
        """A digest of the four participants, whatever their seats."""
        names = "|".join(sorted(s.participant for s in self.seats))
        return hashlib.sha256(names.encode()).hexdigest()[:32]

    @property
    def accounts(self) -> list[UUID]:
        return [s.account for s in self.seats if s.account is not None]


NotRated = Literal[
    "imported",
    "entered",
    "before-round-1",
    "no-family",
    "guest",
    "bots-only",
]
"""Why a finished match is not rated (:func:`what_counts`)."""


def what_counts(
    service: GameService, finished: MatchFinished, model: RatingModel = MODEL
) -> Rated | NotRated:
    """The finished match as rated, or why it is not (:data:`NotRated`)."""
    mid, version = finished.originator_id, finished.originator_version
    events = [service.mapper.to_domain_event(e) for e in service.recorder.select_events(mid)]
    if any(isinstance(e, MatchImported) for e in events):
        return "imported"  # a record played elsewhere: its moves are not ours to vouch for
    if finished.reason.startswith(ENTERED_PREFIX):
        return "entered"  # a paper result a director entered: not played here
    before = [e for e in events if e.originator_version < version]
    recorded = [e for e in before if isinstance(e, RoundRecorded)]
    if not recorded:
        return "before-round-1"
    created = before[0]
    assert isinstance(created, MatchCreated)
    match = service.get_match(mid, version=version)
    rated_in = family(created.preset, match.rules)
    if rated_in is None:
        return "no-family"
    holders: dict[int, tuple[str, UUID | None]] = {}
    left: set[int] = set()
    for e in before:
        if isinstance(e, SeatTaken):
            holders[e.seat] = (e.kind, e.account_id)
        elif isinstance(e, SeatLeft):
            if e.replaced_by is None:
                holders.pop(e.seat, None)
            else:
                left.add(e.seat)
    if any(kind == "human" and account is None for kind, account in holders.values()):
        return "guest"
    if all(kind != "human" for kind, _ in holders.values()):
        return "bots-only"
    timed_out = _timed_out_to_end(service, round_id(mid, match.round_number), model)
    seats = tuple(
        Seat(account, None, s in left or s in timed_out)
        if kind == "human"
        else Seat(None, kind, False)
        for s in range(4)
        for kind, account in [holders[s]]
    )
    assert len(seats) == 4
    return Rated(
        rated_in, (seats[0], seats[1], seats[2], seats[3]), finished.winner, finished.timestamp
    )


def _timed_out_to_end(service: GameService, rid: UUID, model: RatingModel) -> set[int]:
    """The seats whose last plays of the round, ``model.timed_out_plays`` or more in a
    row, were the timeout bot's (a ``CardPlayed`` right after the seat's ``TurnTimedOut``)."""
    streak = [0, 0, 0, 0]
    timed: int | None = None
    for stored in service.recorder.select_events(rid):
        event = service.mapper.to_domain_event(stored)
        if isinstance(event, TurnTimedOut):
            timed = event.seat
            continue
        if isinstance(event, CardPlayed):
            streak[event.seat] = streak[event.seat] + 1 if timed == event.seat else 0
        timed = None
    return {s for s in range(4) if streak[s] >= model.timed_out_plays}


class Ratings(Projection[RatingsView]):
    """The ratings and their history (module docstring)."""

    name = "ratings"

    def __init__(
        self,
        view: RatingsView,
        service: GameService,
        *,
        schedule: str = "monthly",
        model: RatingModel = MODEL,
        anchors: Mapping[str, Rating] = ANCHORS,
    ) -> None:
        super().__init__(view)
        self.service = service
        self.schedule = schedule
        self.model = model
        self.anchors = anchors

    @property
    def signature(self) -> str:
        """The model the rows are computed with, as the view stores it: its name and
        version, the season schedule and the view's layout (:data:`LAYOUT`)."""
        return f"{self.model.name}/{self.model.version}/{self.schedule}/view{LAYOUT}"

    def forget(self) -> None:
        """Nothing is cached between events (the follower's interface)."""

    @singledispatchmethod
    def process_event(self, domain_event: Any, tracking: Tracking) -> None:
        """An event that moves no rating: the position alone."""
        self.view.record(Change(), tracking)

    @process_event.register
    def account_erased(self, event: AccountErased, tracking: Tracking) -> None:
        self.view.record(Change(erased={event.originator_id}), tracking)

    @process_event.register
    def match_finished(self, event: MatchFinished, tracking: Tracking) -> None:
        rated = what_counts(self.service, event, self.model)
        change = Change()
        if isinstance(rated, Rated):
            change = self.rate(rated, event.originator_id, tracking.notification_id)
        self.view.record(change, tracking)

    def rate(self, rated: Rated, match_id: UUID, position: int) -> Change:
        """The rows a rated match changes."""
        at = micros(rated.at)
        foursome = rated.foursome
        anchor = min(rated.accounts, key=str)
        since = at - self.model.repeat_window // timedelta(microseconds=1)
        weight = self.model.repeat_weight(self.view.repeats(anchor, rated.family, foursome, since))
        change = Change()
        season = season_of(self.schedule, rated.at)
        for board in (ALL_TIME, season):
            rows = [
                None if s.account is None else self.view.rating(rated.family, board, s.account)
                for s in rated.seats
            ]
            before = [self._before(s, row, at) for s, row in zip(rated.seats, rows, strict=True)]
            team0, team1 = self.model.rate(
                ((before[0], before[2]), (before[1], before[3])),
                rated.winner,
                anchored=(_bots(rated.seats, 0), _bots(rated.seats, 1)),
                lost=(_lost(rated.seats, 0), _lost(rated.seats, 1)),
                weight=weight,
            )
            after = [team0[0], team1[0], team0[1], team1[1]]
            for i, s in enumerate(rated.seats):
                if s.account is None:
                    continue
                old = rows[i]
                matches = 1 + (0 if old is None else old.matches)
                change.ratings[rated.family, board, s.account] = RatingRow(
                    family=rated.family,
                    season=board,
                    player_id=s.account,
                    mu=after[i].mu,
                    sigma=after[i].sigma,
                    matches=matches,
                    last_at=at,
                    provisional=matches < self.model.provisional_matches,
                    key=-after[i].conservative,
                )
                if board == ALL_TIME:
                    change.history.append(
                        HistoryRow(
                            player_id=s.account,
                            family=rated.family,
                            match_id=match_id,
                            position=position,
                            at=at,
                            mu_before=before[i].mu,
                            sigma_before=before[i].sigma,
                            mu_after=after[i].mu,
                            sigma_after=after[i].sigma,
                            weight=weight,
                            foursome=foursome,
                        )
                    )
        if self.view.season_row(rated.family, season) is None:
            change.seasons[rated.family, season] = SeasonRow(
                family=rated.family, season=season, first_at=at
            )
        return change

    def _before(self, seat: Seat, row: RatingRow | None, at: int) -> Rating:
        if seat.account is None:
            assert seat.bot is not None
            return self.anchors[seat.bot]
        if row is None:
            return self.model.start()
        return self.model.idle(Rating(row.mu, row.sigma), (at - row.last_at) / DAY_US)


def _bots(seats: Sequence[Seat], team: int) -> tuple[bool, bool]:
    return seats[team].account is None, seats[team + 2].account is None


def _lost(seats: Sequence[Seat], team: int) -> tuple[bool, bool]:
    return seats[team].lost, seats[team + 2].lost

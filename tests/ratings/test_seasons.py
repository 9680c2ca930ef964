"""Season boundaries (docs/decisions.md D-ratings): a match that finishes just before a
weekly or monthly boundary is rated on the season that ends there, one that finishes just
after it on the next, each from a fresh start; the past season's board and rows are kept
and still read, and the all-time board counts both (every store)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from uuid import UUID

import pytest

from domain.game.match_events import MatchFinished
from domain.game.round_events import Pacing
from infra.ratingviews import open_ratings_view
from services.game import GameService
from services.ratings.boards import RatingModels, leaderboard, seasons
from services.ratings.rows import ALL_TIME
from services.ratings.runner import RatingsFollower
from services.ratings.view import MemoryRatingsView, RatingsView
from tests.commands import create_player
from tests.conftest import Backend
from tests.ratings.population import play_out, seated


@pytest.mark.parametrize(
    ("schedule", "boundary", "before", "after"),
    [
        ("weekly", datetime(2027, 1, 4, tzinfo=UTC), "2026-W53", "2027-W01"),
        ("weekly", datetime(2026, 12, 7, tzinfo=UTC), "2026-W49", "2026-W50"),
        ("monthly", datetime(2027, 1, 1, tzinfo=UTC), "2026-12", "2027-01"),
        ("monthly", datetime(2028, 3, 1, tzinfo=UTC), "2028-02", "2028-03"),  # a leap year
    ],
)
def test_a_match_on_each_side_of_a_boundary_lands_in_its_season(
    backend: Backend, schedule: str, boundary: datetime, before: str, after: str
) -> None:
    clock = backend.clock
    service = backend.service(pacing=Pacing())  # no paced deal: the clock stays put
    view: RatingsView = (
        MemoryRatingsView() if backend.name == "popo" else open_ratings_view(service, create=True)
    )
    follower = RatingsFollower(service, view, schedule=schedule)
    ratings = RatingModels(service, view, follower, schedule)
    people = [create_player(service, f"Season {i}")[0] for i in range(4)]
    finished = []
    for at in (boundary - timedelta(microseconds=1), boundary):
        clock.set(at - timedelta(hours=1))
        mid = seated(service, list(people))
        clock.set(at)
        play_out(service, clock, mid)
        finished.append(last_finish(service, mid))
        follower.catch_up()
    assert finished == [boundary - timedelta(microseconds=1), boundary]
    found = [s.id for s in seasons(ratings, "standard", boundary).seasons]
    assert found == [before, after]  # the past season is kept, oldest first
    current = {s.id: s.current for s in seasons(ratings, "standard", boundary).seasons}
    assert current == {before: False, after: True}
    for season in (before, after):
        board = leaderboard(ratings, "standard", season=season, provisional=True)
        assert {e.player_id for e in board.entries} == {p.id for p in people}
        assert {e.matches for e in board.entries} == {1}  # each season from a fresh start
    everything = leaderboard(ratings, "standard", provisional=True)
    assert {e.matches for e in everything.entries} == {2}
    row = view.rating("standard", ALL_TIME, people[0].id)
    assert row is not None and row.last_at == micros_of(boundary)


def last_finish(service: GameService, mid: UUID) -> datetime:
    events = [service.mapper.to_domain_event(e) for e in service.recorder.select_events(mid)]
    return next(e.timestamp for e in events if isinstance(e, MatchFinished))


def micros_of(at: datetime) -> int:
    return (at - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(microseconds=1)

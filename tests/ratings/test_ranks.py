"""A rank on a board is the count of rows above (docs/decisions.md D-ratings): the SQL
views add the counts of rank buckets above and a count within one bucket; the memory
view counts on its sorted list. The two agree through inserts, moves across buckets,
ties on a key, provisional rows and erasures."""

from __future__ import annotations

import random
import uuid

from eventsourcing.persistence import Tracking

from infra.ratingviews import open_ratings_view
from services.ratings.rows import ALL_TIME, Change, RatingRow
from services.ratings.view import COARSE, MemoryRatingsView, RatingsView, cursor_of
from services.readmodels.tracked import UPSTREAM
from tests.conftest import Backend


def _row(player: uuid.UUID, key: float, provisional: bool) -> RatingRow:
    return RatingRow(
        family="standard",
        season=ALL_TIME,
        player_id=player,
        mu=25.0,
        sigma=2.0,
        matches=3,
        last_at=0,
        provisional=provisional,
        key=key,
    )


def _ranks(view: RatingsView, rows: list[RatingRow]) -> list[int]:
    return [view.rank(("standard", ALL_TIME, r.provisional), cursor_of(r)) for r in rows]


def test_ranks_from_bucket_counts_are_the_rows_above(backend: Backend) -> None:
    rng = random.Random(7)
    service = backend.service()
    view = open_ratings_view(service, create=True)
    memory = MemoryRatingsView()
    players = [uuid.UUID(int=rng.getrandbits(128)) for _ in range(120)]
    # keys on both sides of coarse and fine bucket edges, some tied, some negative
    keys = [-3 * COARSE, -COARSE, -1.0, -0.5, 0.0, 0.25, 1.0, COARSE - 0.5, COARSE, 2 * COARSE]
    current: dict[uuid.UUID, RatingRow] = {}
    for step in range(6):
        change = Change()
        for p in rng.sample(players, 40):
            key = rng.choice(keys) + rng.choice([0.0, 0.0, rng.uniform(-90, 90)])
            change.ratings["standard", ALL_TIME, p] = _row(p, key, rng.random() < 0.2)
        if step in (3, 5):
            gone = rng.choice(sorted(change.ratings))[2]
            change.erase(gone)
            current.pop(gone, None)
        for (_, _, p), r in change.ratings.items():
            current[p] = r
        for v in (view, memory):
            v.record(change, Tracking(UPSTREAM, step + 1))
        rows = sorted(current.values(), key=cursor_of)
        assert _ranks(view, rows) == _ranks(memory, rows)
    established = sorted((r for r in current.values() if not r.provisional), key=cursor_of)
    assert _ranks(view, established) == list(range(len(established)))

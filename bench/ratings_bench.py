"""Ratings benchmark (docs/decisions.md D-ratings), on a SQLite file in a temporary
folder (the embedded default):

* **update** — ``--matches`` (40) matches of two players with accounts and two bots are
  played through the services (the people's seats moved by the random bot's policy), the
  ratings' follower catching up after each finish: ``update_ms`` is the median time of a
  catch-up over one finished match (its ``MatchFinished`` rated, rows and position written);
* **boards** — the ratings' view is seeded directly (rows) with 1,000 and then 100,000
  rated players; ``GET``-level reads (the service's :func:`leaderboard`, names and all)
  are timed ``--requests`` (200) times each: the top 50, and 50 around a player in the
  middle of the board with the caller's own rank; ``board_*_ms`` is the sum of the two
  p50s and ``ratio`` = large / small (goal: at most 1.5);
* **rebuild** — ``shengji rebuild``'s ratings projection over the played history:
  rated matches per second.

The last line::

    ratings update_ms=… board_small_ms=… board_large_ms=… ratio=… rebuild_matches_per_s=…

Run ``python -m bench.ratings_bench`` (``make bench-ratings``); take figures when
``uptime``'s load is low and quote it.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import random
import statistics
import tempfile
import time
import uuid
from pathlib import Path

from eventsourcing.persistence import Tracking

from domain.accounts.account import Account
from domain.rules.ruleset import MatchEnd, MatchEndKind, preset
from infra.ratingviews import open_ratings_view
from infra.settings import Settings
from infra.store import build_service
from services.accounts.commands import CreatePlayer
from services.accounts.seating import claim_seat
from services.bots import next_move
from services.dealer import Dealer
from services.game import GameService
from services.handlers import build_bus, table_deals
from services.legal import claimed
from services.match_commands import CreateMatch
from services.match_commands import take_seat as seat_at
from services.ratings.boards import RatingModels, leaderboard
from services.ratings.model import MODEL, Rating
from services.ratings.rebuild import RatingsRebuild
from services.ratings.rows import ALL_TIME, Change, RatingRow
from services.ratings.runner import RatingsFollower
from services.ratings.view import TRACKED
from services.round_commands import Act, ClaimDeadlines
from services.sources import SEAT_ROLE, new_token
from services.unit_of_work import UnitOfWork


def _play(service: GameService, people: list[uuid.UUID], n: int) -> uuid.UUID:
    bus = build_bus(service)
    rules = dataclasses.replace(preset("standard"), match_end=MatchEnd(MatchEndKind.ROUNDS, 1))
    mid = uuid.UUID(bus.execute(CreateMatch(rules, name=f"bench {n}", preset="standard")).match_id)
    uow = UnitOfWork(service)
    dealer = Dealer(table_deals(service))
    seats: list[uuid.UUID | str] = [people[0], "heuristic", people[1], "strong"]
    for seat, who in enumerate(seats):
        match = uow.match(mid)
        if isinstance(who, uuid.UUID):
            claim_seat(uow, dealer, uow.get(who, Account, "player"), match, seat)
        else:
            seat_at(uow, dealer, match, seat, f"bot {seat}", who, new_token(mid, SEAT_ROLE))
    uow.commit()
    for _ in range(20_000):
        match = service.get_match(mid)
        if match.finished:
            return mid
        round_ = service.current_round(match)
        now = service.clock()
        if round_ is None or round_.dealt is None:
            time.sleep(0.01)
            continue
        if claimed(round_, now).pending_events:
            bus.execute(ClaimDeadlines(mid))
            continue
        move = next_move(match, round_, now, {s: "random" for s in range(4)})
        if move is None:
            time.sleep(0.01)
            continue
        bus.execute(Act(mid, move.action, seat=move.seat))
    raise RuntimeError("a match did not finish")


def _p50(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def _seed(ratings: RatingModels, players: int) -> uuid.UUID:
    """``players`` rows on the standard all-time board; the middle player's id."""
    rng = random.Random(players)
    change = Change()
    ids = [uuid.uuid4() for _ in range(players)]
    for pid in ids:
        r = Rating(rng.gauss(25, 4), rng.uniform(1.0, 3.0))
        change.ratings["standard", ALL_TIME, pid] = RatingRow(
            family="standard", season=ALL_TIME, player_id=pid, mu=r.mu, sigma=r.sigma,
            matches=MODEL.provisional_matches + 5, last_at=0, provisional=False,
            key=-r.conservative,
        )  # fmt: skip
    ratings.view.replace_all(change, Tracking(TRACKED, 1), "bench")
    middle = sorted(change.ratings.values(), key=lambda row: (row.key, str(row.player_id)))
    return middle[len(middle) // 2].player_id


def _boards(ratings: RatingModels, players: int, requests: int) -> float:
    me = _seed(ratings, players)
    top: list[float] = []
    around: list[float] = []
    for i in range(requests + 20):
        t = time.perf_counter()
        leaderboard(ratings, "standard", limit=50)
        a = time.perf_counter()
        leaderboard(ratings, "standard", limit=50, around=me, me=me)
        b = time.perf_counter()
        if i >= 20:
            top.append(a - t)
            around.append(b - a)
    figures = f"top-50 p50 {_p50(top):.2f} ms, around-me p50 {_p50(around):.2f} ms"
    print(f"  {players:>7} players: {figures}")
    return _p50(top) + _p50(around)


class _Fixed:
    """A freshness that is always there (the seeded view follows no log)."""

    def reach(self, target: int, timeout: float = 1.0) -> bool:
        return True

    def loops(self) -> tuple[()]:
        return ()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--matches", type=int, default=40)
    parser.add_argument("--requests", type=int, default=200)
    args = parser.parse_args()
    print(f"load: {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(backend="sqlite", sqlite_path=Path(tmp) / "events.sqlite3")
        service = build_service(settings)
        view = open_ratings_view(service, create=True)
        follower = RatingsFollower(service, view)
        bus = build_bus(service)
        people = [
            uuid.UUID(bus.execute(CreatePlayer(f"P{i}", "en", "")).player_id) for i in range(8)
        ]
        follower.catch_up()
        updates: list[float] = []
        rng = random.Random(7)
        for n in range(args.matches):
            _play(service, rng.sample(people, 2), n)
            t = time.perf_counter()
            follower.catch_up()
            updates.append(time.perf_counter() - t)
        update_ms = _p50(updates)
        print(f"update: {args.matches} matches, p50 {update_ms:.2f} ms per finished match")
        t = time.perf_counter()
        rebuild = RatingsRebuild(service, view, "monthly")
        rebuild.reset()
        for note in service.recorder.select_notifications(0, 10**9):
            rebuild.apply(note.id, service.mapper.to_domain_event(note))
        elapsed = time.perf_counter() - t
        assert rebuild.rebuilt() == rebuild.live()
        per_s = args.matches / elapsed
        print(f"rebuild: {args.matches} matches in {elapsed:.2f} s")
        board_view = open_ratings_view(service, create=True)
        ratings = RatingModels(service, board_view, _Fixed())
        small = _boards(ratings, 1_000, args.requests)
        large = _boards(ratings, 100_000, args.requests)
        service.close()
    print(f"load: {os.getloadavg()[0]:.2f}")
    print(
        f"ratings update_ms={update_ms:.2f} board_small_ms={small:.2f} "
        f"board_large_ms={large:.2f} ratio={large / small:.2f} "
        f"rebuild_matches_per_s={per_s:.1f}"
    )


if __name__ == "__main__":
    main()

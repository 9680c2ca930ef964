"""Reads benchmark: the lists' latency with a short and a long history
(docs/decisions.md D-readmodels).

The store is a SQLite file in a temporary folder (the embedded default). It is filled
with ``--small`` matches (200), the lists are measured, then it is filled up to
``--large`` matches (20,000) and they are measured again. The matches are written
directly through the application's save of real aggregates (``Match.create`` and four
``take_seat``, a few hundred matches per save), not played: the lists show what is
created, and a played match costs a list no more than a created one. One in ten is
private (never listed); one tournament is created per hundred matches (at least 60, so
the first page is full at both sizes); a player sits in ten matches made first
(``GET /v1/players/me/matches``).

The app is the one the server runs (``infra.bootstrap.build_app`` on the store), served
in-process through ASGI (httpx) with its lifespan, so its follower thread keeps the
read models; before measuring, the view is caught up with the log (the follower's rate
is printed). Each route is asked ``--requests`` times after a warm-up:

* ``GET /v1/matches`` — the first page (50, oldest first) and the last full page
  (``after`` = a position near the end);
* ``GET /v1/players/me/matches`` — the player's ten matches;
* ``GET /v1/tournaments`` — the first page (50).

Figures are per route (p50 and p90, milliseconds), then the last line::

    reads small_p50_ms=<f> large_p50_ms=<f> ratio=<f>

where a ``p50_ms`` is the sum of the routes' p50s (one client listing all of them) and
``ratio`` = large / small (the goal: at most 1.3, a list costs the same however long the
history). Run ``python -m bench.reads_bench`` (``make bench-reads``).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from uuid import UUID, uuid4

import httpx

from domain.game.match import Match
from domain.rules.ruleset import STANDARD
from domain.tournament.events import TeamEntry
from infra.bootstrap import build_app
from infra.logging import configure_logging
from infra.readviews import open_view
from infra.settings import Settings
from infra.store import build_service
from services.access import Credential
from services.accounts.commands import CreatePlayer
from services.accounts.seat_commands import ClaimSeatAsPlayer
from services.game import GameService
from services.handlers import build_bus
from services.match_commands import CreateMatch
from services.readmodels.runner import Follower
from services.tournaments.commands import CreateTournament

PER_SAVE = 250
"""Matches written per save (one transaction)."""


def fill(service: GameService, have: int, want: int) -> None:
    """Matches ``have``..``want`` (every tenth private) and a tournament per hundred."""
    bus = build_bus(service)
    now = service.clock()
    n = have
    while n < want:
        batch: list[Match] = []
        for i in range(n, min(want, n + PER_SAVE)):
            match = Match.create(
                STANDARD,
                now,
                name=f"m{i}",
                preset="standard",
                match_id=uuid4(),
                visibility="private" if i % 10 == 9 else "public",
            )
            for seat in range(4):
                match.take_seat(seat, f"bot{seat}", "random", "", now)
            batch.append(match)
        service.save(*batch)
        n += len(batch)
    for t in range(tournaments_for(have), tournaments_for(want)):
        teams = tuple(
            TeamEntry(f"T{t}-{k}", (f"a{k}", f"b{k}"), ("random", "random")) for k in range(4)
        )
        bus.execute(CreateTournament(f"cup {t}", STANDARD, teams, "round_robin", 1))


def tournaments_for(matches: int) -> int:
    """Tournaments beside ``matches`` matches: one per hundred, at least a page's worth."""
    return 0 if matches == 0 else max(60, matches // 100)


def seat_player(service: GameService) -> str:
    """A player in ten new matches; their token."""
    bus = build_bus(service)
    token: str = bus.execute(CreatePlayer("bench")).token
    player = Credential.parse(token)
    for i in range(10):
        made = bus.execute(CreateMatch(STANDARD, name=f"mine {i}", preset="standard"))
        bus.execute(ClaimSeatAsPlayer(UUID(made.match_id), i % 4), player)
    return token


def catch_up(service: GameService) -> tuple[int, float]:
    """The view caught up with the log: events followed, seconds."""
    view = open_view(service, create=True)
    start, began = view.position(), time.perf_counter()
    Follower(service, view).catch_up()
    return view.position() - start, time.perf_counter() - began


async def measure(
    service: GameService, settings: Settings, token: str, requests: int
) -> dict[str, list[float]]:
    """Milliseconds per request, by route."""
    app = build_app(settings, service=service)
    last = max(0, (service.recorder.max_notification_id() or 0) - 400)
    routes: dict[str, tuple[str, dict[str, str]]] = {
        "matches first page": ("/v1/matches", {}),
        "matches last page": (f"/v1/matches?after={last}", {}),
        "players/me/matches": ("/v1/players/me/matches", {"Authorization": f"Bearer {token}"}),
        "tournaments": ("/v1/tournaments", {}),
    }
    out: dict[str, list[float]] = {name: [] for name in routes}
    transport = httpx.ASGITransport(app=app)  # type: ignore[arg-type]
    async with app.lifespan(), httpx.AsyncClient(transport=transport, base_url="http://b") as c:
        for round_ in range(requests + 20):
            for name, (path, headers) in routes.items():
                began = time.perf_counter()
                r = await c.get(path, headers=headers)
                took = (time.perf_counter() - began) * 1000
                assert r.status_code == 200, (path, r.status_code, r.text)
                if round_ >= 20:  # warm-up first
                    out[name].append(took)
    return out


def p(values: Sequence[float], q: float) -> float:
    return statistics.quantiles(values, n=100)[round(q * 100) - 1] if len(values) > 1 else values[0]


def report(size: int, figures: dict[str, list[float]]) -> float:
    """Per-route lines; the sum of the routes' p50s (the first matches page stands for
    ``GET /v1/matches``)."""
    for name, values in figures.items():
        print(
            f"  {size:>6} matches  {name:<20} p50 {statistics.median(values):6.2f} ms  "
            f"p90 {p(values, 0.9):6.2f} ms"
        )
    counted = ("matches first page", "players/me/matches", "tournaments")
    return sum(statistics.median(figures[name]) for name in counted)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else "")
    parser.add_argument("--small", type=int, default=200)
    parser.add_argument("--large", type=int, default=20_000)
    parser.add_argument("--requests", type=int, default=200)
    args = parser.parse_args(argv)
    configure_logging("WARNING")  # not a line per request
    with tempfile.TemporaryDirectory() as folder:
        settings = Settings(
            backend="sqlite",
            sqlite_path=Path(folder) / "events.sqlite3",
            rate_limit_per_minute=0,
            sweep_interval_ms=0,
            webhook_interval_ms=0,
        )
        service = build_service(settings)
        try:
            token = seat_player(service)
            sums: list[float] = []
            have = 10
            for size in (args.small, args.large):
                began = time.perf_counter()
                fill(service, have, size)
                have = size
                filled = time.perf_counter() - began
                events, took = catch_up(service)
                print(
                    f"{size} matches: filled in {filled:.1f} s; the view followed {events} "
                    f"events in {took:.1f} s ({events / took if took else 0:,.0f} events/s)"
                )
                figures: dict[str, Any] = asyncio.run(
                    measure(service, settings, token, args.requests)
                )
                sums.append(report(size, figures))
        finally:
            service.close()
    small, large = sums
    print(f"reads small_p50_ms={small:.2f} large_p50_ms={large:.2f} ratio={large / small:.2f}")


if __name__ == "__main__":
    main()

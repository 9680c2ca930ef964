"""How long a request waits for bots: a person's play at a table of three ``strong`` bots,
and seating the fourth of four ``strong`` bots (in process, the embedded POPO store).

Prints, one line each::

    human_play_ms median=<ms> p90=<ms> max=<ms> n=<plays>  (the person's command answered)
    bots_after_ms median=<ms> max=<ms>                     (the bots' replies, off the request)
    seat_fourth_strong_ms=<ms> events_saved_in_request=<n>

``bots_after_ms`` is the time from a person's answer until the bot driver is idle again
(the three bots have replied); on a build where bots move inside the request it is 0.
Run ``python -m bench.bot_table_bench --plays 12``.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

from litestar.testing import TestClient

from bench._api_table import choose
from infra.bootstrap import build_app
from infra.settings import Settings
from services.game import GameService

Json = dict[str, Any]
SETTINGS = Settings(backend="popo", rate_limit_per_minute=0)
"""In memory, no limits on clients."""


def _settle(client: TestClient[Any]) -> float:
    """Wait for the bot driver (if the build has one) to go idle; seconds waited."""
    started = time.perf_counter()
    driver = getattr(client.app.state, "bots", None)
    if driver is not None:
        driver.idle(timeout=600)
    return time.perf_counter() - started


def human_plays(plays: int) -> tuple[list[float], list[float]]:
    service = GameService({"PERSISTENCE_MODULE": "eventsourcing.popo"})
    answers: list[float] = []
    after: list[float] = []
    with TestClient(build_app(SETTINGS, service=service)) as c:
        made = c.post("/v1/matches", json={"name": "bench"}).json()
        url = f"/v1/matches/{made['matchId']}"
        organiser = {"Authorization": f"Bearer {made['organiserToken']}"}
        me = {
            "Authorization": "Bearer "
            + c.post(f"{url}/seats/0", json={"name": "me"}).json()["token"]
        }
        for seat in (1, 2, 3):
            r = c.post(f"{url}/seats/{seat}/bot", json={"kind": "strong"}, headers=organiser)
            assert r.status_code == 201, r.text
        _settle(c)
        idle_looks = 0
        while len(answers) < plays and idle_looks < 500:
            view = c.get(f"{url}/view", headers=me).json()
            choice = choose(view)
            if choice is None:
                idle_looks += 1
                _settle(c)
                time.sleep(0.01)
                continue
            started = time.perf_counter()
            r = c.post(f"{url}/actions/{choice[0]}", json={"cards": choice[1]}, headers=me)
            elapsed = time.perf_counter() - started
            assert r.status_code == 200, r.text
            if choice[0] == "play":
                answers.append(elapsed)
                after.append(_settle(c))
            else:
                _settle(c)
    return answers, after


def seat_four(cap_s: float) -> tuple[float, int]:
    """The fourth of four strong bots seated: the answer's time and the events (bot moves) saved
    before it came (the driver, on a build that has one, is paused meanwhile: whatever
    moved did so inside the request)."""
    service = GameService({"PERSISTENCE_MODULE": "eventsourcing.popo"})
    with TestClient(build_app(SETTINGS, service=service), timeout=cap_s) as c:
        made = c.post("/v1/matches", json={"name": "bench"}).json()
        url = f"/v1/matches/{made['matchId']}"
        organiser = {"Authorization": f"Bearer {made['organiserToken']}"}
        for seat in (0, 1, 2):
            c.post(f"{url}/seats/{seat}/bot", json={"kind": "strong"}, headers=organiser)
        driver = getattr(c.app.state, "bots", None)
        if driver is not None:
            driver.pause()
        started = time.perf_counter()
        r = c.post(f"{url}/seats/3/bot", json={"kind": "strong"}, headers=organiser)
        elapsed = time.perf_counter() - started
        assert r.status_code == 201, r.text
        moved = c.get(url).json()["version"] - r.json()["version"]
        if driver is not None:
            driver.stop()  # a bots-only match plays on: not part of this figure
    return elapsed, moved


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--plays", type=int, default=12)
    parser.add_argument("--seat-cap-s", type=float, default=600.0)
    parser.add_argument("--skip-seat", action="store_true")
    args = parser.parse_args()
    answers, after = human_plays(args.plays)
    ms = sorted(a * 1000 for a in answers)
    p90 = ms[min(len(ms) - 1, int(len(ms) * 0.9))]
    print(
        f"human_play_ms median={statistics.median(ms):.1f} p90={p90:.1f} "
        f"max={ms[-1]:.1f} n={len(ms)}"
    )
    later = [a * 1000 for a in after]
    print(f"bots_after_ms median={statistics.median(later):.1f} max={max(later):.1f}")
    if not args.skip_seat:
        elapsed, moved = seat_four(args.seat_cap_s)
        print(f"seat_fourth_strong_ms={elapsed * 1000:.1f} events_saved_in_request={moved}")


if __name__ == "__main__":
    main()

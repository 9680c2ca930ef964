"""The examples of docs/feed-examples.json, taken from what the public feed serves of a played
population — never written by hand (docs/events.md, "The served format").

The population reaches every event type the public feed carries: bots' matches (two
rounds, a weak-hand redeal), a table whose turn timer ran out, an overcall window that
closed, a match its organiser ended, a private table a player left, a resignation and its
rematch, an imported record; and tournaments whose organiser uses every control —
registration and check-in, late changes of time, byes, substitutes, renames, forbidden
and overridden pairings, a published pairing, a fixed table, a paused, extended and
resumed round, a cancelled round, paper results and corrections, a forfeit, a
withdrawal, an adjustment, a passed deadline.

``python -m tests.archive.feed_examples`` writes the file: one example per type and class
version served today (the first one served, not withheld); the examples of older versions
are kept (yesterday's items still fit today's feed: tests/archive/test_feed_format.py).
"""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

from litestar import Litestar
from litestar.testing import TestClient

from domain.game.round_events import Pacing
from services.game import GameService
from services.tournaments.clerk import Clerk
from tests.api.rest import GatedService, Json, Table, auth, bots_match, client, settle
from tests.archive.test_feed_format import first_of_each_type, population, served
from tests.commands import bus_of
from tests.conftest import FakeClock, FixedSeeds

ROOT = Path(__file__).parents[2]
EXAMPLES = ROOT / "docs" / "feed-examples.json"


def _ok(r: Any, status: int = 200) -> Json:
    assert r.status_code == status, r.text
    body: Json = r.json()
    return body


def _service(pacing: Pacing | None = None) -> GatedService:
    return GatedService(
        {"PERSISTENCE_MODULE": "eventsourcing.popo"},
        clock=FakeClock(),
        seeds=FixedSeeds(3),
        **({} if pacing is None else {"pacing": pacing}),
    )


def _clock(service: GameService) -> FakeClock:
    clock = service.clock
    assert isinstance(clock, FakeClock)
    return clock


def _until(t: Table, phase: str) -> Json:
    for _ in range(60):
        public = t.public()
        if public["phase"] == phase:
            return public
        assert t.step()
    raise AssertionError(f"never reached {phase}")


def _tables(c: TestClient[Litestar], service: GameService) -> None:
    """Match and round events of one service: timers, leaving, resigning, rematches."""
    clock = _clock(service)
    timed = Table.seat_four(c, {"name": "timed", "timers": {"playMs": 20_000}})
    _until(timed, "playing")
    clock.advance(timedelta(seconds=21))
    _ok(c.post(f"{timed.url}/timeout", headers=auth(timed.organiser)))
    # a private table a player joins by invite, leaves, and one whose seat token is renewed
    player = _ok(c.post("/v1/players", json={"displayName": "Mei"}), 201)["token"]
    made = _ok(c.post("/v1/matches", json={"name": "friends"}), 201)
    code = _ok(
        c.post(f"/v1/matches/{made['matchId']}/invites", headers=auth(made["organiserToken"])),
        201,
    )["code"]
    _ok(c.post(f"/v1/invites/{code}", headers=auth(player)), 201)
    _ok(c.post(f"/v1/players/me/matches/{made['matchId']}/seat-token", headers=auth(player)))
    for name in ("ann", "bo", "cy"):
        _ok(c.post(f"/v1/invites/{code}", json={"name": name}), 201)
    _ok(c.post(f"/v1/players/me/matches/{made['matchId']}/leave", headers=auth(player)))
    # a resignation (R32: the team concedes once both resigned), then a rematch
    t = Table.seat_four(c, {"name": "resigned"})
    for seat in (0, 2):
        _ok(c.post(f"{t.url}/resign", headers=auth(t.tokens[seat])))
    _ok(c.post(f"{t.url}/rematch", headers=auth(t.tokens[1])), 201)
    # 暴动 (§10): a hand under the threshold asks for a redeal
    riot = Table.seat_four(c, {"name": "riot", "rules": {"weakHandRedeal": 50}})
    for _ in range(60):
        asking = [s for s in range(4) if "redeal" in riot.view(s)["legal"]["actions"]]
        if asking:
            _ok(riot.act(asking[0], "redeal", []))
            break
        assert riot.step()
    # a record of a finished bots' match, imported
    url, _ = bots_match(c, "random")
    settle(c)
    record = c.get(f"{url}/record").json()
    _ok(c.post("/v1/records?store=true", json=record), 201)


def _window(c: TestClient[Litestar], service: GameService) -> None:
    """R20: an overcall window that closes by its deadline (a paced service)."""
    t = Table.seat_four(c, {"name": "window"})
    clock = _clock(service)
    for _ in range(40):
        public = t.public()
        if public["phase"] == "overcalling":
            clock.advance(timedelta(seconds=2))  # past the window: the next move closes it
            t.step()
            return
        if not t.step():
            clock.advance(timedelta(seconds=2))
    raise AssertionError("no overcall window")


def team(name: str) -> Json:
    """A team of two people: its tables wait for the organiser (no bot plays them)."""
    return {"name": name, "players": [{"name": f"{name} {p}", "kind": "human"} for p in "ab"]}


def _tournaments(c: TestClient[Litestar], service: GameService) -> None:
    """Every control of a tournament's organiser (docs/tournaments.md)."""
    created = {
        "name": "club night",
        "teams": [],
        "format": "swiss",
        "swissRounds": 3,
        "matchLength": 1,
        "registration": True,
        "checkinRequired": True,
        "roundDeadlineS": 600,
        "timers": {"playMs": 30_000},
        "seeding": "rating",
    }
    r = _ok(c.post("/v1/tournaments", json=created), 201)
    url, org = f"/v1/tournaments/{r['tournamentId']}", auth(r["organiserToken"])
    rated = _ok(c.post("/v1/players", json={"displayName": "Seeded"}), 201)["playerId"]
    for i in range(6):
        entry = team(f"T{i}")
        if i == 0:  # a player names their account: rated, and seeded by it
            entry["players"][0]["playerId"] = rated
        _ok(c.post(f"{url}/teams", json=entry), 201)
        _ok(c.post(f"{url}/teams/{i}/checkin", headers=org))
    _ok(c.post(f"{url}/start", headers=org))
    _ok(c.patch(url, json={"roundDeadlineS": 900, "timers": {"playMs": 20_000}}, headers=org))
    _ok(c.post(f"{url}/forbidden", json={"teams": [0, 1], "reason": "one club"}, headers=org))
    _ok(c.delete(f"{url}/forbidden/0/1", headers=org))
    _ok(c.post(f"{url}/byes", json={"team": 5, "round": 1, "reason": "a wedding"}, headers=org))
    sub = {"round": 1, "team": 4, "player": 1, "name": "Sam", "kind": "human", "reason": "ill"}
    _ok(c.post(f"{url}/substitutes", json=sub, headers=org))
    renamed = {"name": "Dragons", "reason": "a sponsor"}
    _ok(c.post(f"{url}/teams/3/rename", json=renamed, headers=org))
    fixed = {"team": 2, "table": 1, "reason": "a wheelchair"}
    _ok(c.post(f"{url}/fixed-tables", json=fixed, headers=org))
    _ok(c.post(f"{url}/publish", headers=org))
    _ok(c.post(f"{url}/rounds", headers=org), 201)
    cancel = {"reason": "wrong boards", "by": "TD"}
    _ok(c.post(f"{url}/rounds/1/cancel", json=cancel, headers=org))
    timed = {"deadlineS": 600, "timers": {"playMs": 30_000}}
    _ok(c.post(f"{url}/rounds", json=timed, headers=org), 201)
    _ok(c.post(f"{url}/rounds/1/clock", json={"deadlineS": 1200}, headers=org))
    _ok(c.post(f"{url}/rounds/1/pause", json={"reason": "fire alarm"}, headers=org))
    _ok(c.post(f"{url}/rounds/1/resume", headers=org))
    more = {"seconds": 300, "reason": "a late start", "by": "TD"}
    _ok(c.post(f"{url}/rounds/1/tables/1/extension", json=more, headers=org))
    _clock(service).advance(timedelta(seconds=1600))
    Clerk(bus_of(service)).tick()
    paper = {"levels": [2, 0], "reason": "played on paper", "by": "TD"}
    _ok(c.post(f"{url}/rounds/1/tables/1/result", json=paper, headers=org))
    table = c.get(f"{url}/rounds/1").json()["tables"][0]
    fixed_result = {
        "winner": table["firstTeam"],
        "levels": [3, 0],
        "points": [0, 40],
        "by": "TD",
        "reason": "miscounted",
    }
    _ok(c.post(f"{url}/rounds/1/tables/1/correction", json=fixed_result, headers=org))
    other = c.get(f"{url}/rounds/1").json()["tables"][1]["firstTeam"]
    _ok(c.post(f"{url}/teams/{other}/withdraw", json={"reason": "gone home"}, headers=org))
    # a round robin whose team withdrew before the round: its opponent gets the bye
    league = {"name": "league", "teams": [team(f"L{i}") for i in range(4)]}
    made = _ok(
        c.post("/v1/tournaments", json={**league, "format": "round_robin", "matchLength": 1}), 201
    )
    rr, rr_org = f"/v1/tournaments/{made['tournamentId']}", auth(made["organiserToken"])
    _ok(c.post(f"{rr}/teams/3/withdraw", json={"reason": "no show"}, headers=rr_org))
    _ok(c.post(f"{rr}/rounds", headers=rr_org), 201)
    penalty = {"team": 0, "matchPoints": -1, "reason": "late", "by": "TD"}
    _ok(c.post(f"{url}/adjustments", json=penalty, headers=org))
    preview = _ok(c.get(f"{url}/preview", headers=org))
    pairs = [
        {"firstTeam": t["firstTeam"], "secondTeam": t["secondTeam"]} for t in preview["tables"]
    ]
    override = {"tables": pairs, "bye": preview.get("bye"), "reason": "a club rule", "by": "TD"}
    _ok(c.post(f"{url}/rounds/2/pairings", json=override, headers=org))


def served_items() -> list[dict[str, Any]]:
    """The public feed of the whole population, in the order served."""
    items = population()
    plain = _service()
    with client(plain) as c:
        _tables(c, plain)
        _tournaments(c, plain)
        items += served(c)
    paced = _service(Pacing(interval_ms=0, declare_ms=1000, window_ms=500))
    with client(paced) as c:
        _window(c, paced)
        items += served(c)
    return items


def write() -> list[str]:
    """Write the examples file: today's, and the older versions' kept; answers the keys."""
    today = first_of_each_type(served_items())
    kept: dict[str, Any] = json.loads(EXAMPLES.read_text())
    examples = {**{k: v for k, v in kept.items() if k not in today}, **today}
    EXAMPLES.write_text(
        json.dumps(dict(sorted(examples.items())), indent=2, sort_keys=True, ensure_ascii=False)
        + "\n"
    )
    return sorted(examples)


if __name__ == "__main__":
    print("\n".join(write()))

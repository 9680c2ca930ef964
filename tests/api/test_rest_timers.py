"""Turn timers over REST (docs/timers.md): the match's limits, the views'
``turnDeadline``, ``POST /v1/matches/{id}/timeout`` early and late, its auth, If-Match and
Idempotency-Key, and the sweeper started with the app.
"""

from __future__ import annotations

import threading
from datetime import datetime, timedelta
from typing import Any
from uuid import uuid4

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from infra.bootstrap import build_app
from infra.settings import Settings, SettingsError
from services.timers import ClaimTimeout
from tests.api.ops.small_app import is_problem
from tests.api.rest import Json, Table, auth, bots_match, client, new_service, settle
from tests.apps import loop_periods, make_app
from tests.conftest import FakeClock

TIMERS = {"declareMs": 5_000, "buryMs": 6_000, "playMs": 20_000}


def timed_table(c: Any, timers: Json | None = TIMERS) -> Table:
    body: Json = {"name": "timed"}
    if timers is not None:
        body["timers"] = timers
    return Table.seat_four(c, body)


def until_playing(t: Table) -> Json:
    for _ in range(50):
        public = t.public()
        if public["phase"] == "playing":
            return public
        assert t.step()
    raise AssertionError("play never began")


def test_a_stalled_seat_is_played_by_the_bot_after_its_limit() -> None:
    service = new_service()
    clock = service.clock
    assert isinstance(clock, FakeClock)
    with client(service) as c:
        t = timed_table(c)
        public = until_playing(t)
        seat = public["expected"]["seat"]
        deadline = datetime.fromisoformat(public["turnDeadline"])
        assert deadline == clock() + timedelta(seconds=20)  # the turn began now (R22)
        assert t.view(seat)["turnDeadline"] == public["turnDeadline"]

        early = c.post(f"{t.url}/timeout", headers=auth(t.tokens[(seat + 1) % 4]))
        body = is_problem(early, "not-timed-out", 409)
        assert "20.000 s to play" in body["detail"] and "playMs" in body["detail"]
        assert public["turnDeadline"] in body["detail"]

        clock.set(deadline + timedelta(milliseconds=1))
        headers = {**auth(t.organiser), "Idempotency-Key": "timeout-1"}
        r = c.post(f"{t.url}/timeout", headers=headers)
        assert r.status_code == 200, r.text
        claimed = r.json()
        assert claimed == {
            "version": claimed["version"],
            "seat": seat,
            "timer": "play",
            "limitMs": 20_000,
            "action": "play",
        }
        again = c.post(f"{t.url}/timeout", headers=headers)
        assert again.json() == claimed and again.headers["idempotent-replayed"] == "true"

        items = c.get(f"{t.url}/history", params={"after": 0, "limit": 1000}).json()["items"]
        names = [i["type"] for i in items]
        at = names.index("TurnTimedOut")
        assert items[at]["data"] == {
            "seat": seat,
            "timer": "play",
            "limitMs": 20_000,
            "turnBegan": (deadline - timedelta(seconds=20)).isoformat(),
            "claimedBy": "organiser",
        }
        assert names[at + 1] in ("CardPlayed", "ThrowFailed")
        assert items[at + 1]["data"]["seat"] == seat
        after = t.public()
        assert after["version"] == claimed["version"]
        assert after["expected"]["seat"] == (seat + 1) % 4
        assert datetime.fromisoformat(after["turnDeadline"]) == clock() + timedelta(seconds=20)


@pytest.mark.parametrize(
    ("token", "code", "status"),
    [
        (None, "unauthorized", 401),
        ("not-a-token", "unauthorized", 401),
        ("other-match", "forbidden", 403),
        ("seat", "precondition-failed", 412),  # with a stale If-Match
    ],
)
def test_who_may_claim(c: TestClient[Litestar], token: str | None, code: str, status: int) -> None:
    t = timed_table(c)
    other = timed_table(c)
    tokens = {"seat": t.tokens[0], "other-match": other.tokens[0], "not-a-token": "x.y.z"}
    headers = {} if token is None else auth(tokens[token])
    if token == "seat":
        headers["If-Match"] = '"1"'
    body = is_problem(c.post(f"{t.url}/timeout", headers=headers), code, status)
    if token is None:
        assert "a seat token or the organiser token of this match" in body["detail"]


def test_no_timer_no_timeout(c: TestClient[Litestar]) -> None:
    t = timed_table(c, timers=None)
    until_playing(t)
    r = c.post(f"{t.url}/timeout", headers=auth(t.tokens[1]))
    body = is_problem(r, "no-turn-timer", 409)
    assert "timers.playMs" in body["detail"]
    assert t.public()["turnDeadline"] is None


@pytest.mark.parametrize(
    "timers",
    [{"playMs": 999}, {"buryMs": 86_400_001}, {"playMs": "fast"}, {"thinkMs": 5_000}],
)
def test_limits_out_of_range_are_refused(c: TestClient[Litestar], timers: Json) -> None:
    r = c.post("/v1/matches", json={"timers": timers})
    body = is_problem(r, "validation-failed", 422)
    assert "timers" in body["detail"]


def test_the_bot_driver_plays_a_bots_only_match_with_no_command() -> None:
    """The seatings are answered at once; the bot driver, started with the app beside the
    sweeper, plays the match off the request path and stops with the app."""
    service = new_service()
    before = set(threading.enumerate())  # another test's app may run a sweeper of its own
    with client(service, sweep_interval_ms=10) as c:
        url, last = bots_match(c, "heuristic")
        seated = last["version"]
        settle(c)
        summary = c.get(url).json()
        assert summary["finished"] and summary["version"] > seated + 50
        assert summary["rounds"][0]["status"] == "scored"
        ours = [t for t in set(threading.enumerate()) - before if t.name == "sweeper"]
        assert ours
    assert not [t for t in ours if t.is_alive()]  # stopped cleanly at shutdown
    assert not service.saves.stored  # neither the sweeper nor the driver hears saves now


def test_the_sweeper_is_on_with_the_settings() -> None:
    assert Settings().sweep_interval_ms == 1000
    env = {"PERSISTENCE": "popo", "SWEEP_INTERVAL_MS": "250"}
    assert Settings.from_env(env).sweep_interval_ms == 250
    with pytest.raises(SettingsError, match="SWEEP_INTERVAL_MS"):
        Settings.from_env({**env, "SWEEP_INTERVAL_MS": "-1"})
    assert loop_periods(build_app(Settings.from_env(env)))["sweeper"] == 0.25
    assert "sweeper" not in loop_periods(make_app(new_service()))  # tests' apps


@pytest.mark.parametrize("kind", ["random", "strong"])
def test_the_timeout_bot_is_the_configured_kind(kind: str) -> None:
    """TIMEOUT_BOT (docs/bots.md): the sweeper and the claim use that bot policy. The
    sweeper's loop is off (its handler is the bus's, checked below): running, it could claim
    the passed deadline first, and the claim sent here would then lose that race (409)."""
    env = {"PERSISTENCE": "popo", "TIMEOUT_BOT": kind.upper(), "SWEEP_INTERVAL_MS": "0"}
    settings = Settings.from_env(env)
    assert settings.timeout_bot == kind
    service = new_service()
    clock = service.clock
    assert isinstance(clock, FakeClock)
    with client(service, settings=settings) as c:
        claims = c.app.state.runtime.bus.handler(ClaimTimeout(uuid4()))
        assert getattr(claims, "kind", None) == kind  # the sweeper's claims go to it too
        t = timed_table(c)
        public = until_playing(t)
        clock.set(datetime.fromisoformat(public["turnDeadline"]) + timedelta(milliseconds=1))
        r = c.post(f"{t.url}/timeout", headers=auth(t.organiser))
        assert r.status_code == 200, r.text
        assert r.json()["action"] == "play"


def test_an_unknown_timeout_bot_is_refused() -> None:
    assert Settings().timeout_bot == "heuristic"
    with pytest.raises(SettingsError, match="TIMEOUT_BOT must be one of"):
        Settings.from_env({"PERSISTENCE": "popo", "TIMEOUT_BOT": "genius"})

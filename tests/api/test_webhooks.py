"""Webhooks (docs/webhooks.md), in one process on POPO: the operator registers a
subscription; the outbox follows the event log; deliveries are signed (HMAC-SHA256 over
timestamp and body, refused outside the replay window), in order per player, retried
with backoff after failures, each attempt in the delivery log; operator routes refuse
everyone else."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from api.players.webhooks import Webhooks
from services.webhooks.dispatch import SIGNATURE_HEADER, sign, verify
from tests.api.rest import GatedService, Json, Table, auth, client, new_service
from tests.api.test_rest_players import new_player
from tests.api.test_rest_tournaments import teams

OPERATOR = "operator-token-0123456789abcdef"
SECRET = "a-webhook-secret-of-32-characters"


class Receiver:
    """A push service that fails its first ``failures`` requests, then answers 204."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.got: list[tuple[dict[str, str], bytes]] = []
        self.calls = 0

    def __call__(self, url: str, body: bytes, headers: dict[str, str]) -> int:
        self.calls += 1
        if self.calls <= self.failures:
            raise ConnectionError("refused")
        self.got.append((headers, body))
        return 204


@contextmanager
def hooked() -> Iterator[tuple[TestClient[Litestar], GatedService, Receiver, Webhooks]]:
    service = new_service()
    receiver = Receiver(failures=3)
    with client(service, operator_token=OPERATOR, post=receiver) as c:
        hooks: Webhooks = c.app.state.webhooks
        hooks.delivery.dispatcher.jitter = lambda: 1.0
        yield c, service, receiver, hooks


@pytest.fixture
def world() -> Iterator[tuple[TestClient[Litestar], GatedService, Receiver, Webhooks]]:
    """An app of its own with webhooks on, its receiver failing the first three calls."""
    with hooked() as made:
        yield made


@pytest.fixture(scope="module")
def refusing() -> Iterator[tuple[TestClient[Litestar], GatedService, Receiver, Webhooks]]:
    """One such app for the tests that subscribe nothing and deliver nothing (refusals, the
    dispatcher's backoff, whose jitter each puts back)."""
    with hooked() as made:
        yield made


def subscribe(c: TestClient[Litestar], kinds: list[str]) -> Json:
    body = {"url": "https://push.example/hook", "secret": SECRET, "kinds": kinds}
    r = c.post("/v1/webhooks", json=body, headers=auth(OPERATOR))
    assert r.status_code == 201, r.text
    sub: Json = r.json()
    return sub


def run_until_quiet(hooks: Webhooks, service: GatedService, rounds: int = 12) -> None:
    for _ in range(rounds):
        hooks.delivery.step()
        service.clock.advance(timedelta(seconds=400))  # type: ignore[attr-defined]


def seated_table(c: TestClient[Litestar]) -> tuple[list[Json], Json, Table]:
    """Four new players seated at a new match: the players, the match made, its table."""
    players = [new_player(c, f"p{i}") for i in range(4)]
    created = c.post("/v1/matches", json={}).json()
    for seat, p in enumerate(players):
        body = {"matchId": created["matchId"], "seat": seat}
        c.post("/v1/players/me/seats", json=body, headers=auth(p["token"]))
    table = Table(c, created["matchId"], created["organiserToken"], [p["token"] for p in players])
    return players, created, table


def test_deliveries_are_signed_in_order_and_retried(world: Any) -> None:
    c, service, receiver, hooks = world
    sub = subscribe(c, ["match-found", "match-finished", "your-turn"])
    assert "secret" not in sub
    players, created, _ = seated_table(c)
    c.post(f"/v1/matches/{created['matchId']}/finish", headers=auth(created["organiserToken"]))
    hooks.delivery.step()  # three players' queues fail at their head and wait their backoff
    assert len({json.loads(b)["playerId"] for _, b in receiver.got}) == 1
    hooks.delivery.step()
    assert len({json.loads(b)["playerId"] for _, b in receiver.got}) == 1  # not yet due
    run_until_quiet(hooks, service)
    per_player: dict[str, list[tuple[int, str]]] = {}
    for headers, body in receiver.got:
        t = int(headers[SIGNATURE_HEADER].split(",")[0][2:])
        assert verify(SECRET, headers[SIGNATURE_HEADER], body, now=t + 299)
        assert not verify(SECRET, headers[SIGNATURE_HEADER], body, now=t + 301)  # replayed late
        assert not verify("another secret!!", headers[SIGNATURE_HEADER], body, now=t)
        data = json.loads(body)
        seq = int(headers["Shengji-Delivery"].rsplit(":", 1)[1])
        per_player.setdefault(data["playerId"], []).append((seq, data["kind"]))
    assert sorted(per_player) == sorted(p["playerId"] for p in players)
    for items in per_player.values():
        assert [s for s, _ in items] == list(range(1, len(items) + 1))  # in order, no gap
        assert items[0][1] == "match-found" and items[-1][1] == "match-finished"
    log = c.get(f"/v1/webhooks/{sub['subscriptionId']}/deliveries", headers=auth(OPERATOR))
    assert log.status_code == 200
    entries = log.json()
    assert all(e["deliveredAt"] is not None for e in entries)
    failed = [a for e in entries for a in e["attempts"] if a["error"]]
    assert len(failed) == 3 and {a["error"] for a in failed} == {"ConnectionError"}


def test_backoff_doubles_with_jitter(refusing: Any) -> None:
    _, _, _, hooks = refusing
    hooks.delivery.dispatcher.jitter = lambda: 0.0
    waits = [hooks.delivery.dispatcher.backoff(n).total_seconds() for n in range(12)]
    assert waits[:4] == [0.5, 1.0, 2.0, 4.0] and waits[-1] == 150.0  # half of the 300 s cap
    hooks.delivery.dispatcher.jitter = lambda: 1.0
    assert hooks.delivery.dispatcher.backoff(3).total_seconds() == 8.0


@pytest.mark.parametrize(
    ("headers", "status"),
    [({}, 401), (auth("someone-else-entirely-000000"), 403)],
)
def test_operator_routes_refuse_others(refusing: Any, headers: dict[str, str], status: int) -> None:
    c, _, _, _ = refusing
    assert c.get("/v1/webhooks", headers=headers).status_code == status
    body = {"url": "https://x.example", "secret": SECRET, "kinds": ["your-turn"]}
    r = c.post("/v1/webhooks", json=body, headers=headers)
    assert r.status_code == status
    assert r.headers["content-type"].startswith("application/problem+json")


def test_without_an_operator_token_webhooks_are_off() -> None:
    with client() as c:
        r = c.get("/v1/webhooks", headers=auth(OPERATOR))
        assert (r.status_code, r.json()["code"]) == (403, "forbidden")


def test_a_signature_is_over_timestamp_and_body() -> None:
    assert sign("k" * 16, 1, b"{}") != sign("k" * 16, 2, b"{}")
    assert sign("k" * 16, 1, b"{}") != sign("k" * 16, 1, b"{ }")


def test_your_turn_goes_to_the_player_whose_seat_is_to_act(world: Any) -> None:
    c, service, receiver, hooks = world
    receiver.failures = 0
    subscribe(c, ["your-turn"])
    players, created, table = seated_table(c)
    for _ in range(40):
        table.step()
    run_until_quiet(hooks, service, rounds=2)
    seat_of = {p["playerId"]: seat for seat, p in enumerate(players)}
    turns = [json.loads(b) for _, b in receiver.got]
    assert len(turns) >= 10 and {t["kind"] for t in turns} == {"your-turn"}
    assert all(t["data"]["seat"] == seat_of[t["playerId"]] for t in turns)
    assert all(t["data"]["matchId"] == created["matchId"] for t in turns)


def test_a_scheduled_tournament_round_is_told(world: Any) -> None:
    c, service, receiver, hooks = world
    receiver.failures = 0
    subscribe(c, ["tournament-round-ready"])
    made = c.post(
        "/v1/tournaments",
        json={"name": "cup", "teams": teams(4), "format": "round_robin", "matchLength": 1},
    ).json()
    r = c.post(
        f"/v1/tournaments/{made['tournamentId']}/rounds", headers=auth(made["organiserToken"])
    )
    assert r.status_code == 201, r.text
    run_until_quiet(hooks, service, rounds=2)
    told = [(h["Shengji-Event"], json.loads(b)) for h, b in receiver.got]
    assert [(k, b["data"]) for k, b in told] == [
        ("tournament-round-ready", {"tournamentId": made["tournamentId"], "round": 1})
    ]
    assert told[0][1]["playerId"] is None


class CountingPolicy:
    """Counts the notifications the outbox processes (its policy's calls)."""

    def __init__(self, hooks: Webhooks, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls: list[str] = []
        policy = hooks.delivery.outbox.policy

        def counted(event: Any, processing: Any) -> None:
            self.calls.append(type(event).__name__)
            policy(event, processing)

        monkeypatch.setattr(hooks.delivery.outbox, "policy", counted)


def test_the_outbox_follows_only_what_subscriptions_want(
    world: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    c, service, receiver, hooks = world
    receiver.failures = 0
    counting = CountingPolicy(hooks, monkeypatch)
    _, created, table = seated_table(c)
    for _ in range(20):
        table.step()
    top = service.recorder.max_notification_id()
    hooks.delivery.step()
    # Nobody subscribed: the seat claims only (a later subscription's tables), no round
    # event read; the tracked position still reaches the end of the log.
    assert counting.calls == ["SeatClaimed"] * 4
    assert hooks.delivery.outbox.recorder.max_tracking_id(service.name) == top
    hooks.delivery.step()
    assert counting.calls == ["SeatClaimed"] * 4  # idle: nothing read again

    subscribe(c, ["match-finished"])
    for _ in range(10):
        table.step()
    hooks.delivery.step()
    assert counting.calls[4:] == ["SubscriptionRegistered"]  # no round event wanted yet
    subscribe(c, ["your-turn"])
    for _ in range(10):
        table.step()
    hooks.delivery.step()
    assert counting.calls[5] == "SubscriptionRegistered"
    assert len(counting.calls) > 6  # the round events after it, for your-turn
    run_until_quiet(hooks, service, rounds=2)
    assert {json.loads(b)["kind"] for _, b in receiver.got} == {"your-turn"}
    finished = c.post(f"/v1/matches/{created['matchId']}/finish", headers=auth(table.organiser))
    assert finished.status_code == 200, finished.text
    run_until_quiet(hooks, service, rounds=2)
    kinds = [json.loads(b)["kind"] for _, b in receiver.got]
    assert kinds.count("match-finished") == 4  # the tables known from before it subscribed

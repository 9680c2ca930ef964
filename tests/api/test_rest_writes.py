"""Writes you can trust: Idempotency-Key (replay, another body 422, in flight 409, the
record saved with the command), two conflicting commands (exactly one wins, the other
409), and bots that play a whole match by themselves through the same commands."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from services.idempotency import IdempotencyRecord
from tests.api.rest import (
    GatedService,
    Json,
    Table,
    auth,
    choose,
    client,
    new_service,
    settle,
    without_tokens,
)


def history_length(c: TestClient[Litestar], url: str) -> int:
    page: Json = c.get(f"{url}/history?limit=1000").json()
    return len(page["items"])


def passer(table: Table) -> int:
    return next(s for s in range(4) if "pass" in table.view(s)["legal"]["actions"])


@pytest.fixture(scope="module")
def shared() -> Iterator[TestClient[Litestar]]:
    """One app for the tests that act on matches of their own with their own seats' keys
    (the bot driver never paused, the store never held, no match listed). The person
    playing against three bots keeps an app of its own: its moves wait on the driver."""
    with client() as c:
        yield c


@pytest.fixture(scope="module")
def gated() -> Iterator[tuple[GatedService, TestClient[Litestar]]]:
    """One app on a service whose saves can be held, for the tests that hold or race its
    saves (each on a match of its own, its gate open again when it ends) or read what its
    own command saved; no bot plays in it."""
    service = new_service()
    with client(service) as c:
        yield service, c


# -- Idempotency-Key ------------------------------------------------------------------------


def test_a_replayed_command_answers_the_same_and_acts_once(shared: TestClient[Litestar]) -> None:
    c = shared
    table = Table.seat_four(c)
    seat = passer(table)
    key = {"Idempotency-Key": "pass-1"}
    first = table.act(seat, "pass", [], **key)
    assert first.status_code == 200 and "idempotent-replayed" not in first.headers
    length = history_length(c, table.url)
    again = table.act(seat, "pass", [], **key)
    assert (again.status_code, again.content) == (first.status_code, first.content)
    assert again.headers["idempotent-replayed"] == "true"
    assert history_length(c, table.url) == length  # no new event
    other = table.act(seat, "pass", ["AS"], **key)  # same key, another body
    assert other.status_code == 409 and other.json()["code"] == "idempotency-key-reused"
    elsewhere = c.post(
        f"{table.url}/actions/redeal",
        json={"cards": []},
        headers={**auth(table.tokens[seat]), **key},
    )
    assert elsewhere.status_code == 409  # same key, another path
    assert history_length(c, table.url) == length


def test_keys_are_per_caller(shared: TestClient[Litestar]) -> None:
    c = shared
    table = Table.seat_four(c)
    seats = [s for s in range(4) if "pass" in table.view(s)["legal"]["actions"]][:2]
    answers = [table.act(s, "pass", [], **{"Idempotency-Key": "same"}) for s in seats]
    assert [a.status_code for a in answers] == [200, 200]
    assert answers[0].json()["view"]["seat"] != answers[1].json()["view"]["seat"]


def test_a_created_match_is_replayed_without_its_organiser_token(
    gated: tuple[GatedService, TestClient[Litestar]],
) -> None:
    """A replay rebuilds the first answer but never gives a minted token again: whoever
    sends the same key and body cannot be told apart from the first caller."""
    _, c = gated
    name = f"once {uuid.uuid4().hex[:8]}"  # the store holds other tests' matches
    key = {"Idempotency-Key": "create-1"}
    first = c.post("/v1/matches", json={"name": name}, headers=key)
    again = c.post("/v1/matches", json={"name": name}, headers=key)
    assert first.status_code == again.status_code == 201
    assert first.json()["organiserToken"] and not first.json()["tokenWithheld"]
    assert again.json() == without_tokens(first.json(), "organiserToken")
    assert first.headers["location"] == again.headers["location"]
    names = [m["name"] for m in c.get("/v1/matches?limit=100").json()["items"]]
    assert names.count(name) == 1
    url = f"/v1/matches/{first.json()['matchId']}/seats/0"
    seat = c.post(url, json={"name": "a"}, headers={"Idempotency-Key": "seat"})
    retry = c.post(url, json={"name": "a"}, headers={"Idempotency-Key": "seat"})
    assert retry.json() == without_tokens(seat.json(), "token")


def test_a_failed_command_records_nothing(shared: TestClient[Litestar]) -> None:
    c = shared
    table = Table.seat_four(c)
    key = {"Idempotency-Key": "too-early"}
    assert table.act(0, "play", ["AS"], **key).status_code == 409
    assert table.act(0, "play", ["AS"], **key).status_code == 409  # runs again
    assert "idempotent-replayed" not in table.act(0, "play", ["AS"], **key).headers


def test_the_record_is_saved_with_the_commands_events(
    gated: tuple[GatedService, TestClient[Litestar]],
) -> None:
    service, c = gated
    table = Table.seat_four(c)
    seat = passer(table)
    before = service.recorder.max_notification_id() or 0
    table.act(seat, "pass", [], **{"Idempotency-Key": "atomic"})
    saved = service.recorder.select_notifications(before, 100, inclusive_of_start=False)
    topics = [n.topic.rsplit(":", 1)[1] for n in saved]
    assert topics == ["Passed", "IdempotencyRecord.Recorded"]
    record = service.mapper.to_domain_event(saved[-1])
    assert isinstance(record, IdempotencyRecord.Recorded) and record.status == 200


def test_a_key_in_flight_is_409(gated: tuple[GatedService, TestClient[Litestar]]) -> None:
    service, c = gated
    table = Table.seat_four(c)
    seat = passer(table)
    key = {"Idempotency-Key": "slow"}
    service.holding.clear()
    service.hold = threading.Event()
    try:
        with ThreadPoolExecutor(1) as pool:
            first = pool.submit(table.act, seat, "pass", [], **key)
            assert service.holding.wait(10)
            second = table.act(seat, "pass", [], **key)
            service.hold.set()
            done = first.result(10)
    finally:
        service.hold = None
    assert second.status_code == 409 and second.json()["code"] == "idempotency-in-flight"
    assert done.status_code == 200
    assert table.act(seat, "pass", [], **key).headers["idempotent-replayed"] == "true"


# -- two conflicting commands -------------------------------------------------------------------


def race(service: GatedService, *commands: Callable[[], Any]) -> list[Any]:
    """Run the commands at once; each reaches its save only when all have loaded."""
    service.barrier = threading.Barrier(len(commands))
    try:
        with ThreadPoolExecutor(len(commands)) as pool:
            return [f.result(20) for f in [pool.submit(cmd) for cmd in commands]]
    finally:
        service.barrier = None


def test_of_two_conflicting_commands_exactly_one_wins(
    gated: tuple[GatedService, TestClient[Litestar]],
) -> None:
    service, c = gated
    table = Table.seat_four(c)
    seats = [s for s in range(4) if "pass" in table.view(s)["legal"]["actions"]][:2]
    version = table.public()["version"]
    seen = {"If-Match": f'"{version}"'}  # each acts on what it saw: the loser's conflict
    answers = race(service, *[lambda s=s: table.act(s, "pass", [], **seen) for s in seats])
    statuses = sorted(a.status_code for a in answers)
    assert statuses == [200, 409]
    lost = next(a for a in answers if a.status_code == 409).json()
    assert lost["code"] == "version-conflict"
    assert table.public()["version"] == version + 1


def test_a_conflicting_retry_of_the_same_key_replays_the_winner(
    gated: tuple[GatedService, TestClient[Litestar]],
) -> None:
    """Across processes the store decides: the loser finds the winner's record."""
    service, c = gated
    with client(service) as c2:  # a second app (process) on the same store
        table = Table.seat_four(c)
        other = Table(c2, table.match_id, table.organiser, table.tokens)
        seat = passer(table)
        # the same request twice, on what it saw: the loser's conflict finds the winner's record
        key = {"Idempotency-Key": "twice", "If-Match": f'"{table.public()["version"]}"'}
        answers = race(
            service,
            lambda: table.act(seat, "pass", [], **key),
            lambda: other.act(seat, "pass", [], **key),
        )
        assert [a.status_code for a in answers] == [200, 200]
        assert answers[0].content == answers[1].content
        assert sum(a.headers.get("idempotent-replayed") == "true" for a in answers) == 1


# -- bots -----------------------------------------------------------------------------------------


def seat_bots(
    c: TestClient[Litestar], rounds: int, human: bool = False
) -> tuple[str, str, str | None]:
    """A match of ``rounds`` rounds with bots in every seat (seat 0 a person's if
    ``human``): its URL, the organiser token and the person's seat token."""
    created = c.post("/v1/matches", json={"rules": {"matchEnd": f"rounds:{rounds}"}}).json()
    url = f"/v1/matches/{created['matchId']}"
    organiser = auth(created["organiserToken"])
    person = None
    for seat in range(4):
        if human and seat == 0:
            claimed = c.post(f"{url}/seats/0", json={"name": "me"})
            assert claimed.status_code == 201
            person = claimed.json()["token"]
            continue
        kind = "heuristic" if seat % 2 else "random"
        r = c.post(f"{url}/seats/{seat}/bot", json={"kind": kind}, headers=organiser)
        assert r.status_code == 201 and r.json()["kind"] == kind
    return url, created["organiserToken"], person


def test_four_bots_play_a_match_on_their_own(shared: TestClient[Litestar]) -> None:
    c = shared
    url, _, _ = seat_bots(c, rounds=2)
    settle(c)
    summary = c.get(url).json()
    assert summary["finished"] and [r["status"] for r in summary["rounds"]] == ["scored"] * 2
    items = c.get(f"{url}/history?limit=1000").json()["items"]
    assert items[-1]["type"] == "MatchFinished"
    assert c.get(f"{url}/rounds/2/verify").json()["ok"]


def test_running_the_bots_wakes_the_driver_and_answers_at_once() -> None:
    with client() as c:
        c.app.state.bots.pause()  # the driver makes no step: the answer cannot wait for one
        url, organiser, _ = seat_bots(c, rounds=1)
        before = c.get(url).json()["version"]
        key = {"Idempotency-Key": "wake", **auth(organiser)}
        r = c.post(f"{url}/bots/run", headers=key)
        assert r.status_code == 202, r.text
        assert r.json() == {"version": before, "queued": True}
        again = c.post(f"{url}/bots/run", headers=key)
        assert again.headers["idempotent-replayed"] == "true" and again.json() == r.json()
        c.app.state.bots.resume()
        settle(c)
        assert c.get(url).json()["finished"]
        r = c.post(f"{url}/bots/run", headers=auth(organiser))
        assert r.status_code == 202 and not r.json()["queued"]


def test_bots_wait_for_a_person_and_play_after_each_command() -> None:
    """With three bots, the person always has a move (or the match is over): the bots
    move after each of the person's commands."""
    with client() as c:
        url, _, person = seat_bots(c, rounds=1, human=True)
        assert person is not None
        for _ in range(200):
            view = c.get(f"{url}/view", headers=auth(person)).json()
            if view["matchFinished"]:
                break
            choice = choose(view)
            assert choice is not None, view["expected"]
            action, cards = choice
            r = c.post(f"{url}/actions/{action}", json={"cards": cards}, headers=auth(person))
            if r.status_code == 409:  # only when a bot moved first (the paced deal goes on)
                assert c.get(url).json()["version"] != view["version"], r.text
                continue
            assert r.status_code == 200, r.text
            settle(c)
        summary = c.get(url).json()
        assert summary["finished"] and summary["seats"][0]["kind"] == "human"

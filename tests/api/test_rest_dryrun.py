"""A dry run of a command (``?dryRun=true``): the same answer a real command gives when it
is refused (the same problem+json), the cards it would play when legal — a throw (R22)
judged by its shape, tested against the other hands only when played — and nothing saved
(R34: the stored version and history are unchanged)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.api.rest import Json, Table, auth, client


def _to_lead() -> Iterator[Table]:
    """A table where someone is to lead (R22)."""
    with client() as c:
        t = Table.seat_four(c)
        for _ in range(200):
            if _leader(t) is not None:
                break
            assert t.step()
        yield t


@pytest.fixture(scope="module")
def table() -> Iterator[Table]:
    """Shared by the tests that save nothing (dry runs, refused commands)."""
    yield from _to_lead()


@pytest.fixture
def own_table() -> Iterator[Table]:
    """For a test that plays: the shared table stays at its lead, whatever the order."""
    yield from _to_lead()


def _leader(t: Table) -> int | None:
    expected = t.public()["expected"]
    if expected is None or expected["action"] != "play" or t.public()["trick"]:
        return None
    return int(expected["seat"])


def _stored(t: Table) -> tuple[int, int]:
    version = t.c.get(t.url).json()["version"]
    history = t.c.get(f"{t.url}/history?limit=1000").json()["items"]
    return version, len(history)


def _dry(t: Table, seat: int, action: str, cards: list[str]) -> Any:
    return t.c.post(
        f"{t.url}/actions/{action}?dryRun=true", json={"cards": cards}, headers=auth(t.tokens[seat])
    )


def _same_problem(a: Json, b: Json) -> None:
    for key in ("type", "title", "status", "detail", "code", "rule"):
        assert a.get(key) == b.get(key), key


def test_legal_leads_are_offered_as_data_and_pass_the_dry_run(table: Table) -> None:
    seat = _leader(table)
    assert seat is not None
    before = _stored(table)
    leads = table.view(seat)["legal"]["leads"]
    assert leads["singles"]  # R12: every kind held
    for cards in leads["singles"][:3] + leads["pairs"][:3] + leads["tractors"][:3]:
        r = _dry(table, seat, "play", cards)
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["kind"] == "dryRun"
        assert body["legal"] is True and body["played"] == cards and body["throw"] is None
    assert _stored(table) == before  # nothing saved


@pytest.mark.parametrize(
    ("who", "action", "cards"),
    [
        ("other", "play", None),  # R22: not this seat's turn
        ("leader", "play", ["AS", "KH"]),  # R22: two suit categories (or not held, R3)
        ("leader", "bury", None),  # R21: not burying now
        ("leader", "play", []),  # R22: a play needs cards
    ],
)
def test_a_refused_dry_run_is_the_real_commands_problem(
    table: Table, who: str, action: str, cards: list[str] | None
) -> None:
    leader = _leader(table)
    assert leader is not None
    seat = leader if who == "leader" else (leader + 1) % 4
    if cards is None:
        cards = table.view(seat)["hand"][:1] if action == "play" else []
    before = _stored(table)
    dry = _dry(table, seat, action, cards)
    assert dry.status_code in (409, 422), dry.text
    real = table.act(seat, action, cards)
    assert real.status_code == dry.status_code
    _same_problem(dry.json(), real.json())
    assert _stored(table) == before


def test_a_throw_is_judged_by_its_shape_and_tested_only_when_played(own_table: Table) -> None:
    """R22, R33: the dry run of a throw says it is a legal throw from this hand, that the
    other hands test it only when it is played, and what failing would cost — the same
    answer whether another seat could beat it or not; the real play then tests it."""
    table = own_table
    seat = _leader(table)
    assert seat is not None
    hand: list[str] = table.view(seat)["hand"]
    candidates = []
    for suit in "SHCD":
        cards = [c for c in hand if c.endswith(suit) and c not in ("SJ", "BJ")]
        if len(set(cards)) >= 2:
            candidates.append([cards[0], cards[-1]])
    assert candidates
    before = _stored(table)
    answers = []
    for cards in candidates:
        r = _dry(table, seat, "play", cards)
        assert r.status_code == 200, r.text
        answers.append(r.json())
        assert r.json()["played"] == cards
        assert r.json()["throw"] == {
            "cards": cards,
            "components": 2,
            "penalty": 0,  # the standard rules' throw_penalty_points (§10)
            "tested": "when-played",
        }
    assert _stored(table) == before  # the dry runs saved nothing
    cards = candidates[0]
    r = table.act(seat, "play", cards)  # the real play tests it against the other hands
    assert r.status_code == 200, r.text
    items = table.c.get(f"{table.url}/history?limit=1000").json()["items"]
    played = [i for i in items if i["type"] in ("CardPlayed", "ThrowFailed")][-1]
    assert played["data"]["seat"] == seat

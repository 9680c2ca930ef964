"""Table talk over HTTP (R37, docs/decisions.md D-talk): quick chat from seats and a
spectator, ordered with the play; free text only where the table's creator allowed it and
never at a tournament table in play; the name policy's characters, length and rate
limits; mutes per viewer; reports for the operator with their context."""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any

import pyarrow.parquet as pq
import pytest
from litestar import Litestar
from litestar.testing import TestClient

from domain.talk.phrases import PHRASES
from services.analysis.schema import TABLES
from tests.api.rest import Json, Table, auth, client
from tests.api.test_rest_players import new_player
from tests.conftest import FakeClock, FixedSeeds, open_backend

OPERATOR = "operator-secret-token-for-tests"


@pytest.fixture(
    scope="module",
    params=[pytest.param("sqlite"), pytest.param("postgres", marks=pytest.mark.postgres)],
)
def c(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[TestClient[Litestar]]:
    """One app per store for the module's tests (each works on tables of its own)."""
    with (
        open_backend(
            request.param,
            tmp_path_factory.mktemp("talk"),
            FakeClock(),
            FixedSeeds(),
            lambda: request.getfixturevalue("pg_url"),
        ) as store,
        client(store.service(), operator_token=OPERATOR) as c,
    ):
        yield c


def feed(c: TestClient[Litestar], headers: dict[str, str]) -> list[str]:
    """Every page of the events feed, as read (the public's, or the operator's)."""
    pages, after = [], 0
    while True:
        r = c.get("/v1/events", params={"after": after, "limit": 1000}, headers=headers)
        assert r.status_code == 200, r.text
        pages.append(r.text)
        body = r.json()
        if not body["items"]:
            return pages
        after = body["items"][-1]["position"]


def problem(r: Any, status: int, code: str) -> Json:
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith("application/problem+json")
    body: Json = r.json()
    assert body["code"] == code, body
    return body


def say(c: TestClient[Litestar], t: Table, token: str, **body: Any) -> Any:
    return c.post(f"{t.url}/talk", json=body, headers=auth(token))


def test_the_catalogue_is_served_in_both_languages(c: TestClient[Litestar]) -> None:
    body = c.get("/v1/talk/phrases").json()
    assert [p["id"] for p in body["phrases"]] == [p.id for p in PHRASES]
    assert all(p["en"] and p["zh"] for p in body["phrases"])
    assert "abuse" in body["reportReasons"]


def test_quick_chat_reaches_every_seat_and_a_spectator_in_order_with_the_play(
    c: TestClient[Litestar],
) -> None:
    t = Table.seat_four(c)
    watcher = new_player(c, "watcher")["token"]
    r = say(c, t, t.tokens[0], phrase="good-luck")
    assert r.status_code == 201, r.text
    first = r.json()["message"]
    assert (first["number"], first["seat"], first["phrase"], first["text"]) == (
        1,
        0,
        "good-luck",
        None,
    )
    at = first["atVersion"]
    assert t.step() and t.step()  # two moves
    r = say(c, t, watcher, phrase="hello")
    assert r.status_code == 201, r.text
    second = r.json()["message"]
    assert (second["seat"], second["spectator"]) == (None, 1)
    assert second["atVersion"] > at
    for token in [*t.tokens, watcher, None]:
        headers = auth(token) if token else {}
        page = c.get(f"{t.url}/talk", headers=headers).json()
        assert [m["phrase"] for m in page["messages"]] == ["good-luck", "hello"]
        assert page["last"] == 2
    # as of a version: only what was said by then
    upto = c.get(f"{t.url}/talk", params={"upto": at}).json()
    assert [m["number"] for m in upto["messages"]] == [1]
    state = c.get(f"{t.url}/state", params={"version": at}, headers=auth(t.tokens[1])).json()
    assert [m["number"] for m in state["talk"]] == [1]
    later = c.get(f"{t.url}/state", params={"version": second["atVersion"]}).json()
    assert [m["number"] for m in later["talk"]] == [1, 2]
    # an unknown phrase, both or neither, no token
    problem(say(c, t, t.tokens[1], phrase="trump-is-hearts"), 422, "invalid-input")
    problem(say(c, t, t.tokens[1]), 422, "invalid-input")
    problem(c.post(f"{t.url}/talk", json={"phrase": "hello"}), 401, "unauthorized")
    problem(say(c, t, t.organiser, phrase="hello"), 403, "forbidden")


def test_free_text_is_refused_by_default_and_allowed_where_the_creator_allowed_it(
    c: TestClient[Litestar],
) -> None:
    plain = Table.seat_four(c)
    body = problem(say(c, plain, plain.tokens[0], text="nice one"), 409, "free-text-off")
    assert body["rule"] == "R37"
    chatty = Table.seat_four(c, {"name": "chatty", "talk": {"freeText": True}})
    r = say(c, chatty, chatty.tokens[2], text="nice one 好的")
    assert r.status_code == 201, r.text
    assert r.json()["message"]["text"] == "nice one 好的"
    # spectators send quick chat only
    watcher = new_player(c, "watcher")["token"]
    problem(say(c, chatty, watcher, text="hi"), 409, "free-text-off")
    # invisible and spoofing characters, as the name policy refuses them
    for bad in ("hi\u200bthere", "\u202eereht ih", "pаypal"):  # ZWSP, RLO, Cyrillic а
        problem(say(c, chatty, chatty.tokens[2], text=bad), 422, "invalid-text")
    # the length bound (TALK_TEXT_MAX)
    problem(say(c, chatty, chatty.tokens[2], text="x" * 201), 422, "invalid-text")


def test_spectators_are_kept_out_where_the_table_keeps_its_talk_to_its_seats(
    c: TestClient[Litestar],
) -> None:
    t = Table.seat_four(c, {"name": "quiet", "talk": {"spectators": False}})
    assert say(c, t, t.tokens[0], phrase="hello").status_code == 201
    watcher = new_player(c, "watcher")["token"]
    problem(say(c, t, watcher, phrase="hello"), 403, "forbidden")
    problem(c.get(f"{t.url}/talk"), 403, "forbidden")
    assert c.get(f"{t.url}/state", params={"version": 4}).json()["talk"] == []
    assert len(c.get(f"{t.url}/talk", headers=auth(t.tokens[3])).json()["messages"]) == 1


def test_a_seat_says_at_most_its_rate_a_minute() -> None:
    with client(talk_per_minute=3) as c:
        t = Table.seat_four(c)
        for _ in range(3):
            assert say(c, t, t.tokens[1], phrase="oops").status_code == 201
        r = say(c, t, t.tokens[1], phrase="oops")
        problem(r, 429, "talk-rate-limited")
        assert int(r.headers["retry-after"]) >= 1
        assert say(c, t, t.tokens[2], phrase="oops").status_code == 201  # per seat


def test_a_mute_hides_a_seat_for_the_muter_only(c: TestClient[Litestar]) -> None:
    t = Table.seat_four(c)
    say(c, t, t.tokens[0], phrase="hurry-up")
    say(c, t, t.tokens[1], phrase="sorry")
    r = c.post(f"{t.url}/talk/mutes", json={"source": "seat-0"}, headers=auth(t.tokens[1]))
    assert (r.status_code, r.json()) == (200, {"muted": ["seat-0"]})

    def phrases(token: str) -> list[str]:
        page = c.get(f"{t.url}/talk", headers=auth(token)).json()
        return [m["phrase"] for m in page["messages"]]

    assert phrases(t.tokens[1]) == ["sorry"]
    assert phrases(t.tokens[2]) == ["hurry-up", "sorry"]
    assert phrases(t.tokens[0]) == ["hurry-up", "sorry"]
    problem(
        c.post(f"{t.url}/talk/mutes", json={"source": "spectator-9"}, headers=auth(t.tokens[1])),
        422,
        "invalid-input",
    )
    r = c.delete(f"{t.url}/talk/mutes/seat-0", headers=auth(t.tokens[1]))
    assert (r.status_code, r.json()) == (200, {"muted": []})
    assert phrases(t.tokens[1]) == ["hurry-up", "sorry"]


def test_a_report_reaches_the_operator_with_its_context(c: TestClient[Litestar]) -> None:
    t = Table.seat_four(c, {"name": "reported", "talk": {"freeText": True}})
    for seat, text in enumerate(["one", "two", "three", "four"]):
        assert say(c, t, t.tokens[seat], text=text).status_code == 201
    r = c.post(
        f"{t.url}/talk/reports", json={"number": 3, "reason": "abuse"}, headers=auth(t.tokens[1])
    )
    assert (r.status_code, r.json()) == (201, {"number": 3, "reports": 1})
    problem(
        c.post(f"{t.url}/talk/reports", json={"number": 3}, headers=auth(t.tokens[2])),
        409,
        "illegal-move",
    )  # one's own
    problem(
        c.post(f"{t.url}/talk/reports", json={"number": 9}, headers=auth(t.tokens[1])),
        409,
        "no-such-message",
    )
    problem(c.get(f"{t.url}/talk/reports", headers=auth(t.tokens[1])), 403, "forbidden")
    body = c.get(f"{t.url}/talk/reports", headers=auth(OPERATOR)).json()
    (report,) = body["reports"]
    assert (report["number"], report["reason"], report["reporter"]) == (3, "abuse", "seat:1")
    assert report["message"]["text"] == "three"
    assert [m["text"] for m in report["context"]] == ["one", "two", "four"]


def test_reports_are_bounded_per_reporter() -> None:
    with client(talk_reports_per_table=2) as c:
        t = Table.seat_four(c)
        for _ in range(4):
            assert say(c, t, t.tokens[0], phrase="oops").status_code == 201
        for n in (1, 2):
            r = c.post(f"{t.url}/talk/reports", json={"number": n}, headers=auth(t.tokens[1]))
            assert r.status_code == 201, r.text
        r = c.post(f"{t.url}/talk/reports", json={"number": 3}, headers=auth(t.tokens[1]))
        problem(r, 429, "reports-exceeded")


SECRET = "meet me at the usual place"
ERASED_WORDS = "my own words, mine to take back"


def test_talk_never_reaches_the_feed_the_dumps_or_the_records(c: TestClient[Litestar]) -> None:
    t = Table.seat_four(c, {"name": "private words", "talk": {"freeText": True}})
    assert say(c, t, t.tokens[0], text=SECRET).status_code == 201
    assert say(c, t, t.tokens[1], phrase="thanks").status_code == 201
    assert c.post(f"{t.url}/finish", headers=auth(t.organiser)).status_code == 200
    for headers in ({}, auth(OPERATOR)):
        exported = [c.get(f"/v1/exports/{table}.parquet", headers=headers) for table in TABLES] + [
            c.get(f"/v1/exports/{table}.csv", headers=headers) for table in TABLES
        ]
        for r in exported:
            assert r.status_code == 200, r.text
            assert SECRET.encode() not in r.content
        for r in exported[: len(TABLES)]:
            rows = pq.read_table(io.BytesIO(r.content)).to_pylist()
            assert all(SECRET not in str(row) for row in rows)
        bulk = c.get("/v1/records", headers=headers)
        assert bulk.status_code == 200 and SECRET not in bulk.text
    for page in feed(c, {}):
        assert SECRET not in page
        assert "MessageSent" not in page and "TalkOpened" not in page
    record = c.get(f"{t.url}/record")
    assert record.status_code == 200 and SECRET not in record.text
    history = c.get(f"{t.url}/history", headers=auth(t.tokens[0]))
    assert SECRET not in history.text


def test_an_erased_players_messages_are_gone_from_every_read(c: TestClient[Litestar]) -> None:
    made = c.post("/v1/matches", json={"name": "erasure", "talk": {"freeText": True}}).json()
    url, organiser = f"/v1/matches/{made['matchId']}", made["organiserToken"]
    mei = new_player(c, "Mei")["token"]
    r = c.post(
        "/v1/players/me/seats", json={"matchId": made["matchId"], "seat": 0}, headers=auth(mei)
    )
    assert r.status_code == 201, r.text
    guests = [c.post(f"{url}/seats/{n}", json={"name": f"g{n}"}).json()["token"] for n in (1, 2, 3)]
    r = c.post(f"{url}/talk", json={"text": ERASED_WORDS}, headers=auth(mei))
    assert r.status_code == 201, r.text
    at = r.json()["message"]["atVersion"]
    c.post(f"{url}/talk", json={"text": "ok see you"}, headers=auth(guests[0]))
    r = c.post(
        f"{url}/talk/reports", json={"number": 1, "reason": "other"}, headers=auth(guests[0])
    )
    assert r.status_code == 201, r.text
    assert ERASED_WORDS in c.get(f"{url}/talk", headers=auth(guests[1])).text  # before
    assert c.delete("/v1/players/me", headers=auth(mei)).status_code == 204

    def gone(message: Json) -> None:
        assert (message["number"], message["text"], message["erased"]) == (1, None, True)

    page = c.get(f"{url}/talk", headers=auth(guests[1])).json()
    gone(page["messages"][0])
    assert page["messages"][1]["text"] == "ok see you"  # a guest's words stay
    state = c.get(f"{url}/state", params={"version": at}, headers=auth(guests[2])).json()
    gone(state["talk"][0])
    reports = c.get(f"{url}/talk/reports", headers=auth(OPERATOR)).json()["reports"]
    gone(reports[0]["message"])
    assert all(ERASED_WORDS not in page for page in feed(c, auth(OPERATOR)))
    for r in (c.get(f"{url}/talk"), c.get(f"{url}/state", params={"version": at})):
        assert ERASED_WORDS not in r.text
    assert c.post(f"{url}/finish", headers=auth(organiser)).status_code == 200
    for table in TABLES:
        dump = c.get(f"/v1/exports/{table}.csv", headers=auth(OPERATOR))
        assert ERASED_WORDS.encode() not in dump.content

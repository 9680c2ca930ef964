"""A private table cannot be found (docs/decisions.md D-hidden, D-table-life).

Nothing public hands out a private table's id or its seats' names — not the public event
feed, the match list, the columnar exports or the bulk records — and a stranger who has
the id anyway (a guessed link, a leaked one) gets 404 from every read of it and from a
seat claim, in the very words of a match that does not exist: never a 401 or 403, which
would confirm that it does. The people of the table — its organiser (its creator), its
seats' tokens, the players seated there — read it as before.

Three private tables: one being played (a player and a guest seated by invite code, two
bots), one of bots played to its end, and one of bots created public and made private by an
invite code (then played to its end); a public table of bots, finished, is the control
that the public reads do show what they show.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from uuid import uuid4

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from tests.api.rest import Json, auth, client, settle

BOTS_ONLY = {"rules": {"matchEnd": "rounds:1"}}


@dataclass(frozen=True)
class Tables:
    playing: str
    """Private, in play: Mei (player) at seat 0, Lan (guest) at seat 2, bots at 1 and 3."""
    finished: str
    """Private from its creation, four bots, finished."""
    made_private: str
    """Created public, made private by an invite code, four bots, finished."""
    control: str
    """Public, four bots, finished."""
    tokens: dict[str, str]
    """Who reads: the members of ``playing`` and the strangers."""

    @property
    def private(self) -> tuple[str, str, str]:
        return (self.playing, self.finished, self.made_private)


@pytest.fixture(scope="module")
def c() -> Iterator[TestClient[Litestar]]:
    with client(sse_lifetime_s=1) as test_client:  # a stream read ends after a moment
        yield test_client


def ok(r: Any, status: int = 200) -> Any:
    assert r.status_code == status, r.text
    return r.json()


def player(c: TestClient[Litestar], name: str) -> str:
    token: str = ok(c.post("/v1/players", json={"displayName": name}), 201)["token"]
    return token


def bots(c: TestClient[Litestar], invite: bool = False, **body: Any) -> tuple[str, str]:
    """A table of four bots (one deal): its id and organiser token. ``invite``: an invite
    code is made for it first (which makes it private, ``TableMadePrivate``)."""
    made = ok(c.post("/v1/matches", json={**BOTS_ONLY, **body}), 201)
    if invite:
        r = c.post(f"/v1/matches/{made['matchId']}/invites", headers=auth(made["organiserToken"]))
        ok(r, 201)
    for seat in range(4):
        r = c.post(
            f"/v1/matches/{made['matchId']}/seats/{seat}/bot",
            json={"kind": "random"},
            headers=auth(made["organiserToken"]),
        )
        ok(r, 201)
    return made["matchId"], made["organiserToken"]


@pytest.fixture(scope="module")
def tables(c: TestClient[Litestar]) -> Tables:
    made = ok(c.post("/v1/matches", json={"name": "family", "visibility": "private"}), 201)
    playing, organiser = made["matchId"], made["organiserToken"]
    code = ok(c.post(f"/v1/matches/{playing}/invites", headers=auth(organiser)), 201)["code"]
    mei = player(c, "Mei")
    ok(c.post(f"/v1/invites/{code}", json={"seat": 0}, headers=auth(mei)), 201)
    lan = ok(c.post(f"/v1/invites/{code}", json={"seat": 2, "name": "Lan"}), 201)["token"]
    for seat in (1, 3):
        r = c.post(
            f"/v1/matches/{playing}/seats/{seat}/bot",
            json={"kind": "random"},
            headers=auth(organiser),
        )
        ok(r, 201)
    finished, finished_organiser = bots(c, visibility="private", name="secret bots")
    made_private, later = bots(c, invite=True, name="made private later")
    control, control_organiser = bots(c, name="control")
    settle(c)
    for mid, token in ((finished, finished_organiser), (made_private, later), (control, None)):
        summary = ok(c.get(f"/v1/matches/{mid}", headers=auth(token) if token else {}))
        assert summary["finished"], summary
    return Tables(
        playing,
        finished,
        made_private,
        control,
        {
            "organiser": organiser,
            "guest's seat": lan,
            "seated player": mei,
            "stranger player": player(c, "Nosy"),
            "another match's organiser": control_organiser,
        },
    )


READS = (
    "",
    "/rounds",
    "/public",
    "/history",
    "/state?version=1",
    "/rounds/1",
    "/view",
    "/stream",
    "/record",
    "/rounds/1/record",
    "/rounds/1/verify",
)
MEMBERS = ("organiser", "guest's seat", "seated player")
STRANGERS = ("anonymous", "stranger player", "another match's organiser")

NEEDS_TOKEN = frozenset({"/view"})
"""Reads that take a seat's credential: without one, 401 for any match id, one that exists
or not — it tells nothing either (and the contract says the header is required)."""


def _headers(t: Tables, who: str) -> dict[str, str]:
    return {} if who == "anonymous" else auth(t.tokens[who])


def _answer(c: TestClient[Litestar], url: str, headers: dict[str, str]) -> tuple[int, str, str]:
    """Status, problem code and detail (the match id in it made neutral)."""
    with c.stream("GET", url, headers=headers) as r:
        status = r.status_code
        text = r.read().decode() if status >= 400 else ""
    if status < 400:
        return status, "", ""
    body = json.loads(text)
    return status, body["code"], body["detail"]


def _neutral(answer: tuple[int, str, str], match_id: str) -> tuple[int, str, str]:
    status, code, detail = answer
    return status, code, detail.replace(match_id, "<id>")


@pytest.mark.parametrize("who", STRANGERS)
@pytest.mark.parametrize("read", READS)
@pytest.mark.parametrize("which", ["playing", "finished", "made_private"])
def test_a_stranger_with_the_id_reads_a_private_table_as_no_match(
    c: TestClient[Litestar], tables: Tables, which: str, read: str, who: str
) -> None:
    """D-hidden: the same answer as a match that does not exist — 404, not a 401 or 403;
    only a read that needs a token, asked with none, is 401 for both."""
    match_id = getattr(tables, which)
    nowhere = str(uuid4())
    headers = _headers(tables, who)
    got = _neutral(_answer(c, f"/v1/matches/{match_id}{read}", headers), match_id)
    none = _neutral(_answer(c, f"/v1/matches/{nowhere}{read}", headers), nowhere)
    missing_token = who == "anonymous" and read in NEEDS_TOKEN
    assert got[0] == (401 if missing_token else 404) and got == none, (got, none)


@pytest.mark.parametrize("who", MEMBERS)
@pytest.mark.parametrize("read", READS)
def test_the_people_of_a_private_table_read_it_as_before(
    c: TestClient[Litestar], tables: Tables, read: str, who: str
) -> None:
    """The organiser (its creator), the seats' tokens and the seated players read it: each
    read answers as for a public table (a 403 or 409 of its own where one applies)."""
    status, code, _ = _answer(c, f"/v1/matches/{tables.playing}{read}", _headers(tables, who))
    assert status != 404, (read, who, code)
    if read in ("", "/rounds", "/public", "/history", "/state?version=1", "/rounds/1", "/stream"):
        assert status == 200, (read, who, code)


@pytest.mark.parametrize("who", STRANGERS[:2])
def test_a_strangers_seat_claim_is_no_match_either(
    c: TestClient[Litestar], tables: Tables, who: str
) -> None:
    """D-hidden: claiming a private table's free seat without a code is 404, as for no match;
    by the player route too."""
    headers = _headers(tables, who)
    nowhere = str(uuid4())
    got = _answer_post(c, f"/v1/matches/{tables.playing}/seats/1", {"name": "x"}, headers)
    none = _answer_post(c, f"/v1/matches/{nowhere}/seats/1", {"name": "x"}, headers)
    assert got[0] == 404 and got[:2] == none[:2], (got, none)
    if who == "stranger player":
        body = {"matchId": tables.playing, "seat": 1}
        r = c.post("/v1/players/me/seats", json=body, headers=headers)
        assert (r.status_code, r.json()["code"]) == (404, "not-found"), r.text


def _answer_post(
    c: TestClient[Litestar], url: str, body: Json, headers: dict[str, str]
) -> tuple[int, str, str]:
    r = c.post(url, json=body, headers=headers)
    return r.status_code, r.json().get("code", ""), r.json().get("detail", "")


def _feed(c: TestClient[Litestar]) -> list[Json]:
    items: list[Json] = []
    after = 0
    while True:
        page = ok(c.get(f"/v1/events?after={after}&limit=1000"))
        items += page["items"]
        if not page["more"]:
            return items
        after = page["next"]


def _export(c: TestClient[Litestar], table: str) -> str:
    with c.stream("GET", f"/v1/exports/{table}.csv") as r:
        assert r.status_code == 200
        return r.read().decode()


PUBLIC: dict[str, Any] = {
    "the public feed": lambda c: json.dumps(_feed(c)),
    "the match list": lambda c: c.get("/v1/matches?limit=100").text,
    "exports/matches.csv": lambda c: _export(c, "matches"),
    "exports/results.csv": lambda c: _export(c, "results"),
    "the bulk records": lambda c: c.get("/v1/records").text,
}


@pytest.mark.parametrize("where", list(PUBLIC))
def test_nothing_public_hands_out_a_private_tables_id_or_names(
    c: TestClient[Litestar], tables: Tables, where: str
) -> None:
    """D-hidden: no private table's id, name or seat names; the public table is there."""
    text = PUBLIC[where](c)
    for match_id in tables.private:
        assert match_id not in text, f"{where} hands out {match_id}"
    for secret in ("secret bots", "made private later", "Mei", "Lan"):
        assert secret not in text, f"{where} names {secret!r}"
    shown = tables.control in text or '"control"' in text  # its id, or its record's name
    assert shown, f"{where} left the public table out too"


NEEDS_A_TOKEN = [
    ("GET", "/v1/matches/{id}/view", None),
    ("POST", "/v1/matches/{id}/talk", {"phrase": "hello"}),
    ("POST", "/v1/matches/{id}/talk/mutes", {"source": "seat-1"}),
    ("DELETE", "/v1/matches/{id}/talk/mutes/seat-1", None),
    ("POST", "/v1/matches/{id}/talk/reports", {"number": 1, "reason": "abuse"}),
]
"""Routes that need a seat's or player's token and look at the match only after it."""


@pytest.mark.parametrize(("method", "path", "body"), NEEDS_A_TOKEN)
@pytest.mark.parametrize("which", ["playing", "finished", "none"])
def test_a_token_not_of_the_service_is_401_for_any_id_a_private_tables_or_none(
    c: TestClient[Litestar], tables: Tables, method: str, path: str, body: Any, which: str
) -> None:
    """Where a request needs a token, one not of the shape the service mints names nothing:
    401 for every id, a private table's as for no match's, so it tells nothing of either
    (a stranger's well-formed token is the 404 above)."""
    match_id = {"playing": tables.playing, "finished": tables.finished, "none": str(uuid4())}
    url = path.format(id=match_id[which])
    for token in ("garbage", "s.not-hex.x", "Zm9vOmJhcg=="):
        headers = {**auth(token), "Idempotency-Key": uuid4().hex}
        r = c.request(method, url, json=body, headers=headers)
        assert r.status_code == 401, (token, r.text)
        assert r.json()["type"].endswith("/unauthorized"), r.text

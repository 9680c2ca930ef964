"""A generated population of matches of every kind, made through the served app only
(docs/decisions.md D-integrity): what one feature writes, every other feature must read.

Built once per test session on an embedded SQLite file (:func:`build`), so the integrity
tests can read it from a fresh app on the same file too (a restart). The kinds:

* ``plain``: bots-only matches, one round and two rounds; a match ended by its organiser
  in the middle of a round (R32); a match with two people and two bots in play;
* ``names``: seats named as a hostile client would — the sealed-value look-alikes of the
  ``enc:v1:`` family, the longest name, mixed scripts, a name that is not NFC;
* ``quick``: quick play — four players' lobby tickets make a match (and one still waits);
* ``invite``: a private table filled through its invite code, by players and guests;
* ``erased``: a player seated and playing, then erased (``DELETE /v1/players/me``);
* ``tournament``: the tables of a round-robin (three teams: a bye each round) and a Swiss
  tournament of two-deal matches, every round played by bots;
* ``imported``: records imported with ``POST /v1/records?store=true`` (one renamed to an
  ``enc:v1:`` look-alike).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
from litestar import Litestar
from litestar.testing import TestClient

from infra.settings import Settings
from tests.api.rest import choose
from tests.apps import make_app, sqlite_settings

OPERATOR = "o" * 40
"""The population's operator token (reads every field of the feed)."""
HOSTILE_NAMES = (
    "enc:v1:zz:QUFBQQ==",
    "enc:v1:00000000000000000000000000000000:QUFBQUFBQUFBQUFBQUFBQUFBQUE=",
    "enc:v1:",
    "Ω" * 100,
    "李小龙 Bruce 🐉",
    "Cafe\u0301",
)
"""Seat names a client may write (each is plain text, shown as written)."""
JSON = {"content-type": "application/json"}


def settings(path: Path) -> Settings:
    return sqlite_settings(
        path,
        operator_token=OPERATOR,
        sse_lifetime_s=1,
        sse_heartbeat_s=1,
        feed_poll_ms=50,
    )


def auth(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


@dataclass
class Population:
    """What was made, by kind, and the credentials that read it."""

    path: str
    matches: dict[str, list[str]] = field(default_factory=dict)
    """Kind → match ids."""
    tournaments: dict[str, str] = field(default_factory=dict)
    """Format → tournament id."""
    organisers: dict[str, str] = field(default_factory=dict)
    """Match or tournament id → its organiser token."""
    seats: dict[str, str] = field(default_factory=dict)
    """Match id → a seat token of it."""
    players: list[str] = field(default_factory=list)
    """Player tokens of players not erased."""
    tickets: list[tuple[str, str]] = field(default_factory=list)
    """(player token, ticket id) of lobby tickets."""
    invites: list[str] = field(default_factory=list)
    """Invite codes."""

    def all_matches(self) -> list[str]:
        return [m for ids in self.matches.values() for m in ids]

    def app(self) -> Litestar:
        """A fresh app on the population's file (a restart)."""
        return make_app(settings=settings(Path(self.path)))

    def save(self, to: Path) -> None:
        to.write_bytes(msgspec.json.encode(self))

    @classmethod
    def load(cls, path: Path) -> Population:
        return msgspec.json.decode(path.read_bytes(), type=cls)


def _ok(r: Any, status: int = 201) -> dict[str, Any]:
    assert r.status_code == status, f"{r.request.method} {r.request.url}: {r.text}"
    body: dict[str, Any] = r.json() if r.content else {}
    return body


def _settle(c: TestClient[Litestar]) -> None:
    assert c.app.state.bots.idle(120), "the bot driver did not go idle"


class _Maker:
    def __init__(self, c: TestClient[Litestar], pop: Population) -> None:
        self.c = c
        self.pop = pop

    def add(self, kind: str, match_id: str) -> str:
        self.pop.matches.setdefault(kind, []).append(match_id)
        return match_id

    def match(self, kind: str, **body: Any) -> tuple[str, str]:
        made = _ok(self.c.post("/v1/matches", json={"name": kind, **body}))
        self.pop.organisers[made["matchId"]] = made["organiserToken"]
        return self.add(kind, made["matchId"]), made["organiserToken"]

    def bot(self, match_id: str, seat: int, kind: str = "random") -> None:
        url = f"/v1/matches/{match_id}/seats/{seat}/bot"
        _ok(self.c.post(url, json={"kind": kind}, headers=auth(self.pop.organisers[match_id])))

    def guest(self, match_id: str, seat: int, name: str) -> str:
        made = _ok(self.c.post(f"/v1/matches/{match_id}/seats/{seat}", json={"name": name}))
        self.pop.seats.setdefault(match_id, made["token"])
        return str(made["token"])

    def player(self, name: str) -> tuple[str, str]:
        made = _ok(self.c.post("/v1/players", json={"displayName": name}))
        return made["token"], made["playerId"]

    def finish(self, match_id: str) -> None:
        url = f"/v1/matches/{match_id}/finish"
        _ok(self.c.post(url, headers=auth(self.pop.organisers[match_id])), 200)

    def moves(self, match_id: str, tokens: list[str], n: int) -> None:
        """Up to ``n`` moves by the people of ``tokens`` (what their views offer first)."""
        for _ in range(n):
            _settle(self.c)
            moved = False
            for token in tokens:
                view = self.c.get(f"/v1/matches/{match_id}/view", headers=auth(token)).json()
                move = choose(view) if view.get("legal") else None
                if move is None:
                    continue
                action, cards = move
                r = self.c.post(
                    f"/v1/matches/{match_id}/actions/{action}",
                    json={"cards": cards},
                    headers=auth(token),
                )
                moved = moved or r.status_code == 200
            if not moved:
                return


def build(path: Path) -> Population:
    """Make the population on a new SQLite file at ``path``."""
    pop = Population(path=str(path))
    with TestClient(make_app(settings=settings(path))) as c:
        m = _Maker(c, pop)
        # plain: bots-only matches of one and two rounds
        for match_end in ("rounds:1", "rounds:1", "rounds:2"):
            match_id, _ = m.match("plain", rules={"matchEnd": match_end})
            for seat in range(4):
                m.bot(match_id, seat)
        # plain: two people and two bots, some moves, then one ended by its organiser
        for finish in (False, True):
            match_id, _ = m.match("plain", preset="tuolaji")
            tokens = [m.guest(match_id, 0, "Ann"), m.guest(match_id, 1, "Bo")]
            m.bot(match_id, 2)
            m.bot(match_id, 3)
            m.moves(match_id, tokens, 6)
            if finish:
                m.finish(match_id)
        # names: hostile seat names, a full table of them ended by its organiser
        for start in (0, 3):
            match_id, _ = m.match("names")
            for seat in range(4):
                m.guest(match_id, seat, HOSTILE_NAMES[(start + seat) % len(HOSTILE_NAMES)])
            if start:
                m.finish(match_id)
        # quick play: four tickets make a match; a fifth waits
        quick = [m.player(f"quick {i}") for i in range(5)]
        for token, _ in quick:
            made = _ok(c.post("/v1/lobby/tickets", headers=auth(token)))
            pop.tickets.append((token, made["ticketId"]))
            pop.players.append(token)
        matched = c.get(f"/v1/lobby/tickets/{pop.tickets[0][1]}", headers=auth(quick[0][0]))
        m.add("quick", _ok(matched, 200)["matchId"])
        # invite: a private table of two players and two guests
        match_id, organiser = m.match("invite")
        code = _ok(c.post(f"/v1/matches/{match_id}/invites", headers=auth(organiser)))["code"]
        pop.invites.append(code)
        for i in range(2):
            token, _ = m.player(f"friend {i}")
            pop.players.append(token)
            _ok(c.post(f"/v1/invites/{code}", headers=auth(token)))
        for i in range(2):
            _ok(c.post(f"/v1/invites/{code}", json={"name": f"guest {i}"}))
        # erased: a player seated, some moves, then erased
        match_id, _ = m.match("erased")
        token, _ = m.player("Zyxwvut Qwertyuiop")
        body = {"matchId": match_id, "seat": 0}
        taken = _ok(c.post("/v1/players/me/seats", json=body, headers=auth(token)))
        guests = [m.guest(match_id, s, f"g{s}") for s in (1, 2, 3)]
        m.moves(match_id, [taken["token"], *guests], 8)
        _ok(c.delete("/v1/players/me", headers=auth(token)), 204)
        # tournaments: round robin and Swiss, two deals a table, every round by bots
        # (three teams in the round robin: a bye each round; two rounds of Swiss)
        for fmt, n, extra in (("round_robin", 3, {}), ("swiss", 4, {"swissRounds": 2})):
            teams = [
                {
                    "name": f"{fmt} T{i}",
                    "players": [
                        {"name": f"a{i}", "kind": "random"},
                        {"name": f"b{i}", "kind": "random"},
                    ],
                }
                for i in range(n)
            ]
            made = _ok(
                c.post(
                    "/v1/tournaments",
                    json={
                        "name": f"{fmt} cup",
                        "teams": teams,
                        "format": fmt,
                        "matchLength": 2,
                        **extra,
                    },
                )
            )
            tid, organiser = made["tournamentId"], made["organiserToken"]
            pop.tournaments[fmt] = tid
            pop.organisers[tid] = organiser
            url = f"/v1/tournaments/{tid}"
            while True:
                r = c.post(f"{url}/rounds", headers=auth(organiser))
                if r.status_code == 409:
                    break
                scheduled = _ok(r)["round"]
                for table in scheduled["tables"]:
                    m.add("tournament", table["matchId"])
                _settle(c)
                run = _ok(
                    c.post(f"{url}/rounds/{scheduled['number']}/bots/run", headers=auth(organiser)),
                    202,
                )
                assert run["completed"], run
        _settle(c)
        # imported: two records of finished matches, one renamed to a look-alike
        records = [line for line in c.get("/v1/records").text.splitlines() if line]
        for i, line in enumerate(records[:2]):
            record = json.loads(line)
            if i:
                record["seats"][0]["name"] = HOSTILE_NAMES[0]
            r = c.post("/v1/records?store=true", content=json.dumps(record), headers=JSON)
            m.add("imported", _ok(r, 201)["matchId"])
        _settle(c)
    return pop

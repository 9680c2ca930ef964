"""Every write route on PostgreSQL (docs/decisions.md D-bus): one request is one transaction
— its events and its Idempotency-Key's record in one insert of the library's recorder — and
a replay of its key after the state moved answers exactly what the first call answered.

Each write route of the app has a scenario here (a test fails on a route without one): it
prepares what the route acts on, makes the call under a key, moves the state of what it
acted on with another command, then sends the same key and body again. The replay answers
the same status, ``Location`` and body, byte for byte but for the token the first call
minted (withheld: ``tokenWithheld``, docs/security.md), and stores nothing.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from litestar import Litestar
from litestar.routes import HTTPRoute
from litestar.testing import TestClient

from domain.rules.ruleset import RuleSet
from services.game import GameService
from services.records.export import export_match
from services.records.format import encode
from tests.api.rest import Json, Table, auth
from tests.apps import make_app
from tests.commands import create_match, run_bots, take_seat
from tests.conftest import Backend, FakeClock, FixedSeeds, open_backend

pytestmark = pytest.mark.postgres

OPERATOR = "operator-token-0123456789abcdef"
SECRETS = frozenset(
    {"token", "organiserToken", "teamToken", "seatTokens", "tokens", "tokenWithheld"}
)
READS = frozenset({"GET", "HEAD", "OPTIONS"})


@dataclass
class Call:
    """A request: what a scenario sends (twice, under one key)."""

    method: str
    path: str
    json: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    content: bytes | None = None


@dataclass
class World:
    """The app on a PostgreSQL store, its client, and what the scenarios made."""

    c: TestClient[Litestar]
    service: GameService
    inserts: list[list[str]] = field(default_factory=list)
    """The topics of every insert of the store's recorder, one list per transaction."""

    def table(self, body: Json | None = None) -> Table:
        return Table.seat_four(self.c, body)

    def match(self, **body: Any) -> Json:
        r = self.c.post("/v1/matches", json=body)
        assert r.status_code == 201, r.text
        made: Json = r.json()
        return made

    def player(self, name: str = "Mei") -> str:
        r = self.c.post("/v1/players", json={"displayName": name})
        assert r.status_code == 201, r.text
        token: str = r.json()["token"]
        return token

    def seated_player(self) -> tuple[str, str, list[str]]:
        """A player holding seat 0 of a match of three more people (round 1 dealt): the
        player's token, the match, the others' seat tokens."""
        made = self.match(name="with a player")
        token = self.player()
        body = {"matchId": made["matchId"], "seat": 0}
        r = self.c.post("/v1/players/me/seats", json=body, headers=auth(token))
        assert r.status_code == 201, r.text
        others = [
            self.ok(
                "POST", f"/v1/matches/{made['matchId']}/seats/{seat}", json={"name": f"p{seat}"}
            )
            for seat in (1, 2, 3)
        ]
        return token, made["matchId"], [o["token"] for o in others]

    def finished(self) -> Table:
        t = self.table()
        r = self.c.post(f"{t.url}/finish", headers=auth(t.organiser))
        assert r.status_code == 200, r.text
        return t

    def subscription(self, name: str) -> str:
        r = self.c.post("/v1/events/subscriptions", json={"name": name}, headers=auth(OPERATOR))
        assert r.status_code == 201, r.text
        return f"/v1/events/subscriptions/{name}"

    def cup(self, **body: Any) -> tuple[str, dict[str, str]]:
        """A Swiss tournament of four teams of people (two rounds): its URL and the
        organiser's Authorization header."""
        teams = [
            {"name": f"T{i}", "players": [{"name": f"a{i}"}, {"name": f"b{i}"}]} for i in range(4)
        ]
        base = {"name": "cup", "teams": teams, "format": "swiss", "swissRounds": 2}
        made = self.ok("POST", "/v1/tournaments", json={**base, "matchLength": 1, **body})
        return f"/v1/tournaments/{made['tournamentId']}", auth(made["organiserToken"])

    def in_play(self, **body: Any) -> tuple[str, dict[str, str]]:
        """:meth:`cup` with round 1 scheduled (people's tables: nobody plays them)."""
        url, org = self.cup(**body)
        self.ok("POST", f"{url}/rounds", headers=org)
        return url, org

    def adjust(self, url: str, org: dict[str, str]) -> Move:
        """The move of a tournament scenario: a score adjustment (another command)."""
        body = {"team": 0, "matchPoints": 1, "reason": "fair play", "by": "TD"}
        return lambda _: self.ok("POST", f"{url}/adjustments", json=body, headers=org)

    def ok(self, method: str, path: str, **kw: Any) -> Json:
        r = self.c.request(method, path, **kw)
        assert r.status_code < 300, r.text
        return r.json() if r.content else {}


Move = Callable[[Json], object]
"""The command that moves the state after the first call (told its answer)."""
Prepare = Callable[[World], tuple[Call, Move]]
"""A scenario: the call, and what moves the state after it."""


def _new_match(w: World) -> tuple[Call, Move]:
    call = Call("POST", "/v1/matches", {"name": "mine"})

    def move(first: Json) -> object:
        return w.ok("POST", f"/v1/matches/{first['matchId']}/seats/0", json={"name": "A"})

    return call, move


def _claim_seat(w: World) -> tuple[Call, Move]:
    made = w.match()
    url = f"/v1/matches/{made['matchId']}"
    call = Call("POST", f"{url}/seats/0", {"name": "Ann"})
    return call, lambda _: w.ok("POST", f"{url}/seats/1", json={"name": "Bo"})


def _seat_bot(w: World) -> tuple[Call, Move]:
    made = w.match()
    url, organiser = f"/v1/matches/{made['matchId']}", auth(made["organiserToken"])
    call = Call("POST", f"{url}/seats/1/bot", {"kind": "random"}, organiser)
    return call, lambda _: w.ok("POST", f"{url}/seats/2", json={"name": "Cy"})


def _wake_bots(w: World) -> tuple[Call, Move]:
    made = w.match()
    url, organiser = f"/v1/matches/{made['matchId']}", auth(made["organiserToken"])
    call = Call("POST", f"{url}/bots/run", None, organiser)
    return call, lambda _: w.ok("POST", f"{url}/seats/2", json={"name": "Cy"})


def _finish(w: World) -> tuple[Call, Move]:
    t = w.table()
    call = Call("POST", f"{t.url}/finish", {"reason": "closing"}, auth(t.organiser))
    return call, lambda _: w.ok("POST", f"{t.url}/rematch", headers=auth(t.tokens[0]))


def _resign(w: World) -> tuple[Call, Move]:
    t = w.table()
    call = Call("POST", f"{t.url}/resign", None, auth(t.tokens[0]))
    return call, lambda _: w.ok("POST", f"{t.url}/resign", headers=auth(t.tokens[2]))


def _rematch(w: World) -> tuple[Call, Move]:
    t = w.finished()
    call = Call("POST", f"{t.url}/rematch", None, auth(t.tokens[0]))
    return call, lambda _: w.ok("POST", f"{t.url}/rematch", headers=auth(t.tokens[1]))


def _act(w: World) -> tuple[Call, Move]:
    t = w.table()
    seat = next(s for s in range(4) if "pass" in t.view(s)["legal"]["actions"])
    call = Call("POST", f"{t.url}/actions/pass", {"cards": []}, auth(t.tokens[seat]))

    return call, lambda _: t.step()


def _timeout(w: World) -> tuple[Call, Move]:
    timers = {"declareMs": 5_000, "buryMs": 6_000, "playMs": 20_000}
    t = w.table({"name": "timed", "timers": timers})
    while t.public()["phase"] != "playing":
        assert t.step()
    clock = w.service.clock
    assert isinstance(clock, FakeClock)
    clock.advance(seconds=21)
    call = Call("POST", f"{t.url}/timeout", None, auth(t.organiser))
    return call, lambda _: t.step()


def _invite(w: World) -> tuple[Call, Move]:
    made = w.match()
    url, organiser = f"/v1/matches/{made['matchId']}", auth(made["organiserToken"])
    call = Call("POST", f"{url}/invites", {"ttlSeconds": 3600}, organiser)
    return call, lambda _: w.ok("POST", f"{url}/seats/0", json={"name": "A"}, headers=organiser)


def _join(w: World) -> tuple[Call, Move]:
    made = w.match()
    url, organiser = f"/v1/matches/{made['matchId']}", auth(made["organiserToken"])
    code = w.ok("POST", f"{url}/invites", headers=organiser)["code"]
    call = Call("POST", f"/v1/invites/{code}", {"name": "Dee"})
    return call, lambda _: w.ok("POST", f"/v1/invites/{code}", json={"name": "Eve"})


def _new_player(w: World) -> tuple[Call, Move]:
    call = Call("POST", "/v1/players", {"displayName": "Mei", "label": "phone"})

    def move(first: Json) -> object:
        body = {"displayName": "Mei Li"}
        return w.ok("PATCH", "/v1/players/me", json=body, headers=auth(first["token"]))

    return call, move


def _edit(w: World) -> tuple[Call, Move]:
    token = w.player()
    call = Call("PATCH", "/v1/players/me", {"displayName": "Mei Li"}, auth(token))
    return call, lambda _: w.ok(
        "PATCH", "/v1/players/me", json={"locale": "zh-CN"}, headers=auth(token)
    )


def _refresh(w: World) -> tuple[Call, Move]:
    token = w.player()
    call = Call("POST", "/v1/players/me/sessions/current/refresh", None, auth(token))
    return call, lambda _: w.ok(
        "PATCH", "/v1/players/me", json={"displayName": "M"}, headers=auth(token)
    )


def _erase(w: World) -> tuple[Call, Move]:
    token = w.player()
    return Call("DELETE", "/v1/players/me", None, auth(token)), lambda _: w.player("After")


def _open_session(w: World) -> tuple[Call, Move]:
    token = w.player()
    call = Call("POST", "/v1/players/me/sessions", {"label": "tablet"}, auth(token))
    return call, lambda _: w.ok(
        "PATCH", "/v1/players/me", json={"displayName": "M"}, headers=auth(token)
    )


def _rotate(w: World) -> tuple[Call, Move]:
    token = w.player()
    other = w.ok("POST", "/v1/players/me/sessions", json={"label": "tablet"}, headers=auth(token))
    call = Call("POST", "/v1/players/me/token", None, auth(other["token"]))
    return call, lambda _: w.ok(
        "PATCH", "/v1/players/me", json={"displayName": "M"}, headers=auth(token)
    )


def _end_session(w: World) -> tuple[Call, Move]:
    token = w.player()
    other = w.ok("POST", "/v1/players/me/sessions", json={"label": "tablet"}, headers=auth(token))
    call = Call("DELETE", f"/v1/players/me/sessions/{other['sessionId']}", None, auth(token))
    return call, lambda _: w.ok(
        "PATCH", "/v1/players/me", json={"displayName": "M"}, headers=auth(token)
    )


def _claim_as_player(w: World) -> tuple[Call, Move]:
    made = w.match()
    token = w.player()
    call = Call(
        "POST", "/v1/players/me/seats", {"matchId": made["matchId"], "seat": 3}, auth(token)
    )
    return call, lambda _: w.ok(
        "POST", f"/v1/matches/{made['matchId']}/seats/1", json={"name": "B"}
    )


def _renew_seat_token(w: World) -> tuple[Call, Move]:
    token, match_id, _ = w.seated_player()
    call = Call("POST", f"/v1/players/me/matches/{match_id}/seat-token", None, auth(token))
    return call, lambda _: w.ok("POST", f"/v1/matches/{match_id}/resign", headers=auth(token))


def _leave(w: World) -> tuple[Call, Move]:
    token, match_id, others = w.seated_player()
    call = Call("POST", f"/v1/players/me/matches/{match_id}/leave", None, auth(token))
    return call, lambda _: w.ok("POST", f"/v1/matches/{match_id}/resign", headers=auth(others[0]))


def _queue(w: World) -> tuple[Call, Move]:
    token = w.player()
    call = Call("POST", "/v1/lobby/tickets", {"preset": "standard"}, auth(token))

    def move(first: Json) -> object:
        return w.ok("DELETE", f"/v1/lobby/tickets/{first['ticketId']}", headers=auth(token))

    return call, move


def _queue_ranked(w: World) -> tuple[Call, Move]:
    token = w.player()
    call = Call("POST", "/v1/lobby/ranked", {"family": "standard"}, auth(token))

    def move(first: Json) -> object:
        return w.ok("DELETE", f"/v1/lobby/tickets/{first['ticketId']}", headers=auth(token))

    return call, move


def _cancel_ticket(w: World) -> tuple[Call, Move]:
    token = w.player()
    ticket = w.ok("POST", "/v1/lobby/tickets", json={"preset": "tuolaji"}, headers=auth(token))
    call = Call("DELETE", f"/v1/lobby/tickets/{ticket['ticketId']}", None, auth(token))
    return call, lambda _: w.ok(
        "POST", "/v1/lobby/tickets", json={"preset": "duijia"}, headers=auth(token)
    )


def _register_webhook(w: World) -> tuple[Call, Move]:
    body = {"url": "https://push.example/hook", "secret": "s" * 32, "kinds": ["your-turn"]}
    call = Call("POST", "/v1/webhooks", body, auth(OPERATOR))

    def move(first: Json) -> object:
        url = f"/v1/webhooks/{first['subscriptionId']}"
        return w.ok("DELETE", url, headers=auth(OPERATOR))

    return call, move


def _remove_webhook(w: World) -> tuple[Call, Move]:
    body = {"url": "https://push.example/two", "secret": "s" * 32, "kinds": ["your-turn"]}
    sub = w.ok("POST", "/v1/webhooks", json=body, headers=auth(OPERATOR))
    call = Call("DELETE", f"/v1/webhooks/{sub['subscriptionId']}", None, auth(OPERATOR))
    return call, lambda _: w.ok("POST", "/v1/webhooks", json=body, headers=auth(OPERATOR))


def _new_subscription(w: World) -> tuple[Call, Move]:
    call = Call("POST", "/v1/events/subscriptions", {"name": "warehouse"}, auth(OPERATOR))
    return call, lambda _: w.ok(
        "POST",
        "/v1/events/subscriptions/warehouse/claims",
        json={"consumer": "w1"},
        headers=auth(OPERATOR),
    )


def _claim_range(w: World) -> tuple[Call, Move]:
    w.table()  # something in the log to claim
    url = w.subscription("claims")
    call = Call("POST", f"{url}/claims", {"consumer": "w1", "limit": 5}, auth(OPERATOR))

    return call, lambda _: w.ok(
        "POST", f"{url}/claims", json={"consumer": "w2"}, headers=auth(OPERATOR)
    )


def _ack_range(w: World) -> tuple[Call, Move]:
    w.table()
    url = w.subscription("acks")
    lease = w.ok(
        "POST", f"{url}/claims", json={"consumer": "w1", "limit": 5}, headers=auth(OPERATOR)
    )
    call = Call(
        "POST", f"{url}/acks", {"consumer": "w1", "lease": lease["lease"]["lease"]}, auth(OPERATOR)
    )
    return call, lambda _: w.ok(
        "POST", f"{url}/claims", json={"consumer": "w2"}, headers=auth(OPERATOR)
    )


def _commit(w: World) -> tuple[Call, Move]:
    w.table()
    url = w.subscription("checkpoint")
    call = Call("POST", f"{url}/checkpoint", {"position": 3}, auth(OPERATOR))
    return call, lambda _: w.ok(
        "POST", f"{url}/checkpoint", json={"position": 5}, headers=auth(OPERATOR)
    )


def _import(w: World) -> tuple[Call, Move]:
    scratch = GameService({"PERSISTENCE_MODULE": "eventsourcing.popo"})  # a match played elsewhere
    mid = create_match(
        scratch, RuleSet.from_mapping({**RuleSet().to_mapping(), "match_end": "rounds:1"})
    )
    for seat in range(4):
        take_seat(scratch, mid, seat, f"bot{seat}", "random")
    run_bots(scratch, mid, 100_000)
    data = encode(export_match(scratch, mid))
    call = Call("POST", "/v1/records?store=true", None, {"content-type": "application/json"}, data)
    return call, lambda _: w.table()


def _say(w: World) -> tuple[Call, Move]:
    t = w.table()
    call = Call("POST", f"{t.url}/talk", {"phrase": "good-luck"}, auth(t.tokens[0]))
    body = {"phrase": "thanks"}
    return call, lambda _: w.ok("POST", f"{t.url}/talk", json=body, headers=auth(t.tokens[1]))


def _mute(w: World) -> tuple[Call, Move]:
    t = w.table()
    call = Call("POST", f"{t.url}/talk/mutes", {"source": "seat-0"}, auth(t.tokens[1]))
    body = {"source": "seat-2"}
    return call, lambda _: w.ok("POST", f"{t.url}/talk/mutes", json=body, headers=auth(t.tokens[1]))


def _unmute(w: World) -> tuple[Call, Move]:
    t = w.table()
    for source in ("seat-0", "seat-2"):
        body = {"source": source}
        w.ok("POST", f"{t.url}/talk/mutes", json=body, headers=auth(t.tokens[1]))
    call = Call("DELETE", f"{t.url}/talk/mutes/seat-0", None, auth(t.tokens[1]))
    return call, lambda _: w.ok("DELETE", f"{t.url}/talk/mutes/seat-2", headers=auth(t.tokens[1]))


def _report(w: World) -> tuple[Call, Move]:
    t = w.table()
    for _ in range(2):
        w.ok("POST", f"{t.url}/talk", json={"phrase": "oops"}, headers=auth(t.tokens[0]))
    call = Call("POST", f"{t.url}/talk/reports", {"number": 1}, auth(t.tokens[1]))
    body = {"number": 2, "reason": "spam"}
    return call, lambda _: w.ok(
        "POST", f"{t.url}/talk/reports", json=body, headers=auth(t.tokens[1])
    )


SCENARIOS: dict[str, Prepare] = {
    "POST /v1/matches": _new_match,
    "POST /v1/matches/{match_id:uuid}/seats/{seat:int}": _claim_seat,
    "POST /v1/matches/{match_id:uuid}/seats/{seat:int}/bot": _seat_bot,
    "POST /v1/matches/{match_id:uuid}/bots/run": _wake_bots,
    "POST /v1/matches/{match_id:uuid}/finish": _finish,
    "POST /v1/matches/{match_id:uuid}/resign": _resign,
    "POST /v1/matches/{match_id:uuid}/rematch": _rematch,
    "POST /v1/matches/{match_id:uuid}/actions/{action:str}": _act,
    "POST /v1/matches/{match_id:uuid}/timeout": _timeout,
    "POST /v1/matches/{match_id:uuid}/invites": _invite,
    "POST /v1/invites/{code:str}": _join,
    "POST /v1/players": _new_player,
    "PATCH /v1/players/me": _edit,
    "POST /v1/players/me/sessions/current/refresh": _refresh,
    "DELETE /v1/players/me": _erase,
    "POST /v1/players/me/sessions": _open_session,
    "POST /v1/players/me/token": _rotate,
    "DELETE /v1/players/me/sessions/{session_id:uuid}": _end_session,
    "POST /v1/players/me/seats": _claim_as_player,
    "POST /v1/players/me/matches/{match_id:uuid}/seat-token": _renew_seat_token,
    "POST /v1/players/me/matches/{match_id:uuid}/leave": _leave,
    "POST /v1/lobby/tickets": _queue,
    "POST /v1/lobby/ranked": _queue_ranked,
    "DELETE /v1/lobby/tickets/{ticket_id:uuid}": _cancel_ticket,
    "POST /v1/webhooks": _register_webhook,
    "DELETE /v1/webhooks/{subscription_id:uuid}": _remove_webhook,
    "POST /v1/events/subscriptions": _new_subscription,
    "POST /v1/events/subscriptions/{name:str}/claims": _claim_range,
    "POST /v1/events/subscriptions/{name:str}/acks": _ack_range,
    "POST /v1/events/subscriptions/{name:str}/checkpoint": _commit,
    "POST /v1/records": _import,
    "POST /v1/matches/{match_id:uuid}/talk": _say,
    "POST /v1/matches/{match_id:uuid}/talk/mutes": _mute,
    "DELETE /v1/matches/{match_id:uuid}/talk/mutes/{source:str}": _unmute,
    "POST /v1/matches/{match_id:uuid}/talk/reports": _report,
}


def _friends(w: World) -> tuple[str, str, str, str]:
    """Two friends: each one's token and player id (the second acted last: online)."""
    a = w.ok("POST", "/v1/players", json={"displayName": "A"})
    b = w.ok("POST", "/v1/players", json={"displayName": "B"})
    w.ok(
        "POST",
        "/v1/players/me/friend-requests",
        json={"playerId": b["playerId"]},
        headers=auth(a["token"]),
    )
    w.ok(
        "POST",
        f"/v1/players/me/friend-requests/{a['playerId']}/answer",
        json={"accept": True},
        headers=auth(b["token"]),
    )
    return a["token"], a["playerId"], b["token"], b["playerId"]


def _ask_friend(w: World) -> tuple[Call, Move]:
    a = w.ok("POST", "/v1/players", json={"displayName": "A"})
    b = w.ok("POST", "/v1/players", json={"displayName": "B"})
    call = Call(
        "POST", "/v1/players/me/friend-requests", {"playerId": b["playerId"]}, auth(a["token"])
    )
    return call, lambda _: w.ok(
        "POST",
        f"/v1/players/me/friend-requests/{a['playerId']}/answer",
        json={"accept": True},
        headers=auth(b["token"]),
    )


def _answer_friend(w: World) -> tuple[Call, Move]:
    a = w.ok("POST", "/v1/players", json={"displayName": "A"})
    b = w.ok("POST", "/v1/players", json={"displayName": "B"})
    w.ok(
        "POST",
        "/v1/players/me/friend-requests",
        json={"playerId": b["playerId"]},
        headers=auth(a["token"]),
    )
    path = f"/v1/players/me/friend-requests/{a['playerId']}/answer"
    call = Call("POST", path, {"accept": True}, auth(b["token"]))
    return call, lambda _: w.ok(
        "DELETE", f"/v1/players/me/friends/{b['playerId']}", headers=auth(a["token"])
    )


def _withdraw_friend(w: World) -> tuple[Call, Move]:
    a = w.ok("POST", "/v1/players", json={"displayName": "A"})
    b = w.ok("POST", "/v1/players", json={"displayName": "B"})
    w.ok(
        "POST",
        "/v1/players/me/friend-requests",
        json={"playerId": b["playerId"]},
        headers=auth(a["token"]),
    )
    call = Call("DELETE", f"/v1/players/me/friend-requests/{b['playerId']}", None, auth(a["token"]))
    return call, lambda _: w.ok(
        "POST",
        "/v1/players/me/friend-requests",
        json={"playerId": a["playerId"]},
        headers=auth(b["token"]),
    )


def _remove_friend(w: World) -> tuple[Call, Move]:
    a, _, _, b_id = _friends(w)
    call = Call("DELETE", f"/v1/players/me/friends/{b_id}", None, auth(a))
    return call, lambda _: w.ok("PUT", f"/v1/players/me/blocks/{b_id}", headers=auth(a))


def _block(w: World) -> tuple[Call, Move]:
    a, _, _, b_id = _friends(w)
    call = Call("PUT", f"/v1/players/me/blocks/{b_id}", None, auth(a))
    return call, lambda _: w.ok("DELETE", f"/v1/players/me/blocks/{b_id}", headers=auth(a))


def _unblock(w: World) -> tuple[Call, Move]:
    a, _, _, b_id = _friends(w)
    w.ok("PUT", f"/v1/players/me/blocks/{b_id}", headers=auth(a))
    call = Call("DELETE", f"/v1/players/me/blocks/{b_id}", None, auth(a))
    return call, lambda _: w.ok("PUT", f"/v1/players/me/blocks/{b_id}", headers=auth(a))


def _rotate_code(w: World) -> tuple[Call, Move]:
    token = w.player()
    call = Call("POST", "/v1/players/me/friend-code", None, auth(token))
    return call, lambda _: w.ok("POST", "/v1/players/me/friend-code", headers=auth(token))


def _presence(w: World) -> tuple[Call, Move]:
    token = w.player()
    call = Call("PUT", "/v1/players/me/presence", {"appearOffline": True}, auth(token))
    return call, lambda _: w.ok(
        "PUT", "/v1/players/me/presence", json={"appearOffline": False}, headers=auth(token)
    )


def _table_invitation(w: World) -> tuple[Call, Move, str, str]:
    """A friend invited to seat 1 of a private table where the inviter sits: the call,
    a move (seat 2 taken), and both tokens."""
    a, _, b, b_id = _friends(w)
    made = w.match(name="friends")
    w.ok(
        "POST",
        "/v1/players/me/seats",
        json={"matchId": made["matchId"], "seat": 0},
        headers=auth(a),
    )
    body = {"playerId": b_id, "seat": 1}
    call = Call("POST", f"/v1/matches/{made['matchId']}/friend-invitations", body, auth(a))

    def move(_: Json) -> object:
        return w.ok("POST", f"/v1/matches/{made['matchId']}/seats/2", json={"name": "C"})

    return call, move, a, b


def _invite_friend(w: World) -> tuple[Call, Move]:
    call, move, _, _ = _table_invitation(w)
    return call, move


def _answer_invitation(w: World) -> tuple[Call, Move]:
    call, move, _, b = _table_invitation(w)
    sent = w.ok(call.method, call.path, json=call.json, headers=call.headers)
    path = f"/v1/players/me/invitations/{sent['invitationId']}/answer"
    return Call("POST", path, {"accept": True}, auth(b)), move


SCENARIOS |= {
    "POST /v1/players/me/friend-requests": _ask_friend,
    "POST /v1/players/me/friend-requests/{player_id:uuid}/answer": _answer_friend,
    "DELETE /v1/players/me/friend-requests/{player_id:uuid}": _withdraw_friend,
    "DELETE /v1/players/me/friends/{player_id:uuid}": _remove_friend,
    "PUT /v1/players/me/blocks/{player_id:uuid}": _block,
    "DELETE /v1/players/me/blocks/{player_id:uuid}": _unblock,
    "POST /v1/players/me/friend-code": _rotate_code,
    "PUT /v1/players/me/presence": _presence,
    "POST /v1/matches/{match_id:uuid}/friend-invitations": _invite_friend,
    "POST /v1/players/me/invitations/{invitation_id:uuid}/answer": _answer_invitation,
}


# -- tournaments ---------------------------------------------------------------------------------

WHY = {"reason": "as agreed", "by": "TD"}
TABLE_1 = "rounds/1/tables/1"


def _new_tournament(w: World) -> tuple[Call, Move]:
    teams = [{"name": f"T{i}", "players": [{"name": "a"}, {"name": "b"}]} for i in range(2)]
    body = {"name": "open", "teams": teams, "format": "round_robin", "matchLength": 1}
    call = Call("POST", "/v1/tournaments", body)

    def move(first: Json) -> object:
        url = f"/v1/tournaments/{first['tournamentId']}"
        return w.adjust(url, auth(first["organiserToken"]))(first)

    return call, move


def _tournament_call(
    path: str, body: Any = None, *, method: str = "POST", in_play: bool = False, **cup: Any
) -> Prepare:
    """A scenario of a tournament route: ``path`` under the tournament (``""``: itself), on
    a tournament (its round 1 scheduled when ``in_play``); the move is an adjustment."""

    def prepare(w: World) -> tuple[Call, Move]:
        url, org = w.in_play(**cup) if in_play else w.cup(**cup)
        call = Call(method, f"{url}/{path}".rstrip("/"), body, org)
        return call, w.adjust(url, org)

    return prepare


def _allow(w: World) -> tuple[Call, Move]:
    url, org = w.cup()
    w.ok("POST", f"{url}/forbidden", json={"teams": [0, 1], "reason": "club"}, headers=org)
    return Call("DELETE", f"{url}/forbidden/0/1", None, org), w.adjust(url, org)


def _resume(w: World) -> tuple[Call, Move]:
    url, org = w.in_play()
    w.ok("POST", f"{url}/rounds/1/pause", json={"reason": "drill"}, headers=org)
    return Call("POST", f"{url}/rounds/1/resume", None, org), w.adjust(url, org)


def _correct(w: World) -> tuple[Call, Move]:
    url, org = w.in_play()
    w.ok("POST", f"{url}/{TABLE_1}/finish", json={"reason": "no show"}, headers=org)
    body = {"winner": None, "levels": [1, 1], "points": [0, 0], **WHY}
    call = Call("POST", f"{url}/{TABLE_1}/correction", body, org)
    again = {**body, "levels": [2, 2]}
    return call, lambda _: w.ok("POST", f"{url}/{TABLE_1}/correction", json=again, headers=org)


def _registration(path: str, body: Any = None, *, teams: int = 0, **cup: Any) -> Prepare:
    """A scenario of a registration route on a tournament open for registration with
    ``teams`` teams registered; the move registers one more (the organiser)."""

    def prepare(w: World) -> tuple[Call, Move]:
        url, org = w.cup(teams=[], registration=True, **cup)

        def register(name: str) -> Json:
            team = {"name": name, "players": [{"name": "a"}, {"name": "b"}]}
            return w.ok("POST", f"{url}/teams", json=team, headers=org)

        for i in range(teams):
            register(f"R{i}")
        call = Call("POST", f"{url}/{path}", body, org if path != "teams" else {})
        return call, lambda _: register("Late")

    return prepare


TOURNAMENT_SCENARIOS: dict[str, Prepare] = {
    "POST /v1/tournaments": _new_tournament,
    "PATCH /v1/tournaments/{tournament_id:uuid}": _tournament_call(
        "", {"roundDeadlineS": 600}, method="PATCH"
    ),
    "POST /v1/tournaments/{tournament_id:uuid}/rounds": _tournament_call("rounds"),
    "POST /v1/tournaments/{tournament_id:uuid}/rounds/{number:int}/bots/run": _tournament_call(
        "rounds/1/bots/run", in_play=True
    ),
    "POST /v1/tournaments/{tournament_id:uuid}/forbidden": _tournament_call(
        "forbidden", {"teams": [0, 1], "reason": "one club"}
    ),
    "DELETE /v1/tournaments/{tournament_id:uuid}/forbidden/{a:int}/{b:int}": _allow,
    "POST /v1/tournaments/{tournament_id:uuid}/rounds/{number:int}/pairings": _tournament_call(
        "rounds/1/pairings",
        {"tables": [{"firstTeam": 0, "secondTeam": 3}, {"firstTeam": 1, "secondTeam": 2}], **WHY},
    ),
    "POST /v1/tournaments/{tournament_id:uuid}/adjustments": _tournament_call(
        "adjustments", {"team": 1, "matchPoints": -1, **WHY}
    ),
    "POST /v1/tournaments/{tournament_id:uuid}/rounds/{number:int}/tables/{table:int}/tokens": (
        _tournament_call(f"{TABLE_1}/tokens", in_play=True)
    ),
    "POST /v1/tournaments/{tournament_id:uuid}/teams": _registration(
        "teams", {"name": "Self", "players": [{"name": "a"}, {"name": "b"}]}
    ),
    "POST /v1/tournaments/{tournament_id:uuid}/teams/{team:int}/checkin": _registration(
        "teams/0/checkin", teams=4, checkinRequired=True
    ),
    "POST /v1/tournaments/{tournament_id:uuid}/start": _registration("start", teams=4),
    "POST /v1/tournaments/{tournament_id:uuid}/teams/{team:int}/withdraw": _tournament_call(
        "teams/0/withdraw", {"reason": "ill"}, in_play=True
    ),
    "POST /v1/tournaments/{tournament_id:uuid}/results/collect": _tournament_call(
        "results/collect", in_play=True
    ),
    "POST /v1/tournaments/{tournament_id:uuid}/rounds/{number:int}/tables/{table:int}/finish": (
        _tournament_call(f"{TABLE_1}/finish", {"reason": "no show"}, in_play=True)
    ),
    "POST /v1/tournaments/{tournament_id:uuid}/rounds/{number:int}/tables/{table:int}/correction": (
        _correct
    ),
    "POST /v1/tournaments/{tournament_id:uuid}/rounds/{number:int}/tables/{table:int}/result": (
        _tournament_call(f"{TABLE_1}/result", {"levels": [3, 1], **WHY}, in_play=True)
    ),
    "POST /v1/tournaments/{tournament_id:uuid}/rounds/{number:int}/clock": _tournament_call(
        "rounds/1/clock", {"deadlineS": 600}, in_play=True
    ),
    "POST /v1/tournaments/{tournament_id:uuid}/rounds/{number:int}/tables/{table:int}/extension": (
        _tournament_call(f"{TABLE_1}/extension", {"seconds": 300, **WHY}, in_play=True)
    ),
    "POST /v1/tournaments/{tournament_id:uuid}/rounds/{number:int}/pause": _tournament_call(
        "rounds/1/pause", {"reason": "drill"}, in_play=True
    ),
    "POST /v1/tournaments/{tournament_id:uuid}/rounds/{number:int}/resume": _resume,
    "POST /v1/tournaments/{tournament_id:uuid}/rounds/{number:int}/cancel": _tournament_call(
        "rounds/1/cancel", WHY, in_play=True
    ),
    "POST /v1/tournaments/{tournament_id:uuid}/byes": _tournament_call(
        "byes", {"team": 0, "round": 2, "reason": "away"}
    ),
    "POST /v1/tournaments/{tournament_id:uuid}/substitutes": _tournament_call(
        "substitutes", {"round": 1, "team": 0, "player": 0, "name": "Sub", "reason": "ill"}
    ),
    "POST /v1/tournaments/{tournament_id:uuid}/teams/{team:int}/rename": _tournament_call(
        "teams/0/rename", {"name": "Renamed", "reason": "sponsor"}
    ),
    "POST /v1/tournaments/{tournament_id:uuid}/fixed-tables": _tournament_call(
        "fixed-tables", {"team": 0, "table": 1, "reason": "access"}
    ),
    "POST /v1/tournaments/{tournament_id:uuid}/publish": _tournament_call("publish"),
}
SCENARIOS |= TOURNAMENT_SCENARIOS
WITHOUT_KEY = {"POST /v1/players/oidc"}
"""Writes that take no Idempotency-Key: the provider's token is no credential of this
service, so no key can be scoped by it (its one transaction is checked all the same in
tests/api/test_oidc.py's sign-ins)."""
REPLAY_REFUSED = {"POST /v1/players/me/token", "DELETE /v1/players/me"}
"""The rotated token, or the erased player's, no longer authorises: its key's replay is a
401 (authorisation comes first), never the new token."""


@pytest.fixture(scope="module")
def backend(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Backend]:
    """One store for the module's scenarios (``request.param``: ``postgres``): each acts on
    matches, players, tournaments and subscriptions of its own and counts only the inserts
    of its own calls, so none needs a store or an app of its own (each was ~0.4 s)."""
    with open_backend(
        request.param,
        tmp_path_factory.mktemp("write-routes"),
        FakeClock(),
        FixedSeeds(),
        lambda: request.getfixturevalue("pg_url"),
    ) as store:
        yield store


@pytest.fixture(scope="module")
def shared_world(backend: Backend) -> Iterator[World]:
    service = backend.service()
    w = World(c=None, service=service)  # type: ignore[arg-type]
    insert = service.recorder.insert_events
    driver_threads = ("bot-driver", "sweeper")

    def counted(events: Any, **kwargs: Any) -> Any:
        if not threading.current_thread().name.startswith(driver_threads):
            w.inserts.append([e.topic for e in events])
        return insert(events, **kwargs)

    service.recorder.insert_events = counted  # type: ignore[method-assign,assignment]
    with TestClient(make_app(service, operator_token=OPERATOR)) as c:
        w.c = c
        yield w


@pytest.fixture
def world(shared_world: World) -> World:
    shared_world.inserts.clear()
    return shared_world


def write_routes(app: Litestar) -> set[str]:
    found = set()
    for route in app.routes:
        if isinstance(route, HTTPRoute):
            for method, (handler, _) in route.route_handler_map.items():
                if method not in READS and not handler.opt.get("stateless"):
                    found.add(f"{method} {route.path}")
    return found


def comparable(body: bytes) -> Any:
    """The answer but for the tokens a first call minted (a replay withholds them)."""

    def strip(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: strip(v) for k, v in node.items() if k not in SECRETS}
        if isinstance(node, list):
            return [strip(v) for v in node]
        return node

    return strip(json.loads(body)) if body else None


def test_every_write_route_has_a_scenario() -> None:
    routes = write_routes(make_app())
    missing = routes - set(SCENARIOS) - WITHOUT_KEY
    assert not missing, missing


@pytest.mark.parametrize("backend", ["postgres"], indirect=True)
@pytest.mark.parametrize("route", sorted(SCENARIOS))
def test_one_transaction_and_the_same_answer_again(world: World, route: str) -> None:
    call, move = SCENARIOS[route](world)
    headers = {**call.headers, "Idempotency-Key": f"k-{route}"}

    def send() -> Any:
        return world.c.request(
            call.method, call.path, json=call.json, content=call.content, headers=headers
        )

    world.inserts.clear()
    first = send()
    assert first.status_code < 300, first.text
    assert len(world.inserts) == 1, world.inserts  # one transaction
    (topics,) = world.inserts
    assert any(t.endswith("IdempotencyRecord.Recorded") for t in topics), topics  # with its key
    move(first.json() if first.content else {})
    world.inserts.clear()
    again = send()
    if route in REPLAY_REFUSED:
        assert again.status_code == 401, again.text
        return
    assert again.status_code == first.status_code, again.text
    assert again.headers.get("idempotent-replayed") == "true" or first.status_code == 204
    assert again.headers.get("location") == first.headers.get("location")
    assert comparable(again.content) == comparable(first.content)
    if b'"token' not in first.content:
        assert again.content == first.content  # byte for byte
    assert world.inserts == []  # a replay stores nothing

"""Fair play and bounded cost (docs/security.md, docs/decisions.md D-fair), tried as an
attacker would against the app:

* limits count the account a token stands for: rotating the player token or opening
  sessions buys no requests and no streams of its own; minting tokens has its own quota;
* quick-play tickets spend the match quota (each can make a match with bots at once);
* every kind of live stream is capped per identity (or address): the 9th is a 429;
* a stream lives no longer than its credential: rotated, session ended, player erased or
  seat token re-issued, the stream sends ``event: revoked`` within a second and ends, and
  its reconnect is a 401.
"""

from __future__ import annotations

import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack
from typing import Any

import anyio
import httpx
import msgspec
import pytest
from litestar import Litestar

from api import revocation
from api.identity import token_verifier
from api.streams import KINDS
from infra.settings import Settings
from services.game import GameService
from tests.api.limits import CUP, client_at, limited_app
from tests.api.rest import Table, auth
from tests.api.rest import client as rest_client
from tests.api.sse_driver import SseStream, stream
from tests.apps import make_app
from tests.conftest import FakeClock

pytestmark = pytest.mark.anyio

OPERATOR = "operator-token-for-the-fair-play-tests"


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


def new_app(**limits: Any) -> Litestar:
    return limited_app(operator_token=OPERATOR, **limits)


async def new_player(c: httpx.AsyncClient, name: str = "Mei") -> dict[str, Any]:
    r = await c.post("/v1/players", json={"displayName": name})
    assert r.status_code == 201, r.text
    body: dict[str, Any] = r.json()
    return body


async def rotate(c: httpx.AsyncClient, token: str) -> str:
    r = await c.post("/v1/players/me/token", headers=auth(token))
    assert r.status_code == 200, r.text
    new: str = r.json()["token"]
    return new


# -- limits follow the account ------------------------------------------------------------------


async def test_rotating_the_token_buys_no_more_requests() -> None:
    """The finding: 120 answers a minute at RATE_LIMIT_PER_MINUTE=20 by rotating 6 times."""
    app = new_app(rate_limit_per_minute=20)
    async with app.lifespan(), client_at(app) as c:
        token = (await new_player(c))["token"]  # counted under the address
        answered = 0
        for _ in range(6):
            for _ in range(8):
                r = await c.get("/v1/players/me", headers=auth(token))
                answered += r.status_code != 429
            r = await c.post("/v1/players/me/token", headers=auth(token))
            if r.status_code == 200:
                answered += 1
                token = r.json()["token"]
        # a second session of the same player shares the bucket too
        other = await c.post("/v1/players/me/sessions", headers=auth(token))
        assert other.status_code == 429
    assert answered == 20


async def test_minting_player_tokens_has_its_own_quota() -> None:
    app = new_app(rate_limit_per_minute=600, session_quota_per_hour=3)
    async with app.lifespan(), client_at(app) as c:
        token = (await new_player(c))["token"]
        for _ in range(3):
            token = await rotate(c, token)
        for path in ("/v1/players/me/token", "/v1/players/me/sessions"):
            r = await c.post(path, headers=auth(token))
            assert (r.status_code, r.json()["code"]) == (429, "quota-exceeded"), r.text
            assert "SESSION_QUOTA_PER_HOUR" in r.json()["detail"]
        assert (await c.get("/v1/players/me", headers=auth(token))).status_code == 200


async def test_quick_play_spends_the_match_quota() -> None:
    """The finding: with MATCH_QUOTA_PER_HOUR spent, tickets with `botsAfterSeconds: 0`
    made 12 more matches."""
    app = new_app(rate_limit_per_minute=600, match_quota_per_hour=3)
    async with app.lifespan(), client_at(app) as c:
        token = (await new_player(c))["token"]
        assert (await c.post("/v1/matches", json={})).status_code == 201
        made = []
        for _ in range(5):
            r = await c.post("/v1/lobby/tickets", json={"botsAfterSeconds": 0}, headers=auth(token))
            made.append(r.status_code)
            if r.status_code == 201:
                assert r.json()["status"] == "matched"  # bots at once: a match made
                # one quick play at a time: leave it (a bot plays on) to ask for another
                leave = f"/v1/players/me/matches/{r.json()['matchId']}/leave"
                assert (await c.post(leave, headers=auth(token))).status_code == 200
        assert made == [201, 201, 429, 429, 429]
        r = await c.post("/v1/lobby/tickets", json={}, headers=auth(token))
        assert r.json()["code"] == "quota-exceeded"


async def test_a_rematch_spends_the_match_quota() -> None:
    """A rematch makes a match: without the quota, bots-only matches rematched one after
    another would make matches without end. A rematch refused makes none and spends none
    (docs/decisions.md D-bounded)."""
    app = new_app(rate_limit_per_minute=600, match_quota_per_hour=2)
    async with app.lifespan(), client_at(app) as c:
        made = (await c.post("/v1/matches", json={})).json()
        url = f"/v1/matches/{made['matchId']}"
        org = auth(made["organiserToken"])
        first = await c.post(f"{url}/rematch", headers=org)
        assert first.status_code == 409, first.text  # not finished: refused, nothing made
        assert (await c.post(f"{url}/finish", json={}, headers=org)).status_code == 200
        rematch = await c.post(f"{url}/rematch", headers=org)
        assert rematch.status_code == 201, rematch.text
        again = f"/v1/matches/{rematch.json()['matchId']}"
        org = auth(rematch.json()["token"])
        assert (await c.post(f"{again}/finish", json={}, headers=org)).status_code == 200
        third = await c.post(f"{again}/rematch", headers=org)
        assert (third.status_code, third.json()["code"]) == (429, "quota-exceeded")


# -- every kind of stream is capped ---------------------------------------------------------------


async def opened(app: Litestar, stack: AsyncExitStack, path: str, headers: dict[str, str]) -> int:
    s = await stack.enter_async_context(stream(app, path, headers))
    return s.status


async def test_the_ninth_stream_of_every_kind_is_refused() -> None:
    """8 per identity of every kind (player, ticket, match; a second session's token buys
    none), 8 per address for the public ones (standings, display, the events feed); every
    declared kind is here (api.streams)."""
    app = new_app(rate_limit_per_minute=10_000, sse_max_per_address=8)
    async with app.lifespan(), client_at(app) as c:
        player = await new_player(c)
        first = player["token"]
        made = (await c.post("/v1/matches", json={})).json()
        claim = {"matchId": made["matchId"], "seat": 0}
        assert (await c.post("/v1/players/me/seats", json=claim, headers=auth(first))).is_success
        ticket = await c.post("/v1/lobby/tickets", json={}, headers=auth(first))
        tournament = (await c.post("/v1/tournaments", json=CUP)).json()["tournamentId"]
        kinds = {
            "player": "/v1/players/me/stream",
            "ticket": f"/v1/lobby/tickets/{ticket.json()['ticketId']}/stream",
            "match": f"/v1/matches/{made['matchId']}/stream",
            "standings": f"/v1/tournaments/{tournament}/standings/stream",
            "display": f"/v1/tournaments/{tournament}/display/stream",
            "feed": "/v1/events/stream",
        }
        assert set(kinds) == set(KINDS)
        found: dict[str, list[int]] = {}
        tablet = await c.post("/v1/players/me/sessions", headers=auth(first))
        second = tablet.json()["token"]  # another device: a new token, the same account
        async with AsyncExitStack() as stack:
            for kind, path in kinds.items():
                statuses = []
                for i in range(9):
                    token = first if i < 4 else second
                    headers = auth(token) if kind in ("player", "ticket", "match") else {}
                    statuses.append(await opened(app, stack, path, headers))
                found[kind] = statuses
            metrics = (await c.get("/metrics")).text
    assert found == {kind: [200] * 8 + [429] for kind in kinds}, found
    for kind in kinds:
        assert f'shengji_sse_open{{kind="{kind}"}} 8.0' in metrics


# -- a stream lives no longer than its credential ------------------------------------------


Revoke = Callable[[httpx.AsyncClient, dict[str, Any]], Awaitable[None]]


async def by_rotation(c: httpx.AsyncClient, p: dict[str, Any]) -> None:
    await rotate(c, p["token"])


async def by_ending_the_session(c: httpx.AsyncClient, p: dict[str, Any]) -> None:
    other = await c.post("/v1/players/me/sessions", headers=auth(p["token"]))
    r = await c.delete(
        f"/v1/players/me/sessions/{p['sessionId']}", headers=auth(other.json()["token"])
    )
    assert r.status_code == 204, r.text


async def by_erasure(c: httpx.AsyncClient, p: dict[str, Any]) -> None:
    assert (await c.delete("/v1/players/me", headers=auth(p["token"]))).status_code == 204


async def revoked_after(s: SseStream, since: float) -> float:
    """Seconds from ``since`` until the stream's ``event: revoked``; the stream then ends.
    How soon is ``make bench-fairplay``'s figure (revocation latency), not a test's: a test
    only waits for it (5 s at most between frames)."""
    while True:
        ev = await s.next(timeout=5)
        assert ev is not None, "the stream ended without event: revoked"
        if ev.event == "revoked":
            took = time.perf_counter() - since
            assert await s.next(timeout=5) is None  # and nothing after it
            return took


@pytest.fixture(scope="module", params=["match", "player", "ticket"])
async def streaming(
    request: pytest.FixtureRequest,
) -> AsyncIterator[tuple[str, Litestar, httpx.AsyncClient]]:
    """The kind of stream revoked, and one app (no limits) for the ways of revoking it:
    each test has a player, a match and a ticket of its own. At most three tickets wait in
    it (an erased player's is cancelled), so no ticket of one test meets another's."""
    app = new_app(rate_limit_per_minute=0)
    async with app.lifespan(), client_at(app) as c:
        yield request.param, app, c


@pytest.mark.parametrize("revoke", [by_rotation, by_ending_the_session, by_erasure])
async def test_a_revoked_player_token_ends_its_streams(
    streaming: tuple[str, Litestar, httpx.AsyncClient], revoke: Revoke
) -> None:
    """The finding: a match stream kept sending seat 0's hand for 158 frames after its
    token was rotated, its session ended and the player erased."""
    kind, app, c = streaming
    p = await new_player(c)
    made = (await c.post("/v1/matches", json={})).json()
    claim = {"matchId": made["matchId"], "seat": 0}
    assert (await c.post("/v1/players/me/seats", json=claim, headers=auth(p["token"]))).is_success
    ticket = (await c.post("/v1/lobby/tickets", json={}, headers=auth(p["token"]))).json()
    path = {
        "match": f"/v1/matches/{made['matchId']}/stream",
        "player": "/v1/players/me/stream",
        "ticket": f"/v1/lobby/tickets/{ticket['ticketId']}/stream",
    }[kind]
    async with stream(app, path, auth(p["token"])) as s:
        assert s.status == 200
        assert (await s.next(timeout=5)) is not None  # the stream is going
        started = time.perf_counter()
        await revoke(c, p)
        await revoked_after(s, started)
    async with stream(app, path, auth(p["token"])) as again:
        assert again.status == 401


async def test_a_session_that_expires_ends_its_streams(monkeypatch: pytest.MonkeyPatch) -> None:
    """A session idle longer than SESSION_IDLE_S stops signing in with no event saved: its
    streams are checked again at least every RECHECK_S and end the same way."""
    monkeypatch.setattr(revocation, "RECHECK_S", 0.1)
    clock = FakeClock()
    settings = Settings(
        backend="popo", sweep_interval_ms=0, webhook_interval_ms=0, rate_limit_per_minute=0
    )
    settings = msgspec.structs.replace(settings, session_idle_s=60)
    service = GameService(
        {"PERSISTENCE_MODULE": "eventsourcing.popo"}, clock=clock, table=settings.table
    )
    app = make_app(service, settings=settings)
    async with app.lifespan(), client_at(app) as c:
        p = await new_player(c)
        made = (await c.post("/v1/matches", json={})).json()
        claim = {"matchId": made["matchId"], "seat": 0}
        r = await c.post("/v1/players/me/seats", json=claim, headers=auth(p["token"]))
        assert r.is_success
        path = f"/v1/matches/{made['matchId']}/stream"
        async with stream(app, path, auth(p["token"])) as s:
            while (ev := await s.next(timeout=5)) is not None and ev.event != "view":
                pass
            await s.nothing_for(0.3)  # valid: the checks let it be
            assert not s.ended
            clock.advance(seconds=61)
            await revoked_after(s, time.perf_counter())


async def test_a_reissued_seat_token_ends_the_old_tokens_stream() -> None:
    app = new_app(rate_limit_per_minute=0)
    async with app.lifespan(), client_at(app) as c:
        p = await new_player(c)
        made = (await c.post("/v1/matches", json={})).json()
        claim = {"matchId": made["matchId"], "seat": 0}
        seat = await c.post("/v1/players/me/seats", json=claim, headers=auth(p["token"]))
        old = seat.json()["token"]
        path = f"/v1/matches/{made['matchId']}/stream"
        async with stream(app, path, auth(old)) as s:
            assert (await s.next(timeout=5)) is not None
            started = time.perf_counter()
            r = await c.post(
                f"/v1/players/me/matches/{made['matchId']}/seat-token", headers=auth(p["token"])
            )
            assert r.status_code == 200, r.text
            await revoked_after(s, started)
        async with stream(app, path, auth(old)) as again:
            assert again.status == 401


async def test_streams_of_other_credentials_go_on() -> None:
    """Only the revoked token's streams end: the player's other session keeps its own."""
    app = new_app(rate_limit_per_minute=0)
    async with app.lifespan(), client_at(app) as c:
        p = await new_player(c)
        tablet = (await c.post("/v1/players/me/sessions", headers=auth(p["token"]))).json()
        async with (
            stream(app, "/v1/players/me/stream", auth(p["token"])) as phone_stream,
            stream(app, "/v1/players/me/stream", auth(tablet["token"])) as tablet_stream,
        ):
            await phone_stream.next(timeout=5)
            await tablet_stream.next(timeout=5)
            await rotate(c, p["token"])
            await revoked_after(phone_stream, time.perf_counter())
            await c.post("/v1/lobby/tickets", json={}, headers=auth(tablet["token"]))
            events = Counter[str]()
            with anyio.move_on_after(2):
                while (ev := await tablet_stream.next(timeout=2)) is not None:
                    events[ev.event or ""] += 1
                    if ev.event == "ticket":
                        break
            assert events["ticket"] == 1 and events["revoked"] == 0, events


def test_a_uuid_is_no_identity() -> None:
    """Made-up player tokens (our shape, an unknown account) verify as nothing."""
    service = GameService({"PERSISTENCE_MODULE": "eventsourcing.popo"}, clock=FakeClock())
    assert token_verifier(service)(f"p.{uuid.uuid4().hex}.secret") is None


# -- dry runs reveal nothing hidden -------------------------------------------------------------


RANKS = ("2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A")


def plain(cards: list[str], suit: str, level: str) -> list[str]:
    """The cards of ``suit`` that are no trump (no joker, no level rank), low to high."""
    found = [c for c in cards if c[-1] == suit and c not in ("SJ", "BJ") and c[:-1] != level]
    return sorted(found, key=lambda c: RANKS.index(c[:-1]))


def test_dry_run_throws_answer_the_same_whatever_the_hidden_hands_hold() -> None:
    """R22, R33. The finding: `play?dryRun=true` with a throw [top, X] failed exactly when
    another seat held a higher card of that suit (4 of 4 answers matched the hidden hands).
    An attacker probes every suit at the lead of several deals; this test knows every
    hand, so it knows which throws would fail when played: the dry-run answers must not
    differ between them."""

    answers: dict[bool, set[str]] = {True: set(), False: set()}
    probes: Counter[bool] = Counter()
    with rest_client() as c:
        for _ in range(4):
            t = Table.seat_four(c)
            for _ in range(300):
                expected = t.public()["expected"]
                if expected and expected["action"] == "play" and not t.public()["trick"]:
                    break
                assert t.step()
            seat = int(expected["seat"])
            views = [t.view(s) for s in range(4)]
            level, trump = views[seat]["levelRank"], views[seat]["trump"]
            for suit in "SHCD":
                if suit == trump:
                    continue
                mine = plain(views[seat]["hand"], suit, level)
                if len({card[:-1] for card in mine}) < 2:
                    continue
                for low in dict.fromkeys(c for c in mine if c[:-1] != mine[-1][:-1]):
                    throw = [mine[-1], low]
                    others = [
                        card
                        for s in range(4)
                        if s != seat
                        for card in plain(views[s]["hand"], suit, level)
                    ]
                    would_fail = any(RANKS.index(o[:-1]) > RANKS.index(low[:-1]) for o in others)
                    r = c.post(
                        f"{t.url}/actions/play?dryRun=true",
                        json={"cards": throw},
                        headers={"Authorization": f"Bearer {t.tokens[seat]}"},
                    )
                    body = r.json()
                    shown = {
                        k: v for k, v in body.items() if k not in ("played", "seat", "version")
                    }
                    shown["throw"] = {
                        k: v for k, v in (body.get("throw") or {}).items() if k != "cards"
                    }
                    answers[would_fail].add(f"{r.status_code} {sorted(shown.items())!r}")
                    probes[would_fail] += 1
    assert probes[True] and probes[False], probes  # both kinds probed: an oracle would show
    both = answers[True] | answers[False]
    assert len(both) == 1, both  # one answer, whatever the other hands hold
    assert '"when-played"' in next(iter(both)).replace("'", '"')

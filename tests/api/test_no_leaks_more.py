"""The no-leak property (RULES R33, R36) on the ground the first test only crossed
(docs/security.md; the machinery: :mod:`tests.api.leak_truth`, :mod:`tests.api.leak_game`):

* **the burier's view of the bottom** (R21) and **a later round's 炒底** (R20: an overcall
  after the bottom was buried, the overcaller takes the buried cards and buries again):
  a game is played on, every view exact-checked, and the test asserts that it *did* check
  the burier's view with the bottom, the other seats' and the spectators' without it, and
  a 炒底 burier's view in round 2;
* **the organiser's views**: beside the first test's reads, the organiser's live stream,
  its ``/public`` and ``/rounds/{n}`` reads, its refused ``/view`` and the records it asks
  for too early (409) — every body checked as a spectator's;
* **tournament tables under embargo** (R36): a table of a tournament round is played over
  HTTP while the other table has not played; the tournament's organiser reads everything
  (checked as a spectator), the table's seats read their views; strangers — no token, the
  other table's seats — get 403 ``table-closed`` on every closed read, and once the table's
  deal is scored it stays secret (no seed, no hidden card, records and verification 409)
  because the other table still has to play it.
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

import httpx
import pytest

import tests.api.leak_game as lg
import tests.api.leak_truth as lt
from domain.game.round import Round
from services.game import GameService
from tests.api.sse_driver import SseStream, stream
from tests.apps import make_app
from tests.conftest import FakeClock

Json = dict[str, Any]
CLOSED_READS = ("/public", "/history", "/state", "/view", "/rounds/1")


class CountingChecker(lt.Checker):
    """The first test's checks, counting the seat views that matter here."""

    def _view(
        self, where: str, viewer: lt.Viewer, view: Json, scored: frozenset[int]
    ) -> tuple[str, int, int] | None:
        ctx = super()._view(where, viewer, view, scored)
        if ctx is None or view.get("phase") != "burying":
            return ctx
        number, version = ctx[1], ctx[2]
        r: Round = self.truth.service.get_round(self.truth.rounds[number].rid, version=version)
        burier = r.bidding.burier
        if view["kind"] == "public":
            self.checked["spectator while burying"] += 1
        elif view["seat"] == burier:
            assert view["bottom"] is not None and len(view["bottom"]) == 8, where
            self.checked["the burier sees the bottom"] += 1
            if r.bidding.buries >= 1:
                self.checked[f"炒底 burier, round {number}"] += 1
        else:
            self.checked["another seat while burying"] += 1
        return ctx


@dataclass
class OrganiserGame(lg.Game):
    """The first test's game, plus the organiser's own reads and live stream."""

    organiser_stream: SseStream | None = None

    async def reads(self) -> list[Json]:
        views = await super().reads()
        await self.get("/public", None, "organiser")
        number = max(self.truth.rounds) if self.truth.rounds else 0
        if number:
            await self.get(f"/rounds/{number}", None, "organiser")
        headers = lg.auth(self.secrets.organiser)
        for path in ("/view", "/record", f"/rounds/{number or 1}/record"):
            r = await self.client.get(self.url + path, headers=headers)
            assert r.status_code in (200, 403, 409), (path, r.text)
            self.check.response(f"organiser GET {path}", None, r.status_code, r.text)
        return views

    async def frames(self) -> None:
        await super().frames()
        s = self.organiser_stream
        while s is not None:
            ev = await s.next_view(lt.TIMEOUT)
            assert ev.id is not None and ev.data is not None
            scored = self.truth.scored_at(ev.id)
            self.check.response("organiser SSE frame", None, 200, ev.data, scored=scored)
            if ev.id >= self.version:
                break


async def play_with_the_organiser_watching(game: lg.Game, commands: int) -> None:
    assert isinstance(game, OrganiserGame)
    url = f"{game.url}/stream"
    async with stream(game.app, url, lg.auth(game.secrets.organiser)) as s:
        assert s.status == 200
        game.organiser_stream = s
        try:
            await PLAY(game, commands)
        finally:
            game.organiser_stream = None


PLAY = lg.play


def test_the_burier_a_later_rounds_chaodi_and_the_organiser(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(lg, "Checker", CountingChecker)
    monkeypatch.setattr(lg, "Game", OrganiserGame)
    monkeypatch.setattr(lg, "play", play_with_the_organiser_watching)
    # seed 1 overcalls after the bottom was buried in round 2 (炒底): asserted below
    checker = asyncio.run(lg.play_and_watch(1, {}, 150))
    counted = checker.checked
    assert counted["the burier sees the bottom"] >= 5
    assert counted["another seat while burying"] >= 15
    assert counted["spectator while burying"] >= 5
    assert counted["炒底 burier, round 2"] >= 1, "no 炒底 was played: pick another seed"
    assert counted["organiser SSE frame"] > 100
    assert counted["read after 炒底 bury"] >= 1
    assert counted["organiser GET /view"] > 50  # refused: the organiser holds no seat


# -- a tournament table under embargo (R36) --------------------------------------------------


BASE_MOMENT = lt.RoundTruth._moment


class EmbargoedRoundTruth(lt.RoundTruth):
    """The other table has not played the deal, so its tournament round never completes
    here: a scored round shows what each viewer saw in play, nothing more (R36)."""

    @staticmethod
    def _moment(r: Round, now: Any) -> lt.Moment:
        moment = BASE_MOMENT(r, now)
        if not moment.scored:
            return moment
        bottom = lt.names(r.bottom)
        return lt.Moment(
            hands=moment.hands,
            bottom=[bottom if r.buried_by == seat else None for seat in range(4)],
            played=moment.played,
            scored=False,
            everything=moment.everything,
        )


@dataclass
class TableGame(lg.Game):
    """A tournament table: the client reads as the tournament's organiser unless a seat's
    token is given; strangers are refused every closed read."""

    bare: httpx.AsyncClient | None = None
    strangers: list[str] = field(default_factory=list)
    """The other table's seat tokens (the same deals, R36)."""

    async def reads(self) -> list[Json]:
        views = await super().reads()
        assert self.bare is not None
        for token in (None, *self.strangers):
            for path in CLOSED_READS:
                params = {"version": self.version} if path == "/state" else None
                r = await self.bare.get(self.url + path, params=params, headers=lg.auth(token))
                code = r.json()["code"]
                if path == "/view":  # a seat's own view: no token, or another match's
                    assert (r.status_code, code) in ((401, "unauthorized"), (403, "forbidden"))
                else:
                    assert (r.status_code, code) == (403, "table-closed"), r.text
                self.check.response(f"stranger GET {path}", None, r.status_code, r.text)
        rid = self.truth.rounds[1].rid
        if self.truth.service.get_round(rid).result is not None:
            await self.embargoed()
        return views

    def token(self, viewer: lt.Viewer | str) -> str | None:
        """A spectator of a closed table is its tournament's organiser."""
        return self.secrets.organiser if viewer is None else super().token(viewer)

    async def embargoed(self) -> None:
        """Once the table's deal is scored (the truth never calls it so: the embargo):
        whole histories for every reader, and the deal's records and check refused."""
        for viewer, who in lt.READERS:
            after = 0
            while True:
                page = (await self.get("/history", viewer, who, after=after, limit=200)).json()
                after = page["next"]
                if not page["more"]:
                    break
        for path in ("/rounds/1/verify", "/rounds/1/record", "/record"):
            r = await self.client.get(self.url + path)
            assert r.status_code == 409 and r.json()["code"] == "deal-embargoed", r.text
            self.check.response(f"embargoed GET {path}", None, r.status_code, r.text)


def tournament(people: int) -> Json:
    players = [{"name": "a"}, {"name": "b"}]
    teams = [{"name": f"team {i}", "players": players} for i in range(people)]
    return {"name": "cup", "format": "round_robin", "matchLength": 1, "teams": teams}


async def play_a_table(seed: int, commands: int) -> lt.Checker:
    rng = random.Random(seed)
    deal_rng = random.Random(seed ^ 0x5EED)
    clock = FakeClock()
    service = GameService(
        {"PERSISTENCE_MODULE": "eventsourcing.popo"},
        clock=clock,
        seeds=lambda: deal_rng.randbytes(32),
    )
    app = make_app(service)
    transport = httpx.ASGITransport(app=lg.asgi(app))
    async with (
        app.lifespan(),
        httpx.AsyncClient(transport=transport, base_url="http://test") as client,
        httpx.AsyncClient(transport=transport, base_url="http://test") as bare,
    ):
        made = (await client.post("/v1/tournaments", json=tournament(4))).json()
        organiser = made["organiserToken"]
        url = f"/v1/tournaments/{made['tournamentId']}/rounds"
        r = await client.post(url, headers=lg.auth(organiser))
        assert r.status_code == 201, r.text
        tokens = r.json()["seatTokens"]
        mine = sorted((t for t in tokens if t["table"] == 1), key=lambda t: t["seat"])
        match_id = mine[0]["matchId"]
        client.headers["Authorization"] = f"Bearer {organiser}"  # spectators: the organiser
        secrets = lt.Secrets(organiser, [t["token"] for t in mine])
        truth = lt.Truth(service, UUID(match_id), clock)
        checker = CountingChecker(truth, secrets)
        version = (await client.get(f"/v1/matches/{match_id}")).json()["version"]
        truth.refresh(version)
        strangers = [t["token"] for t in tokens if t["table"] == 2]
        game = TableGame(
            app, client, truth, checker, rng, secrets, match_id, version, bare=bare,
            strangers=strangers,
        )  # fmt: skip
        async with AsyncExitStack() as streams:
            for viewer in lt.VIEWERS:  # the spectator's stream is the organiser's
                path = f"/v1/matches/{match_id}/stream"
                watching = stream(app, path, lg.auth(game.token(viewer)))
                game.streams[viewer] = await streams.enter_async_context(watching)
            await lg.play(game, commands)
    service.close()
    return checker


def test_a_tournament_table_under_embargo(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lt, "RoundTruth", EmbargoedRoundTruth)
    checker = asyncio.run(play_a_table(5, 200))
    counted: Counter[str] = checker.checked
    assert counted["embargoed GET /rounds/1/verify"] >= 1, "the table's round was not scored"
    assert counted["stranger GET /history"] > 100
    assert counted["SSE frame"] > 100 and counted["GET /state"] > 100
    assert counted["the burier sees the bottom"] >= 1

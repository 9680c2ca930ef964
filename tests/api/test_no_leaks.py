"""RULES R33 over HTTP: no response ever holds a card its viewer may not see (issue 4,
"Writes you can trust").

Random games are played through the API only — each move one a seat's view offers,
picked at random (declare, overcall, pass, bury, lead a single, a pair or a throw that
may fail, follow), with now and then a move the rules refuse and an idempotent replay.
After every command, every viewer — the four seats, a spectator and the organiser (who
reads as a spectator) — calls every read: its view (or the public view), its history
page, the state as of the new version and of an earlier one, the match, its rounds and
the current round; four seat streams and a spectator stream (SSE) stay open and every
frame is read; now and then a stream resumes with Last-Event-ID (its first frame carries
the missed history). Every response body — the command answers too — is checked
against what the viewer may see at that moment, computed from the aggregates directly
(not from the views):

* **kinds**: every R4 card token anywhere in the JSON is a kind the viewer has seen in
  that round by then: its own hands, the bottom while it was the burier or the 炒底 taker
  (R21, R20), every card played, shown (R17, R20) or shown by a failed throw (R22), the
  bottom's third card when it named trump (R19); everything once the round is scored;
* **copies**: a list of cards holds no more copies of a kind than the viewer has seen at
  once (R3: the two copies of a card are interchangeable, so copies cannot be told
  apart; a kind-level check alone would let a second copy through);
* **exactly**: a seat view's ``hand`` is that seat's hand then, its ``bottom`` the bottom
  exactly when it may see it, its ``visible`` its hand, that bottom and the cards played
  (all 108 once scored); a spectator gets no seat view, a seat no other seat's;
* **secrets**: the deal's seed (hex) appears nowhere before that round's RoundScored;
  no token hash ever; no seat or organiser token except in the answer that issued it.

The captured logs hold no card token and no token. ``LEAK_GAMES`` (default 2) sets the
games, ``LEAK_COMMANDS`` (default 190) the commands per game: round 1 to its end, then
round 2 through its burying and 炒底 window into its first tricks.
"""

from __future__ import annotations

import asyncio
import io
import json
import logging
import os
import random
import re
from collections import Counter
from collections.abc import Iterator
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID, uuid4

import httpx
import pytest
import structlog
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from litestar import Litestar

import services.history
import services.views
from api.app import create_app
from domain.game.round import Round, RoundPhase, round_id
from domain.rules.cards import card_names
from infra.logging import configure_logging
from infra.settings import Settings
from services.game import GameService, token_hash
from tests.api.test_sse import SseStream, stream
from tests.conftest import FakeClock

GAMES = int(os.environ.get("LEAK_GAMES", "2"))
COMMANDS = int(os.environ.get("LEAK_COMMANDS", "190"))
TIMEOUT = 5.0

Json = dict[str, Any]
Viewer = int | None
"""A seat 0..3, or None for a spectator (the organiser reads as one)."""
VIEWERS: tuple[Viewer, ...] = (0, 1, 2, 3, None)
READERS: tuple[tuple[Viewer, Viewer | str], ...] = (
    (0, 0),
    (1, 1),
    (2, 2),
    (3, 3),
    (None, None),
    (None, "organiser"),
)
"""(whose eyes, whose token): the organiser's token reads as a spectator."""
CARD = re.compile(r"(?:10|[2-9JQKA])[SHCD]|[SB]J")
CARD_IN_TEXT = re.compile(r"(?<![A-Za-z0-9])(?:(?:10|[2-9JQKA])[SHCD]|[SB]J)(?![A-Za-z0-9])")
RULE_SETS: tuple[Json, ...] = (
    {},
    {"preset": "tuolaji"},
    {"rules": {"selfOvercall": True, "throwPenaltyPoints": 10}},
    {"rules": {"declareWithJoker": True, "bottomMultiplier": "exponential"}},
)


def is_card(value: object) -> bool:
    return isinstance(value, str) and CARD.fullmatch(value) is not None


def names(cards: Any) -> Counter[str]:
    return Counter(card_names(cards))


def at_most(seen: Counter[str], new: Counter[str]) -> Counter[str]:
    """Kind by kind, the larger count."""
    out = Counter(seen)
    for kind, n in new.items():
        out[kind] = max(out[kind], n)
    return out


# -- what each viewer may see, from the aggregates -------------------------------------------


@dataclass
class Moment:
    """A round at one of its versions, as the rules let each viewer see it."""

    hands: list[Counter[str]]
    bottom: list[Counter[str] | None]
    """Per seat: the bottom when that seat may see it (R21, R20 炒底), else None."""
    played: Counter[str]
    scored: bool
    everything: Counter[str]
    """Once scored: the dealt hands and the dealt bottom (all 108)."""


@dataclass
class RoundTruth:
    number: int
    rid: UUID
    moments: list[Moment] = field(default_factory=list)
    """moments[k - 1]: the round at its version k."""
    seen: dict[Viewer, list[Counter[str]]] = field(default_factory=lambda: {v: [] for v in VIEWERS})
    """seen[viewer][k - 1]: how many copies of each kind the viewer has seen at once, at
    some version up to k."""
    seeds: set[str] = field(default_factory=set)

    @property
    def scored(self) -> bool:
        return bool(self.moments) and self.moments[-1].scored

    def advance(self, service: GameService, now: Any) -> None:
        current = service.get_round(self.rid).version
        for k in range(len(self.moments) + 1, current + 1):
            r = service.get_round(self.rid, version=k)
            moment = self._moment(r, now)
            self.moments.append(moment)
            if r.dealt is not None:
                self.seeds.add(r.seed_hex.lower())
            public = Counter(moment.played)
            for show in r.bidding.shows:
                public += names(show.cards)
            if r.play is not None:
                for _, attempted in r.play.failed_throws:
                    public += names(attempted)
            if r.bidding.fallback and r.bidding.bottom_card is not None:
                public += names([r.bidding.bottom_card])
            for viewer in VIEWERS:
                if moment.scored:
                    now_seen = moment.everything
                elif viewer is None:
                    now_seen = public
                else:
                    now_seen = moment.hands[viewer] + (moment.bottom[viewer] or Counter()) + public
                history = self.seen[viewer]
                history.append(at_most(history[-1] if history else Counter(), now_seen))

    @staticmethod
    def _moment(r: Round, now: Any) -> Moment:
        if r.dealt is None:
            empty: Counter[str] = Counter()
            return Moment([Counter() for _ in range(4)], [None] * 4, empty, False, empty)
        bottom = names(r.bottom)
        burying = r.phase is RoundPhase.BURYING
        scored = r.result is not None
        visible = [
            bottom
            if scored or (burying and r.bidding.burier == seat) or r.buried_by == seat
            else None
            for seat in range(4)
        ]
        everything: Counter[str] = names(r.dealt.bottom)
        for hand in r.dealt.hands:
            everything += names(hand)
        return Moment(
            hands=[names(r.hand_at(seat, now)) for seat in range(4)],
            bottom=visible,
            played=names(r.play.played) if r.play is not None else Counter(),
            scored=scored,
            everything=everything,
        )


@dataclass
class Truth:
    service: GameService
    match_id: UUID
    clock: FakeClock
    rounds: dict[int, RoundTruth] = field(default_factory=dict)
    scored_at_version: dict[int, frozenset[int]] = field(default_factory=dict)
    """Match version after a command → the rounds scored by then."""

    def refresh(self, version: int) -> None:
        match = self.service.get_match(self.match_id)
        for n in range(1, match.round_number + 1):
            rt = self.rounds.get(n)
            if rt is None:
                rt = self.rounds[n] = RoundTruth(n, round_id(self.match_id, n))
            rt.advance(self.service, self.clock())
        self.scored_at_version[version] = self.scored_now()

    def scored_now(self) -> frozenset[int]:
        return frozenset(n for n, rt in self.rounds.items() if rt.scored)

    def scored_at(self, version: int) -> frozenset[int]:
        known = [v for v in self.scored_at_version if v <= version]
        return self.scored_at_version[max(known)] if known else frozenset()


# -- the checks ------------------------------------------------------------------------------------


@dataclass
class Secrets:
    organiser: str = ""
    seats: list[str] = field(default_factory=list)

    def all(self) -> list[str]:
        return [t for t in (self.organiser, *self.seats) if t]


class LeakError(AssertionError):
    """A response holds something its viewer may not see."""


@dataclass
class Checker:
    truth: Truth
    secrets: Secrets
    checked: Counter[str] = field(default_factory=Counter)

    def response(
        self,
        what: str,
        viewer: Viewer,
        status: int,
        text: str,
        *,
        scored: frozenset[int] | None = None,
        sent: frozenset[str] = frozenset(),
        issued: str | None = None,
        headers: httpx.Headers | None = None,
    ) -> None:
        """Check one response (or SSE frame) body as seen by ``viewer``. ``scored``: the
        rounds scored when it was made (default: now); ``sent``: card kinds the request
        itself named (a refusal may name them back); ``issued``: the one token this
        answer hands out."""
        self.checked[what] += 1
        scored = self.truth.scored_now() if scored is None else scored
        where = f"{what} for viewer {viewer}"
        raw = text + "".join(f"\n{k}: {v}" for k, v in (headers or {}).items())
        for token in self.secrets.all():
            if token != issued and token in raw:
                raise LeakError(f"{where}: a token appears\n{raw[:400]}")
            if token_hash(token) in raw:
                raise LeakError(f"{where}: a token hash appears\n{raw[:400]}")
        lowered = raw.lower()
        for n, rt in self.truth.rounds.items():
            if n not in scored:
                for seed in rt.seeds:
                    if seed in lowered:
                        raise LeakError(f"{where}: round {n}'s seed appears before RoundScored")
        if not text.strip():
            return
        body = json.loads(text)
        if isinstance(body, dict) and "status" in body and "detail" in body and status >= 400:
            self._problem(where, viewer, body, sent)
            return
        self._walk(where, viewer, body, None, scored)

    def _problem(self, where: str, viewer: Viewer, body: Json, sent: frozenset[str]) -> None:
        """A refusal names the rule and the cards: only cards the caller sent or may see."""
        text = f"{body.get('title', '')} {body.get('detail', '')}"
        current = max(self.truth.rounds) if self.truth.rounds else None
        for token in CARD_IN_TEXT.findall(text):
            if token in sent or current is None:
                continue
            rt = self.truth.rounds[current]
            seen = rt.seen[viewer][-1] if rt.seen[viewer] else Counter()
            if not rt.scored and seen[token] == 0:
                raise LeakError(f"{where}: the problem names {token}, unseen by the viewer: {text}")

    # context: ("view", round, version) | ("item", round) | ("revealed", round) | None

    def _walk(
        self,
        where: str,
        viewer: Viewer,
        node: Any,
        ctx: tuple[str, int, int] | None,
        scored: frozenset[int],
    ) -> None:
        if isinstance(node, dict):
            if node.get("kind") in ("seat", "public") and "versions" in node:
                ctx = self._view(where, viewer, node, scored)
            elif {"aggregate", "aggregateVersion", "type", "data"} <= node.keys():
                if node["aggregate"] == "round" and isinstance(node.get("round"), int):
                    ctx = ("item", node["round"], 0)
                else:
                    ctx = None
            for key, value in node.items():
                child = ctx
                if key == "revealed" and value is not None:
                    view = node.get("view") or {}
                    child = ("revealed", int(view.get("roundNumber") or 0), 0)
                self._walk(where, viewer, value, child, scored)
            return
        if isinstance(node, list):
            cards = [x for x in node if is_card(x)]
            if cards and len(cards) == len(node):
                self._cards(where, viewer, Counter(cards), ctx, scored)
                return
            for value in node:
                self._walk(where, viewer, value, ctx, scored)
            return
        if is_card(node):
            self._cards(where, viewer, Counter([node]), ctx, scored)

    def _allowed(
        self, viewer: Viewer, ctx: tuple[str, int, int] | None, scored: frozenset[int]
    ) -> Counter[str] | None:
        """Copies of each kind the viewer may see in this part (None: everything)."""
        if ctx is None:
            return Counter()
        kind, number, version = ctx
        rt = self.truth.rounds.get(number)
        if rt is None:
            return Counter()
        if number in scored:
            return None
        if kind == "revealed":
            return Counter()  # a round's hidden cards before it is scored
        seen = rt.seen[viewer]
        if not seen:
            return Counter()
        if kind == "view" and 1 <= version <= len(seen):
            return seen[version - 1]
        return seen[-1]  # a history item: what the viewer has seen of the round so far

    def _cards(
        self,
        where: str,
        viewer: Viewer,
        cards: Counter[str],
        ctx: tuple[str, int, int] | None,
        scored: frozenset[int],
    ) -> None:
        allowed = self._allowed(viewer, ctx, scored)
        if allowed is None:
            return
        for kind, n in cards.items():
            if allowed[kind] == 0:
                raise LeakError(f"{where}: {kind} in {ctx}, never visible to this viewer")
            if n > allowed[kind]:
                raise LeakError(
                    f"{where}: {n} copies of {kind} in one list in {ctx}; the viewer has "
                    f"seen {allowed[kind]}"
                )

    def _view(
        self, where: str, viewer: Viewer, view: Json, scored: frozenset[int]
    ) -> tuple[str, int, int] | None:
        """The exact checks of a view; its context for the kind checks."""
        number = int(view.get("roundNumber") or 0)
        version = (view.get("versions") or {}).get("roundVersion")
        if view["kind"] == "public":
            for secret in ("hand", "bottom", "visible", "legal"):
                if secret in view:
                    raise LeakError(f"{where}: a public view with {secret!r}")
        elif viewer is None or view.get("seat") != viewer:
            raise LeakError(f"{where}: the view of seat {view.get('seat')}")
        if not number or not isinstance(version, int):
            return None
        rt = self.truth.rounds[number]
        moment = rt.moments[version - 1]
        if view["kind"] == "seat" and viewer is not None:
            if Counter(view["hand"]) != moment.hands[viewer]:
                raise LeakError(f"{where}: hand {view['hand']} is not seat {viewer}'s hand then")
            bottom = moment.bottom[viewer]
            if (view["bottom"] is None) != (bottom is None) or (
                bottom is not None and Counter(view["bottom"]) != bottom
            ):
                raise LeakError(f"{where}: bottom {view['bottom']}, the rules say {bottom}")
            visible = (
                moment.everything
                if moment.scored
                else moment.hands[viewer] + (bottom or Counter()) + moment.played
            )
            if Counter(view["visible"]) != visible:
                raise LeakError(f"{where}: visible {sorted(view['visible'])} is not {visible}")
        return ("view", number, version)


# -- the table, over HTTP -------------------------------------------------------------------------


def asgi(app: Litestar) -> Any:
    """The app as httpx's ASGITransport types an ASGI callable."""
    return app


def auth(token: str | None) -> dict[str, str]:
    return {} if token is None else {"Authorization": f"Bearer {token}"}


@dataclass
class Game:
    app: Litestar
    client: httpx.AsyncClient
    truth: Truth
    check: Checker
    rng: random.Random
    secrets: Secrets
    match_id: str
    version: int = 0
    cursors: dict[str, int] = field(default_factory=dict)
    streams: dict[Viewer, SseStream] = field(default_factory=dict)

    @property
    def url(self) -> str:
        return f"/v1/matches/{self.match_id}"

    def token(self, viewer: Viewer | str) -> str | None:
        if viewer == "organiser":
            return self.secrets.organiser
        return None if viewer is None else self.secrets.seats[int(viewer)]

    async def get(
        self, path: str, viewer: Viewer, who: Viewer | str = None, **params: Any
    ) -> httpx.Response:
        """GET with ``who``'s token (a seat, None, "organiser"), checked as ``viewer``
        sees it."""
        token = self.token(who)
        r = await self.client.get(self.url + path, params=params or None, headers=auth(token))
        assert r.status_code == 200, (path, r.status_code, r.text)
        self.check.response(f"GET {path or '/'}", viewer, r.status_code, r.text, headers=r.headers)
        return r

    async def act(
        self, seat: int, action: str, cards: list[str], key: str | None = None
    ) -> httpx.Response:
        headers = auth(self.secrets.seats[seat])
        if key is not None:
            headers["Idempotency-Key"] = key
        r = await self.client.post(
            f"{self.url}/actions/{action}", json={"cards": cards}, headers=headers
        )
        if r.status_code == 200 and r.headers.get("idempotent-replayed") != "true":
            self.version = r.json()["version"]
            self.truth.refresh(self.version)
        self.check.response(
            f"POST actions/{action}",
            seat,
            r.status_code,
            r.text,
            sent=frozenset(cards),
            headers=r.headers,
        )
        return r

    async def reads(self) -> list[Json]:
        """Every read, for every viewer, after a command; the four seat views."""
        views: list[Json] = []
        for viewer in VIEWERS:
            if viewer is None:
                await self.get("/public", None)
            else:
                views.append((await self.get("/view", viewer, viewer)).json())
        for viewer, who in READERS:
            name = str(who)
            page = await self.get(
                "/history", viewer, who, after=self.cursors.get(name, 0), limit=1000
            )
            self.cursors[name] = page.json()["next"]
            earlier = self.rng.randint(1, self.version)
            for version in sorted({self.version, earlier}):
                await self.get("/state", viewer, who, version=version)
        await self.get("", None)
        rounds = await self.get("/rounds", None)
        for item in rounds.json()["items"][-2:]:
            await self.get(f"/rounds/{item['number']}", None)
        return views

    async def everything_again(self, rounds: list[int]) -> None:
        """Once a round is scored: whole histories, and states inside that round."""
        for viewer, who in READERS:
            after = 0
            while True:
                page = (await self.get("/history", viewer, who, after=after, limit=200)).json()
                after = page["next"]
                if not page["more"]:
                    break
            for _ in range(3):
                await self.get("/state", viewer, who, version=self.rng.randint(1, self.version))
        for n in rounds:
            await self.get(f"/rounds/{n}", None)
            await self.get(f"/rounds/{n}/verify", None)

    async def frames(self) -> None:
        """Every frame the open streams sent up to the current version."""
        for viewer, s in self.streams.items():
            while True:
                ev = await s.next_view(TIMEOUT)
                assert ev.id is not None and ev.data is not None
                self.check.response(
                    "SSE frame",
                    viewer,
                    200,
                    ev.data,
                    scored=self.truth.scored_at(ev.id),
                )
                if ev.id >= self.version:
                    break

    async def resume(self) -> None:
        """A stream reconnecting with Last-Event-ID: its first frame carries `missed`."""
        viewer = self.rng.choice(VIEWERS)
        last = self.rng.randint(1, max(1, self.version - 1))
        headers = {**auth(self.token(viewer)), "Last-Event-ID": str(last)}
        async with stream(self.app, f"{self.url}/stream", headers) as s:
            assert s.status == 200
            ev = await s.next_view(TIMEOUT)
            assert ev.data is not None and ev.id is not None
            if ev.id > last:
                assert "missed" in ev.json()
            self.check.response(
                "SSE resumed frame", viewer, 200, ev.data, scored=self.truth.scored_at(ev.id)
            )


def lead(rng: random.Random, view: Json) -> list[str]:
    """A lead: a single, a pair, or a throw of a plain suit (it may fail, R22)."""
    hand: list[str] = view["hand"]
    roll = rng.random()
    pairs = sorted({c for c in hand if hand.count(c) == 2})
    if roll < 0.2 and pairs:
        pair = rng.choice(pairs)
        return [pair, pair]
    if roll < 0.45:
        level, trump = view["levelRank"], view["trump"]
        by_suit: dict[str, list[str]] = {}
        for c in hand:
            if c in ("SJ", "BJ") or c[:-1] == level or c[-1] == trump:
                continue
            by_suit.setdefault(c[-1], []).append(c)
        suits = [s for s, cards in by_suit.items() if len(cards) >= 2]
        if suits:
            cards = by_suit[rng.choice(sorted(suits))]
            return rng.sample(cards, min(len(cards), rng.randint(2, 4)))
    return [rng.choice(hand)]


def decide(rng: random.Random, view: Json, number: int) -> tuple[str, list[str]] | None:
    """A move the view offers, at random."""
    legal = view["legal"]
    actions = legal["actions"]
    if "bury" in actions:
        offered: list[str] = legal["buryFrom"]
        picks = sorted(rng.sample(range(len(offered)), legal["buryCount"]))
        return "bury", [offered[i] for i in picks]
    if "play" in actions:
        return "play", rng.choice(legal["follows"]) if legal["follows"] else lead(rng, view)
    odds = 0.9 if number > 1 else 0.35  # later rounds: overcalls after burying, 炒底
    if "overcall" in actions and legal["shows"] and rng.random() < odds:
        return "overcall", rng.choice(legal["shows"])
    if "declare" in actions and legal["shows"] and rng.random() < 0.5:
        return "declare", rng.choice(legal["shows"])
    if "pass" in actions:
        return "pass", []
    if "declare" in actions and legal["shows"]:
        return "declare", legal["shows"][0]
    return None


async def play_and_watch(
    seed: int, body: Json, commands: int = COMMANDS, *, to_round_two: bool = True
) -> Checker:
    """Play one game through the API and check every response (raises :class:`LeakError`)."""
    rng = random.Random(seed)
    deal_rng = random.Random(seed ^ 0x5EED)
    clock = FakeClock()
    service = GameService(
        {"PERSISTENCE_MODULE": "eventsourcing.popo"},
        clock=clock,
        seeds=lambda: deal_rng.randbytes(32),
    )
    app = create_app(Settings(backend="popo", rate_limit_per_minute=0), service)
    secrets = Secrets()
    transport = httpx.ASGITransport(app=asgi(app))
    async with (
        AsyncExitStack() as stack,
        app.lifespan(),
        httpx.AsyncClient(transport=transport, base_url="http://test") as client,
    ):
        r = await client.post("/v1/matches", json={"name": "leaks", **body})
        assert r.status_code == 201, r.text
        match_id = r.json()["matchId"]
        secrets.organiser = r.json()["organiserToken"]
        truth = Truth(service, UUID(match_id), clock)
        checker = Checker(truth, secrets)
        checker.response("POST /v1/matches", None, 201, r.text, issued=secrets.organiser)
        for seat in range(4):
            r = await client.post(f"/v1/matches/{match_id}/seats/{seat}", json={"name": f"p{seat}"})
            assert r.status_code == 201, r.text
            secrets.seats.append(r.json()["token"])
            game_version = r.json()["version"]
            truth.refresh(game_version)
            checker.response("POST seats", seat, 201, r.text, issued=secrets.seats[-1])
        game = Game(app, client, truth, checker, rng, secrets, match_id, game_version)
        for viewer in VIEWERS:
            url = f"/v1/matches/{match_id}/stream"
            game.streams[viewer] = await stack.enter_async_context(
                stream(app, url, auth(game.token(viewer)))
            )
        failure: AssertionError | None = None
        try:
            await play(game, commands)
        except AssertionError as e:  # LeakError included: raised once the app has stopped
            failure = e
    service.close()
    if failure is not None:
        raise failure
    assert not to_round_two or 2 in truth.rounds, "the game did not reach round 2"
    return checker


async def play(game: Game, commands: int) -> None:
    """Up to ``commands`` moves the views offer, every read checked after each."""
    client, truth, rng = game.client, game.truth, game.rng
    views = await game.reads()
    await game.frames()
    for step in range(commands):
        public = (await client.get(f"{game.url}/public")).json()
        expected = public["expected"]
        number = public["roundNumber"]
        if expected is None or number > 2:
            break
        seats = [s for s in range(4) if views[s]["legal"]["actions"]]
        if expected["seat"] is not None:
            seats = [expected["seat"]]
        assert seats, expected
        seat = rng.choice(seats)
        choice = decide(rng, views[seat], number)
        assert choice is not None, (expected, views[seat]["legal"])
        action, cards = choice
        if rng.random() < 0.08:  # out of turn, or a card the rules refuse: refused
            other = (seat + 1 + rng.randrange(3)) % 4
            probe = await game.act(other, "play", views[other]["hand"][:1] or ["AS"])
            if probe.status_code == 200:
                await after_command(game, step)
                views = await game.reads()
                continue
            assert probe.status_code == 409, probe.text
        scored_before = truth.scored_now()
        key: str | None = uuid4().hex
        r = await game.act(seat, action, cards, key)
        if r.status_code == 409 and action == "play":  # a lead of mixed suits
            cards, key = [rng.choice(views[seat]["hand"])], None
            r = await game.act(seat, action, cards, key)
        assert r.status_code == 200, (action, cards, r.text)
        if key is not None and rng.random() < 0.05:  # the same request: its answer
            again = await game.act(seat, action, cards, key)
            assert again.status_code == 200 and again.content == r.content
            assert again.headers["idempotent-replayed"] == "true"
        await after_command(game, step)
        newly = sorted(truth.scored_now() - scored_before)
        if newly:
            await game.everything_again(newly)
        views = await game.reads()


async def after_command(game: Game, step: int) -> None:
    await game.frames()
    if step % 40 == 7:
        await game.resume()


# -- the tests ------------------------------------------------------------------------------------


@pytest.fixture
def logs() -> Iterator[io.StringIO]:
    """JSON lines of every log record while the test runs (infra.logging's setup)."""
    root = logging.getLogger()
    level = root.level
    stream_ = io.StringIO()
    configure_logging("INFO", stream=stream_)
    yield stream_
    for handler in [h for h in root.handlers if getattr(h, "_shengji_json_handler", False)]:
        root.removeHandler(handler)
    root.setLevel(level)
    structlog.reset_defaults()


def assert_clean_logs(text: str, secrets: Secrets) -> None:
    assert text.strip(), "nothing was logged"
    for token in secrets.all():
        assert token not in text, "a token in the logs"
        assert token_hash(token) not in text, "a token hash in the logs"
    assert "Bearer" not in text
    found = CARD_IN_TEXT.findall(text)
    assert not found, f"card tokens in the logs: {found[:10]}"


@settings(
    max_examples=GAMES,
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(seed=st.integers(0, 2**32 - 1), rules=st.sampled_from(RULE_SETS))
def test_no_response_shows_a_card_its_viewer_may_not_see(
    seed: int, rules: Json, logs: io.StringIO
) -> None:
    checker = asyncio.run(play_and_watch(seed, rules))
    assert checker.checked["SSE frame"] > 100
    assert checker.checked["GET /state"] > 100
    assert_clean_logs(logs.getvalue(), checker.secrets)


# -- the checks have teeth ------------------------------------------------------------------------


def test_the_checks_catch_a_bottom_shown_to_every_seat(monkeypatch: pytest.MonkeyPatch) -> None:
    """Views that show the bottom to every seat are caught (exact and kind checks)."""

    def everyone(round_: Round | None, viewer: int, **_: Any) -> tuple[int, ...] | None:
        return None if round_ is None or round_.dealt is None else tuple(round_.bottom)

    monkeypatch.setattr(services.views, "_visible_bottom", everyone)
    with pytest.raises(LeakError, match="bottom"):
        asyncio.run(play_and_watch(1, {}, 40, to_round_two=False))


def test_the_checks_catch_a_history_that_tells_too_much(monkeypatch: pytest.MonkeyPatch) -> None:
    """A history that shows the buried cards to all is caught by the kind checks; one
    that shows the seed, by the seed search."""

    def cards_for_all(*_: Any) -> frozenset[str]:
        return frozenset({"cards"})

    monkeypatch.setattr(services.history, "_visible", cards_for_all)
    with pytest.raises(LeakError, match=r"never visible|copies"):
        asyncio.run(play_and_watch(2, {}, 60, to_round_two=False))

    def seed_for_all(*_: Any) -> frozenset[str]:
        return frozenset({"seed"})

    monkeypatch.setattr(services.history, "_visible", seed_for_all)
    with pytest.raises(LeakError, match="seed"):
        asyncio.run(play_and_watch(3, {}, 5, to_round_two=False))


# -- tokens handed out once ------------------------------------------------------------------------


def test_a_replayed_key_hands_no_token_to_another_client() -> None:
    """A seat claim (and a match creation) answers its token once. Replaying its
    Idempotency-Key is how *its* client recovers a lost answer, but callers without a
    token share one key scope: another client that sends the same key and body (keys are
    often guessable: "seat-0") must not be handed the token (R33: other seats' tokens
    never appear in any response). Any fix passes: keys scoped by client, keys that
    must be unguessable, or no replay of an issued token to an anonymous caller."""

    async def run() -> None:
        app = create_app(
            service=GameService({"PERSISTENCE_MODULE": "eventsourcing.popo"}, clock=FakeClock())
        )

        def client(address: str) -> httpx.AsyncClient:
            transport = httpx.ASGITransport(app=asgi(app), client=(address, 50000))
            return httpx.AsyncClient(transport=transport, base_url="http://test")

        async with app.lifespan(), client("198.51.100.7") as mine, client("203.0.113.9") as other:
            body = {"name": "replayed"}
            created = await mine.post("/v1/matches", json=body, headers={"Idempotency-Key": "m-1"})
            if created.status_code == 201:
                organiser = created.json()["organiserToken"]
                again = await other.post(
                    "/v1/matches", json=body, headers={"Idempotency-Key": "m-1"}
                )
                assert organiser not in again.text, "another client got the organiser token"
            else:  # the key was refused (too guessable): create without one
                assert created.status_code == 422, created.text
                created = await mine.post("/v1/matches", json=body)
            url = f"/v1/matches/{created.json()['matchId']}/seats/0"
            claim = await mine.post(url, json={"name": "p0"}, headers={"Idempotency-Key": "seat-0"})
            if claim.status_code == 201:
                token = claim.json()["token"]
                again = await other.post(
                    url, json={"name": "p0"}, headers={"Idempotency-Key": "seat-0"}
                )
                assert token not in again.text, "another client got seat 0's token"
                assert token_hash(token) not in again.text
            else:
                assert claim.status_code == 422, claim.text

    asyncio.run(run())

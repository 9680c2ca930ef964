"""A random game played over HTTP with five streams open (every frame read: a seat stream's
are its views at every version) and every viewer reading after the commands :func:`play`
samples (the tests: :mod:`tests.api.test_no_leaks`).
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import Any, NamedTuple
from uuid import UUID, uuid4

import httpx
from litestar import Litestar

from services.game import GameService
from tests.api.leak_truth import (
    COMMANDS,
    READERS,
    SAMPLE,
    TIMEOUT,
    VIEWERS,
    Checker,
    Json,
    Secrets,
    Truth,
    Viewer,
)
from tests.api.sse_driver import SseStream, stream
from tests.apps import make_app
from tests.conftest import FakeClock


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
    seed: int = 0
    """Draws which commands are followed by every read (:func:`play`)."""
    sampled: int = 0
    """The calls of :meth:`reads` so far: which reader reads an earlier state."""

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
        """Every read, for every viewer, after a command (the state as of an earlier
        version: one reader in turn, unless every command is sampled); the four seat
        views."""
        self.sampled += 1
        views: list[Json] = []
        for viewer in VIEWERS:
            if viewer is None:
                await self.get("/public", None)
            else:
                views.append((await self.get("/view", viewer, viewer)).json())
        for i, (viewer, who) in enumerate(READERS):
            name = str(who)
            page = await self.get(
                "/history", viewer, who, after=self.cursors.get(name, 0), limit=1000
            )
            self.cursors[name] = page.json()["next"]
            earlier = self.rng.randint(1, self.version)
            turn = SAMPLE >= 1 or i == self.sampled % len(READERS)
            for version in sorted({self.version, earlier if turn else self.version}):
                await self.get("/state", viewer, who, version=version)
        await self.get("", None)
        rounds = await self.get("/rounds", None)
        for item in rounds.json()["items"][-2:]:
            await self.get(f"/rounds/{item['number']}", None)
        return views

    def no_reads(self) -> dict[int, Json]:
        """After a command :func:`play` did not sample: no read (the seat views the next
        move needs are read then). The game's random draws are those :meth:`reads` makes,
        so a seed plays the same game whichever commands are sampled."""
        for _ in READERS:
            self.rng.randint(1, self.version)
        return {}

    async def view(self, views: dict[int, Json], seat: int) -> Json:
        """Seat ``seat``'s view at the current version: read (and checked) once."""
        if seat not in views:
            views[seat] = (await self.get("/view", seat, seat)).json()
        return views[seat]

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
        """A stream reconnecting with Last-Event-ID: a frame for every version after it."""
        viewer = self.rng.choice(VIEWERS)
        last = self.rng.randint(1, max(1, self.version - 1))
        headers = {**auth(self.token(viewer)), "Last-Event-ID": str(last)}
        async with stream(self.app, f"{self.url}/stream", headers) as s:
            assert s.status == 200
            expected = last + 1
            while expected <= self.version:
                ev = await s.next_view(TIMEOUT)
                assert ev.data is not None and ev.id == expected
                self.check.response(
                    "SSE resumed frame", viewer, 200, ev.data, scored=self.truth.scored_at(ev.id)
                )
                expected += 1


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


GAME_S = 290.0
"""The longest one game may take: just inside the per-test timeout (pyproject.toml)."""


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
    app = make_app(service)
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
        game = Game(app, client, truth, checker, rng, secrets, match_id, game_version, seed=seed)
        for viewer in VIEWERS:
            url = f"/v1/matches/{match_id}/stream"
            game.streams[viewer] = await stack.enter_async_context(
                stream(app, url, auth(game.token(viewer)))
            )
        failure: AssertionError | None = None
        try:
            # A request or stream that never answers fails here, with its stack, rather
            # than hanging the run (the per-test timeout's signal can be swallowed by a
            # task that suppresses everything on its way out).
            async with asyncio.timeout(GAME_S):
                await play(game, commands)
        except AssertionError as e:  # LeakError included: raised once the app has stopped
            failure = e
    service.close()
    if failure is not None:
        raise failure
    assert not to_round_two or 2 in truth.rounds, "the game did not reach round 2"
    return checker


class Mark(NamedTuple):
    """Where the current round is, to name what a command did (:func:`aftermath`)."""

    number: int
    phase: str
    buries: int
    tricks: int
    failed: int
    trick: int
    """Cards played to the trick in progress."""


def mark(game: Game) -> Mark:
    truth = game.truth
    if not truth.rounds:
        return Mark(0, "", 0, 0, 0, 0)
    number = max(truth.rounds)
    r = truth.service.get_round(truth.rounds[number].rid)
    play = r.play
    if play is None:
        return Mark(number, str(r.phase), r.bidding.buries, 0, 0, 0)
    return Mark(
        number, str(r.phase), r.bidding.buries, play.tricks_done, len(play.failed_throws),
        len(play.trick),
    )  # fmt: skip


COMMON = frozenset({"lead", "lead a pair", "follow", "trick won"})
"""Most of a game's commands: after these, every read is made only for the first
:data:`FIRST` of each kind in a round and then a :data:`SAMPLE` share of them."""
FIRST = 2


def aftermath(action: str, cards: list[str], before: Mark, after: Mark) -> str:
    """What a command accepted did: its kind, as :func:`play` samples the reads."""
    if action in ("overcall", "bury") and before.buries >= 1:
        return f"炒底 {action}"  # R20: after the bottom was buried once
    if action != "play":
        return action
    if after.number != before.number or after.tricks > before.tricks:
        return "trick won"
    if after.failed > before.failed:
        return "failed throw"
    if before.trick:
        return "follow"
    if len(cards) == 1:
        return "lead"
    return "lead a pair" if len(cards) == 2 and cards[0] == cards[1] else "lead a throw"


def read_everything(game: Game, sampler: random.Random, kinds: Counter[tuple[int, str]],
                    kind: str, before: Mark, after: Mark) -> bool:  # fmt: skip
    """Whether every read follows this command: always after a phase's first command, a
    round's first, a round scored and every kind of command outside :data:`COMMON`; after
    the first :data:`FIRST` of a common kind in a round; else at random (``sampler``, the
    game's seed) for a :data:`SAMPLE` share. Counted in the checker as ``read after …``."""
    kinds[after.number, kind] += 1
    changed = (after.number, after.phase) != (before.number, before.phase)
    full = (
        changed
        or kind not in COMMON
        or kinds[after.number, kind] <= FIRST
        or sampler.random() < SAMPLE
    )
    if full:
        game.check.checked[f"read after {kind}"] += 1
        if changed:
            game.check.checked[f"read after the start of {after.phase}"] += 1
    return full


async def play(game: Game, commands: int) -> None:
    """Up to ``commands`` moves the views offer. After each: every frame of every stream
    (the seat streams' frames are the seat views, exact-checked at every version); after
    those :func:`read_everything` picks, every read of every viewer (:meth:`Game.reads`),
    after the others the seat views the next move needs (the history pages read later
    carry every item)."""
    client, truth, rng = game.client, game.truth, game.rng
    sampler = random.Random(f"leak-reads:{game.seed}")
    kinds: Counter[tuple[int, str]] = Counter()
    views = dict(enumerate(await game.reads()))
    await game.frames()
    for step in range(commands):
        public = (await client.get(f"{game.url}/public")).json()
        expected = public["expected"]
        number = public["roundNumber"]
        if expected is None or number > 2:
            break
        if expected["seat"] is not None:
            seats = [expected["seat"]]
        else:
            seats = [s for s in range(4) if (await game.view(views, s))["legal"]["actions"]]
        assert seats, expected
        seat = rng.choice(seats)
        choice = decide(rng, await game.view(views, seat), number)
        assert choice is not None, (expected, views[seat]["legal"])
        action, cards = choice
        before = mark(game)
        if rng.random() < 0.08:  # out of turn, or a card the rules refuse: refused
            other = (seat + 1 + rng.randrange(3)) % 4
            hand = (await game.view(views, other))["hand"]
            probe = await game.act(other, "play", hand[:1] or ["AS"])
            if probe.status_code == 200:
                await after_command(game, step)
                game.check.checked["read after an accepted probe"] += 1
                views = dict(enumerate(await game.reads()))
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
            game.check.checked["read after round scored"] += 1
            await game.everything_again(newly)
        after = mark(game)
        full = read_everything(game, sampler, kinds, aftermath(action, cards, before, after),
                               before, after)  # fmt: skip
        views = dict(enumerate(await game.reads())) if full or newly else game.no_reads()


async def after_command(game: Game, step: int) -> None:
    await game.frames()
    if step % 40 == 7:
        await game.resume()

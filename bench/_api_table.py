"""A table of four seats played over HTTP by the API bench (:mod:`bench.api_bench`): the
moves it picks without asking the server, and the answers it counts.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import msgspec

from bench._api_server import BenchError
from bench._http import Connection, Response, build_request
from domain.rules.cards import NUM_KINDS, card_name, parse_rank, parse_suit
from domain.rules.context import TrumpContext, trump_context

CARD_OF = {card_name(k): k for k in range(NUM_KINDS)}
Json = dict[str, Any]
_encode = msgspec.json.encode


def choose_play(ctx: TrumpContext, hand: list[str], trick: list[Json]) -> list[str] | None:
    """A legal play without asking the server: lead a single (always legal, R22); follow
    a single lead with a single of its suit category if the hand has one, else any card
    (R23). None for a lead of more cards (the driver then asks the view's hints)."""
    if not hand:
        return None
    if not trick:
        return [hand[0]]
    lead = trick[0]["cards"]
    if len(lead) != 1:
        return None
    category = ctx.category
    wanted = category[CARD_OF[lead[0]]]
    for name in hand:
        if category[CARD_OF[name]] == wanted:
            return [name]
    return [hand[0]]


def choose(view: Json) -> tuple[str, list[str]] | None:
    """From what a view offers (as ``tests/api/rest.py``): bury the first cards offered,
    play the first hint (or the first card when leading), else pass."""
    legal = view["legal"]
    actions = legal["actions"]
    if "bury" in actions:
        return "bury", legal["buryFrom"][: legal["buryCount"]]
    if "play" in actions:
        return "play", legal["follows"][0] if legal["follows"] else view["hand"][:1]
    if "pass" in actions:
        return "pass", []
    if "declare" in actions and not view["declarations"]:
        return "declare", legal["shows"][0]
    return None


@dataclass
class Tally:
    """Answers by (what, status), shared by every driver of a phase."""

    answers: Counter[tuple[str, int]] = field(default_factory=Counter)
    plays: int = 0
    commands: int = 0

    def count(self, what: str, status: int) -> None:
        self.answers[(what, status)] += 1

    def unexpected(self) -> dict[str, int]:
        ok = {
            ("view", 200),
            ("public", 200),
            ("hello", 200),
            ("poll", 304),
            ("history", 200),
            ("create", 201),
            ("claim", 201),
        }
        return {
            f"{w} {s}": n
            for (w, s), n in sorted(self.answers.items())
            if not (w.startswith("act:") and s == 200) and (w, s) not in ok
        }


class Table:
    """A match with four claimed seats, played by the load generator over one connection."""

    def __init__(self, conn: Connection, authority: str, tally: Tally) -> None:
        self.conn = conn
        self.authority = authority
        self.tally = tally
        self.match_id = ""
        self.tokens: list[str] = []
        self.version = 0
        self.round_id: str | None = None
        self.expected: tuple[int | None, str] | None = None
        self.trick: list[Json] = []
        self.hands: dict[int, list[str]] = {}
        self.ctx: TrumpContext | None = None
        self.pass_key: tuple[str | None, str] = (None, "")
        self.passed: set[int] = set()
        self.sent_at = 0.0
        """``time.time()`` when the last command was sent."""
        self.answered_at = 0.0
        """``time.time()`` when its answer was read."""

    @property
    def url(self) -> str:
        return f"/v1/matches/{self.match_id}"

    def _req(
        self, method: str, path: str, seat: int | None = None, body: bytes | None = None
    ) -> bytes:
        headers = [] if seat is None else [("authorization", f"Bearer {self.tokens[seat]}")]
        return build_request(method, path, host=self.authority, headers=headers, body=body)

    async def _call(self, what: str, raw: bytes, status: int) -> Json:
        r = await self.conn.request(raw)
        self.tally.count(what, r.status)
        if r.status != status:
            raise BenchError(f"{what}: {r.status} {r.body[:300]!r}")
        body: Json = r.json()
        return body

    async def create(self, name: str) -> None:
        body = _encode({"name": name})
        created = await self._call("create", self._req("POST", "/v1/matches", body=body), 201)
        self.match_id = created["matchId"]
        for seat in range(4):
            claim = _encode({"name": f"p{seat}"})
            r = await self._call(
                "claim", self._req("POST", f"{self.url}/seats/{seat}", body=claim), 201
            )
            self.tokens.append(r["token"])
        await self.resync()

    def absorb(self, view: Json, seat: int | None) -> None:
        """What the driver learns from a view (a seat's, or the public one)."""
        rid = view.get("roundId")
        if rid != self.round_id:
            self.round_id, self.hands, self.ctx = rid, {}, None
        self.version = max(self.version, view["version"])
        exp = view.get("expected")
        self.expected = None if exp is None else (exp["seat"], exp["action"])
        self.trick = view.get("trick") or []
        if self.ctx is None and view.get("trumpDecided") and view.get("levelRank"):
            self.ctx = trump_context(parse_rank(view["levelRank"]), parse_suit(view["trump"]))
        if seat is not None:
            self.hands[seat] = view["hand"]

    async def resync(self) -> None:
        self.absorb(await self._call("public", self._req("GET", f"{self.url}/public"), 200), None)

    async def view(self, seat: int) -> Json:
        view = await self._call("view", self._req("GET", f"{self.url}/view", seat), 200)
        self.absorb(view, seat)
        return view

    async def act(self, seat: int, action: str, cards: list[str]) -> bool:
        """One command; True when done (200)."""
        raw = self._req("POST", f"{self.url}/actions/{action}", seat, _encode({"cards": cards}))
        self.sent_at = time.time()
        r: Response = await self.conn.request(raw)
        self.answered_at = time.time()
        self.tally.count("act:" + action, r.status)
        if r.status != 200:
            if r.status not in (409, 412):
                raise BenchError(f"{action} by seat {seat}: {r.status} {r.body[:300]!r}")
            return False
        done: Json = r.json()
        self.absorb(done["view"], seat)
        self.version = max(self.version, done["version"])
        self.tally.commands += 1
        if action == "play":
            self.tally.plays += 1
        return True

    async def step(self) -> str | None:
        """One command, the cheapest way the table allows; the action done, or None."""
        exp = self.expected
        if exp is None:
            return await self.generic()
        seat, action = exp
        if action == "play" and seat is not None:
            hand = self.hands.get(seat)
            cards = (
                None
                if hand is None or self.ctx is None
                else choose_play(self.ctx, hand, self.trick)
            )
            if cards is None:
                view = await self.view(seat)
                follows = view["legal"]["follows"]
                cards = follows[0] if follows else view["hand"][:1]
            if await self.act(seat, "play", cards):
                return "play"
            self.expected = None  # refused: read the table again next time
            return None
        if action in ("declare_or_pass", "overcall_or_pass"):
            key = (self.round_id, action)
            if key != self.pass_key:
                self.pass_key, self.passed = key, set()
            seats = [seat] if seat is not None else [s for s in range(4) if s not in self.passed]
            for s in seats:
                self.passed.add(s)
                if await self.act(s, "pass", []):
                    return "pass"
            return await self.generic()
        if action == "bury" and seat is not None:
            legal = (await self.view(seat))["legal"]
            if await self.act(seat, "bury", legal["buryFrom"][: legal["buryCount"]]):
                return "bury"
            self.expected = None
            return None
        return await self.generic()

    async def generic(self) -> str | None:
        """The slow way: read the public view, then the views of the seats that may act,
        and do what one of them offers."""
        await self.resync()
        exp = self.expected
        if exp is None:
            raise BenchError(f"match {self.match_id}: no action is expected")
        seats = range(4) if exp[0] is None else [exp[0]]
        for seat in seats:
            choice = choose(await self.view(seat))
            if choice is not None:
                return choice[0] if await self.act(seat, *choice) else None
        await asyncio.sleep(0.05)  # e.g. a redeal under way
        return None

    async def to_play(self, limit: int = 100) -> None:
        """Commands until a seat is expected to play a card."""
        for _ in range(limit):
            if self.expected is not None and self.expected[1] == "play":
                return
            await self.step()
        raise BenchError(f"match {self.match_id} did not reach its play in {limit} commands")

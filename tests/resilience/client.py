"""The client side of the resilience tests and benches (docs/deploy.md), against the replicas of
:mod:`tests.resilience.harness`.

* :class:`Client` — an HTTP client over several replicas: a connection error moves to the
  next replica and retries (a POST keeps its ``Idempotency-Key``, so a retry is safe),
  a 503 waits ``Retry-After`` (an outage, not a rule) and retries, a 409
  ``idempotency-in-flight`` waits and retries; everything is counted in :class:`Stats`.
* :class:`BotTable` — a match whose four seats this client plays, each move chosen only
  from what the seat's view offers (``legal``), every command sent with its own key and
  recorded as an :class:`Ack` when answered 200.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar
from uuid import uuid4

import httpx

from tests.resilience.harness import TLS, Json

COMMAND_EVENTS = {
    "declare": "TrumpDeclared",  # R17
    "pass": "Passed",  # R17, R18, R20
    "bury": "BottomBuried",  # R21
    "play": "CardPlayed",  # R22, R23
}


@dataclass
class Stats:
    connection_errors: int = 0
    unavailable: int = 0
    """503 answers (each checked for ``Retry-After`` and the ``store-unavailable`` type)."""
    in_flight: int = 0
    replayed: int = 0
    """Commands answered ``Idempotent-Replayed: true``: a retry found the first attempt
    committed (its answer lost with the killed replica or the broken connection)."""
    unexpected: list[str] = field(default_factory=list)


class Client:
    """Requests over ``bases`` (replica URLs), retried as the module docstring says."""

    def __init__(self, bases: list[str], *, deadline_s: float = 60.0, seed: int = 0) -> None:
        self.bases = bases
        self.http = httpx.AsyncClient(
            verify=TLS,
            timeout=httpx.Timeout(20.0, connect=2.0),
            limits=httpx.Limits(max_connections=200, max_keepalive_connections=50),
        )
        self.stats = Stats()
        self.deadline_s = deadline_s
        self.rng = random.Random(seed)
        self.unavailable_at: list[float] = []
        self.posting = [0] * len(bases)
        """POSTs in flight to each replica (a killer aims at one)."""

    async def close(self) -> None:
        await self.http.aclose()

    async def request(
        self,
        method: str,
        path: str,
        *,
        body: Json | None = None,
        headers: Mapping[str, str] | None = None,
        base: int | None = None,
    ) -> httpx.Response:
        """The first answer that is not a connection error, a 503 or an in-flight 409."""
        index = self.rng.randrange(len(self.bases)) if base is None else base
        give_up = time.monotonic() + self.deadline_s
        while True:
            target = index % len(self.bases)
            url = self.bases[target] + path
            self.posting[target] += method == "POST"
            try:
                r = await self.http.request(method, url, json=body, headers=headers)
            except httpx.TransportError:
                self.stats.connection_errors += 1
                index += 1  # another replica
                r = None
            finally:
                self.posting[target] -= method == "POST"
            if r is not None and r.status_code == 503:
                self._check_unavailable(r)
                retry_after = r.headers.get("retry-after", "1")
                await asyncio.sleep(min(0.5, int(retry_after) if retry_after.isdigit() else 1))
            elif r is not None and r.status_code == 409 and _code(r) == "idempotency-in-flight":
                self.stats.in_flight += 1
                await asyncio.sleep(0.1)
            elif r is not None:
                return r
            else:
                await asyncio.sleep(0.05)
            if time.monotonic() > give_up:
                raise TimeoutError(f"{method} {path}: no answer in {self.deadline_s}s")

    def _check_unavailable(self, r: httpx.Response) -> None:
        self.stats.unavailable += 1
        self.unavailable_at.append(time.monotonic())
        problem = r.json() if r.headers.get("content-type", "").startswith("application/") else {}
        if (
            problem.get("code") not in ("store-unavailable", "not-ready")
            or not r.headers.get("retry-after", "").isdigit()
        ):
            self.stats.unexpected.append(f"503 without the problem or Retry-After: {r.text[:200]}")


def _code(r: httpx.Response) -> str:
    try:
        body = r.json()
    except ValueError:
        return ""
    return str(body.get("code", "")) if isinstance(body, dict) else ""


@dataclass(frozen=True, slots=True)
class Ack:
    """A command answered 200: what was sent, its key, and the answer."""

    seat: int
    action: str
    cards: tuple[str, ...]
    key: str
    version: int
    answer: Json
    at: float = field(default_factory=time.monotonic)
    """When the answer arrived (loop clock)."""


def choose(view: Json, rng: random.Random) -> list[tuple[str, list[str]]]:
    """The moves the view offers this seat (R33: nothing else is known), best first."""
    legal = view["legal"]
    actions = legal["actions"]
    if "bury" in actions:
        return [("bury", legal["buryFrom"][: legal["buryCount"]])]
    if "play" in actions:
        if legal["follows"]:
            return [("play", f) for f in legal["follows"][:2]]
        hand = list(view["hand"])
        rng.shuffle(hand)
        return [("play", [card]) for card in hand[:2]]  # a single lead is always legal (R22)
    if "declare" in actions and not view["declarations"] and legal["shows"]:
        return [("declare", legal["shows"][0]), ("pass", [])]
    if "pass" in actions:
        return [("pass", [])]
    return []


class BotTable:
    """A match with four seats played by this client (see the module docstring)."""

    seats: tuple[int, ...] = (0, 1, 2, 3)
    """The seats this client plays (the others are bots the worker moves)."""

    def __init__(self, client: Client, match_id: str, tokens: list[str], seed: int) -> None:
        self.client = client
        self.match_id = match_id
        self.tokens = tokens
        self.acks: list[Ack] = []
        self.rng = random.Random(seed)
        self.refused: list[str] = []
        self.races = 0
        self.double_wins = 0
        self.race_losers: dict[int, int] = {}

    @property
    def url(self) -> str:
        return f"/v1/matches/{self.match_id}"

    @classmethod
    async def create(cls, client: Client, seed: int) -> BotTable:
        key = {"Idempotency-Key": uuid4().hex}
        r = await client.request("POST", "/v1/matches", body={"name": f"t{seed}"}, headers=key)
        assert r.status_code == 201, r.text
        match_id = r.json()["matchId"]
        tokens = []
        for seat in range(4):
            r = await client.request(
                "POST",
                f"/v1/matches/{match_id}/seats/{seat}",
                body={"name": f"p{seat}"},
                headers={"Idempotency-Key": uuid4().hex},
            )
            assert r.status_code == 201, r.text
            tokens.append(r.json()["token"])
        return cls(client, match_id, tokens, seed)

    def auth(self, seat: int) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[seat]}"}

    async def public(self, base: int | None = None) -> Json:
        r = await self.client.request("GET", self.url + "/public", base=base)
        assert r.status_code == 200, r.text
        body: Json = r.json()
        return body

    async def moves(self) -> tuple[int, int, list[tuple[str, list[str]]]]:
        """(match version, seat, moves) of a seat the views offer a move to."""
        public = await self.public()
        expected = public["expected"]
        if expected is None:
            return public["version"], -1, []
        seats = list(self.seats) if expected["seat"] is None else [expected["seat"]]
        for seat in (s for s in seats if s in self.seats):
            r = await self.client.request("GET", self.url + "/view", headers=self.auth(seat))
            assert r.status_code == 200, r.text
            view = r.json()
            options = choose(view, self.rng)
            if options:
                return view["version"], seat, options
        return public["version"], -1, []

    async def command(
        self,
        seat: int,
        action: str,
        cards: list[str],
        *,
        if_match: int | None = None,
        base: int | None = None,
    ) -> httpx.Response:
        key = uuid4().hex
        headers = {**self.auth(seat), "Idempotency-Key": key}
        if if_match is not None:
            headers["If-Match"] = f'"{if_match}"'
        body = {"cards": cards}
        r = await self.client.request(
            "POST", f"{self.url}/actions/{action}", body=body, headers=headers, base=base
        )
        if r.status_code == 200:
            self.client.stats.replayed += r.headers.get("idempotent-replayed") == "true"
            answer = r.json()
            self.acks.append(Ack(seat, action, tuple(cards), key, answer["version"], answer))
        return r

    async def step(self) -> bool:
        """One command; False when no seat is offered a move."""
        _, seat, options = await self.moves()
        if not options:
            return False
        r = await self.command(seat, *options[0])
        if r.status_code != 200:
            self.refused.append(f"{r.status_code} {_code(r)}")
        return True

    async def race(self) -> bool:
        """A race: two commands of the expected seat at the same If-Match version,
        sent at once to two replicas. Exactly one may win; the loser gets 409 (it lost
        at the store) or 412 (the winner had committed before it loaded)."""
        version, seat, options = await self.moves()
        if not options:
            return False
        first, second = options[0], options[-1]
        n = len(self.client.bases)
        results = await asyncio.gather(
            self.command(seat, *first, if_match=version, base=0),
            self.command(seat, *second, if_match=version, base=1 % n),
        )
        codes = sorted(r.status_code for r in results)
        self.races += 1
        if codes[0] == 200 and codes[1] == 200:
            self.double_wins += 1
        elif codes[0] == 200:
            self.race_losers[codes[1]] = self.race_losers.get(codes[1], 0) + 1
        else:
            self.refused.append(f"race without a winner: {codes}")
        return True

    async def replays_match(self, ack: Ack) -> bool:
        """The same key and body again: the original answer, marked replayed."""
        headers = {**self.auth(ack.seat), "Idempotency-Key": ack.key}
        r = await self.client.request(
            "POST",
            f"{self.url}/actions/{ack.action}",
            body={"cards": list(ack.cards)},
            headers=headers,
        )
        return (
            r.status_code == 200
            and r.headers.get("idempotent-replayed") == "true"
            and r.json() == ack.answer
        )


class PersonAndBots(BotTable):
    """A match of one person this client plays (seat 0) and three bots the worker moves
    (``PROCESS_ROLE=worker``: docs/scaling.md), so the person's commands and the bots'
    moves are saved by different processes."""

    seats: tuple[int, ...] = (0,)
    timers: ClassVar[Json | None] = None
    """The match's turn limits (none: no timer)."""

    @classmethod
    async def create(cls, client: Client, seed: int) -> BotTable:
        key = {"Idempotency-Key": uuid4().hex}
        body: Json = {"name": f"m{seed}"}
        if cls.timers is not None:
            body["timers"] = cls.timers
        r = await client.request("POST", "/v1/matches", body=body, headers=key)
        assert r.status_code == 201, r.text
        match_id, organiser = r.json()["matchId"], r.json()["organiserToken"]
        for seat in (1, 2, 3):
            r = await client.request(
                "POST",
                f"/v1/matches/{match_id}/seats/{seat}/bot",
                body={"kind": "heuristic"},
                headers={"Idempotency-Key": uuid4().hex, "Authorization": f"Bearer {organiser}"},
            )
            assert r.status_code in (200, 201), r.text
        r = await client.request(
            "POST",
            f"/v1/matches/{match_id}/seats/0",
            body={"name": "p0"},
            headers={"Idempotency-Key": uuid4().hex},
        )
        assert r.status_code == 201, r.text
        return cls(client, match_id, [r.json()["token"], "", "", ""], seed)


async def play(
    tables: list[BotTable],
    until: float,
    *,
    races: bool = False,
    stop: asyncio.Event | None = None,
) -> None:
    """Every table steps (or races) until the loop time ``until`` or ``stop``; commands in
    flight at the end finish (they retry until answered)."""

    async def run(table: BotTable) -> None:
        while time.monotonic() < until and not (stop is not None and stop.is_set()):
            moved = await (table.race() if races else table.step())
            if not moved:
                await asyncio.sleep(0.05)

    await asyncio.gather(*(run(t) for t in tables))

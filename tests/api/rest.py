"""Helpers of the REST tests: an app on a POPO GameService with a fixed clock and seeds,
and a table of four players driven over HTTP only by what their views offer."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from eventsourcing.domain import DomainEventProtocol, MutableOrImmutableAggregate
from eventsourcing.persistence import Recording
from litestar import Litestar
from litestar.testing import TestClient

from domain.game.round import Round
from infra.settings import Settings
from services.bot_driver import BotDriver
from services.game import GameService, TablePolicy
from services.webhooks.dispatch import Post
from tests.apps import TEST_SETTINGS, make_app, settings_of
from tests.conftest import FakeClock, FixedSeeds

Json = dict[str, Any]


class GatedService(GameService):
    """A GameService whose saves of round events can be held at a gate (for races)."""

    name = GameService.name

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.barrier: threading.Barrier | None = None
        self.hold: threading.Event | None = None
        self.holding = threading.Event()

    def save(
        self,
        *objs: MutableOrImmutableAggregate[Any] | DomainEventProtocol[Any] | None,
        **kwargs: Any,
    ) -> list[Recording[Any]]:
        if any(isinstance(o, Round) for o in objs):
            if self.barrier is not None:
                self.barrier.wait(timeout=10)
            if self.hold is not None:
                self.holding.set()
                self.hold.wait(timeout=10)
        return super().save(*objs, **kwargs)


def new_service(seed: int = 0, table: TablePolicy | None = None) -> GatedService:
    return GatedService(
        {"PERSISTENCE_MODULE": "eventsourcing.popo"},
        clock=FakeClock(),
        seeds=FixedSeeds(seed),
        table=table,
    )


@contextmanager
def client(
    service: GameService | None = None,
    *,
    settings: Settings = TEST_SETTINGS,
    post: Post | None = None,
    bots: BotDriver | None = None,
    **changes: Any,
) -> Iterator[TestClient[Litestar]]:
    """A client of the app of ``settings`` changed by ``changes``, on ``service`` (by
    default a new one with the settings' table policy), ``post`` and ``bots`` as
    :func:`tests.apps.make_app` takes them."""
    settings = settings_of(settings, **changes)
    service = service or new_service(table=settings.table)
    with TestClient(make_app(service, settings=settings, post=post, bots=bots)) as c:
        yield c


def settle(c: TestClient[Litestar], timeout: float = 120) -> None:
    """Wait until the app's bot driver is idle: every bot has moved as far as it can
    without a person or the clock (bots move off the request path)."""
    assert c.app.state.bots.idle(timeout), "the bot driver did not go idle"


def bots_match(c: TestClient[Litestar], kind: str, match_end: str = "rounds:1") -> tuple[str, Json]:
    """A match of four ``kind`` bots (``matchEnd``): its URL and the last seating's answer
    (the bots then play off the request path)."""
    made = c.post("/v1/matches", json={"rules": {"matchEnd": match_end}}).json()
    url = f"/v1/matches/{made['matchId']}"
    for seat in range(4):
        r = c.post(
            f"{url}/seats/{seat}/bot", json={"kind": kind}, headers=auth(made["organiserToken"])
        )
        assert r.status_code == 201, r.text
    seated: Json = r.json()
    return url, seated


def without_tokens(first: Json, *fields: str) -> Json:
    """The first answer as an idempotent replay gives it again: the tokens it minted
    withheld (``null``, or no seat tokens) and ``tokenWithheld`` (docs/security.md)."""
    return {
        **first,
        **{f: [] if isinstance(first[f], list) else None for f in fields},
        "tokenWithheld": True,
    }


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def choose(view: Json) -> tuple[str, list[str]] | None:
    """Only what the view offers: bury the first 8, play the first hint (or the first
    card when leading), declare the weakest show, else pass; never overcall."""
    legal = view["legal"]
    actions = legal["actions"]
    if "bury" in actions:
        return "bury", legal["buryFrom"][: legal["buryCount"]]
    if "play" in actions:
        return "play", legal["follows"][0] if legal["follows"] else view["hand"][:1]
    if "declare" in actions and not view["declarations"]:
        return "declare", legal["shows"][0]
    if "pass" in actions:
        return "pass", []
    return None


@dataclass
class Table:
    """A match with four people seated, played over HTTP."""

    c: TestClient[Litestar]
    match_id: str
    organiser: str
    tokens: list[str]
    answers: list[tuple[int, int, Json]] = field(default_factory=list)
    """(version, seat, view) of every command answered."""

    @classmethod
    def seat_four(cls, c: TestClient[Litestar], body: Json | None = None) -> Table:
        r = c.post("/v1/matches", json=body or {"name": "table"})
        assert r.status_code == 201, r.text
        created = r.json()
        tokens = []
        for seat in range(4):
            r = c.post(f"/v1/matches/{created['matchId']}/seats/{seat}", json={"name": f"p{seat}"})
            assert r.status_code == 201, r.text
            tokens.append(r.json()["token"])
        return cls(c, created["matchId"], created["organiserToken"], tokens)

    @property
    def url(self) -> str:
        return f"/v1/matches/{self.match_id}"

    def view(self, seat: int) -> Json:
        r = self.c.get(f"{self.url}/view", headers=auth(self.tokens[seat]))
        assert r.status_code == 200, r.text
        body: Json = r.json()
        return body

    def public(self) -> Json:
        body: Json = self.c.get(f"{self.url}/public").json()
        return body

    def act(self, seat: int, action: str, cards: list[str], **headers: str) -> Any:
        return self.c.post(
            f"{self.url}/actions/{action}",
            json={"cards": cards},
            headers={**auth(self.tokens[seat]), **headers},
        )

    def step(self) -> bool:
        """One command by a seat the views offer a move to; False when none is offered."""
        expected = self.public()["expected"]
        if expected is None:
            return False
        seats = range(4) if expected["seat"] is None else [expected["seat"]]
        for seat in seats:
            choice = choose(self.view(seat))
            if choice is not None:
                r = self.act(seat, *choice)
                assert r.status_code == 200, r.text
                body = r.json()
                self.answers.append((body["version"], seat, body["view"]))
                return True
        raise AssertionError(f"no seat is offered a move: {expected}")

    def play_round(self, limit: int = 400) -> None:
        """Play until round 1 is recorded (its result shows in the summary)."""
        for _ in range(limit):
            if self.c.get(self.url).json()["rounds"][0]["status"] == "scored":
                return
            assert self.step()
        raise AssertionError("the round did not end")

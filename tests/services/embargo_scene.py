"""The scene of the embargo tests (:mod:`tests.services.test_embargo`,
:mod:`tests.services.test_embargo_release`): a two-table bots tournament round, table A played to
its end and table B not started, and what a viewer may see of a round (its card budget, R33).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from uuid import UUID

import msgspec

from domain.game.match import Match
from domain.game.round import Round
from domain.game.round_events import (
    BottomBuried,
    CardPlayed,
    Dealt,
    DrawingEnded,
    Overcalled,
    ThrowFailed,
    TrumpDeclared,
    deal_for,
)
from domain.rules.cards import card_name, card_names
from domain.rules.ruleset import STANDARD
from domain.tournament.events import TeamEntry
from services.game import GameService
from tests.commands import run_bots
from tests.conftest import FakeClock, FixedSeeds
from tests.driving import play_round
from tests.tournaments import Tournaments

VIEWERS: tuple[int | None, ...] = (None, 0, 1, 2, 3)
_BURY_ENDS = ("Overcalled", "BottomBuried", "Dealt", "RoundScored")
CARD = re.compile(r"^(?:10|[2-9JQKA])[SHCD]$|^[SB]J$")
Json = Any


# -- the scene: table A finished, table B not started -----------------------------------------


@dataclass
class Scene:
    service: GameService
    tournaments: Tournaments
    tournament_id: UUID
    a: UUID
    """Table A's match: finished."""
    b: UUID
    """Table B's match: the same deals (R36), not a move made yet."""

    def match(self) -> Match:
        return self.service.get_match(self.a)

    def rounds(self) -> list[Round]:
        return [self.service.get_round(r.round_id) for r in self.match().results]

    def seeds(self) -> list[str]:
        """Every seed table A dealt (redeals included): secret until the release (R35)."""
        return [
            e.seed
            for r in self.rounds()
            for e in self.service.events.get(r.id)
            if isinstance(e, Dealt)
        ]

    def complete(self) -> None:
        """Play table B and collect: the tournament round completes (RoundCompleted)."""
        assert play_round(self.tournaments, self.tournament_id).completed


def bot_teams(n: int) -> list[TeamEntry]:
    return [TeamEntry(f"T{i}", (f"a{i}", f"b{i}"), ("heuristic", "random")) for i in range(n)]


def new_service() -> GameService:
    return GameService(
        {"PERSISTENCE_MODULE": "eventsourcing.popo"}, clock=FakeClock(), seeds=FixedSeeds()
    )


def half_played(deals: int = 2) -> Scene:
    """A round-robin tournament of four bot teams (two tables), round 1 scheduled; table
    A is played to its end by its bots, table B is left as dealt."""
    service = new_service()
    ts = Tournaments(service)
    t = ts.create(
        name="cup", rules=STANDARD, teams=bot_teams(4), fmt="round_robin", match_length=deals
    )
    ts.schedule_next(t.id)
    a, b = (table.match_id for table in ts.get(t.id).rounds[0].tables)
    run_bots(service, a, 10_000)
    assert service.get_match(a).finished
    other = service.get_match(b)
    assert not other.finished and other.round_number == 1 and not other.results
    # R36: table B holds the very deal table A has scored (the leak the embargo closes)
    first = next(
        e
        for e in service.events.get(service.get_match(a).results[0].round_id)
        if isinstance(e, Dealt)
    )
    dealing = service.current_round(other)
    assert dealing is not None and dealing.dealt is not None
    assert dealing.commitment == first.commitment
    assert dealing.dealt.hands == deal_for(first.seed, first.first_seat).hands
    return Scene(service, ts, t.id, a, b)


# -- what a viewer may see: the card budget of a round (R33) ----------------------------------


def budget(service: GameService, round_id: UUID, viewer: int | None) -> Counter[str]:
    """The most copies of each card ``viewer`` saw at once in the round during play:
    every card played, shown (R17, R20) or shown by a failed throw (R22), the bottom's 3rd
    card when it named trump (R19); a seat also its hands as dealt, and the bottom and
    the buried cards if it ever buried or took them (R20, R21). A list in a response
    holding more copies of a card than this shows something the viewer never saw."""
    played: Counter[str] = Counter()
    seen: Counter[str] = Counter()
    bottoms: list[str] = []
    handlers: set[int] = set()
    buried = False
    for e in service.events.get(round_id):
        if isinstance(e, Dealt):
            dealt = deal_for(e.seed, e.first_seat)
            bottoms += card_names(dealt.bottom)
            buried = False
            if viewer is not None:
                seen |= Counter(card_names(dealt.hands[viewer]))
        elif isinstance(e, CardPlayed):
            played += Counter(card_names(e.cards))
        elif isinstance(e, TrumpDeclared | Overcalled):
            seen |= Counter(card_names(e.cards))
            if isinstance(e, Overcalled) and buried:
                handlers.add(e.seat)  # 炒底: the overcaller takes the buried cards (R20)
        elif isinstance(e, ThrowFailed):
            seen |= Counter(card_names(e.attempted))
        elif isinstance(e, DrawingEnded) and e.fallback_card is not None:
            seen |= Counter([card_name(e.fallback_card)])
        elif isinstance(e, BottomBuried):
            handlers.add(e.seat)
            bottoms += card_names(e.cards)
            buried = True
    allowed = played | seen
    if viewer is not None and viewer in handlers:
        allowed |= seen + Counter(bottoms)
    return allowed


def card_lists(value: Json) -> Iterator[list[str]]:
    """Every list of R4 card tokens anywhere in a JSON value."""
    if isinstance(value, dict):
        for v in value.values():
            yield from card_lists(v)
    elif isinstance(value, list):
        if value and all(isinstance(v, str) and CARD.match(v) for v in value):
            yield value
        else:
            for v in value:
                yield from card_lists(v)


def over_budget(value: Json, allowed: Counter[str]) -> list[str]:
    """The cards some list of ``value`` holds more copies of than ``allowed``."""
    return sorted(
        {
            card
            for cards in card_lists(value)
            for card, n in Counter(cards).items()
            if n > allowed[card]
        }
    )


def as_json(value: object) -> Json:
    return msgspec.json.decode(msgspec.json.encode(value))


def leaked_seeds(value: object, seeds: list[str]) -> list[str]:
    text = msgspec.json.encode(value).decode()
    return [s for s in seeds if s in text]

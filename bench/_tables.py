"""Tables for the benches: commands sent through the product's bus as the service itself
(:mod:`services.bus`), from the plain arguments a bench draws."""

from __future__ import annotations

from collections.abc import Sequence
from uuid import UUID

from domain.game.actions import action_of
from domain.rules.cards import Card
from domain.rules.ruleset import RuleSet
from services.bus import Bus
from services.match_commands import ClaimSeat, CreateMatch, SeatBot
from services.round_commands import Act


def new_match(bus: Bus, rules: RuleSet, name: str, preset: str | None = None) -> UUID:
    """A new match's id."""
    return UUID(bus.execute(CreateMatch(rules, name=name, preset=preset)).match_id)


def seat_bots(bus: Bus, match_id: UUID, kind: str = "random") -> None:
    """Four bots of ``kind`` at the table: round 1 is dealt (R16)."""
    for seat in range(4):
        bus.execute(SeatBot(match_id, seat, kind, f"bot{seat}"))


def seat_person(bus: Bus, match_id: UUID, seat: int, name: str) -> str:
    """A person takes ``seat``: the seat token."""
    token: str = bus.execute(ClaimSeat(match_id, seat, name)).token
    return token


def act(bus: Bus, match_id: UUID, seat: int, action: str, cards: Sequence[Card] = ()) -> None:
    """``seat`` makes ``action`` with ``cards``."""
    bus.execute(Act(match_id, action_of(action, tuple(cards)), seat=seat))

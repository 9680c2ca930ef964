"""Finished matches made cheaply through the services (no HTTP): one-round bot matches,
and matches the organiser ends before they are played (R32)."""

from __future__ import annotations

import dataclasses
from uuid import UUID

from domain.rules.ruleset import MatchEnd, MatchEndKind, preset
from services.bots import run_bots
from services.game import GameService


def bot_match(service: GameService, preset_name: str = "standard", rounds: int = 1) -> UUID:
    """A match of four ``random`` bots, played to its end (``rounds:N``, R32)."""
    rules = dataclasses.replace(preset(preset_name), match_end=MatchEnd(MatchEndKind.ROUNDS, rounds))
    mid = service.create_match(rules, name="bots", preset=preset_name)
    for seat in range(4):
        service.take_seat(mid, seat, f"bot{seat}", "random")
    run = run_bots(service, mid, 100_000)
    assert service.get_match(mid).finished, run
    return mid


def ended_match(service: GameService, preset_name: str = "standard") -> UUID:
    """A match the organiser ended in its first round (the round abandoned, R32)."""
    mid = service.create_match(preset(preset_name), name="ended", preset=preset_name)
    for seat in range(4):
        service.take_seat(mid, seat, f"p{seat}", "human")
    service.finish_match(mid)
    return mid


def open_match(service: GameService) -> UUID:
    """A match in its first round: cards dealt, nothing scored."""
    mid = service.create_match(preset("standard"), name="open", preset="standard")
    for seat in range(4):
        service.take_seat(mid, seat, f"p{seat}", "human")
    return mid

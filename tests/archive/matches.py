"""Finished matches made cheaply through the services (no HTTP): one-round bot matches,
and matches the organiser ends before they are played (R32)."""

from __future__ import annotations

import dataclasses
from uuid import UUID

from domain.rules.ruleset import STANDARD, MatchEnd, MatchEndKind, preset
from domain.tournament.events import TeamEntry
from services.game import GameService
from tests.commands import create_match, finish_match, run_bots, take_seat
from tests.driving import play_round
from tests.tournaments import Tournaments


def bot_match(service: GameService, preset_name: str = "standard", rounds: int = 1) -> UUID:
    """A match of four ``random`` bots, played to its end (``rounds:N``, R32)."""
    rules = dataclasses.replace(
        preset(preset_name), match_end=MatchEnd(MatchEndKind.ROUNDS, rounds)
    )
    mid = create_match(service, rules, name="bots", preset=preset_name)
    for seat in range(4):
        take_seat(service, mid, seat, f"bot{seat}", "random")
    run = run_bots(service, mid, 100_000)
    assert service.get_match(mid).finished, run
    return mid


def ended_match(service: GameService, preset_name: str = "standard") -> UUID:
    """A match the organiser ended in its first round (the round abandoned, R32)."""
    mid = create_match(service, preset(preset_name), name="ended", preset=preset_name)
    for seat in range(4):
        take_seat(service, mid, seat, f"p{seat}", "human")
    finish_match(service, mid)
    return mid


def open_match(service: GameService) -> UUID:
    """A match in its first round: cards dealt, nothing scored."""
    mid = create_match(service, preset("standard"), name="open", preset="standard")
    for seat in range(4):
        take_seat(service, mid, seat, f"p{seat}", "human")
    return mid


def bot_teams(n: int, kind: str = "random") -> list[TeamEntry]:
    return [TeamEntry(f"T{i}", (f"a{i}", f"b{i}"), (kind, kind)) for i in range(n)]


def bot_tournament(service: GameService) -> UUID:
    """A two-table tournament of bots whose round 1 is played and complete (R36)."""
    ts = Tournaments(service)
    t = ts.create(name="cup", rules=STANDARD, teams=bot_teams(4), fmt="round_robin", match_length=1)
    ts.schedule_next(t.id)
    assert play_round(ts, t.id).completed
    tournament_id: UUID = t.id
    return tournament_id


def tournament_in_play(service: GameService) -> tuple[UUID, list[UUID]]:
    """A tournament of people whose round 1 is dealt and not played: its tables are
    closed to the public (R36). Returns the tournament and its tables' matches."""
    ts = Tournaments(service)
    t = ts.create(
        name="open cup",
        rules=STANDARD,
        teams=bot_teams(4, "human"),
        fmt="round_robin",
        match_length=1,
    )
    ts.schedule_next(t.id)
    return t.id, [table.match_id for table in ts.get(t.id).rounds[0].tables]

"""The commands of the core bench (:mod:`bench.core_bench`): a ``GameService`` that times
the parts of each command (load, rules + events, save) and random-legal bots that play
complete rounds through it (R16–R31).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from eventsourcing.domain import DomainEventProtocol, MutableOrImmutableAggregate
from eventsourcing.persistence import Recording

from bench._tables import act, new_match, seat_bots
from domain.bots.combos import random_lead
from domain.game.match import Match
from domain.game.round import Round, RoundPhase
from domain.rules.cards import Card
from domain.rules.follow import random_follow
from domain.rules.ruleset import RuleSet
from services.game import GameService
from services.handlers import build_bus

DEFAULT_ROUNDS = 16
REPLAY_PASSES = 5
Command = tuple[int, str, tuple[Card, ...]]


class TimedService(GameService):
    """GameService that adds up, while ``timing`` is on, the time spent loading the match
    and the round and saving them; the rest of ``act`` is rules and events."""

    name = GameService.name  # the same store (table, environment prefix) as the service

    def __init__(self, env: dict[str, str], seeds: Callable[[], bytes]) -> None:
        super().__init__(env, seeds=seeds)
        self.timing = False
        self.load_s = 0.0
        self.save_s = 0.0

    def get_match(
        self, match_id: UUID, version: int | None = None, *, read_only: bool = False
    ) -> Match:
        start = time.perf_counter()
        try:
            return super().get_match(match_id, version, read_only=read_only)
        finally:
            if self.timing:
                self.load_s += time.perf_counter() - start

    def get_round(self, round_id: UUID, version: int | None = None) -> Round:
        start = time.perf_counter()
        try:
            return super().get_round(round_id, version)
        finally:
            if self.timing:
                self.load_s += time.perf_counter() - start

    def save(
        self,
        *objs: MutableOrImmutableAggregate[UUID] | DomainEventProtocol[UUID] | None,
        **kwargs: Any,
    ) -> list[Recording[UUID]]:
        start = time.perf_counter()
        try:
            return super().save(*objs, **kwargs)
        finally:
            if self.timing:
                self.save_s += time.perf_counter() - start


# -- random-legal bots --------------------------------------------------------------------


def next_command(r: Round, rng: random.Random) -> Command:
    """A random legal command for the seat the round waits for (R17–R23)."""
    phase = r.phase
    if phase is RoundPhase.DEALING:  # the deal is not paced here: every card is drawn
        if r.bidding.standing is None:
            for declarer in rng.sample(range(4), 4):
                shows = r.bidding.legal_shows(declarer, r.dealt_hand(declarer))
                if shows and rng.random() < 0.5:
                    return declarer, "declare", shows[0].cards
        return min(set(range(4)) - r.deal_passes), "pass", ()
    seat = r.to_act()
    assert seat is not None, phase
    if phase in (RoundPhase.OVERCALLING, RoundPhase.DECLARING):
        shows = r.bidding.legal_shows(seat, r.hands[seat])
        if shows and rng.random() < 0.3:
            return (
                seat,
                "overcall" if phase is RoundPhase.OVERCALLING else "declare",
                (rng.choice(shows).cards),
            )
        return seat, "pass", ()
    if phase is RoundPhase.BURYING:
        return seat, "bury", tuple(rng.sample([*r.hands[seat], *r.bottom], 8))
    play = r.play
    assert play is not None and phase is RoundPhase.PLAYING
    hand = play.hands[seat]
    if play.lead_shape is None:
        return seat, "play", tuple(random_lead(play.ctx, hand, rng, 0.05))
    return seat, "play", tuple(random_follow(play.ctx, play.lead_shape, hand, rng))


@dataclass(slots=True)
class CommandFigures:
    ms: list[float] = field(default_factory=list)
    load_ms: list[float] = field(default_factory=list)
    save_ms: list[float] = field(default_factory=list)
    rounds: list[UUID] = field(default_factory=list)

    @property
    def per_s(self) -> float:
        return len(self.ms) / (sum(self.ms) / 1000) if self.ms else 0.0


def play_rounds(svc: TimedService, rounds: int, rng: random.Random) -> CommandFigures:
    """Play ``rounds`` complete rounds of one match; time each ``act``."""
    figures = CommandFigures()
    bus = build_bus(svc)
    mid = new_match(bus, RuleSet(), "bench")
    seat_bots(bus, mid)
    while len(figures.rounds) < rounds:
        match = svc.get_match(mid)
        r = svc.current_round(match)
        assert r is not None
        seat, action, cards = next_command(r, rng)
        svc.load_s = svc.save_s = 0.0
        svc.timing = True
        start = time.perf_counter()
        act(bus, mid, seat, action, cards)
        elapsed = time.perf_counter() - start
        svc.timing = False
        figures.ms.append(elapsed * 1000)
        figures.load_ms.append(svc.load_s * 1000)
        figures.save_ms.append(svc.save_s * 1000)
        if svc.get_match(mid).round_number != r.number:
            figures.rounds.append(r.id)
    return figures

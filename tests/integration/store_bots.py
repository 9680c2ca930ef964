"""The store contract's simple deterministic bots, playing whole matches through
:class:`~services.game.GameService`, and how the tests read what the store holds (the
tests: :mod:`tests.integration.test_store_contract`).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from eventsourcing.persistence import Notification

from domain.bots.combos import random_lead
from domain.game.match import Match
from domain.game.round import Round, RoundPhase
from domain.rules.cards import Card
from domain.rules.follow import random_follow
from domain.rules.ruleset import RuleSet
from domain.rules.shows import may_request_redeal
from services.game import GameService
from tests.commands import act as send
from tests.commands import create_match, take_seat


@dataclass(frozen=True, slots=True)
class Move:
    seat: int
    action: str
    cards: tuple[Card, ...] = ()


class Bots:
    """Four simple seeded seats: declare/overcall now and then, bury at random, lead a
    random single/pair/tractor/throw (domain.bots.combos) and follow at random (R23).

    Round 1's first deal is always passed out, so every scenario redeals once (R19)."""

    def __init__(self, seed: int, *, declare: float = 0.6, overcall: float = 0.35) -> None:
        self.rng = random.Random(seed)
        self.declare = declare
        self.overcall = overcall

    def move(self, r: Round, svc: GameService) -> Move:
        rng, now = self.rng, svc.clock()
        phase = r.phase
        if phase is RoundPhase.DEALING:
            declaring_allowed = not (r.number == 1 and r.deal_no == 1)
            for seat in range(4):
                if seat in r.deal_passes:
                    continue
                shows = r.bidding.legal_shows(seat, r.hand_at(seat, now))
                if declaring_allowed and shows and rng.random() < self.declare:
                    return Move(seat, "declare", rng.choice(shows).cards)
                return Move(seat, "pass")
            raise AssertionError("every seat passed but the drawing has not ended")
        if phase in (RoundPhase.OVERCALLING, RoundPhase.DECLARING, RoundPhase.BURYING):
            speaker = r.to_act()
            assert speaker is not None
            seat = speaker
            weak = [s for s in range(4) if may_request_redeal(r.dealt_hand(s), r.rules)]
            if weak and r.bidding.redeal_requests_open and rng.random() < 0.3:
                return Move(weak[0], "redeal")
            if phase is RoundPhase.BURYING:
                full = [*r.hands[seat], *r.bottom]
                return Move(seat, "bury", tuple(rng.sample(full, 8)))
            shows = r.bidding.legal_shows(seat, r.hand_at(seat, now))
            if shows and rng.random() < self.overcall:
                action = "overcall" if phase is RoundPhase.OVERCALLING else "declare"
                return Move(seat, action, rng.choice(shows).cards)
            return Move(seat, "pass")
        if phase is RoundPhase.PLAYING:
            play = r.play
            assert play is not None
            seat, hand = play.turn, play.hands[play.turn]
            if play.lead_shape is None:
                return Move(seat, "play", tuple(random_lead(play.ctx, hand, rng, 0.1)))
            return Move(seat, "play", tuple(random_follow(play.ctx, play.lead_shape, hand, rng)))
        raise AssertionError(f"no move in phase {phase}: the service deals and records itself")


def new_match(svc: GameService, rules: RuleSet) -> UUID:
    mid = create_match(svc, rules, name="contract")
    for seat in range(4):
        take_seat(svc, mid, seat, f"bot{seat}", "random")
    return mid


def act(svc: GameService, mid: UUID, move: Move) -> None:
    send(svc, mid, move.seat, move.action, move.cards)


def play_until(
    svc: GameService, mid: UUID, bots: Bots, stop: Callable[[Match, Round], bool]
) -> tuple[Match, Round]:
    """Let the bots act until ``stop(match, round)``; returns that state."""
    for _ in range(20_000):
        match = svc.get_match(mid)
        r = svc.current_round(match)
        assert r is not None
        if stop(match, r):
            return match, r
        act(svc, mid, bots.move(r, svc))
    raise AssertionError("the bots did not get there in 20 000 commands")


# -- reading the store ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Note:
    id: int
    originator_id: UUID
    version: int
    topic: str

    @property
    def event(self) -> str:
        return self.topic.rsplit(":", 1)[-1]


def raw_log(svc: GameService, start: int = 1) -> list[Notification]:
    """The notification log from ``start`` on, page by page (the library's sections)."""
    found: list[Notification] = []
    size = svc.notification_log.section_size
    while True:
        page = svc.notification_log.select(start=start, limit=size)
        found += page
        if len(page) < size:
            return found
        start = page[-1].id + 1


def notes(svc: GameService, start: int = 1) -> list[Note]:
    return [
        Note(n.id, UUID(str(n.originator_id)), n.originator_version, n.topic)
        for n in raw_log(svc, start)
    ]


def last_id(svc: GameService) -> int:
    return svc.recorder.max_notification_id() or 0


def match_state(m: Match) -> dict[str, Any]:
    return {
        "version": m.version,
        "name": m.name,
        "rules": m.rules,
        "seats": m.seats,
        "levels": m.levels,
        "laps": m.laps,
        "dealer": m.dealer,
        "round_number": m.round_number,
        "round_open": m.round_open,
        "results": [vars(r) for r in m.results],
        "winner": m.winner,
        "finished": m.finished,
    }


def round_state(r: Round) -> dict[str, Any]:
    play = r.play
    return {
        "version": r.version,
        "phase": r.phase,
        "deal_no": r.deal_no,
        "seed": r.seed_hex,
        "levels": r.levels,
        "bidding": r.bidding,
        "hands": r.hands,
        "bottom": r.bottom,
        "buried_by": r.buried_by,
        "play": None
        if play is None
        else (play.hands, play.trick, play.tricks_done, play.attacker_points, play.played),
        "penalties": r.penalties,
        "result": None if r.result is None else vars(r.result),
    }

"""Properties of the event-sourced core: GameService over the Match and Round aggregates.

Random legal matches of several rounds are played through :class:`GameService` (level
changes, dealer rotation R31, 炒底 overcalls R20, failed throws R22, paced deals R16/R17,
overcall-window deadlines, 暴动 redeals) by seeded random bots, and then:

* R34: replaying each aggregate's stored events from scratch (a second service on the
  same store, no cache) gives exactly the live state, and so does the state as of every
  version that was current after a command;
* a command's events are stored all or none (an insert failing inside the transaction;
  a concurrent save on the other aggregate of a multi-aggregate save);
* R17 paced-deal race: of two eligible declarers exactly one ``TrumpDeclared`` is stored;
  a card not drawn yet at the command's time cannot be declared;
* R3/R26: 108 cards = hands + bottom + played at every version; tricks + bottom = 200.

The store is POPO (SQLite for the injected insert failure, which needs a real transaction;
POPO, SQLite and PostgreSQL through the ``backend`` fixture for the concurrent saves).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

import pytest
from eventsourcing.domain import DomainEventProtocol, MutableOrImmutableAggregate
from eventsourcing.persistence import ApplicationRecorder, Recording

from domain.bots.combos import random_lead
from domain.game.match import Match
from domain.game.round import DRAWS, Round, RoundPhase
from domain.game.round_events import Pacing
from domain.rules.cards import NUM_KINDS, Card, full_deck, rank_of
from domain.rules.errors import IllegalMoveError
from domain.rules.follow import random_follow
from domain.rules.ruleset import RuleSet
from domain.rules.shows import may_request_redeal
from domain.rules.shuffle import shuffle_deck
from services.game import GameService
from tests.commands import act, claim_deadlines, create_match, take_seat, version_of
from tests.conftest import T0
from tests.conftest import FakeClock as SharedFakeClock

POPO = {"PERSISTENCE_MODULE": "eventsourcing.popo"}
DECK = Counter(full_deck())
MAX_STEPS = 4000

State = dict[str, object]


# -- the table: a fake clock, a store-sharing service that records the live states ----------


class FakeClock(SharedFakeClock):
    """The suite's fake clock (tests/conftest.py), plus a one-shot ``hook`` run the next
    time the service reads the clock: a way to interleave another service's command
    between a command's load and its save."""

    def __init__(self) -> None:
        super().__init__(T0)
        self.hook: Callable[[], object] | None = None

    def __call__(self) -> datetime:
        hook, self.hook = self.hook, None
        if hook is not None:
            hook()
        return self.now


class TableService(GameService):
    """GameService on a shared recorder, keeping the state of every aggregate it saves
    (the live state, as the command left it) by (id, version)."""

    name = GameService.name  # the same store (event table, environment prefix)

    def __init__(
        self,
        env: Mapping[str, str],
        *,
        recorder: ApplicationRecorder | None = None,
        clock: FakeClock,
        seeds: Callable[[], bytes],
        pacing: Pacing | None = None,
    ) -> None:
        self._shared_recorder = recorder
        self.live: dict[tuple[UUID, int], State] = {}
        super().__init__(env, clock=clock, seeds=seeds, pacing=pacing)

    def construct_recorder(self) -> ApplicationRecorder:
        if self._shared_recorder is not None:
            return self._shared_recorder
        return super().construct_recorder()

    def save(
        self,
        *objs: MutableOrImmutableAggregate[UUID] | DomainEventProtocol[UUID] | None,
        **kwargs: Any,
    ) -> list[Recording[UUID]]:
        recordings = super().save(*objs, **kwargs)
        for obj in objs:
            if isinstance(obj, Round | Match):
                self.live[(obj.id, obj.version)] = state_of(obj)
        return recordings


def seeds_from(rng: random.Random) -> Callable[[], bytes]:
    return lambda: rng.randbytes(32)


# -- the meaningful state of an aggregate ---------------------------------------------------


def state_of(agg: Round | Match) -> State:
    return round_state(agg) if isinstance(agg, Round) else match_state(agg)


def round_state(r: Round) -> State:
    play = r.play
    return {
        "id": r.id,
        "version": r.version,
        "created_on": r.created_on,
        "modified_on": r.modified_on,
        "match_id": r.match_id,
        "number": r.number,
        "rules": r.rules,
        "levels": r.levels,
        "dealer": r.dealer,
        "phase": r.phase,
        "to_act": r.to_act(),
        "bidding": r.bidding,
        "deal_no": r.deal_no,
        "seed": r.seed_hex,
        "commitment": r.commitment,
        "started_at": r.started_at,
        "pacing": (r.pacing.interval_ms, r.pacing.declare_ms, r.pacing.window_ms),
        "dealt": r.dealt,
        "hands": tuple(tuple(h) for h in r.hands),
        "bottom": tuple(r.bottom),
        "buried_by": r.buried_by,
        "deal_passes": r.deal_passes,
        "window_opened_at": r.window_opened_at,
        "penalties": tuple(r.penalties),
        "result": r.result,
        "play": None
        if play is None
        else {
            "ctx": (play.ctx.level, play.ctx.trump),
            "hands": tuple(tuple(h) for h in play.hands),
            "leader": play.leader,
            "turn": play.turn,
            "attackers": play.attackers,
            "trick": tuple(play.trick),
            "lead_shape": play.lead_shape,
            "tricks_done": play.tricks_done,
            "attacker_points": play.attacker_points,
            "played": tuple(play.played),
            "last_trick": play.last_trick,
            "last_lead": play.last_lead,
            "failed_throws": tuple(play.failed_throws),
        },
    }


def match_state(m: Match) -> State:
    return {
        "id": m.id,
        "version": m.version,
        "created_on": m.created_on,
        "modified_on": m.modified_on,
        "name": m.name,
        "preset": m.preset,
        "rules": m.rules,
        "seats": tuple(m.seats),
        "levels": m.levels,
        "laps": m.laps,
        "dealer": m.dealer,
        "round_number": m.round_number,
        "round_open": m.round_open,
        "results": tuple(m.results),
        "winner": m.winner,
        "finished": m.finished,
    }


def diff(a: State, b: State) -> list[str]:
    return [k for k in a.keys() | b.keys() if a.get(k) != b.get(k)]


# -- random bots driving a match through the service ----------------------------------------


@dataclass(frozen=True, slots=True)
class Knobs:
    declare: float = 0.15
    """Chance that a seat offered a declaration (R17) makes one, per look."""
    overcall: float = 0.5
    """Chance that the seat to speak overcalls when legal_shows offers one (R20, 炒底)."""
    throw: float = 0.2
    """Chance that a leader tries to throw a whole suit category (R22; most fail)."""
    illegal: float = 0.03
    """Chance of an illegal command first (it must be refused, storing nothing)."""
    redeal: float = 0.2
    """Chance that a weak hand asks for a redeal (§10 暴动) when allowed."""


@dataclass(frozen=True, slots=True)
class Command:
    seat: int
    action: str
    cards: tuple[Card, ...] = ()


@dataclass(slots=True)
class Table:
    """A match being played by random bots; ``step`` issues at most one command."""

    svc: GameService
    clock: FakeClock
    rng: random.Random
    knobs: Knobs
    match_id: UUID
    refused: int = 0
    commands: list[Command] = field(default_factory=list)

    @classmethod
    def open(
        cls,
        svc: GameService,
        clock: FakeClock,
        rng: random.Random,
        rules: RuleSet,
        knobs: Knobs = Knobs(),
    ) -> Table:
        mid = create_match(svc, rules, name="props")
        for seat in range(4):
            take_seat(svc, mid, seat, f"bot{seat}", "random")
        return cls(svc, clock, rng, knobs, mid)

    def match(self) -> Match:
        return self.svc.get_match(self.match_id)

    def round(self) -> Round:
        r = self.svc.current_round(self.match())
        assert r is not None
        return r

    def play_rounds(self, rounds: int) -> None:
        for _ in range(MAX_STEPS):
            m = self.match()
            if m.finished or len(m.results) >= rounds:
                return
            self.step()
        raise AssertionError(f"no end after {MAX_STEPS} steps")

    def step(self) -> Command | None:
        """Decide and run one command (or only move the clock); returns the command run."""
        self.clock.advance(ms=self.rng.randint(0, 40))
        command = self.decide(self.round())
        if command is not None:
            self.run(command)
        return command

    def run(self, command: Command) -> None:
        if command.action == "claim":
            claim_deadlines(self.svc, self.match_id)
        else:
            seen = version_of(self.svc, self.match_id)  # a client acts on what it saw
            act(
                self.svc,
                self.match_id,
                command.seat,
                command.action,
                command.cards,
                expected_version=seen,
            )
        self.commands.append(command)

    def decide(self, r: Round) -> Command | None:
        rng, knobs, now = self.rng, self.knobs, self.clock.now
        phase = r.phase
        claim = Command(0, "claim")
        if phase is RoundPhase.DEALING and now > r.drawing_deadline():
            return claim  # the drawing is over (R16): what the client sees is stale
        window, opened = r.pacing.window_ms, r.window_opened_at
        if phase is RoundPhase.OVERCALLING and window and opened is not None:
            if now > opened + timedelta(milliseconds=window):
                return claim  # the window has closed (R20)
            if rng.random() < 0.1:
                self.clock.advance(ms=window + 1)
                return claim
        if phase is RoundPhase.PLAYING and rng.random() < knobs.illegal:
            self.try_illegal(r)
        if phase is RoundPhase.DEALING:
            for seat in rng.sample(range(4), 4):
                shows = r.bidding.legal_shows(seat, r.hand_at(seat, now))
                if shows and rng.random() < knobs.declare:  # mostly the weakest (R17)
                    show = shows[0] if rng.random() < 0.8 else rng.choice(shows)
                    return Command(seat, "declare", show.cards)
            if r.drawn_at(now) < DRAWS:
                self.clock.advance(ms=r.pacing.interval_ms * rng.randint(1, 8))
                return None
            if rng.random() < 0.1:  # let the deadline end the drawing (R16, R19)
                self.clock.now = r.drawing_deadline() + timedelta(milliseconds=1)
                return claim
            waiting = [s for s in range(4) if s not in r.deal_passes]
            return Command(rng.choice(waiting), "pass")
        if phase in (RoundPhase.OVERCALLING, RoundPhase.BURYING):
            asker = rng.randrange(4)
            if (
                r.bidding.redeal_requests_open
                and may_request_redeal(r.dealt_hand(asker), r.rules)
                and rng.random() < knobs.redeal
            ):
                return Command(asker, "redeal")
        if phase in (RoundPhase.OVERCALLING, RoundPhase.DECLARING):
            speaker = r.to_act()
            assert speaker is not None
            shows = r.bidding.legal_shows(speaker, r.hand_at(speaker, now))
            chance = knobs.overcall if phase is RoundPhase.OVERCALLING else knobs.declare * 3
            if shows and rng.random() < chance:
                action = "overcall" if phase is RoundPhase.OVERCALLING else "declare"
                return Command(speaker, action, rng.choice(shows).cards)
            return Command(speaker, "pass")
        if phase is RoundPhase.BURYING:
            burier = r.to_act()
            assert burier is not None
            full = [*r.hands[burier], *r.bottom]
            return Command(burier, "bury", tuple(rng.sample(full, 8)))
        if phase is RoundPhase.PLAYING:
            play = r.play
            assert play is not None
            seat, hand = play.turn, play.hands[play.turn]
            if play.lead_shape is not None:
                return Command(
                    seat, "play", tuple(random_follow(play.ctx, play.lead_shape, hand, rng))
                )
            if rng.random() < knobs.throw:
                groups = [g for g in suit_categories(play.ctx.category, hand) if len(g) >= 2]
                if groups:
                    return Command(seat, "play", tuple(rng.choice(groups)))
            return Command(seat, "play", tuple(random_lead(play.ctx, hand, rng, 0.1)))
        raise AssertionError(f"unexpected phase {phase}")

    def try_illegal(self, r: Round) -> None:
        """A play out of turn or of a card not held: refused (R22/R3), nothing stored."""
        play = r.play
        assert play is not None
        before = r.version
        other = (play.turn + 1 + self.rng.randrange(3)) % 4
        missing = [c for c in range(NUM_KINDS) if c not in play.hands[play.turn]]
        seat, cards = (
            (other, (play.hands[other][0],))
            if play.hands[other] and self.rng.random() < 0.5
            else (play.turn, (missing[0],))
        )
        with pytest.raises(IllegalMoveError) as info:
            act(self.svc, self.match_id, seat, "play", cards)
        assert info.value.code in ("not-your-turn", "cards-not-in-hand")
        assert self.round().version == before
        self.refused += 1


def suit_categories(category: tuple[int, ...], hand: list[Card]) -> list[list[Card]]:
    """The hand split by suit category (R7): a whole one is a throw, or a single combination."""
    groups: dict[int, list[Card]] = {}
    for c in hand:
        groups.setdefault(category[c], []).append(c)
    return list(groups.values())


def first_draws(seed: bytes, level: int) -> dict[int, tuple[int, Card]]:
    """Independent of Deal: seat → (draw index, card) of its first level card (R16: draw k
    goes to seat k mod 4 from the dealer, seat 0 in round 1)."""
    first: dict[int, tuple[int, Card]] = {}
    for k, card in enumerate(shuffle_deck(seed)[:DRAWS]):
        if rank_of(card) == level and k % 4 not in first:
            first[k % 4] = (k, card)
    return first

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
import sqlite3
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from eventsourcing.application import Repository
from eventsourcing.domain import (
    CanMutateProtocol,
    DomainEventProtocol,
    MutableOrImmutableAggregate,
)
from eventsourcing.persistence import ApplicationRecorder, PersistenceError, Recording
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from domain.game.match import Match
from domain.game.round import DRAWS, Round, RoundPhase, round_id
from domain.game.round_events import Pacing
from domain.players.combos import random_lead
from domain.rules.cards import DECK_SIZE, NUM_KINDS, POINTS, Card, full_deck, rank_of
from domain.rules.errors import IllegalMoveError
from domain.rules.follow import random_follow
from domain.rules.ruleset import (
    FINISH_AT_A,
    WRAP,
    BottomMultiplier,
    MatchEnd,
    MatchEndKind,
    NoDeclaration,
    RuleSet,
)
from domain.rules.shows import may_request_redeal
from domain.rules.shuffle import Deal, shuffle_deck
from services.errors import VersionConflictError
from services.game import GameService
from tests.conftest import T0, Backend
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
        mid = svc.create_match(rules, name="props")
        for seat in range(4):
            svc.take_seat(mid, seat, f"bot{seat}", "random")
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
            self.svc.claim_deadlines(self.match_id)
        else:
            self.svc.act(self.match_id, command.seat, command.action, command.cards)
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
            self.svc.act(self.match_id, seat, "play", cards)
        assert info.value.code in ("not-your-turn", "cards-not-in-hand")
        assert self.round().version == before
        self.refused += 1


def suit_categories(category: tuple[int, ...], hand: list[Card]) -> list[list[Card]]:
    """The hand split by suit category (R7): a whole one is a throw, or a single combination."""
    groups: dict[int, list[Card]] = {}
    for c in hand:
        groups.setdefault(category[c], []).append(c)
    return list(groups.values())


# -- checks ---------------------------------------------------------------------------------


def load(repository: Repository[UUID], aid: UUID, version: int | None = None) -> Round | Match:
    """An aggregate rebuilt by ``repository`` (as of ``version``)."""
    aggregate: Round | Match = repository.get(aid, version=version)
    return aggregate


def stored_topics(svc: GameService, aggregate_id: UUID) -> list[str]:
    return [type(e).__name__ for e in svc.events.get(aggregate_id)]


def check_replays(svc: TableService) -> None:
    """R34: from the stored events alone, every aggregate rebuilds to its live state: as of
    every version a command left it at (``get_round/get_match(id, version=v)``), at its
    head (a fresh repository, a second service on the same store, the cached service),
    and event by event (each stored event applied in turn, mid-command versions too)."""
    other = TableService(POPO, recorder=svc.recorder, clock=FakeClock(), seeds=lambda: b"")
    latest: dict[UUID, int] = {}
    for (aid, version), live in svc.live.items():
        latest[aid] = max(latest.get(aid, 0), version)
        loader = other.get_round if "bidding" in live else other.get_match
        as_of = state_of(loader(aid, version))
        assert as_of == live, f"{aid} v{version}: {diff(as_of, live)}"
    fresh: Repository[UUID] = Repository(svc.events)  # no cache: replay from scratch
    for aid, version in latest.items():
        live = svc.live[(aid, version)]
        head = load(fresh, aid)
        assert head.version == version
        assert state_of(head) == live, diff(state_of(head), live)
        if isinstance(head, Round):  # a second service on the store, and the cached one
            assert state_of(other.get_round(aid)) == live == state_of(svc.get_round(aid))
        else:
            assert state_of(other.get_match(aid)) == live == state_of(svc.get_match(aid))
        aggregate: Any = None
        for stored in svc.events.get(aid):
            assert isinstance(stored, CanMutateProtocol)
            aggregate = stored.mutate(aggregate)
            key = (aid, aggregate.version)
            if key in svc.live:
                assert state_of(aggregate) == svc.live[key]
        assert aggregate is not None and aggregate.version == version


def check_cards(svc: TableService) -> None:
    """R3: every card exactly twice in hands + bottom + played; R26: 200 points."""
    for live in svc.live.values():
        dealt = live.get("dealt")
        if dealt is None:
            continue
        assert isinstance(dealt, Deal)
        play, hands, bottom = live["play"], live["hands"], live["bottom"]
        assert isinstance(hands, tuple) and isinstance(bottom, tuple)
        if isinstance(play, dict):
            cards = [c for h in play["hands"] for c in h] + list(play["played"])
        elif hands:
            cards = [c for h in hands for c in h]
        else:  # still dealing: the hands are the deal's
            cards, bottom = [c for h in dealt.hands for c in h], dealt.bottom
        assert len(cards) + len(bottom) == DECK_SIZE
        assert Counter(cards) + Counter(bottom) == DECK


def check_scores(svc: TableService, match_id: UUID) -> None:
    """R26–R31 across the rounds: trick points + bottom = 200, dealer rotation, levels."""
    match = svc.get_match(match_id)
    previous = None
    for number in range(1, match.round_number + 1):
        r = svc.get_round(round_id(match_id, number))
        if previous is not None and previous.result is not None:
            assert r.dealer == previous.result.next_dealer  # R31
            assert r.levels == match.results[number - 2].levels  # R30
        if r.result is not None:
            events = list(svc.events.get(r.id))
            tricks = [e for e in events if type(e).__name__ == "TrickWon"]
            total = sum(getattr(e, "points", 0) for e in tricks)
            assert total + r.result.bottom_points == 200
            assert r.result.bottom_points == sum(POINTS[c] for c in r.result.bottom_cards)
            attackers = (r.result.dealer + 1) % 2
            won = sum(
                getattr(e, "points", 0) for e in tricks if getattr(e, "winner", 0) % 2 == attackers
            )
            assert r.result.trick_points == won
        previous = r


def count(svc: GameService, match_id: UUID, topic: str, *, after_round: int = 0) -> int:
    match = svc.get_match(match_id)
    return sum(
        stored_topics(svc, round_id(match_id, n)).count(topic)
        for n in range(after_round + 1, match.round_number + 1)
    )


# -- 1, 2, 5: random matches replay exactly; every version; cards and points ----------------

RULES = st.builds(
    RuleSet,
    declare_with_joker=st.booleans(),
    self_overcall=st.booleans(),
    bottom_multiplier=st.sampled_from(BottomMultiplier),
    no_declaration=st.sampled_from(NoDeclaration),
    throw_penalty_points=st.sampled_from([0, 5]),
    level_cap=st.sampled_from([6, None]),
    match_end=st.sampled_from([WRAP, FINISH_AT_A, MatchEnd(MatchEndKind.ROUNDS, 2)]),
    weak_hand_redeal=st.sampled_from([None, None, 50]),
)
PACINGS = st.sampled_from(
    [
        Pacing(0, 30_000, 0),
        Pacing(25, 400, 0),
        Pacing(0, 30_000, 200),
        Pacing(40, 300, 120),
    ]
)


def play_and_check(
    seed: int, rules: RuleSet, pacing: Pacing, rounds: int
) -> tuple[TableService, UUID]:
    """Play a random match of ``rounds`` rounds; check replays (R34), cards and scores."""
    rng = random.Random(seed)
    clock = FakeClock()
    svc = TableService(POPO, clock=clock, seeds=seeds_from(rng), pacing=pacing)
    table = Table.open(svc, clock, rng, rules)
    table.play_rounds(rounds)
    check_replays(svc)
    check_cards(svc)
    check_scores(svc, table.match_id)
    return svc, table.match_id


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), rules=RULES, pacing=PACINGS, rounds=st.integers(2, 4))
def test_random_matches_replay_to_the_live_state(
    seed: int, rules: RuleSet, pacing: Pacing, rounds: int
) -> None:
    svc, match_id = play_and_check(seed, rules, pacing, rounds)
    later_overcalls = count(svc, match_id, "Overcalled", after_round=1)
    failed = count(svc, match_id, "ThrowFailed")
    event(f"炒底 overcalls after round 1: {'2+' if later_overcalls >= 2 else later_overcalls}")
    event(f"failed throws: {'3+' if failed >= 3 else failed}")
    event(f"rounds: {len(svc.get_match(match_id).results)}")


def test_the_bots_reach_the_interesting_paths() -> None:
    """The generator is not vacuous: 炒底 overcalls in later rounds, failed throws, level
    changes, a moving dealer, redeals and refused commands all happen in a few matches."""
    seen: Counter[str] = Counter()
    for seed in range(3):
        rng = random.Random(seed)
        clock = FakeClock()
        svc = TableService(POPO, clock=clock, seeds=seeds_from(rng), pacing=Pacing(20, 300, 0))
        table = Table.open(svc, clock, rng, RuleSet(weak_hand_redeal=50))
        table.play_rounds(3)
        match = svc.get_match(table.match_id)
        seen["later overcalls"] += count(svc, table.match_id, "Overcalled", after_round=1)
        seen["failed throws"] += count(svc, table.match_id, "ThrowFailed")
        seen["redeals"] += count(svc, table.match_id, "Redealt")
        seen["level changes"] += sum(1 for x in match.results if x.levels_gained)
        seen["dealers"] += len({x.dealer for x in match.results})
        seen["refused"] += table.refused
        check_replays(svc)
    assert all(seen[k] > 0 for k in ("later overcalls", "failed throws", "redeals", "refused"))
    assert seen["level changes"] > 0 and seen["dealers"] > 3, seen


def test_a_claimed_deadline_that_means_a_redeal_deals_again() -> None:
    """R19: the drawing ends by its deadline with nobody declared in round 1; the claim
    deals again (this stranded the round in phase redeal before ad715e8/fbe5254)."""
    clock = FakeClock()
    svc = TableService(POPO, clock=clock, seeds=seeds_from(random.Random(1)))
    mid = svc.create_match(RuleSet())
    for seat in range(4):
        svc.take_seat(mid, seat, f"p{seat}")
    r = svc.current_round(svc.get_match(mid))
    assert r is not None
    clock.now = r.drawing_deadline() + timedelta(milliseconds=1)  # nobody declared (R19)
    svc.claim_deadlines(mid)
    r = svc.current_round(svc.get_match(mid))
    assert r is not None and r.phase is RoundPhase.DEALING and r.deal_no == 2


# -- 3: a command's events are stored all or none -------------------------------------------

FAIL_ON = ("TrickWon", "RoundScored", "RoundRecorded", "RoundStarted", "Dealt", "DrawingEnded")


@contextmanager
def sqlite_service(rng: random.Random, clock: FakeClock) -> Iterator[tuple[TableService, Path]]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "store.db"
        env = {"PERSISTENCE_MODULE": "eventsourcing.sqlite", "SQLITE_DBNAME": str(path)}
        svc = TableService(env, clock=clock, seeds=seeds_from(rng))
        try:
            yield svc, path
        finally:
            svc.close()


def snapshot_store(svc: GameService, match_id: UUID) -> tuple[int | None, dict[UUID, State]]:
    """The store's head and the reloaded state of the match and each of its rounds."""
    fresh: Repository[UUID] = Repository(svc.events)
    match = load(fresh, match_id)
    assert isinstance(match, Match)
    states: dict[UUID, State] = {match_id: match_state(match)}
    for n in range(1, match.round_number + 1):
        states[round_id(match_id, n)] = state_of(load(fresh, round_id(match_id, n)))
    return svc.recorder.max_notification_id(), states


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), fail_on=st.sampled_from(FAIL_ON), warmup=st.integers(0, 150))
def test_a_failing_insert_stores_none_of_the_commands_events(
    seed: int, fail_on: str, warmup: int
) -> None:
    """An insert that fails inside the transaction, on the ``fail_on`` event of whichever
    command emits it next (after other events of the same command and of other aggregates
    in the same save), leaves the store and every reload exactly as before the command."""
    rng = random.Random(seed)
    clock = FakeClock()
    with sqlite_service(rng, clock) as (svc, path):
        table = Table.open(svc, clock, rng, RuleSet(), Knobs(illegal=0.0))
        for _ in range(warmup):
            table.step()
        with sqlite3.connect(path) as db:
            (events_table,) = db.execute(
                "SELECT name FROM sqlite_master WHERE type='table' AND name LIKE '%events'"
            ).fetchone()
            db.execute(
                f"CREATE TRIGGER fail_once BEFORE INSERT ON {events_table} "
                f"WHEN NEW.topic LIKE '%:{fail_on}' "
                "BEGIN SELECT RAISE(ABORT, 'injected failure'); END"
            )
        for _ in range(MAX_STEPS):
            before = snapshot_store(svc, table.match_id)
            round_before = table.round()
            command = table.decide(round_before)
            if command is None:
                continue
            try:
                table.run(command)
            except (VersionConflictError, PersistenceError):
                break
        else:
            raise AssertionError(f"no {fail_on} event in {MAX_STEPS} steps")
        event(f"failed on {fail_on} after {command.action}")
        assert snapshot_store(svc, table.match_id) == before
        assert state_of(table.round()) == state_of(round_before)
        with sqlite3.connect(path) as db:
            db.execute("DROP TRIGGER fail_once")
        head = svc.recorder.max_notification_id() or 0
        table.run(command)  # the same command, at the same time, now goes through
        topics = [
            n.topic.rpartition(":")[2] for n in svc.recorder.select_notifications(head + 1, 100)
        ]
        assert fail_on in topics


def last_card_conflict(svc: GameService, organiser: GameService, table: Table) -> None:
    """The last card of a round saves the round's events, RoundRecorded on the match and
    the next round together. If ``organiser`` (another service on the same store) finishes
    the match in between, the save conflicts on the match and none of the round's events
    stay: the round reloads as it was and no next round exists."""
    for _ in range(MAX_STEPS):
        r = table.round()
        play = r.play
        if play is not None and len(play.trick) == 3 and not play.hands[(play.turn + 1) % 4]:
            break  # the last card of the round is due
        table.step()
    round_before, match_before = state_of(r), table.match().version
    command = table.decide(r)
    assert command is not None and command.action == "play"
    table.clock.hook = lambda: organiser.finish_match(table.match_id)
    with pytest.raises(VersionConflictError):
        table.run(command)
    # The finish abandoned the round (R32) in its own save: the round's last stored event is
    # RoundAbandoned right after the version the refused command started from.
    (last,) = svc.recorder.select_events(r.id, desc=True, limit=1)
    assert last.originator_version == r.version + 1
    assert last.topic.endswith(":RoundAbandoned")
    assert state_of(svc.get_round(r.id, version=r.version)) == round_before
    assert state_of(organiser.get_round(r.id, version=r.version)) == round_before
    assert svc.get_round(r.id).phase is RoundPhase.ABANDONED
    assert svc.recorder.select_events(round_id(table.match_id, r.number + 1)) == []
    match = svc.get_match(table.match_id)
    assert match.finished and match.version == match_before + 1
    assert stored_topics(svc, table.match_id)[-1] == "MatchFinished"


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_a_concurrent_save_on_the_match_rolls_back_the_rounds_events(seed: int) -> None:
    rng = random.Random(seed)
    clock = FakeClock()
    svc = TableService(POPO, clock=clock, seeds=seeds_from(rng))
    organiser = TableService(POPO, recorder=svc.recorder, clock=clock, seeds=seeds_from(rng))
    last_card_conflict(svc, organiser, Table.open(svc, clock, rng, RuleSet(), Knobs(illegal=0)))


def test_on_every_store_a_conflicting_save_stores_none_of_its_events(backend: Backend) -> None:
    """The same on POPO, SQLite and PostgreSQL (two services on one store): the round's
    events roll back with the conflicting match event, and of two racing declarations
    (R17) exactly one is stored; the late one conflicts, and is refused when retried."""
    clock, rng = FakeClock(), random.Random(11)
    svc = backend.service(clock=clock, seeds=seeds_from(rng))
    organiser = backend.service(clock=clock)
    last_card_conflict(svc, organiser, Table.open(svc, clock, rng, RuleSet(), Knobs(illegal=0)))

    seeds = (random.Random(n).randbytes(32) for n in range(100))
    seed = next(s for s in seeds if len(first_draws(s, level=0)) == 4)
    first = first_draws(seed, level=0)
    racer = backend.service(clock=clock, seeds=lambda: seed, pacing=Pacing(10, 1_000, 0))
    rival = backend.service(clock=clock, seeds=lambda: seed, pacing=Pacing(10, 1_000, 0))
    mid = racer.create_match(RuleSet())
    for seat in range(4):
        racer.take_seat(mid, seat, f"p{seat}")
    clock.advance(ms=10 * max(k for k, _ in first.values()))
    clock.hook = lambda: rival.act(mid, 1, "declare", (first[1][1],))
    with pytest.raises(VersionConflictError):
        racer.act(mid, 2, "declare", (first[2][1],))
    with pytest.raises(IllegalMoveError) as info:
        racer.act(mid, 2, "declare", (first[2][1],))
    assert info.value.code == "already-declared"
    rid = round_id(mid, 1)
    assert stored_topics(racer, rid) == ["RoundStarted", "Dealt", "TrumpDeclared"]
    standing = racer.get_round(rid).bidding.standing
    assert standing is not None and standing.seat == 1


# -- 4: the paced-deal race (R16, R17) --------------------------------------------------------


def first_draws(seed: bytes, level: int) -> dict[int, tuple[int, Card]]:
    """Independent of Deal: seat → (draw index, card) of its first level card (R16: draw k
    goes to seat k mod 4 from the dealer, seat 0 in round 1)."""
    first: dict[int, tuple[int, Card]] = {}
    for k, card in enumerate(shuffle_deck(seed)[:DRAWS]):
        if rank_of(card) == level and k % 4 not in first:
            first[k % 4] = (k, card)
    return first


def paced_round(seed: bytes, interval: int) -> tuple[TableService, FakeClock, UUID, Round]:
    clock = FakeClock()
    svc = TableService(POPO, clock=clock, seeds=lambda: seed, pacing=Pacing(interval, 5_000, 0))
    mid = svc.create_match(RuleSet())
    for seat in range(4):
        svc.take_seat(mid, seat, f"p{seat}")
    r = svc.current_round(svc.get_match(mid))
    assert r is not None and r.started_at == T0
    return svc, clock, mid, r


SEEDS = st.binary(min_size=32, max_size=32)
INTERVALS = st.integers(1, 400)


@settings(max_examples=60, deadline=None)
@given(seed=SEEDS, interval=INTERVALS, data=st.data())
def test_cards_arrive_one_per_interval_and_only_drawn_cards_declare(
    seed: bytes, interval: int, data: st.DataObject
) -> None:
    svc, clock, mid, r = paced_round(seed, interval)
    deck = shuffle_deck(seed)
    ms = data.draw(st.integers(-interval, interval * (DRAWS + 2)), label="ms after the start")
    drawn = 0 if ms < 0 else min(DRAWS, ms // interval + 1)
    for seat in range(4):
        expected = tuple(deck[k] for k in range(drawn) if k % 4 == seat)
        assert r.hand_at(seat, T0 + timedelta(milliseconds=ms)) == expected

    first = first_draws(seed, level=0)
    seat = data.draw(st.sampled_from(sorted(first)), label="declarer")
    k, card = first[seat]
    if k:  # one ms before its card is drawn, the seat cannot show it (R17)
        clock.now = T0 + timedelta(milliseconds=k * interval - 1)
        with pytest.raises(IllegalMoveError) as info:
            svc.act(mid, seat, "declare", (card,))
        assert info.value.rule == "R17"
        assert stored_topics(svc, r.id) == ["RoundStarted", "Dealt"]
    clock.now = T0 + timedelta(milliseconds=k * interval)
    svc.act(mid, seat, "declare", (card,))
    assert stored_topics(svc, r.id) == ["RoundStarted", "Dealt", "TrumpDeclared"]


@settings(max_examples=40, deadline=None)
@given(seed=SEEDS, interval=INTERVALS, interleaved=st.booleans(), data=st.data())
def test_two_eligible_declarers_exactly_one_declaration_stands(
    seed: bytes, interval: int, interleaved: bool, data: st.DataObject
) -> None:
    """R17: two seats holding a level card both declare; one ``TrumpDeclared`` is stored.

    Sequentially, the second gets IllegalMoveError (already-declared). Interleaved (the
    other service's declaration commits while the first command is between its load and
    its save), the late command's save conflicts; retried, it is refused the same way.
    """
    svc, clock, mid, r = paced_round(seed, interval)
    first = first_draws(seed, level=0)
    if len(first) < 2:
        return
    a, b = data.draw(st.permutations(sorted(first)), label="seats")[:2]
    ready = max(first[a][0], first[b][0])
    at = data.draw(st.integers(ready, DRAWS - 1), label="draw when both declare")
    clock.now = T0 + timedelta(milliseconds=at * interval)
    if interleaved:
        rival = TableService(POPO, recorder=svc.recorder, clock=clock, seeds=lambda: seed)
        clock.hook = lambda: rival.act(mid, b, "declare", (first[b][1],))
        with pytest.raises(VersionConflictError):
            svc.act(mid, a, "declare", (first[a][1],))
        a, b = b, a  # the rival's declaration stands; a's retry is the late one
    else:
        svc.act(mid, a, "declare", (first[a][1],))
    clock.advance(ms=data.draw(st.integers(0, (DRAWS - 1 - at) * interval), label="later ms"))
    with pytest.raises(IllegalMoveError) as info:
        svc.act(mid, b, "declare", (first[b][1],))
    assert info.value.code == "already-declared" and info.value.rule == "R17"
    assert stored_topics(svc, r.id).count("TrumpDeclared") == 1
    standing = svc.get_round(r.id).bidding.standing
    assert standing is not None and standing.seat == a
    assert svc.get_match(mid).version == 6  # created, 4 seats, round begun: nothing else

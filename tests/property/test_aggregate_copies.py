"""The aggregates' cheap copies (docs/decisions.md D-edge): a load deep-copies the cached
aggregate, and the copy shares what cannot change. For random rounds at random points the
copy equals the original and the replay of the same events (R34), and a move made on the
copy — a card played (R22–R25), a deadline claimed (R16, R20) — leaves the original as it was.
"""

from __future__ import annotations

import copy
import random
from datetime import timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from domain.game.match import Match
from domain.game.round import Round, RoundPhase
from domain.game.round_events import Pacing
from domain.rules.errors import IllegalMoveError
from domain.rules.follow import random_follow
from domain.rules.play import TrickPlay
from domain.rules.ruleset import RuleSet
from tests.conftest import examples
from tests.property.core_table import (
    POPO,
    FakeClock,
    Table,
    TableService,
    match_state,
    round_state,
    seeds_from,
)


def mutable_parts(r: Round) -> list[object]:
    """Every mutable container a round holds (a copy must own each of them)."""
    parts: list[object] = [r.hands, r.penalties, *r.hands]
    play = r.play
    if play is not None:
        parts += [play.hands, *play.hands, play.trick, play.played, play.failed_throws]
        parts.append(play.tricks)
    return parts


def a_move(r: Round, rng: random.Random) -> bool:
    """Play a legal card (or claim a deadline) on ``r``; whether a move was made."""
    now = r.modified_on + timedelta(minutes=10)
    play = r.play
    if r.phase is RoundPhase.PLAYING and play is not None:
        seat = play.turn
        hand = play.hands[seat]
        if play.lead_shape is None:
            cards: tuple[int, ...] = (hand[0],)
        else:
            cards = tuple(random_follow(play.ctx, play.lead_shape, hand, rng))
        r.play_cards(seat, cards, now)
        return bool(r.pending_events)
    try:
        r.claim_deadlines(now)
    except IllegalMoveError:
        return False
    return bool(r.pending_events)


@settings(max_examples=examples(6), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), stops=st.lists(st.integers(1, 300), min_size=2, max_size=4))
def test_a_copy_equals_the_round_and_its_replay_and_owns_its_state(
    seed: int, stops: list[int]
) -> None:
    rng = random.Random(seed)
    clock = FakeClock()
    svc = TableService(POPO, clock=clock, seeds=seeds_from(rng), pacing=Pacing(25, 400, 120))
    table = Table.open(svc, clock, rng, RuleSet())
    moved = 0
    for stop in sorted(stops):
        while len(table.commands) < stop and not table.match().finished:
            table.step()
        original = table.round()
        before = round_state(original)
        twin = copy.deepcopy(original)
        assert round_state(twin) == before
        replayed: Round = svc.repository.get(original.id, version=original.version)
        assert round_state(replayed) == before
        owned = {id(p) for p in mutable_parts(twin)}
        assert not owned & {id(p) for p in mutable_parts(original)}
        if a_move(twin, rng):
            moved += 1
            assert round_state(twin) != before
            assert round_state(original) == before and not original.pending_events
        match = table.match()
        m_before = match_state(match)
        m_twin = copy.deepcopy(match)
        assert match_state(m_twin) == m_before
        m_twin.seats[0] = None
        m_twin.results.append(m_twin.results[0] if m_twin.results else None)  # type: ignore[arg-type]
        assert match_state(match) == m_before
    assert moved, "no move was made on a copy"


def test_a_trick_play_copy_sets_every_slot_and_owns_its_lists() -> None:
    rng = random.Random(7)
    clock = FakeClock()
    svc = TableService(POPO, clock=clock, seeds=seeds_from(rng), pacing=Pacing(0, 30_000, 0))
    table = Table.open(svc, clock, rng, RuleSet())
    while table.round().play is None or not table.round().play.tricks:  # type: ignore[union-attr]
        table.step()
    play = table.round().play
    assert play is not None
    twin = copy.deepcopy(play)
    for slot in TrickPlay.__slots__:
        assert getattr(twin, slot) == getattr(play, slot), slot
        value = getattr(play, slot)
        if isinstance(value, list):
            assert getattr(twin, slot) is not value, slot
    twin.hands[twin.turn].clear()
    assert play.hands[play.turn]


def test_a_match_copy_is_a_match() -> None:
    rng = random.Random(3)
    clock = FakeClock()
    svc = TableService(POPO, clock=clock, seeds=seeds_from(rng))
    table = Table.open(svc, clock, rng, RuleSet())
    match = table.match()
    twin = copy.deepcopy(match)
    assert type(twin) is Match and twin.id == match.id and twin.version == match.version
    assert twin.seats == match.seats and twin.seats is not match.seats

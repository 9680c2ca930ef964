"""Random legal matches of several rounds replay exactly, at every version, with every card
and point accounted for (R3, R26, R34; the table: :mod:`tests.property.core_table`).
"""

from __future__ import annotations

import random
from collections import Counter
from datetime import timedelta
from uuid import UUID

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from domain.game.round import RoundPhase
from domain.game.round_events import Pacing
from domain.rules.ruleset import (
    FINISH_AT_A,
    WRAP,
    BottomMultiplier,
    MatchEnd,
    MatchEndKind,
    NoDeclaration,
    RuleSet,
)
from tests.commands import claim_deadlines, create_match, take_seat
from tests.conftest import examples
from tests.property.core_checks import check_cards, check_replays, check_scores, count
from tests.property.core_table import POPO, FakeClock, Table, TableService, seeds_from

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


@settings(max_examples=examples(10), deadline=None, suppress_health_check=[HealthCheck.too_slow])
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
    mid = create_match(svc, RuleSet())
    for seat in range(4):
        take_seat(svc, mid, seat, f"p{seat}")
    r = svc.current_round(svc.get_match(mid))
    assert r is not None
    clock.now = r.drawing_deadline() + timedelta(milliseconds=1)  # nobody declared (R19)
    claim_deadlines(svc, mid)
    r = svc.current_round(svc.get_match(mid))
    assert r is not None and r.phase is RoundPhase.DEALING and r.deal_no == 2

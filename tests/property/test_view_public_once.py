"""The public part of a view is built once for the viewers of one state (docs/decisions.md
D-edge) and never outlives it: a round changed in place by a move (R22–R25, R16, R20), or a
copy of it at the same version in another state, is seen as it is (R33: each viewer's view is
the one built from scratch).
"""

from __future__ import annotations

import copy
import random
from datetime import datetime

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from domain.game.match import Match
from domain.game.round import Round
from domain.game.round_events import Pacing
from domain.rules.ruleset import RuleSet
from services import views
from services.views import table_view
from tests.conftest import examples
from tests.property.core_table import POPO, FakeClock, Table, TableService, seeds_from
from tests.property.test_aggregate_copies import a_move


def assert_as_built(match: Match, round_: Round, now: datetime) -> None:
    shared = {v: table_view(match, round_, v, now) for v in (0, 1, 2, 3, None)}
    views._public_parts.clear()
    assert shared == {v: table_view(match, round_, v, now) for v in (0, 1, 2, 3, None)}


@settings(max_examples=examples(5), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), steps=st.integers(20, 200))
def test_views_of_a_changed_round_are_built_from_its_state(seed: int, steps: int) -> None:
    rng = random.Random(seed)
    clock = FakeClock()
    svc = TableService(POPO, clock=clock, seeds=seeds_from(rng), pacing=Pacing(25, 400, 120))
    table = Table.open(svc, clock, rng, RuleSet())
    moved = 0
    for step in range(steps):
        if table.match().finished:
            break
        table.step()
        if step % 7:
            continue
        match, round_ = table.match(), table.round()
        now = clock.now
        seen = {v: table_view(match, round_, v, now) for v in (0, 1, 2, 3, None)}
        twin = copy.deepcopy(round_)
        if a_move(round_, rng):  # the round itself, changed in place
            moved += 1
            assert_as_built(match, round_, now)
        if a_move(twin, rng):  # a copy at the next version, in its own state
            table_view(match, round_, 0, now)
            assert_as_built(match, twin, now)
        assert {v: table_view(match, table.round(), v, now) for v in seen} == seen
    assert moved

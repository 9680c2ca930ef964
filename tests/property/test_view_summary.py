"""The view agrees with the match summary at every version of bot-played matches (R34),
match end included (R30–R32): the same version, rules, seats, team levels, round
number, whether the match is finished and who won; and a view's hand sizes add up to the
cards no one has played yet (R16, R21, R33).
"""

from __future__ import annotations

import random
from datetime import UTC, datetime
from uuid import UUID

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from domain.rules.ruleset import MatchEnd, MatchEndKind, RuleSet
from services.game import GameService
from services.history import aggregates_at
from services.summaries import match_summary
from services.views import table_view
from tests.commands import create_match, run_bots, take_seat
from tests.conftest import examples

T0 = datetime(2026, 1, 1, tzinfo=UTC)
RULES = st.builds(
    RuleSet,
    declare_with_joker=st.booleans(),
    self_overcall=st.booleans(),
    throw_penalty_points=st.sampled_from([0, 5]),
    match_end=st.sampled_from([MatchEnd(MatchEndKind.ROUNDS, n) for n in (1, 2, 3)]),
)


def _played(run_seed: int, rules: RuleSet) -> tuple[GameService, UUID]:
    rng = random.Random(run_seed)
    service = GameService(
        {"PERSISTENCE_MODULE": "eventsourcing.popo"},
        clock=lambda: T0,
        seeds=lambda: rng.randbytes(32),
    )
    match_id = create_match(service, rules)
    for seat in range(4):
        take_seat(service, match_id, seat, f"bot {seat}", "random")
    run_bots(service, match_id, 100_000)
    return service, match_id


@settings(
    max_examples=examples(6),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    phases=[Phase.explicit, Phase.generate],  # a failure names its seed; no slow shrinking
)
@given(run_seed=st.integers(0, 2**32), rules=RULES)
def test_view_and_summary_agree_at_every_version(run_seed: int, rules: RuleSet) -> None:
    service, match_id = _played(run_seed, rules)
    match = service.get_match(match_id)
    assert match.finished, "rounds:N ends the match (R32)"
    total = match.sequence(0)
    for version in range(1, total + 1):
        m, r, now = aggregates_at(service, match_id, version)
        summary = match_summary(m, r, embargo=None)
        for viewer in (None, 0, 1, 2, 3):
            view = table_view(m, r, viewer, now, embargo=None)
            where = f"version {version}, viewer {viewer}"
            assert view.version == summary.version == version, where
            assert view.team_levels == summary.team_levels, where
            assert view.match_finished == summary.finished, where
            assert view.winner == summary.winner, where
            assert view.round_number == summary.round_number, where
            assert view.seats == summary.seats, where
            assert view.rules == summary.rules, where
            if r is not None and r.dealt is not None:
                unplayed = 108 - len(view.played)
                bottom = 0 if r.phase == "burying" else 8
                assert sum(view.hand_sizes) + bottom == unplayed, where
    final = table_view(match, service.current_round(match), None, T0)
    assert final.winner == match.winner
    assert final.match_finished
    assert final.last_result is not None
    assert final.team_levels == final.last_result.team_levels  # R30: after the last round

"""At every version of random bot-played rounds (``state?version=N``, R34), ``expected`` and
``legal`` say what the rules allow then (R16–R25): a seat named as expected holds cards and
is offered a move, and the move it is offered is accepted at that version — between a
trick's fourth card and its ``TrickWon`` nobody is expected (the trick is being collected),
nor once the last trick is won and the round not yet scored.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime
from uuid import UUID

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from domain.rules.ruleset import MatchEnd, MatchEndKind, RuleSet
from services.game import GameService
from services.history import aggregates_at, state_at
from services.views import SeatView
from tests.commands import create_match, run_bots, take_seat
from tests.conftest import examples
from tests.services.test_views_legal import _accepts, _options

T0 = datetime(2026, 1, 1, tzinfo=UTC)
RULES = st.builds(
    RuleSet,
    declare_with_joker=st.booleans(),
    self_overcall=st.booleans(),
    match_end=st.just(MatchEnd(MatchEndKind.ROUNDS, 1)),
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
    max_examples=examples(4),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    phases=[Phase.explicit, Phase.generate],  # a failure names its seed; no slow shrinking
)
@given(run_seed=st.integers(0, 2**32), rules=RULES)
def test_the_expected_seat_may_act_at_every_version(run_seed: int, rules: RuleSet) -> None:
    service, match_id = _played(run_seed, rules)
    total = service.get_match(match_id).sequence(0)
    boundaries = 0
    for version in range(1, total + 1):
        expected = state_at(service, match_id, version, None).view.expected
        _, round_, _ = aggregates_at(service, match_id, version)
        play = None if round_ is None else round_.play
        if play is not None and (len(play.trick) == 4 or play.finished):
            boundaries += 1
            assert expected is None, (version, expected)
        if expected is None or expected.seat is None:
            continue
        assert round_ is not None
        view = state_at(service, match_id, version, expected.seat).view
        assert isinstance(view, SeatView)
        assert view.hand, (version, expected, "expected with an empty hand")
        options = _options(view)
        assert options, (version, expected, "expected, offered nothing")
        action, cards = options[0]
        _accepts(round_, expected.seat, action, cards)  # raises if refused (not your turn …)
    assert boundaries >= 2  # every trick's fourth card, and the round's end

"""The paced-deal race (R16, R17): cards arrive one per interval and only drawn cards
declare; of two eligible declarers exactly one ``TrumpDeclared`` is stored (the table:
:mod:`tests.property.core_table`).
"""

from __future__ import annotations

from datetime import timedelta
from uuid import UUID

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.game.round import DRAWS, Round
from domain.game.round_events import Pacing
from domain.rules.errors import IllegalMoveError
from domain.rules.ruleset import RuleSet
from domain.rules.shuffle import shuffle_deck
from services.errors import VersionConflictError
from tests.commands import act, create_match, take_seat, version_of
from tests.conftest import T0, examples
from tests.property.core_checks import stored_topics
from tests.property.core_table import POPO, FakeClock, TableService, first_draws


def paced_round(seed: bytes, interval: int) -> tuple[TableService, FakeClock, UUID, Round]:
    clock = FakeClock()
    svc = TableService(POPO, clock=clock, seeds=lambda: seed, pacing=Pacing(interval, 5_000, 0))
    mid = create_match(svc, RuleSet())
    for seat in range(4):
        take_seat(svc, mid, seat, f"p{seat}")
    r = svc.current_round(svc.get_match(mid))
    assert r is not None and r.started_at == T0
    return svc, clock, mid, r


SEEDS = st.binary(min_size=32, max_size=32)
INTERVALS = st.integers(1, 400)


@settings(max_examples=examples(60), deadline=None)
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
            act(svc, mid, seat, "declare", (card,))
        assert info.value.rule == "R17"
        assert stored_topics(svc, r.id) == ["RoundStarted", "Dealt"]
    clock.now = T0 + timedelta(milliseconds=k * interval)
    act(svc, mid, seat, "declare", (card,))
    assert stored_topics(svc, r.id) == ["RoundStarted", "Dealt", "TrumpDeclared"]


@settings(max_examples=examples(40), deadline=None)
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
        clock.hook = lambda: act(rival, mid, b, "declare", (first[b][1],))
        seen = version_of(svc, mid)  # it acts on what it saw: If-Match
        with pytest.raises(VersionConflictError):
            act(svc, mid, a, "declare", (first[a][1],), expected_version=seen)
        a, b = b, a  # the rival's declaration stands; a's retry is the late one
    else:
        act(svc, mid, a, "declare", (first[a][1],))
    clock.advance(ms=data.draw(st.integers(0, (DRAWS - 1 - at) * interval), label="later ms"))
    with pytest.raises(IllegalMoveError) as info:
        act(svc, mid, b, "declare", (first[b][1],))
    assert info.value.code == "already-declared" and info.value.rule == "R17"
    assert stored_topics(svc, r.id).count("TrumpDeclared") == 1
    standing = svc.get_round(r.id).bidding.standing
    assert standing is not None and standing.seat == a
    assert svc.get_match(mid).version == 6  # created, 4 seats, round begun: nothing else

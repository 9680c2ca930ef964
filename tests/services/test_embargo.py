"""The duplicate-deal embargo (R33, R35, R36; services/embargo.py) on the service layer.

A two-table bots tournament round (every table plays the same seeds seat for seat, R36):
table A is played to its end with ``services.bots.run_bots`` while table B has not made a
move. Every read of table A — the views of the four seats and a spectator, of its current
and of every round, the state as of every version, the history pages, deal verification
and record export — shows nothing a scored deal would reveal beyond what that viewer saw
during play (R33): no seed, no other seat's hand as dealt, no bottom unless the viewer
buried it. Once the tournament round completes, everything is revealed (R33, R35).

Each check is also run once *without* the embargo, to show it would catch the leak. After the
round completes, and the records: :mod:`tests.services.test_embargo_release`.
"""

from __future__ import annotations

from collections import Counter

import pytest

from domain.game.round import Round
from domain.rules.cards import card_names
from services.embargo import UNCHECKED, Embargo, view_embargo
from services.history import match_history, state_at
from services.views import SeatView, table_view
from tests.conftest import T0
from tests.services.embargo_scene import (
    _BURY_ENDS,
    VIEWERS,
    Scene,
    as_json,
    budget,
    half_played,
    leaked_seeds,
    over_budget,
)


@pytest.fixture(scope="module")
def scene() -> Scene:
    return half_played()


# -- views (R33 during play, R36 embargo) -----------------------------------------------------


@pytest.mark.parametrize("viewer", VIEWERS)
def test_views_of_every_round_of_table_a_reveal_nothing_until_the_round_completes(
    scene: Scene, viewer: int | None
) -> None:
    """R33/R36: seat and public views of every scored round of table A: no result, an
    explicit embargo, the bottom only to the seat that buried it, ``visible`` exactly
    what the seat saw during play; no seed anywhere."""
    service, match, seeds = scene.service, scene.match(), scene.seeds()
    for round_ in scene.rounds():
        embargo = view_embargo(service, match, round_)
        assert embargo == Embargo(scene.tournament_id, 1)
        view = table_view(match, round_, viewer, T0, embargo=embargo)
        assert view.phase == "scored" and view.result is None
        assert view.embargo is not None and "until tournament round 1 completes" in view.embargo
        assert "R36" in view.embargo
        assert leaked_seeds(view, seeds) == []
        assert over_budget(as_json(view), budget(service, round_.id, viewer)) == []
        if isinstance(view, SeatView):
            assert round_.play is not None
            buried = round_.buried_by == viewer
            expected = card_names(round_.play.played) + (
                card_names(round_.bottom) if buried else []
            )
            assert Counter(view.visible) == Counter(expected)
            assert (view.bottom is not None) == buried
            assert len(view.visible) == (108 if buried else 100)


@pytest.mark.parametrize("viewer", VIEWERS)
def test_the_checks_would_catch_the_leak(scene: Scene, viewer: int | None) -> None:
    """The same views without the embargo reveal the seeds and (to any non-burier) the
    bottom: the checks above are not vacuous."""
    service, match = scene.service, scene.match()
    round_ = scene.rounds()[0]
    view = table_view(match, round_, viewer, T0, embargo=None)
    assert view.result is not None and leaked_seeds(view, scene.seeds()) != []
    if viewer is not None and viewer != round_.buried_by:
        assert over_budget(as_json(view), budget(service, round_.id, viewer)) != []


@pytest.mark.parametrize("viewer", VIEWERS)
def test_a_caller_that_does_not_ask_gets_the_embargo(scene: Scene, viewer: int | None) -> None:
    """Fail safe: table_view without an embargo decision withholds a tournament table's
    scored deal (the command answers rely on it: a table plays only before its tournament
    round completes) and reveals an ordinary match's as before."""
    match = scene.match()
    round_ = scene.rounds()[-1]
    view = table_view(match, round_, viewer, T0)
    assert view.result is None and view.embargo is not None
    assert table_view(match, round_, viewer, T0, embargo=UNCHECKED) == view


# -- the state as of every version, and the history (R34) -------------------------------------


def _round_of(rounds: list[Round], number: int | None) -> Round | None:
    return None if number is None or number > len(rounds) else rounds[number - 1]


@pytest.mark.parametrize("viewer", VIEWERS)
def test_state_at_every_version_withholds_what_the_round_hid(
    scene: Scene, viewer: int | None
) -> None:
    """R34 + R36: the table as of every version of table A: never a ``revealed``; scored
    rounds say why; nothing beyond what the viewer saw then or later in play."""
    service, seeds, rounds = scene.service, scene.seeds(), scene.rounds()
    budgets = {r.id: budget(service, r.id, viewer) for r in rounds}  # table A is finished
    page = match_history(service, scene.a, None, after=0, limit=1000)
    versions = [i.version for i in page.items]
    assert versions == list(range(1, len(versions) + 1)) and not page.more
    scored_states = 0
    for version in versions:
        at = state_at(service, scene.a, version, viewer)
        assert at.revealed is None, version
        assert leaked_seeds(at, seeds) == [], version
        # a round's state once it has events (at RoundBegun the view names the round only)
        round_ = _round_of(rounds, at.view.round_number if at.view.round_id else None)
        if round_ is not None:
            assert over_budget(as_json(at), budgets[round_.id]) == [], version
        # every round of table A is scored by now: its states say why nothing is revealed
        assert (at.embargo is not None) == (round_ is not None), version
        if at.view.phase == "scored":
            scored_states += 1
            assert at.view.embargo == at.embargo and at.view.result is None
        else:
            assert at.view.embargo is None
    assert scored_states >= 1


@pytest.mark.parametrize("viewer", VIEWERS)
def test_history_pages_keep_the_during_play_redaction(scene: Scene, viewer: int | None) -> None:
    """R33/R36: Dealt.seed hidden, BottomBuried.cards only for the seat that buried them
    (or the 炒底 taker), RoundScored without seed, bottomCards, bottomPoints; the page
    says why; paging loses and repeats nothing (R34)."""
    service, seeds = scene.service, scene.seeds()
    budgets = {r.number: budget(service, r.id, viewer) for r in scene.rounds()}
    after, items = 0, []
    while True:
        page = match_history(service, scene.a, viewer, after=after, limit=37)
        assert page.embargo is not None and "tournament round 1" in page.embargo
        assert leaked_seeds(page, seeds) == []
        items += page.items
        if not page.more:
            break
        after = page.next
    assert [i.version for i in items] == list(range(1, len(items) + 1))
    buried = 0
    for k, item in enumerate(items):
        if item.type == "Dealt":
            assert item.hidden == ["seed"] and "seed" not in item.data
        if item.type == "RoundScored":
            assert set(item.hidden) == {"seed", "bottomCards", "bottomPoints"}
            assert not {"seed", "bottomCards", "bottomPoints"} & set(item.data)
        if item.type == "BottomBuried":
            buried += 1
            # R21/R20: the seat that buried them, and the 炒底 overcaller who took them
            after_it = (i for i in items[k + 1 :] if i.type in _BURY_ENDS)
            nxt = next(after_it)
            takers = {item.data["seat"]}
            if nxt.type == "Overcalled":
                takers.add(nxt.data["seat"])
            assert ("cards" in item.data) == (viewer in takers), item
        if item.round is not None:
            assert over_budget(as_json(item), budgets[item.round]) == [], item
    assert buried >= 2

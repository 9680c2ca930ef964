"""The duplicate-deal embargo (R35, R36; services/embargo.py), continued: verification and
records answer ``deal-embargoed`` until the tournament round completes, everything is
revealed after it, and the predicate costs one None check for ordinary matches and a cache
once completed (the scene: :mod:`tests.services.embargo_scene`).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from uuid import uuid4

import pytest

from domain.rules.ruleset import STANDARD
from services.embargo import (
    DealEmbargoedError,
    Embargo,
    embargo_for,
    embargo_marker,
    embargo_of,
    embargoed,
    view_embargo,
)
from services.history import match_history, state_at
from services.records.export import export_match, export_round
from services.verify import verify_round
from services.views import SeatView, table_view
from tests.commands import create_match, run_bots, take_seat
from tests.conftest import T0
from tests.services.embargo_scene import VIEWERS, Scene, half_played, leaked_seeds, new_service


@pytest.fixture(scope="module")
def scene() -> Scene:
    return half_played()


@pytest.fixture(scope="module")
def released() -> Scene:
    s = half_played()
    s.complete()
    return s


# -- verification and records (R35) -----------------------------------------------------------


def test_verify_and_records_answer_deal_embargoed(scene: Scene) -> None:
    """R35/R36: no recomputed deal and no record of table A until the round completes."""
    service = scene.service
    calls: list[Callable[[], object]] = [
        *[partial(verify_round, service, r.id) for r in scene.rounds()],
        partial(export_match, service, scene.a),
        *[partial(export_round, service, scene.a, n) for n in (1, 2)],
    ]
    for call in calls:
        with pytest.raises(DealEmbargoedError) as info:
            call()
        assert info.value.code == "deal-embargoed" and info.value.rule == "R36"
        assert "embargoed until tournament round 1 completes" in info.value.detail
        assert leaked_seeds(info.value.detail, scene.seeds()) == []


# -- after the tournament round completes: everything, as for any match -----------------------


@pytest.mark.parametrize("viewer", VIEWERS)
def test_after_the_round_completes_everything_is_revealed(
    released: Scene, viewer: int | None
) -> None:
    """R33/R35: once RoundCompleted, table A's views, states and history reveal every
    hand, the bottom and the seeds; verification and records work."""
    service, match, seeds = released.service, released.match(), released.seeds()
    for round_ in released.rounds():
        assert view_embargo(service, match, round_) is None
        view = table_view(match, round_, viewer, T0, embargo=None)
        assert view.result is not None and view.embargo is None
        assert view.result.seed in seeds and len(view.result.dealt_hands) == 4
        if isinstance(view, SeatView):
            assert len(view.visible) == 108
    page = match_history(service, released.a, viewer, limit=1000)
    assert page.embargo is None and set(leaked_seeds(page, seeds)) == set(seeds)
    scored = next(i for i in page.items if i.type == "RoundScored")
    assert scored.hidden == [] and "bottomCards" in scored.data
    at = state_at(service, released.a, scored.version, viewer)
    assert at.revealed is not None and at.embargo is None and at.view.result is not None


def test_after_the_round_completes_verify_and_records_work(released: Scene) -> None:
    service = released.service
    for round_ in released.rounds():
        assert verify_round(service, round_.id).seed == round_.seed_hex
    assert export_match(service, released.a).end is not None
    assert export_round(service, released.a, 1).rounds[0].deals


# -- the predicate: one None check for ordinary matches, a cache once completed ---------------


def test_an_ordinary_match_never_reads_a_tournament(monkeypatch: pytest.MonkeyPatch) -> None:
    """Non-tournament matches pay a None check: the predicate reads nothing."""
    service = new_service()
    match_id = create_match(service, STANDARD)
    for seat in range(4):
        take_seat(service, match_id, seat, f"p{seat}", "heuristic")
    run_bots(service, match_id, 400)
    match = service.get_match(match_id)
    round_ = service.get_round(match.results[0].round_id)

    def no_reads(*args: object, **kwargs: object) -> object:
        raise AssertionError("read the store")

    monkeypatch.setattr(service.repository, "get", no_reads)
    assert embargo_of(service, match) is None and not embargoed(service, match)
    assert view_embargo(service, match, round_) is None
    assert embargo_for(service, None, 0) is None
    assert embargo_marker(round_, None) == ""
    assert table_view(match, round_, 0, T0).result is not None  # UNCHECKED: no tournament


def test_completion_is_remembered(released: Scene, monkeypatch: pytest.MonkeyPatch) -> None:
    """A completed tournament round is remembered: later checks read nothing."""
    service, match = released.service, released.match()
    assert embargo_of(service, match) is None

    def no_reads(*args: object, **kwargs: object) -> object:
        raise AssertionError("read the store")

    monkeypatch.setattr(service.repository, "get", no_reads)
    assert embargo_of(service, match) is None
    assert embargo_for(service, released.tournament_id, 1) is None


def test_an_incomplete_round_is_read_each_time(scene: Scene) -> None:
    """Until it completes, the round's state is read again (another process may complete
    it): the embargo holds, and a missing tournament or round keeps it (fail safe)."""
    service = scene.service
    assert embargoed(service, scene.match())
    assert embargoed(service, service.get_match(scene.b))
    assert embargo_for(service, scene.tournament_id, 2) == Embargo(scene.tournament_id, 2)
    missing = uuid4()
    assert embargo_for(service, missing, 1) == Embargo(missing, 1)
    round_ = scene.rounds()[-1]
    assert embargo_marker(round_, Embargo(scene.tournament_id, 1)) == "e"
    assert embargo_marker(None, Embargo(scene.tournament_id, 1)) == ""

"""The ratings' read model (docs/decisions.md D-ratings), on every store: what counts,
rule by rule; kept from the log in many batches it equals a rebuild from scratch, bit for
bit; a rating at a time equals a replay stopped there; an erased player is on no board
and has no history; another model version rates the log again."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, get_args

import pytest
from eventsourcing.persistence import Tracking

from domain.game.match_events import MatchFinished
from infra.ratingviews import open_ratings_view
from services.game import GameService
from services.ratings.model import MODEL
from services.ratings.projection import NotRated, Rated, micros, what_counts
from services.ratings.rows import ALL_TIME, Change
from services.ratings.runner import RatingsFollower
from services.ratings.view import MemoryRatingsView, RatingsView
from services.readmodels.tracked import UPSTREAM
from tests.career.recorded import recorded, write_steps
from tests.conftest import BACKENDS, Backend, FakeClock, FixedSeeds, open_backend
from tests.ratings.population import Population


def stored(backend: Backend, service: GameService) -> RatingsView:
    if backend.name == "popo":
        return MemoryRatingsView()
    return open_ratings_view(service, create=True)


def scratch(service: GameService, stop: int | None = None) -> dict[str, Any]:
    """The ratings rated in one go from the log (up to ``stop``), by a cold service."""
    view = MemoryRatingsView()
    follower = RatingsFollower(service, view, batch=10**9)
    if stop is None:
        follower.catch_up()
    else:
        follower.reach(stop)
    return view.contents()


def finished(service: GameService, match_id: Any) -> MatchFinished:
    events = [service.mapper.to_domain_event(e) for e in service.recorder.select_events(match_id)]
    found = [e for e in events if isinstance(e, MatchFinished)]
    assert len(found) == 1
    return found[0]


Played = tuple[GameService, RatingsView, Population]


def play(backend: Backend) -> Played:
    """The population (played once, :mod:`tests.career.recorded`: the career's begins with
    it) written into ``backend``'s store a step at a time, its ratings kept in batches of 7
    as it grows."""
    service = backend.service()
    view = stored(backend, service)
    follower = RatingsFollower(service, view, batch=7)
    recording = recorded()
    write_steps(
        recording, service, backend.clock, follower.catch_up, steps=recording.marks["ratings"]
    )
    follower.catch_up()
    return service, view, recording.population.base


@pytest.fixture(scope="module", params=BACKENDS)
def shared(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Backend, Played]]:
    """One population per store for the tests that only read it (its view, its log)."""
    with open_backend(
        request.param,
        tmp_path_factory.mktemp("ratings"),
        FakeClock(),
        FixedSeeds(),
        lambda: request.getfixturevalue("pg_url"),
    ) as backend:
        yield backend, play(backend)


@pytest.fixture
def played(shared: tuple[Backend, Played]) -> Played:
    return shared[1]


@pytest.fixture
def reader(shared: tuple[Backend, Played]) -> Backend:
    """The shared population's store, for services of the test's own on it."""
    return shared[0]


def test_each_rule_of_what_counts(played: Played) -> None:
    service, view, pop = played
    for reason, match_id in pop.unrated.items():
        assert what_counts(service, finished(service, match_id)) == reason
    assert set(pop.unrated) == set(get_args(NotRated)) - {"no-family"}
    for match_id in pop.rated:
        assert isinstance(what_counts(service, finished(service, match_id)), Rated)
    leaver = what_counts(service, finished(service, pop.leaver))
    assert isinstance(leaver, Rated) and [s.lost for s in leaver.seats] == [True] + [False] * 3
    timed = what_counts(service, finished(service, pop.timed_out))
    assert isinstance(timed, Rated) and [s.lost for s in timed.seats] == [False, True, False, False]
    # rated matches only: one history row per account seat of each
    contents = view.contents()
    history = [v for k, v in contents.items() if k.startswith("history")]
    matches = {h["match_id"] for h in history}
    assert matches == {str(m) for m in pop.rated}
    assert all(h["player_id"] != str(pop.erased) for h in history)


def test_repeated_foursomes_weigh_less_within_the_window(
    played: Played,
) -> None:
    _, view, pop = played
    a = pop.people[0].id
    weights = {
        h["match_id"]: float(h["weight"])
        for k, h in view.contents().items()
        if k.startswith(f"history {a} ")
    }
    first, *again, week_later = pop.repeated
    assert [weights[str(m)] for m in again] == [1 / 3, 1 / 4]  # after the first two
    assert weights[str(first)] == 0.5  # the first four-person match came before it
    assert weights[str(week_later)] == 1.0


def test_an_erased_player_is_on_no_board_and_has_no_history(
    played: Played,
) -> None:
    _, view, pop = played
    assert pop.erased is not None
    assert view.ratings_of(pop.erased) == []
    assert not [k for k in view.contents() if str(pop.erased) in k]


def test_kept_in_batches_the_view_is_a_rebuild_bit_for_bit(reader: Backend, played: Played) -> None:
    _, view, _ = played
    again = scratch(reader.service())
    assert view.contents() == again
    kinds = {key.split()[0] for key in again}
    assert kinds == {"position", "model", "rating", "history", "season"}


def test_a_rating_at_a_time_is_a_replay_stopped_there(reader: Backend, played: Played) -> None:
    service, view, pop = played
    a = pop.people[0].id
    for match_id in pop.rated[:6]:
        event = finished(service, match_id)
        at = micros(event.timestamp)
        position = _position_of(service, match_id)
        replay = MemoryRatingsView()
        RatingsFollower(reader.service(), replay).reach(position)
        row = replay.stored_rating("standard", ALL_TIME, a)
        history = view.history_at(a, "standard", at)
        if row is None:
            assert history is None
        else:
            assert history is not None
            assert (history.mu_after, history.sigma_after) == (row.mu, row.sigma)


def _position_of(service: GameService, match_id: Any) -> int:
    for n in service.recorder.select_notifications(0, 100_000):
        if n.originator_id == match_id and n.topic.endswith("MatchFinished"):
            return int(n.id)
    raise AssertionError("no MatchFinished")


def test_another_model_version_rates_the_log_again(reader: Backend, played: Played) -> None:
    """The shared view is reset here and rated again: as it was before when the test
    passes; rated again from scratch after a failure, for the tests that read it next."""
    _, view, _ = played
    before = view.contents()
    try:
        view.reset(f"{MODEL.name}/{MODEL.version - 1}/monthly")  # as an older version left it
        view.record(Change(), Tracking(UPSTREAM, 1))  # and a position of its own
        assert view.position() == 1
        RatingsFollower(reader.service(), view).catch_up()
        assert view.contents() == before
    finally:
        if view.contents() != before:
            view.reset("")
            RatingsFollower(reader.service(), view).catch_up()

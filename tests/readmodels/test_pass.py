"""One pass over the log for every view a process keeps (docs/decisions.md D-follow): the
lists, the ratings, the careers and the friends kept by one :class:`Pass` read each new
notification once, decode only those some view follows, and end exactly where each
view kept alone ends — the rows and the position."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from eventsourcing.persistence import Notification
from eventsourcing.utils import get_topic

from api.metrics import Metrics
from domain.game.match_events import MatchCreated, MatchFinished
from domain.tournament.events import RoundCompleted
from infra.careerviews import open_career_view
from infra.ratingviews import open_ratings_view
from infra.readviews import open_view
from infra.socialviews import open_social_view
from services.career.notices import RatingNotices
from services.career.reads import CareerModels
from services.career.rebuild import follower as career_follower
from services.career.view import MemoryCareerView
from services.game import GameService
from services.ratings.boards import RatingModels
from services.ratings.runner import RatingsFollower
from services.ratings.view import MemoryRatingsView
from services.readmodels.runner import PAGE, Follower, Pass
from services.readmodels.view import MemoryListsView
from services.social.rebuild import follower as social_follower
from services.social.view import MemorySocialView
from services.tournaments.background import TournamentWork
from services.tournaments.clerk import Clerk
from tests.archive.matches import open_match
from tests.career.recorded import recorded, write_steps
from tests.commands import bus_of
from tests.conftest import BACKENDS, FakeClock, FixedSeeds, open_backend

pytestmark = pytest.mark.timeout(360)


def followers(service: GameService, views: tuple[Any, ...]) -> list[Follower]:
    lists, ratings, career, social = views
    return [
        Follower(service, lists),
        RatingsFollower(service, ratings),
        career_follower(service, career),
        social_follower(service, social),
    ]


def in_memory() -> tuple[Any, ...]:
    return (MemoryListsView(), MemoryRatingsView(), MemoryCareerView(), MemorySocialView())


def kept_alone(service: GameService) -> list[dict[str, Any]]:
    """Each view kept by a follower of its own, in memory, from the whole log."""
    views = in_memory()
    for f in followers(service, views):
        f.catch_up()
    return [v.contents() for v in views]


@pytest.mark.parametrize("backend_name", BACKENDS)
def test_one_pass_reads_the_log_once_for_every_view(
    backend_name: Any,
    request: pytest.FixtureRequest,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with open_backend(
        backend_name,
        tmp_path,
        FakeClock(),
        FixedSeeds(),
        lambda: request.getfixturevalue("pg_url"),
    ) as backend:
        service = backend.service()
        stored = (
            open_view(service, create=True),
            open_ratings_view(service, create=True),
            open_career_view(service, create=True),
            open_social_view(service, create=True),
        )
        kept = followers(service, stored)
        group = Pass.of(kept)
        assert all(f.loops() == () for f in kept)  # the pass's one loop runs them all
        assert len(group.loops()) == 1
        # the career population (tests.career.recorded), a pass after each match
        write_steps(recorded(), service, backend.clock, group.catch_up)
        alone = kept_alone(backend.service())
        last = service.recorder.max_notification_id() or 0
        assert [v.position() for v in stored] == [last] * 4
        assert [v.contents() for v in stored] == alone  # in one transaction per pass

        reader = backend.service()  # a pass over the whole log, counted
        reads: list[int] = []
        decoded: list[int] = []
        select, decode = reader.recorder.select_notifications, reader.mapper.to_domain_event

        def counted_select(*args: Any, **kwargs: Any) -> Any:
            reads.append(1)
            return select(*args, **kwargs)

        def counted_decode(n: Any) -> Any:
            if isinstance(n, Notification):  # not an aggregate's event loaded
                decoded.append(n.id)
            return decode(n)

        monkeypatch.setattr(reader.recorder, "select_notifications", counted_select)
        monkeypatch.setattr(reader.mapper, "to_domain_event", counted_decode)
        fresh = in_memory()
        Pass.of(followers(reader, fresh)).catch_up()
        logged = len(select(0, last + 1))
        assert len(reads) == logged // PAGE + 1  # the log read once, a page at a time
        assert len(decoded) == len(set(decoded))  # a notification decoded once at most
        assert 0 < len(decoded) < logged  # what no view follows is not decoded
        assert [v.contents() for v in fresh] == alone


def test_a_pass_tells_the_policies_what_it_read(tmp_path: Path) -> None:
    """The results policy and the rating notices look when the pass read a topic they
    follow (a finished match, a completed round), not on every save (D-follow)."""
    with open_backend("popo", tmp_path, FakeClock(), FixedSeeds(), lambda: "") as backend:
        service = backend.service()
        group = Pass.of([Follower(service, MemoryListsView())])
        told: list[frozenset[str]] = []
        group.heard.append(told.append)
        group.catch_up()
        assert told == []  # nothing read, nothing told
        open_match(service)
        group.catch_up()
        assert len(told) == 1 and get_topic(MatchCreated) in told[0]
        assert get_topic(MatchFinished) not in told[0]

        bus = bus_of(service)
        tournaments = TournamentWork(Clerk(bus))
        ratings = MemoryRatingsView()
        notices = RatingNotices(
            bus,
            CareerModels.in_memory(service),
            RatingModels(service, ratings, RatingsFollower(service, ratings)),
        )
        for policy in (tournaments, notices):
            policy.heard(told[0])
            assert not policy.doorbell.wait(0)  # a match begun: nothing to do
            policy.heard(told[0] | {get_topic(MatchFinished)})
            assert policy.doorbell.wait(0)
        notices.heard({get_topic(RoundCompleted)})  # a tournament round: its held matches
        assert notices.doorbell.wait(0)


def test_a_failing_view_sits_out_with_backoff_and_the_others_go_on(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The career's projection fails on an event: the lists, the ratings and the friends
    reach the log's end all the same; the career stays at its position, logged, and is
    not tried again before its backoff is out; once it is (and the projection mends) it
    catches up to what it would be kept alone (D-isolate)."""
    with open_backend("popo", tmp_path, FakeClock(), FixedSeeds(), lambda: "") as backend:
        service = backend.service()
        views = in_memory()
        kept = followers(service, views)
        group = Pass.of(kept)
        now = [1000.0]
        group.clock = lambda: now[0]
        career = kept[2]
        process = career.projection.process_event
        broken = [True]
        tried: list[int] = []

        def failing(event: Any, tracking: Any) -> None:
            tried.append(tracking.notification_id)
            if broken[0]:
                raise RuntimeError("the career's projection is broken (test)")
            process(event, tracking)

        career.projection.process_event = failing  # type: ignore[method-assign,assignment]
        write_steps(recorded(), service, backend.clock)  # the career population
        last = service.recorder.max_notification_id() or 0
        group.catch_up()
        assert [f.reached for f in kept] == [last, last, 0, last]
        assert views[2].position() == 0  # nothing of the career written
        trouble = group.troubles["career"]
        assert (trouble.failures, group.failures) == (1, 1)
        assert "broken" in trouble.error and "career" in caplog.text
        exposed = Metrics(service, views=group).render().decode()
        assert 'shengji_read_model_failing{view="career"} 1.0' in exposed
        assert 'shengji_read_model_failing{view="ratings"} 0.0' in exposed
        tried.clear()
        open_match(service)  # more saves: the others follow, the career waits its backoff
        group.catch_up()
        assert tried == [] and kept[0].reached > last and kept[2].reached == 0
        now[0] = trouble.retry_at  # its backoff is out: tried again, fails again
        group.catch_up()
        assert tried and group.troubles["career"].failures == 2
        assert group.troubles["career"].retry_at - now[0] > trouble.retry_at - 1000.0
        broken[0] = False
        now[0] = group.troubles["career"].retry_at
        group.catch_up()
        assert group.troubles == {}
        end = service.recorder.max_notification_id() or 0
        assert [f.reached for f in kept] == [end] * 4
        assert [v.contents() for v in views] == kept_alone(backend.service())

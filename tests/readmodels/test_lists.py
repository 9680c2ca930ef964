"""The lists' read models (docs/decisions.md D-readmodels), on every store: kept from the
log in many batches they equal a rebuild from scratch; a follower that starts again goes
on exactly from the view's position; two followers on one view never write the same
events; the lists answer as the log scans did; no row holds a person's name."""

from __future__ import annotations

import functools
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from uuid import UUID

import msgspec
import pytest
from eventsourcing.persistence import Tracking

from domain.tournament.tournament import Tournament
from infra.readviews import open_view
from services.accounts.my_matches import my_matches
from services.accounts.players import get_account
from services.game import GameService
from services.readmodels.lists import (
    ReadModels,
    list_matches,
    list_my_matches,
    list_tournaments,
)
from services.readmodels.runner import Follower, Watcher
from services.readmodels.view import ListsView, MemoryListsView
from services.tournaments.listing import STATUSES
from tests.archive.matches import open_match
from tests.career.recorded import Recording, record, write_steps
from tests.commands import create_match
from tests.conftest import BACKENDS, Backend, FakeClock, FixedSeeds, open_backend
from tests.readmodels.population import PERSON, Population, populate
from tests.readmodels.reference import scan_matches, scan_tournaments


@functools.cache
def recorded_lists() -> Recording[Population]:
    """The population played once per process, on POPO, to be written into each store a
    step at a time (:mod:`tests.career.recorded`): these tests follow its log."""
    return record(lambda r: populate(r.service, r.step))


def stored_view(backend: Backend, service: GameService, shared: list[ListsView]) -> ListsView:
    """The view on the backend's store (on POPO the one in ``shared``: a store in memory
    has the view beside it, one object)."""
    if backend.name == "popo":
        if not shared:
            shared.append(MemoryListsView())
        return shared[0]
    return open_view(service, create=True)


def scratch(service: GameService) -> dict[str, Any]:
    """The lists rebuilt in one go from the whole log, by a service that caches nothing."""
    view = MemoryListsView()
    Follower(service, view, batch=10**9).catch_up()
    return view.contents()


@dataclass
class Kept:
    """The population on a store, its lists' view kept in batches of 7 as it was made."""

    backend: Backend
    service: GameService
    view: ListsView
    population: Population


@pytest.fixture(scope="module", params=BACKENDS)
def kept(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Kept]:
    """One per store for the tests that only read it (the view, the log)."""
    with open_backend(
        request.param,
        tmp_path_factory.mktemp("lists"),
        FakeClock(),
        FixedSeeds(),
        lambda: request.getfixturevalue("pg_url"),
    ) as backend:
        service = backend.service()
        view = stored_view(backend, service, [])
        follower = Follower(service, view, batch=7)  # many small transactions
        recording = recorded_lists()
        write_steps(recording, service, backend.clock, follower.catch_up)
        population = recording.population
        yield Kept(backend, service, view, population)


def test_kept_in_batches_the_view_is_a_rebuild_from_scratch(kept: Kept) -> None:
    view, population = kept.view, kept.population
    assert view.position() == kept.service.recorder.max_notification_id()
    again = scratch(kept.backend.service())
    assert view.contents() == again
    kinds = {key.split()[0] for key in again}
    assert kinds == {"position", "match", "seat", "tournament"}
    assert sum(k.startswith("match") for k in again) >= len(population.matches)


def test_a_follower_that_starts_again_goes_on_from_the_position(
    backend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = backend.service()
    shared: list[ListsView] = []
    view = stored_view(backend, first, shared)
    recording = recorded_lists()
    write_steps(recording, first, backend.clock)  # nothing followed yet
    population = recording.population
    Follower(first, view).catch_up()
    position = view.position()
    open_match(first)
    create_match(first, population_rules(first, population.matches[0]), name="late")
    # another process: a cold cache, its own connections, the same view
    second = backend.service()
    follower = Follower(second, stored_view(backend, second, shared))
    seen: list[int] = []
    process = follower.projection.process_event

    def spy(event: Any, tracking: Tracking) -> None:
        seen.append(tracking.notification_id)
        process(event, tracking)

    monkeypatch.setattr(follower.projection, "process_event", spy)
    follower.catch_up()
    last = second.recorder.max_notification_id() or 0
    assert seen == list(range(position + 1, last + 1))  # nothing twice, nothing missed
    assert view.position() == last
    assert view.contents() == scratch(backend.service())


def population_rules(service: GameService, match_id: Any) -> Any:
    return service.get_match(match_id).rules


def test_two_followers_on_one_view_never_write_the_same_events(backend: Backend) -> None:
    service = backend.service()
    shared: list[ListsView] = []
    view = stored_view(backend, service, shared)
    other = backend.service()
    a = Follower(service, view, batch=5)
    b = Follower(other, stored_view(backend, other, shared), batch=3)
    write_steps(recorded_lists(), service, backend.clock, a.catch_up)
    for _ in range(3):
        open_match(service)
    threads = [threading.Thread(target=f.catch_up) for f in (a, b, a, b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    b.catch_up()
    assert view.position() == service.recorder.max_notification_id()
    assert view.contents() == scratch(backend.service())


def test_the_lists_answer_as_the_log_scans_did(kept: Kept) -> None:
    service, view, population = kept.service, kept.view, kept.population
    lists = ReadModels(service, view, Follower(service, view))
    last = service.recorder.max_notification_id() or 0
    for origin in (None, "played", "imported"):
        for limit in (1, 2, 3, 50):
            for after in (0, 1, 5, last // 2, last - 1, last, last + 10):
                got = list_matches(lists, after=after, limit=limit, origin=origin)
                want = scan_matches(service, after=after, limit=limit, origin=origin)
                assert got == want, (origin, limit, after)
    for status in (None, *STATUSES):
        for limit in (1, 50):
            for after in (0, last // 2, last):
                got_t = list_tournaments(lists, after=after, limit=limit, status=status)
                assert got_t == scan_tournaments(service, after=after, limit=limit, status=status)
    # paging to the end gives every public match once
    seen: list[str] = []
    after = 0
    while True:
        page = list_matches(lists, after=after, limit=2)
        seen += [i.match_id for i in page.items]
        after = page.next
        if not page.more:
            break
    assert seen == [i.match_id for i in scan_matches(service, limit=100).items]
    for account_id in population.accounts:
        account = get_account(service, account_id)
        assert list_my_matches(lists, account) == my_matches(service, account)
    mine = [list_my_matches(lists, get_account(service, a)) for a in population.accounts]
    assert any(m.left for m in mine) and any(m.finished for m in mine)
    assert any(m.current for m in mine)
    assert any(isinstance(service.repository.get(t), Tournament) for t in tournaments(view))


def tournaments(view: ListsView) -> list[Any]:
    return [
        UUID(msgspec.json.decode(item)["tournamentId"])
        for item in view.tournament_page(0, 100, None).items
    ]


def test_a_list_shows_what_was_just_saved(backend: Backend) -> None:
    """Read-your-writes in one process: a list read catches the view up first."""
    service = backend.service()
    view = stored_view(backend, service, [])
    lists = ReadModels(service, view, Follower(service, view))
    assert list_matches(lists).items == []
    mid = open_match(service)
    assert [i.match_id for i in list_matches(lists).items] == [str(mid)]


def test_no_row_holds_a_persons_name(kept: Kept) -> None:
    """docs/players.md: display names are sealed in the events; the rows keep none."""
    contents = msgspec.json.encode(kept.view.contents()).decode()
    assert PERSON not in contents
    assert "bot0" not in contents


def test_a_process_that_writes_no_view_waits_for_the_one_that_does(backend: Backend) -> None:
    service = backend.service()
    view = stored_view(backend, service, [])
    watcher = Watcher(view)
    open_match(service)
    target = service.recorder.max_notification_id() or 0
    assert not watcher.reach(target, timeout=0.05)  # nobody follows: the read goes on
    done = threading.Thread(target=Follower(service, view).catch_up)
    done.start()
    assert watcher.reach(target, timeout=5.0)
    done.join()

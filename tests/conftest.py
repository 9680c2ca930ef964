"""Shared fixtures and fakes of the test suite (names are stable: other modules use them).

Fixtures
--------
``clock``
    A :class:`FakeClock` standing at :data:`T0` (2026-01-01 12:00 UTC) until a test
    sets or advances it; pass it as a ``GameService`` clock or as a command's ``now``.
``seeds``
    A :class:`FixedSeeds` source: the n-th call returns ``seed_bytes(n)`` =
    ``random.Random(n).randbytes(32)`` (deterministic 256-bit deal seeds, R35).
``pg_url`` (session)
    URL of a real PostgreSQL: ``$DATABASE_URL`` if set, else the run's one throwaway
    cluster (xdist's controller starts it: :mod:`tests.one_cluster`), else one started once
    per session by :func:`infra.pgcluster.postgres_url`. No server → the tests that need
    one fail (:class:`~infra.pgcluster.PostgresUnavailableError`), never skip.
``backend``
    Parametrized over ``popo``, ``sqlite``, ``postgres`` (ids the same; the postgres case
    carries the ``postgres`` marker, so ``-m "not postgres"`` leaves it out). A
    :class:`Backend` with an isolated, empty store per test — a fresh SQLite file in
    ``tmp_path``; a fresh schema on PostgreSQL, dropped afterwards (the event table is
    ``shengji_events`` in it, :attr:`Backend.events_table`). ``backend.service()`` builds
    another ``GameService`` *on the same store* (a second process, as far as the store
    can tell: its own aggregate cache and connections; on POPO it shares the recorder)
    through :func:`infra.settings.build_service`, with the backend's ``clock`` and
    ``seeds`` unless others are given. Every service built is closed at teardown.
``service``
    ``backend.service()``: the test's first ``GameService`` on its backend.

Hypothesis profiles (``HYPOTHESIS_PROFILE``, default ``ci``): ``ci`` runs every property
test's full example count — what ``make test`` runs; ``dev`` a fifth of it, for a quick local
loop. Neither has a deadline (a busy machine is no failure). A test states its count as
``@settings(max_examples=examples(300))``: :func:`examples` scales it by the profile.

Helpers importable from here: :data:`T0`, :class:`FakeClock`, :class:`FixedSeeds`,
:func:`seed_bytes`, :class:`Backend`, and the aggregate tests' given/when/then —
:func:`given` (replay an aggregate's history into a fresh one), :func:`when` (the events a
command triggers), :func:`rejects` (an error code, nothing appended), :func:`kinds`.
"""

from __future__ import annotations

import gc
import io
import os
import random
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar
from uuid import uuid4

import msgspec
import psycopg
import pytest
from eventsourcing.domain import Aggregate
from eventsourcing.persistence import ApplicationRecorder
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings
from psycopg import sql

from domain.game.round_events import Pacing
from domain.rules.errors import ShengjiError
from infra.logging import configure_logging
from infra.pgcluster import postgres_url
from infra.settings import Backend as BackendName
from infra.settings import Settings
from infra.store import build_service, persistence_env
from services.game import Clock, GameService, SeedSource
from tests.one_cluster import WORKERINPUT_KEY, SharedCluster, url_from

PROFILE_SCALE = {"ci": 1.0, "dev": 0.2}
"""The share of every test's example count each Hypothesis profile runs."""
for _name in PROFILE_SCALE:
    hypothesis_settings.register_profile(
        _name,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
        print_blob=True,
    )
PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci").strip() or "ci"
if PROFILE not in PROFILE_SCALE:
    raise pytest.UsageError(f"HYPOTHESIS_PROFILE is one of {sorted(PROFILE_SCALE)}, not {PROFILE}")
hypothesis_settings.load_profile(PROFILE)

SUITE_LOG_LEVEL = "WARNING"
"""Every test runs with the product's own logging (``infra.logging``: JSON lines on stdout,
which pytest shows for a failing test) at this level: warnings and errors. The access
log's line per request is left out; a test that reads the logs asks for :func:`logs`."""


def pytest_configure(config: pytest.Config) -> None:
    configure_logging(SUITE_LOG_LEVEL)
    gc.set_threshold(*GC_THRESHOLDS)
    keep_bytecode()


def keep_bytecode() -> None:
    """Python keeps the modules it compiles (``__pycache__``), in this process and in every
    process it starts (xdist's workers, the servers of the tests), as ``make test`` has it
    (the Makefile unexports ``PYTHONDONTWRITEBYTECODE``): an environment that says
    ``PYTHONDONTWRITEBYTECODE`` would have each of them compile the project and its
    libraries again — a worker's start 7-8 CPU-s instead of ~2.3 (docs/testing.md, "Time")."""
    sys.dont_write_bytecode = False
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)


GC_THRESHOLDS = (700, 10, 100)
"""The cycle collector's thresholds in a test process: Python's own for the young
generations; a full pass at most every 100 passes of the middle one (Python's: 10). A
process of the suite holds the collection's objects and a module's fixtures for long; a
full pass walks them all, about a third of a second each (docs/testing.md)."""


def pytest_collection_finish(session: pytest.Session) -> None:
    """What collection made (the modules, the items, schemathesis' cases: over half a
    million objects) lives to the end of the run: moved out of the collector's sight
    (``gc.freeze``), the full passes walk only what the tests make."""
    gc.collect()
    gc.freeze()


@pytest.fixture
def logs() -> Iterator[io.StringIO]:
    """Every log record (INFO and up) while the test runs, as the JSON lines
    ``infra.logging`` writes; the suite's logging is set again afterwards."""
    stream = io.StringIO()
    configure_logging("INFO", stream=stream)
    try:
        yield stream
    finally:
        configure_logging(SUITE_LOG_LEVEL)


def examples(ci: int) -> int:
    """A property test's example count under the loaded profile: ``ci`` in the ``ci``
    profile, a fifth of it (at least 1) in ``dev``."""
    return max(1, round(ci * PROFILE_SCALE[PROFILE]))


pytest_plugins = ("tests.run_guard",)
"""The seed of the random order at the start and the end of a run, and a green run only if
every collected test ran and none was skipped (docs/testing.md)."""

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
"""Where every :class:`FakeClock` starts."""


def seed_bytes(n: int) -> bytes:
    """The n-th deterministic deal seed: ``random.Random(n).randbytes(32)`` (R35)."""
    return random.Random(n).randbytes(32)


class FakeClock:
    """A settable clock for the service and the aggregates' ``now`` (timezone-aware)."""

    def __init__(self, now: datetime = T0) -> None:
        self.now = _aware(now)

    def __call__(self) -> datetime:
        return self.now

    def set(self, now: datetime) -> datetime:
        self.now = _aware(now)
        return self.now

    def advance(
        self, delta: timedelta | None = None, *, ms: int = 0, seconds: float = 0
    ) -> datetime:
        """Move forward by ``delta`` plus ``ms`` milliseconds plus ``seconds``."""
        step = (delta or timedelta()) + timedelta(milliseconds=ms, seconds=seconds)
        if step < timedelta():
            raise ValueError(f"a clock only moves forward, not by {step}")
        self.now += step
        return self.now


def _aware(now: datetime) -> datetime:
    if now.tzinfo is None:
        raise ValueError("use timezone-aware datetimes (UTC)")
    return now


class FixedSeeds:
    """A deterministic seed source: ``seed_bytes(start)``, ``seed_bytes(start + 1)``, …"""

    def __init__(self, start: int = 0) -> None:
        self.next = start
        self.drawn: list[bytes] = []

    def __call__(self) -> bytes:
        seed = seed_bytes(self.next)
        self.next += 1
        self.drawn.append(seed)
        return seed


# -- given / when / then for aggregates ---------------------------------------------------------

_HISTORY = "_given_history"
AggregateT = TypeVar("AggregateT", bound=Aggregate)


def given(aggregate: AggregateT) -> AggregateT:
    """The history so far — the aggregate's events, replayed before or still pending —
    replayed into a fresh aggregate (``event.mutate``), which remembers it, so ``given``
    may be called again after more commands."""
    events = [*getattr(aggregate, _HISTORY, []), *aggregate.collect_events()]
    fresh: Any = None
    for event in events:
        fresh = event.mutate(fresh)
    assert type(fresh) is type(aggregate)
    setattr(fresh, _HISTORY, events)
    result: AggregateT = fresh
    return result


def when(aggregate: Aggregate, command: Callable[[], object]) -> list[Any]:
    """Run ``command``; the events it triggered, in order (left pending for ``given``)."""
    before = len(aggregate.pending_events)
    command()
    return list(aggregate.pending_events[before:])


def rejects(aggregate: Aggregate, command: Callable[[], object], code: str) -> None:
    """``command`` fails with the error ``code`` and appends nothing."""
    version, pending = aggregate.version, len(aggregate.pending_events)
    with pytest.raises(ShengjiError) as info:
        command()
    assert info.value.code == code
    assert (aggregate.version, len(aggregate.pending_events)) == (version, pending)


def kinds(events: Sequence[object]) -> list[str]:
    """The events' class names, in order."""
    return [type(e).__name__ for e in events]


# -- stores ---------------------------------------------------------------------------------------


class _SharedPopoStore(GameService):
    """A second POPO service on the first one's in-memory recorder (the "same store")."""

    name = GameService.name

    def __init__(
        self, recorder: ApplicationRecorder, settings: Settings, clock: Clock, seeds: SeedSource
    ) -> None:
        self._shared_recorder = recorder
        super().__init__(
            persistence_env(settings), clock=clock, seeds=seeds, pacing=settings.pacing
        )

    def construct_recorder(self) -> ApplicationRecorder:
        return self._shared_recorder


class Backend:
    """One test's store and a factory of services on it (see the module docstring)."""

    def __init__(
        self, name: BackendName, settings: Settings, clock: FakeClock, seeds: FixedSeeds
    ) -> None:
        self.name = name
        self.settings = settings
        self.clock = clock
        self.seeds = seeds
        self.services: list[GameService] = []

    @property
    def events_table(self) -> str | None:
        """The library's event table (schema-qualified on PostgreSQL; None on POPO)."""
        table = f"{GameService.name.lower()}_events"
        if self.name == "postgres":
            return f"{self.settings.postgres_schema or 'public'}.{table}"
        return "stored_events" if self.name == "sqlite" else None

    def service(
        self,
        *,
        clock: Clock | None = None,
        seeds: SeedSource | None = None,
        pacing: Pacing | None = None,
    ) -> GameService:
        """A new ``GameService`` on this backend's store (own cache and connections)."""
        settings = self.settings
        if pacing is not None:
            settings = msgspec.structs.replace(
                settings,
                deal_interval_ms=pacing.interval_ms,
                declare_ms=pacing.declare_ms,
                window_ms=pacing.window_ms,
            )
        clock = clock or self.clock
        seeds = seeds or self.seeds
        svc: GameService
        if self.name == "popo" and self.services:
            svc = _SharedPopoStore(self.services[0].recorder, settings, clock, seeds)
        else:
            svc = build_service(settings, clock=clock, seeds=seeds)
        if self.name == "postgres":
            # No live hub keeps these services' caches. While one service is the store's
            # only writer the test is its hub (it trusts its cache, as a process whose
            # hub has caught up); once there are two, each asks the store on every load.
            if self.services:
                for earlier in self.services:
                    earlier.hub_lost()
            else:
                svc.hub_caught_up()
        self.services.append(svc)
        return svc

    def close(self) -> None:
        for svc in reversed(self.services):
            svc.close()
        self.services.clear()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def seeds() -> FixedSeeds:
    return FixedSeeds()


@pytest.fixture(scope="session")
def pg_url(request: pytest.FixtureRequest) -> Iterator[str]:
    shared = url_from(getattr(request.config, "workerinput", None))
    if shared is not None:  # the run's one cluster (tests/one_cluster.py)
        yield shared
        return
    with postgres_url() as url:
        yield url


def pytest_sessionstart(session: pytest.Session) -> None:
    """xdist's controller starts the run's one PostgreSQL cluster for every worker (unless
    ``$DATABASE_URL`` names a server): D-suite2. At the session's start, before xdist starts
    its workers, and after every plugin's configuration (tests/cpu_report.py marks the
    environment the cluster inherits)."""
    config = session.config
    if (
        hasattr(config, "workerinput")
        or not config.pluginmanager.has_plugin("dsession")
        or os.environ.get("DATABASE_URL", "").strip()
    ):
        return
    shared = SharedCluster()
    config.stash[_SHARED_CLUSTER] = shared
    config.add_cleanup(shared.close)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """Each xdist worker is told where the run's cluster URL is written."""
    shared = node.config.stash.get(_SHARED_CLUSTER, None)
    if shared is not None:
        node.workerinput[WORKERINPUT_KEY] = str(shared.file)


_SHARED_CLUSTER = pytest.StashKey[SharedCluster]()


BACKENDS = [
    pytest.param("popo", id="popo"),
    pytest.param("sqlite", id="sqlite"),
    pytest.param("postgres", id="postgres", marks=pytest.mark.postgres),
]
"""The stores a ``backend`` runs on (a module's own fixture parametrized the same way
keeps the ids and the ``postgres`` marker)."""


@contextmanager
def open_backend(
    name: BackendName, folder: Path, clock: FakeClock, seeds: FixedSeeds, pg_url: Callable[[], str]
) -> Iterator[Backend]:
    """A :class:`Backend` on an empty store: a SQLite file in ``folder``, or a new schema of
    ``pg_url()``'s database (dropped after); its services are closed after."""
    if name != "postgres":
        settings = Settings(backend=name, sqlite_path=folder / "events.sqlite3")
        store = Backend(name, settings, clock, seeds)
        try:
            yield store
        finally:
            store.close()
        return
    url = pg_url()
    schema = f"test_{uuid4().hex[:16]}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
    settings = Settings(
        backend="postgres",
        database_url=url,
        postgres_schema=schema,
        postgres_pool_size=2,
        postgres_max_overflow=4,
    )
    store = Backend(name, settings, clock, seeds)
    try:
        yield store
    finally:
        store.close()
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(schema)))


@pytest.fixture(params=BACKENDS)
def backend(
    request: pytest.FixtureRequest, tmp_path: Path, clock: FakeClock, seeds: FixedSeeds
) -> Iterator[Backend]:
    with open_backend(
        request.param, tmp_path, clock, seeds, lambda: request.getfixturevalue("pg_url")
    ) as store:
        yield store


@pytest.fixture
def service(backend: Backend) -> GameService:
    return backend.service()

"""The career population (:mod:`tests.career.population`) played once per test process, on
POPO, and written into any store step by step, for the tests that follow a population's log
rather than test how the commands write it (docs/decisions.md D-suite3): the career's and
the ratings' projections, one pass over the log, the rating notices (their policy writes
the notices as it goes), ``shengji rebuild ratings``. Playing it move by move through the
services costs ~1 CPU-s on POPO and ~3 on SQLite or PostgreSQL, where each command's saves
and loads go to the store; writing its events costs a small part of that.

:func:`recorded` plays it and keeps, after each of its steps (each ``between()`` of
:func:`~tests.career.population.populate_careers`, and the moment its tournament table is
held), where the log ended, the clock and the players' keys then (an erased player's key is
gone from that step on). :func:`write_steps` writes the log into another service's store a
step at a time — the keys first, the step's events, the keys erased in the step — tells the
service those rows (as the live hub tells a process another process's saves:
:meth:`~services.game.GameService.heard`), sets the clock, and calls ``between()`` (or
``until_held``), so what follows the log as it grows sees it grow as when it was played.
The stores write the same events, ids from 1 in order, as the services wrote them on POPO.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from uuid import UUID

from eventsourcing.persistence import Notification, StoredEvent

from infra.settings import Settings
from infra.store import build_service
from services.game import GameService
from tests.career.population import Careers, populate_careers
from tests.conftest import T0, FakeClock, FixedSeeds
from tests.ratings.population import Population


@dataclass(frozen=True)
class Step:
    last: int
    """The log's last notification id after the step."""
    now: datetime
    keys: dict[UUID, bytes]
    """Every player's key then (an account's id to its key)."""
    held: bool
    """The tournament table held (``until_held``), not the end of a match (``between``)."""


@dataclass
class Recording:
    population: Careers
    log: list[Notification]
    steps: list[Step] = field(default_factory=list)
    ratings_steps: int = 0
    """How many of :attr:`steps` the ratings' population (its base) took."""

    @property
    def ratings(self) -> Population:
        return self.population.base


@functools.cache
def recorded() -> Recording:
    """The career population played on POPO (as ``backend.service()`` of the ``popo``
    backend plays it: same settings, clock and seeds), once per process."""
    clock = FakeClock(T0)
    service = build_service(Settings(backend="popo"), clock=clock, seeds=FixedSeeds())
    steps: list[Step] = []
    seen: set[UUID] = set()
    based = [0]

    def step(held: bool) -> None:
        log = service.recorder.select_notifications(steps[-1].last + 1 if steps else 1, 10**6)
        seen.update(UUID(str(n.originator_id)) for n in log)
        keys = {i: k for i in seen if (k := service.sealer.keys.get(i)) is not None}
        last = log[-1].id if log else (steps[-1].last if steps else 0)
        steps.append(Step(last, clock(), keys, held))

    def between() -> None:
        step(held=False)

    def base_done(_: Population) -> None:
        based[0] = len(steps)

    try:
        pop = populate_careers(
            service, clock, between, until_held=lambda _: step(held=True), based=base_done
        )
        log = list(service.recorder.select_notifications(1, 10**6))
    finally:
        service.close()
    assert [n.id for n in log] == list(range(1, len(log) + 1))
    assert steps[-1].last == len(log)
    return Recording(pop, log, steps, based[0])


def write_steps(
    recording: Recording,
    service: GameService,
    clock: FakeClock,
    between: Callable[[], object] = lambda: None,
    *,
    until_held: Callable[[Careers], object] = lambda _: None,
    steps: int | None = None,
) -> None:
    """The recording's first ``steps`` steps (all by default) written into ``service``'s
    empty store, each followed by ``between()`` or ``until_held(population)`` (module
    docstring)."""
    keys = service.sealer.keys
    had: dict[UUID, bytes] = {}
    done = 0
    for step in recording.steps[:steps]:
        for account, key in step.keys.items():
            if account not in had:
                keys.create(account, key)
        rows = [
            StoredEvent(n.originator_id, n.originator_version, n.topic, n.state)
            for n in recording.log[done : step.last]
        ]
        if rows:
            service.recorder.insert_events(rows)
        for account in had.keys() - step.keys.keys():
            keys.erase(account)
        had = step.keys
        service.heard(rows)
        clock.set(step.now)
        if step.held:
            until_held(recording.population)
        else:
            between()
        done = step.last

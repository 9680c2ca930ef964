"""The career population (:mod:`tests.career.population`) played once per test process, on
POPO, and written into any store step by step, for the tests that follow a population's log
rather than test how the commands write it (docs/decisions.md D-suite3): the career's and
the ratings' projections, one pass over the log, the rating notices (their policy writes
the notices as it goes), ``shengji rebuild ratings`` — and, by :func:`record`, the lists'
population (``tests/readmodels/test_lists.py``). Playing it move by move through the
services costs ~1 CPU-s on POPO and ~3 on SQLite or PostgreSQL, where each command's saves
and loads go to the store; writing its events costs a small part of that.

:func:`recorded` plays it (:func:`record`) and keeps, after each of its steps (each
``between()`` of :func:`~tests.career.population.populate_careers`, and the moment its
tournament table is held), where the log ended, the clock and the players' keys then (an
erased player's key is gone from that step on). :func:`write_steps` writes the log into
another service's store a step at a time — the keys first, the step's events, the keys
erased in the step — tells the service those rows (as the live hub tells a process
another process's saves: :meth:`~services.game.GameService.heard`), sets the clock, and
calls ``between()`` (or ``until_held``), so what follows the log as it grows sees it grow
as when it was played. The stores write the same events, ids from 1 in order, as the
services wrote them on POPO.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Generic, TypeVar
from uuid import UUID

from eventsourcing.persistence import Notification, StoredEvent

from infra.settings import Settings
from infra.store import build_service
from services.game import GameService
from tests.career.population import Careers, populate_careers
from tests.conftest import T0, FakeClock, FixedSeeds

T = TypeVar("T")


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
class Recording(Generic[T]):
    population: T
    log: list[Notification]
    steps: list[Step]
    marks: dict[str, int]
    """How many steps were taken at each point the play marked (``"ratings"``: the career
    population's base, the ratings' population, played)."""


class Recorder:
    """What a play is given: a POPO service as the ``popo`` backend's ``service()`` builds
    it (same settings, clock and seeds), its clock, and :meth:`step` to call where the play
    calls ``between()``."""

    def __init__(self) -> None:
        self.clock = FakeClock(T0)
        self.service = build_service(Settings(backend="popo"), clock=self.clock, seeds=FixedSeeds())
        self.steps: list[Step] = []
        self.marks: dict[str, int] = {}
        self._seen: set[UUID] = set()

    def step(self, held: bool = False) -> None:
        done = self.steps[-1].last if self.steps else 0
        log = self.service.recorder.select_notifications(done + 1, 10**6)
        self._seen.update(UUID(str(n.originator_id)) for n in log)
        keys = self.service.sealer.keys
        now = {i: k for i in self._seen if (k := keys.get(i)) is not None}
        self.steps.append(Step(log[-1].id if log else done, self.clock(), now, held))

    def mark(self, name: str) -> None:
        self.marks[name] = len(self.steps)


def record(play: Callable[[Recorder], T]) -> Recording[T]:
    """``play`` played on POPO, its steps recorded (module docstring)."""
    recorder = Recorder()
    try:
        population = play(recorder)
        log = list(recorder.service.recorder.select_notifications(1, 10**6))
    finally:
        recorder.service.close()
    assert [n.id for n in log] == list(range(1, len(log) + 1))
    assert recorder.steps and recorder.steps[-1].last == len(log)
    return Recording(population, log, recorder.steps, recorder.marks)


@functools.cache
def recorded() -> Recording[Careers]:
    """The career population, once per process (``marks["ratings"]``: the steps of its
    base, the ratings' population)."""
    return record(
        lambda r: populate_careers(
            r.service,
            r.clock,
            r.step,
            until_held=lambda _: r.step(held=True),
            based=lambda _: r.mark("ratings"),
        )
    )


def write_steps(
    recording: Recording[T],
    service: GameService,
    clock: FakeClock,
    between: Callable[[], object] = lambda: None,
    *,
    until_held: Callable[[T], object] = lambda _: None,
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

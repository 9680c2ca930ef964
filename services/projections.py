"""Read models rebuilt from the log (docs/operations.md, "Rebuilding read models").

A **projection** is a read model fed by the events of the whole log, in commit order
(the library's notification log). :func:`rebuild` resets every registered projection and
replays the log into it from position 0 — ``shengji rebuild`` (:mod:`infra.cli_rebuild`)
does it with a progress bar and a rate.

**The registry.** A feature that keeps a read model registers a factory once, at import
time of its module, and lists the module in :data:`PROJECTION_MODULES`::

    @register("my-matches")
    def my_matches(service: GameService) -> Projection: ...

The factory gets the live service (to write its table, say). A projection:

* ``reset()`` forgets everything (a persisted projection truncates its table and its
  tracking position, in one transaction);
* ``apply(position, event)`` takes each event of the log in order, decoded (upcast to
  the current class version);
* ``finish()`` after the log's last event (write the rest, record the position);
* ``rebuilt()`` and ``live()``: the model as rebuilt and as the service answers it now,
  as JSON-ready values, so ``shengji rebuild --check`` and the tests compare them.

The lists (``GET /v1/matches``, ``GET /v1/players/me/matches``, ``GET /v1/tournaments``)
are read models kept in tables of their own (:mod:`services.readmodels`,
docs/decisions.md D-readmodels): ``shengji rebuild`` rebuilds them from the whole log and
puts them in place (:class:`Stored`), ``--check`` compares them with the stored ones
(``infra.cli_rebuild`` adds them to the registered projections: their tables are the
composition root's). The service's other read models are computed from the aggregates on
demand — match summaries (``GET /v1/matches/{id}``), tournament standings, the finished
matches the bulk export reads — or are in-memory caches that start empty (the aggregate
cache, the views' ETags, the tournament rounds known complete). Their projections here
(:mod:`services.projections_builtin`) rebuild them from the log alone and prove the log
holds all they show (R34).
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from services.game import GameService

PAGE = 500
"""Notifications read per query."""
PROJECTION_MODULES: tuple[str, ...] = ("services.projections_builtin",)
"""Modules whose import registers projections (add yours)."""


class Projection(Protocol):
    name: str

    def reset(self) -> None: ...

    def apply(self, position: int, event: Any) -> None: ...

    def finish(self) -> None: ...

    def rebuilt(self) -> dict[str, Any]: ...

    def live(self) -> dict[str, Any]: ...


@runtime_checkable
class Stored(Protocol):
    """A projection whose model the service reads from its own tables (the lists' read
    models, :mod:`services.readmodels`): ``store()`` puts the rebuilt model in their place."""

    def store(self) -> None: ...


Factory = Callable[[GameService], Projection]
_REGISTRY: dict[str, Factory] = {}


def register(name: str) -> Callable[[Factory], Factory]:
    """Register a projection factory under ``name`` (unique)."""

    def add(factory: Factory) -> Factory:
        if name in _REGISTRY and _REGISTRY[name] is not factory:
            raise ValueError(f"a projection {name!r} is registered already")
        _REGISTRY[name] = factory
        return factory

    return add


def unregister(name: str) -> None:
    """Forget the projection ``name`` (tests; a feature being removed)."""
    _REGISTRY.pop(name, None)


def registered() -> dict[str, Factory]:
    """Every registered factory, by name (the modules of :data:`PROJECTION_MODULES` loaded)."""
    for module in PROJECTION_MODULES:
        importlib.import_module(module)
    return dict(sorted(_REGISTRY.items()))


@dataclass(frozen=True, slots=True)
class Progress:
    """Where a rebuild is: events replayed, at which position of the log's ``last``."""

    done: int
    last: int
    position: int
    started: float

    @property
    def rate(self) -> float:
        """Events a second so far."""
        elapsed = time.perf_counter() - self.started
        return self.done / elapsed if elapsed > 0 else 0.0


def log_events(service: GameService, stop: int) -> Iterator[tuple[int, Any]]:
    """Every event of the log up to position ``stop``, decoded, in order."""
    cursor = 0
    while cursor < stop:
        page = service.recorder.select_notifications(
            cursor, PAGE, stop=stop, inclusive_of_start=False
        )
        if not page:
            return
        for n in page:
            yield n.id, service.mapper.to_domain_event(n)
        cursor = page[-1].id


def rebuild(
    service: GameService,
    projections: list[Projection] | None = None,
    *,
    progress: Callable[[Progress], None] | None = None,
    every: int = 1000,
) -> tuple[list[Projection], Progress]:
    """Reset ``projections`` (default: every registered one) and replay the whole log
    into them; ``progress`` is told every ``every`` events and at the end."""
    if projections is None:
        projections = [factory(service) for factory in registered().values()]
    stop = service.recorder.max_notification_id() or 0
    started = time.perf_counter()
    for projection in projections:
        projection.reset()
    done = position = 0
    for position, event in log_events(service, stop):
        for projection in projections:
            projection.apply(position, event)
        done += 1
        if progress is not None and done % every == 0:
            progress(Progress(done, stop, position, started))
    for projection in projections:
        projection.finish()
    final = Progress(done, stop, position, started)
    if progress is not None:
        progress(final)
    return projections, final


def differences(projection: Projection, limit: int = 5) -> list[str]:
    """Keys where ``projection`` as rebuilt differs from the live model (empty: none)."""
    rebuilt, live = projection.rebuilt(), projection.live()
    keys = sorted(set(rebuilt) | set(live))
    return [
        f"{projection.name} {key}: rebuilt {rebuilt.get(key)!r:.200} live {live.get(key)!r:.200}"
        for key in keys
        if rebuilt.get(key) != live.get(key)
    ][:limit]

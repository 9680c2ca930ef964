"""A command's unit of work: the aggregates it loads and changes, saved in one transaction.

A handler (:mod:`services.bus`) loads through its :class:`UnitOfWork` — each aggregate once,
the same object on a second ask — changes them with their commands (events pending) and
adds the aggregates it creates. The bus then saves every aggregate with pending events and
the Idempotency-Key's record in **one** ``save`` of the library (one transaction: all of
it or none of it, docs/decisions.md F1). A version taken meanwhile by another command
refuses the whole save (``VersionConflictError``); the cached copies are dropped so the
next load reads the store.

The unit's ``now`` is the command's one reading of the clock, made when first asked: its
events are stamped with it.

:class:`Reading` is the state a command's answer is built from: right after the command,
the unit's own aggregates as saved (no second load); on a replay, the store as of the
recorded version. One function builds the answer from either (docs/decisions.md D-bus).
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Callable
from datetime import datetime
from typing import Any, TypeVar, cast
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError
from eventsourcing.persistence import IntegrityError

from domain.game.match import Match
from domain.game.match_events import MatchCreated
from domain.game.round import Round
from services.errors import NotFoundError, VersionConflictError
from services.game import GameService
from services.history import aggregates_at
from services.loading import load

T = TypeVar("T")


class UnitOfWork:
    """What one command loads, changes and creates (the module docstring)."""

    def __init__(self, service: GameService, clock: Callable[[], datetime] | None = None) -> None:
        self.service = service
        self._clock = clock or service.clock
        self._now: datetime | None = None
        self._held: dict[UUID, Any] = {}
        """Every aggregate loaded or added, in the order they are saved in (:meth:`add`)."""
        self._read: dict[UUID, Any] = {}
        """The aggregates held to read only (:meth:`read`): never changed in place."""
        self._after: list[Callable[[], None]] = []
        self._events: list[Any] = []
        self.kept: list[Any] = []
        """Aggregates saved even when the command is refused: a passed deadline claimed on
        the way takes effect all the same (R16, R17, R20)."""

    @property
    def now(self) -> datetime:
        """The command's moment: the clock read once, when first asked (after the loads
        that come before it, as a command reads the state, then decides)."""
        if self._now is None:
            self._now = self._clock()
        return self._now

    # -- loading ---------------------------------------------------------------------------

    def match(self, match_id: UUID) -> Match:
        """The match (404 ``no match``)."""
        held = self._held.get(match_id)
        if isinstance(held, Match):
            return held
        return self._hold(self.service.get_match(match_id))

    def round(self, round_id: UUID) -> Round:
        """The round (404 ``no round``)."""
        held = self._held.get(round_id)
        if isinstance(held, Round):
            return held
        return self._hold(self.service.get_round(round_id))

    def current_round(self, match: Match) -> Round | None:
        """The match's round in play (or last played); None before round 1."""
        rid = match.current_round_id()
        return None if rid is None else self.round(rid)

    def get(self, aggregate_id: UUID, cls: type[T], what: str) -> T:
        """The ``cls`` aggregate ``aggregate_id``; 404 ``no <what> <id>`` when there is none
        of that type (:func:`services.loading.load`)."""
        held = self._held.get(aggregate_id)
        if held is not None:
            if not isinstance(held, cls):
                raise NotFoundError(f"no {what} {aggregate_id}")
            return held
        return self._hold(load(self.service, aggregate_id, cls, what))

    def find(self, aggregate_id: UUID, cls: type[T]) -> T | None:
        """The ``cls`` aggregate ``aggregate_id``, None when there is none (yet)."""
        held = self._held.get(aggregate_id)
        if held is not None:
            return held if isinstance(held, cls) else None
        try:
            found: object = self.service.repository.get(aggregate_id)
        except AggregateNotFoundError:
            return None
        return self._hold(found) if isinstance(found, cls) else None

    def loaded(self) -> list[UUID]:
        """The ids of every aggregate this unit loaded or added."""
        return list(self._held)

    def versions(self) -> dict[UUID, int]:
        """The version each aggregate this unit loaded had when loaded (its pending events
        not counted); the aggregates it created are left out."""
        found = {i: a.version - len(a.pending_events) for i, a in self._held.items()}
        return {i: v for i, v in found.items() if v > 0}

    def held(self, aggregate_id: UUID) -> Any | None:
        """The aggregate this unit loaded or added, None when it holds none."""
        return self._held.get(aggregate_id)

    def _hold(self, aggregate: T) -> T:
        self._held[cast("Any", aggregate).id] = aggregate
        return aggregate

    def read(self, aggregate: Any) -> None:
        """Hold ``aggregate``, loaded to read only — the cache's own object, not a copy
        (:meth:`GameService.get_match` ``read_only``) — so the answer reads the state the
        command left without a load; a command that changes it changes the copy
        :meth:`changing` gives (docs/decisions.md D-bus2)."""
        self.add(aggregate)
        self._read[aggregate.id] = aggregate

    # -- changing --------------------------------------------------------------------------

    def changing(self, aggregate: T) -> T:
        """``aggregate``, to change, added (:meth:`add`): a copy of it, held in its place,
        when it is held to read only (:meth:`read`); else ``aggregate`` itself."""
        held: Any = aggregate
        aggregate_id = held.id
        if self._read.get(aggregate_id) is held:
            del self._read[aggregate_id]
            held = copy.deepcopy(held)
        self.add(held)
        return cast("T", held)

    def add(self, *aggregates: Any) -> None:
        """Aggregates the command created (or loaded elsewhere), saved with the rest, after
        every aggregate held before. An aggregate held already moves after them: a handler
        adds it again when it changes after the others (the match records a round once the
        round has scored), so the events are stored in the order they happened."""
        for aggregate in aggregates:
            if aggregate is not None:
                self._held.pop(aggregate.id, None)
                self._held[aggregate.id] = aggregate

    def record(self, *events: Any) -> None:
        """Events of a history made elsewhere (an imported record's match, replayed and
        checked), saved as they are after the changed aggregates."""
        self._events.extend(events)

    def after(self, effect: Callable[[], None]) -> None:
        """``effect`` runs once the save is committed (wake the bot driver): never part of
        the transaction, never run when the command fails."""
        self._after.append(effect)

    def changed(self) -> list[Any]:
        """The aggregates with events to save, in the order they were loaded or added. An
        aggregate held to read only that has events was changed in place — the cache's
        own object: it is dropped from the cache and the command fails (a bug, never a
        refusal)."""
        self._unspoiled()
        return [a for a in self._held.values() if a.pending_events]

    def _unspoiled(self) -> None:
        spoiled = [i for i, a in self._read.items() if a.pending_events]
        if spoiled:
            self.service.refresh(*spoiled)
            raise AssertionError(f"an aggregate held to read only was changed: {spoiled}")

    @property
    def new_matches(self) -> int:
        """The matches this unit creates: the ``MatchCreated`` events it is to save (a
        match made here, or an imported record's, :meth:`record`) — what the bus charges
        to the caller's match quota (docs/decisions.md D-bounded)."""
        pending = (e for a in self._held.values() for e in a.pending_events)
        return sum(isinstance(e, MatchCreated) for e in (*pending, *self._events))

    def commit(self, *records: Any) -> None:
        """Save every changed aggregate and ``records`` in one save; then the effects."""
        save(self.service, *self.changed(), *self._events, *records)
        effects, self._after = self._after, []
        for effect in effects:
            effect()

    def commit_kept(self) -> None:
        """Save what :attr:`kept` holds (a refused command's claimed deadline)."""
        self._unspoiled()
        kept = [a for a in self.kept if a.pending_events]
        if kept:
            save(self.service, *kept)

    # -- reading -----------------------------------------------------------------------------

    def reading(self) -> Reading:
        """The state the command left, to answer from (no second load)."""
        return Reading(self.service, self)


def save(service: GameService, *aggregates: Any) -> None:
    """One save of ``aggregates`` (and events saved as they are: an imported history, a
    key's record); a version taken meanwhile → VersionConflictError, the cached copies
    dropped so the next load reads the store (as after any failed save)."""
    if not aggregates:
        return
    try:
        service.save(*aggregates)
    except IntegrityError as e:
        forget(service, *(a.id for a in aggregates if hasattr(a, "id")))
        raise VersionConflictError(
            "another command changed this first; reload and try again"
        ) from e
    except Exception:
        # the outcome is unknown (the connection dropped: the commit may have happened),
        # so the copies from before the save are not kept either: the next load reads
        # the store (docs/decisions.md D-owner)
        service.refresh(*(a.id for a in aggregates if hasattr(a, "id")))
        raise


def forget(service: GameService, *ids: UUID) -> None:
    """Drop cached copies, so the next load reads the store; tell
    the service's ``saves.forgotten`` (the live streams reload those matches)."""
    cache = service.repository.cache
    if cache is not None:
        for aggregate_id in ids:
            with contextlib.suppress(KeyError):
                cache.get(aggregate_id, evict=True)
    service.saves.forgotten.tell(frozenset(ids))


class Reading:
    """The state an answer is built from (the module docstring): a command's unit of work
    as it was saved, or the store as of a version (``unit`` None: a replay)."""

    def __init__(self, service: GameService, unit: UnitOfWork | None = None) -> None:
        self.service = service
        self.unit = unit

    @property
    def replay(self) -> bool:
        return self.unit is None

    def get(self, aggregate_id: UUID, cls: type[T], what: str, version: int) -> T:
        """The ``cls`` aggregate as of ``version``."""
        if self.unit is not None:
            held = self.unit.held(aggregate_id)
            if isinstance(held, cls) and cast("Any", held).version == version:
                return held
        return load(self.service, aggregate_id, cls, what, version)

    def table(self, match_id: UUID, version: int) -> tuple[Match, Round | None, datetime]:
        """The match and its round as of match version ``version`` (the events of the match
        and its rounds, :meth:`Match.sequence`), and the time of that version's event."""
        if self.unit is not None:
            match = self.unit.held(match_id)
            if isinstance(match, Match):
                current = self.unit.current_round(match)
                if match.sequence(0 if current is None else current.version) == version:
                    # the time of the last event, as a replay reads it (services.history)
                    at = match.modified_on
                    if current is not None and current.modified_on > at:
                        at = current.modified_on
                    return match, current, at
        return aggregates_at(self.service, match_id, version)

"""One atomic save of several aggregates, refused whole on a version conflict.

The eventsourcing library stores every pending event of the aggregates given to one
``save`` in one transaction, and refuses it all when any aggregate's version was taken
meanwhile (its ``IntegrityError``: docs/decisions.md F1). The cached copies of the
losers are dropped so the retry reads the store."""

from __future__ import annotations

import contextlib
from typing import Any
from uuid import UUID

from eventsourcing.persistence import IntegrityError

from services.errors import VersionConflictError
from services.game import GameService


def save_all(service: GameService, *aggregates: Any) -> None:
    try:
        service.save(*aggregates)
    except IntegrityError as e:
        forget(service, *(a.id for a in aggregates))
        raise VersionConflictError("another request changed this first; try again") from e


def forget(service: GameService, *ids: UUID) -> None:
    """Drop cached copies, so the next load reads the store; tell
    :attr:`GameService.on_forgotten` (the live streams reload those matches)."""
    cache = service.repository.cache
    if cache is not None:
        for aggregate_id in ids:
            with contextlib.suppress(KeyError):
                cache.get(aggregate_id, evict=True)
    for listener in service.on_forgotten:
        listener(frozenset(ids))

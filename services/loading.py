"""Loading an aggregate of a known type from the game's store: the library's
``repository.get`` (the aggregate cache included), and a :class:`NotFoundError` (404) both
when the id is unknown and when it names an aggregate of another type, so an id of one
kind never reaches a command for another (a ticket's id given as a player's).

``GameService.get_match`` and ``get_round`` load with their own projector (they count the
events replayed, :mod:`api.metrics`); every other aggregate loads here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError

from services.errors import NotFoundError

if TYPE_CHECKING:
    from services.game import GameService

T = TypeVar("T")


def load(
    service: GameService, aggregate_id: UUID, cls: type[T], what: str, version: int | None = None
) -> T:
    """The ``cls`` aggregate ``aggregate_id`` (as of ``version``); 404 ``no <what> <id>``."""
    if version is None:
        service.settle()
    try:
        found: object = service.repository.get(aggregate_id, version=version)
    except AggregateNotFoundError:
        raise NotFoundError(f"no {what} {aggregate_id}") from None
    if not isinstance(found, cls):
        raise NotFoundError(f"no {what} {aggregate_id}")
    return found

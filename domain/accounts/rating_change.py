"""The ``RatingChange`` aggregate: the notice that a rated match moved a player's rating,
saved once per player and match by the rating notices' policy (docs/decisions.md
D-record), so the player's stream and webhooks, which follow the log, tell the player.

Its id is derived from the player and the match (:func:`rating_change_id`): a second
notice of the same player and match is a second creation of one id, which the store
refuses, so no replay, rebuild or second process can send it twice.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar
from uuid import NAMESPACE_URL, UUID, uuid5

from eventsourcing.domain import Aggregate

from domain.game.base import GameAggregate

NAMESPACE = uuid5(NAMESPACE_URL, "shengji:rating-change")


def rating_change_id(player_id: UUID, match_id: UUID) -> UUID:
    """The id of the notice of ``match_id``'s move of ``player_id``'s rating."""
    return uuid5(NAMESPACE, f"{player_id}:{match_id}")


class RatingChanged(Aggregate.Created):
    """A rated match moved the player's rating in ``family`` from ``rating_before`` to
    ``rating_after`` (the shown ratings of ``model``); ``deviation`` and ``provisional``
    as they are after it. The account is secret (it links a person's matches)."""

    class_version: ClassVar[int] = 1
    SECRET_FIELDS: ClassVar[tuple[str, ...]] = ("player_id",)
    player_id: UUID
    match_id: UUID
    family: str
    model: str
    rating_before: int
    rating_after: int
    deviation: int
    provisional: bool

    def apply(self, aggregate: Any) -> None:
        change: RatingChange = aggregate
        change.player_id = self.player_id
        change.match_id = self.match_id
        change.family = self.family
        change.rating_before = self.rating_before
        change.rating_after = self.rating_after


class RatingChange(GameAggregate):
    """One player's rating moved by one rated match (the module docstring)."""

    if TYPE_CHECKING:
        player_id: UUID
        match_id: UUID
        family: str
        rating_before: int
        rating_after: int

    @classmethod
    def note(
        cls,
        player_id: UUID,
        match_id: UUID,
        *,
        family: str,
        model: str,
        before: int,
        after: int,
        deviation: int,
        provisional: bool,
        now: datetime,
    ) -> RatingChange:
        return cls._create(
            RatingChanged,
            id=rating_change_id(player_id, match_id),
            player_id=player_id,
            match_id=match_id,
            family=family,
            model=model,
            rating_before=before,
            rating_after=after,
            deviation=deviation,
            provisional=provisional,
            timestamp=now,
        )

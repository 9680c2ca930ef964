"""How far a policy that follows the log has gone: its tracking position, an aggregate of the
game's store saved in the **same** save as what the policy writes (docs/decisions.md
D-results-policy).

A policy (the tournament results, :mod:`services.tournaments.results_policy`) reads the
notification log in order and sends a command for each notification it acts on; the
command's unit of work holds the policy's :class:`PolicyPosition` (id ``uuid5`` of the
policy's name) and moves it to the notification's position. The aggregate's version is the
store's optimistic concurrency (docs/decisions.md F1): two processes following the same log
cannot both save a move from the same version, so a notification is acted on exactly once,
across restarts (the position is read back from the store) and across processes (the loser
reads the winner's position and skips). This is the eventsourcing library's tracking record
of a process application, kept as an aggregate because the game's store is an application
recorder: one save is one transaction on every store (POPO, SQLite, PostgreSQL).
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any
from uuid import NAMESPACE_URL, UUID, uuid5

from eventsourcing.domain import Aggregate

NAMESPACE = uuid5(NAMESPACE_URL, "shengji:policy-position")


def position_id(policy: str) -> UUID:
    """The id of ``policy``'s position (one per policy name, in every process)."""
    return uuid5(NAMESPACE, policy)


class PolicyPosition(Aggregate):
    """The last notification of the log a policy has acted on (or passed over)."""

    if TYPE_CHECKING:
        policy: str
        position: int

    class PositionStarted(Aggregate.Created):
        """A policy that follows the log began (its position 0)."""

        policy: str
        """The policy's name (its position's id is derived from it)."""

        def apply(self, aggregate: Any) -> None:
            aggregate.policy = self.policy
            aggregate.position = 0

    class PositionMoved(Aggregate.Event):
        """The policy acted on (or passed over) the log up to a notification, saved with
        what it wrote."""

        position: int
        """The notification's place in the log."""

        def apply(self, aggregate: Any) -> None:
            aggregate.position = self.position

    @classmethod
    def start(cls, policy: str, now: datetime) -> PolicyPosition:
        return cls._create(
            cls.PositionStarted, id=position_id(policy), policy=policy, timestamp=now
        )

    def move(self, position: int, now: datetime) -> None:
        """Past notification ``position`` (never back: a policy acts on each once)."""
        if position <= self.position:
            raise ValueError(f"position {position} is not past {self.position}")
        self.trigger_event(self.PositionMoved, position=position, timestamp=now)


def position_in(uow: Any, policy: str) -> PolicyPosition:
    """``policy``'s position as ``uow`` loads it (started when it has none yet), to move in
    the same save as what the policy writes."""
    found: PolicyPosition | None = uow.find(position_id(policy), PolicyPosition)
    return PolicyPosition.start(policy, uow.now) if found is None else found

"""The ``OnlineNotice`` aggregate: the notice that a player came online, naming the friends
who asked to hear it, saved by the presence board's process (docs/decisions.md D-social)
so webhooks, which follow the log, tell those friends (``friend-online``).

It carries ids only (names are looked up when it is delivered), so an erased player's
name never stays in it. Its id is derived from the player and the debounce window the
coming online fell in (:func:`online_notice_id`): a second notice of the same player in
the same window is a second creation of one id, which the store refuses, so a flapping
connection, a second process or a retry cannot send it twice.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar
from uuid import NAMESPACE_URL, UUID, uuid5

from eventsourcing.domain import Aggregate

from domain.game.base import GameAggregate

NAMESPACE = uuid5(NAMESPACE_URL, "shengji:online-notice")


def online_window(at: datetime, window_s: int) -> int:
    """The number of the ``window_s``-second window ``at`` falls in (from the epoch)."""
    return int(at.timestamp() // max(1, window_s))


def online_notice_id(player_id: UUID, window: int) -> UUID:
    """The id of the notice that ``player_id`` came online in ``window``."""
    return uuid5(NAMESPACE, f"{player_id}:{window}")


class FriendCameOnline(Aggregate.Created):
    """``player_id`` came online; ``friends`` asked to hear it (each a friend then, not
    blocked either way, not erased). The accounts are secret (they link people)."""

    class_version: ClassVar[int] = 1
    SECRET_FIELDS: ClassVar[tuple[str, ...]] = ("player_id", "friends")
    player_id: UUID
    friends: tuple[UUID, ...]

    def apply(self, aggregate: Any) -> None:
        notice: OnlineNotice = aggregate
        notice.player_id = self.player_id
        notice.friends = tuple(self.friends)


class OnlineNotice(GameAggregate):
    """One player's coming online, told to the friends who asked (the module docstring)."""

    if TYPE_CHECKING:
        player_id: UUID
        friends: tuple[UUID, ...]

    @classmethod
    def note(
        cls, player_id: UUID, friends: tuple[UUID, ...], window: int, now: datetime
    ) -> OnlineNotice:
        return cls._create(
            FriendCameOnline,
            id=online_notice_id(player_id, window),
            player_id=player_id,
            friends=friends,
            timestamp=now,
        )

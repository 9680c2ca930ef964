"""The ``Friendship`` aggregate: what stands between two players (docs/players.md "Friends").

One aggregate per pair: its id is derived from the two account ids in order
(:func:`friendship_id`), so a request both ways at once is one aggregate and two
players never have two friendships. It holds a pending request (who asked), the
friendship once accepted, and the blocks either side set. Blocking ends the friendship
and any request; while either side blocks the other no request can be made (the
services answer the blocked side as for a player they cannot reach: no oracle).

Erasure of either player (``FriendshipErased``) ends everything between them for good.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar
from uuid import NAMESPACE_URL, UUID, uuid5

from eventsourcing.domain import Aggregate

from domain.game.base import GameAggregate
from domain.rules.errors import IllegalMoveError, InvalidInputError

NAMESPACE = uuid5(NAMESPACE_URL, "shengji:friendship")


def ordered(a: UUID, b: UUID) -> tuple[UUID, UUID]:
    return (a, b) if str(a) < str(b) else (b, a)


def friendship_id(a: UUID, b: UUID) -> UUID:
    """The id of what stands between ``a`` and ``b`` (either order)."""
    low, high = ordered(a, b)
    return uuid5(NAMESPACE, f"{low}:{high}")


class FriendshipOpened(Aggregate.Created):
    """The pair's record began (with its first request or block). The ids are secret:
    who knows whom is nobody else's business."""

    class_version: ClassVar[int] = 1
    SECRET_FIELDS: ClassVar[tuple[str, ...]] = ("low", "high")
    low: UUID
    high: UUID

    def apply(self, aggregate: Any) -> None:
        f: Friendship = aggregate
        f.low, f.high = self.low, self.high
        f.requester = None
        f.friends = False
        f.blocked_by = set()
        f.erased = False


class FriendshipEvent(Aggregate.Event):
    class_version: ClassVar[int] = 1
    SECRET_FIELDS: ClassVar[tuple[str, ...]] = ("by", "other")
    by: UUID
    """The player who did it."""
    other: UUID
    """The other player of the pair."""

    def apply(self, aggregate: Any) -> None:
        self.apply_to(aggregate)

    def apply_to(self, f: Friendship) -> None:  # pragma: no cover - every event overrides
        raise NotImplementedError


class FriendRequested(FriendshipEvent):
    """``by`` asked the other to be friends."""

    def apply_to(self, f: Friendship) -> None:
        f.requester = self.by


class FriendRequestWithdrawn(FriendshipEvent):
    """``by`` withdrew their request."""

    def apply_to(self, f: Friendship) -> None:
        f.requester = None


class FriendRequestDeclined(FriendshipEvent):
    """``by`` declined the other's request."""

    def apply_to(self, f: Friendship) -> None:
        f.requester = None


class FriendAccepted(FriendshipEvent):
    """``by`` accepted the other's request: they are friends."""

    def apply_to(self, f: Friendship) -> None:
        f.requester = None
        f.friends = True


class FriendRemoved(FriendshipEvent):
    """``by`` ended the friendship."""

    def apply_to(self, f: Friendship) -> None:
        f.friends = False


class PlayerBlocked(FriendshipEvent):
    """``by`` blocked the other: the friendship and any request end."""

    def apply_to(self, f: Friendship) -> None:
        f.requester = None
        f.friends = False
        f.blocked_by.add(self.by)


class PlayerUnblocked(FriendshipEvent):
    """``by`` lifted their block (nothing else comes back)."""

    def apply_to(self, f: Friendship) -> None:
        f.blocked_by.discard(self.by)


class FriendshipErased(FriendshipEvent):
    """``by`` was erased: nothing is left between the two."""

    def apply_to(self, f: Friendship) -> None:
        f.requester = None
        f.friends = False
        f.blocked_by = set()
        f.erased = True


class Friendship(GameAggregate):
    """What stands between two players (the module docstring)."""

    if TYPE_CHECKING:
        low: UUID
        high: UUID
        requester: UUID | None
        friends: bool
        blocked_by: set[UUID]
        erased: bool

    @classmethod
    def open(cls, a: UUID, b: UUID, now: datetime) -> Friendship:
        if a == b:
            raise InvalidInputError("a player cannot befriend or block themselves")
        low, high = ordered(a, b)
        return cls._create(
            FriendshipOpened, id=friendship_id(a, b), low=low, high=high, timestamp=now
        )

    # -- queries ---------------------------------------------------------------------------

    def other(self, player: UUID) -> UUID:
        return self.high if player == self.low else self.low

    @property
    def blocked(self) -> bool:
        """Either side blocks the other."""
        return bool(self.blocked_by)

    def pending_to(self, player: UUID) -> bool:
        """A request waits for ``player``'s answer."""
        return self.requester is not None and self.requester != player

    # -- commands --------------------------------------------------------------------------

    def request(self, by: UUID, now: datetime) -> bool:
        """``by`` asks; a request already waiting for ``by`` is accepted instead (both
        asked). True when they are friends now. The caller checks blocks first."""
        self._live()
        if self.friends:
            raise IllegalMoveError("you are friends already", code="already-friends")
        if self.requester == by:
            raise IllegalMoveError("your request waits for an answer", code="already-requested")
        if self.requester is not None:
            self._emit(FriendAccepted, now, by=by, other=self.other(by))
            return True
        self._emit(FriendRequested, now, by=by, other=self.other(by))
        return False

    def withdraw(self, by: UUID, now: datetime) -> None:
        if self.requester != by:
            raise IllegalMoveError("you have no request waiting here", code="no-request")
        self._emit(FriendRequestWithdrawn, now, by=by, other=self.other(by))

    def decline(self, by: UUID, now: datetime) -> None:
        if not self.pending_to(by):
            raise IllegalMoveError("no request waits for your answer", code="no-request")
        self._emit(FriendRequestDeclined, now, by=by, other=self.other(by))

    def accept(self, by: UUID, now: datetime) -> None:
        if not self.pending_to(by):
            raise IllegalMoveError("no request waits for your answer", code="no-request")
        self._emit(FriendAccepted, now, by=by, other=self.other(by))

    def remove(self, by: UUID, now: datetime) -> None:
        if not self.friends:
            raise IllegalMoveError("you are not friends", code="not-friends")
        self._emit(FriendRemoved, now, by=by, other=self.other(by))

    def block(self, by: UUID, now: datetime) -> None:
        self._live()
        if by not in self.blocked_by:
            self._emit(PlayerBlocked, now, by=by, other=self.other(by))

    def unblock(self, by: UUID, now: datetime) -> None:
        if by not in self.blocked_by:
            raise IllegalMoveError("you do not block this player", code="not-blocked")
        self._emit(PlayerUnblocked, now, by=by, other=self.other(by))

    def erase(self, player: UUID, now: datetime) -> None:
        if not self.erased:
            self._emit(FriendshipErased, now, by=player, other=self.other(player))

    def _live(self) -> None:
        if self.erased:
            raise IllegalMoveError("the player is erased", code="player-erased")

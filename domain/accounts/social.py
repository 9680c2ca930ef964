"""A player's social settings and friend code (docs/players.md "Friends").

* :class:`SocialProfile` — one per account (its id derived from the account's,
  :func:`social_id`): the current friend code, whether the player appears offline to
  friends, and whether they want to hear when a friend comes online. "Appear offline" is
  a stored choice; presence itself is not stored (docs/decisions.md D-social).
* :class:`FriendCode` — a short code naming a player, its id derived from the code
  (:func:`friend_code_id`) so the code finds its player with one read, as an invite code
  does. Rotating retires the old code (it stops working) and issues a new one.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar
from uuid import NAMESPACE_URL, UUID, uuid5

from eventsourcing.domain import Aggregate

from domain.accounts.invite import CODE_ALPHABET
from domain.game.base import GameAggregate
from domain.rules.errors import InvalidInputError

CODE_LENGTH = 10
NAMESPACE = uuid5(NAMESPACE_URL, "shengji:social")


def social_id(account_id: UUID) -> UUID:
    return uuid5(NAMESPACE, f"profile:{account_id}")


def normal_friend_code(code: str) -> str:
    """The code as stored: upper case, without spaces or dashes."""
    cleaned = code.replace("-", "").replace(" ", "").upper()
    if len(cleaned) != CODE_LENGTH or any(ch not in CODE_ALPHABET for ch in cleaned):
        raise InvalidInputError(
            f"a friend code is {CODE_LENGTH} letters and digits ({CODE_ALPHABET})"
        )
    return cleaned


def friend_code_id(code: str) -> UUID:
    return uuid5(NAMESPACE, f"code:{normal_friend_code(code)}")


class FriendCodeIssued(Aggregate.Created):
    """A friend code names ``owner`` (secret: the code is the only public handle)."""

    class_version: ClassVar[int] = 1
    SECRET_FIELDS: ClassVar[tuple[str, ...]] = ("owner",)
    owner: UUID

    def apply(self, aggregate: Any) -> None:
        code: FriendCode = aggregate
        code.owner = self.owner
        code.retired = False


class FriendCodeRetired(Aggregate.Event):
    """The code no longer names anyone (rotated, or its player erased)."""

    class_version: ClassVar[int] = 1

    def apply(self, aggregate: Any) -> None:
        code: FriendCode = aggregate
        code.retired = True


class FriendCode(GameAggregate):
    if TYPE_CHECKING:
        owner: UUID
        retired: bool

    @classmethod
    def issue(cls, code: str, owner: UUID, now: datetime) -> FriendCode:
        return cls._create(FriendCodeIssued, id=friend_code_id(code), owner=owner, timestamp=now)

    def retire(self, now: datetime) -> None:
        if not self.retired:
            self._emit(FriendCodeRetired, now)


class SocialProfileOpened(Aggregate.Created):
    """The player's social settings began (at their first friend code or setting)."""

    class_version: ClassVar[int] = 1
    SECRET_FIELDS: ClassVar[tuple[str, ...]] = ("account_id",)
    account_id: UUID

    def apply(self, aggregate: Any) -> None:
        p: SocialProfile = aggregate
        p.account_id = self.account_id
        p.code = None
        p.appear_offline = False
        p.notify_online = False
        p.erased = False


class SocialEvent(Aggregate.Event):
    class_version: ClassVar[int] = 1

    def apply(self, aggregate: Any) -> None:
        self.apply_to(aggregate)

    def apply_to(self, p: SocialProfile) -> None:  # pragma: no cover - every event overrides
        raise NotImplementedError


class FriendCodeChanged(SocialEvent):
    """The player's friend code is now ``code`` (the old one retired in the same save)."""

    SECRET_FIELDS: ClassVar[tuple[str, ...]] = ("code",)
    code: str

    def apply_to(self, p: SocialProfile) -> None:
        p.code = self.code


class PresenceChoiceMade(SocialEvent):
    """The player's presence settings: appear offline to friends; hear when a friend
    comes online."""

    appear_offline: bool
    notify_online: bool

    def apply_to(self, p: SocialProfile) -> None:
        p.appear_offline = self.appear_offline
        p.notify_online = self.notify_online


class SocialProfileErased(SocialEvent):
    """The player was erased: no code, no settings."""

    def apply_to(self, p: SocialProfile) -> None:
        p.code = None
        p.appear_offline = True
        p.notify_online = False
        p.erased = True


class SocialProfile(GameAggregate):
    if TYPE_CHECKING:
        account_id: UUID
        code: str | None
        appear_offline: bool
        notify_online: bool
        erased: bool

    @classmethod
    def open(cls, account_id: UUID, now: datetime) -> SocialProfile:
        return cls._create(
            SocialProfileOpened, id=social_id(account_id), account_id=account_id, timestamp=now
        )

    def change_code(self, code: str, now: datetime) -> None:
        self._emit(FriendCodeChanged, now, code=normal_friend_code(code))

    def choose(self, appear_offline: bool, notify_online: bool, now: datetime) -> None:
        if (appear_offline, notify_online) != (self.appear_offline, self.notify_online):
            self._emit(
                PresenceChoiceMade, now, appear_offline=appear_offline, notify_online=notify_online
            )

    def erase(self, now: datetime) -> None:
        if not self.erased:
            self._emit(SocialProfileErased, now)

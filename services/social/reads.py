"""Friends, requests, blocks and invitations, read from the friends' view (docs/players.md
"Friends"): keyset pages oldest first (``after``: the ``next`` cursor of the page before),
friends with their presence as the board sees it (hidden players offline)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Final, Literal
from uuid import UUID

import msgspec
from eventsourcing.application import AggregateNotFoundError
from msgspec import Meta

from domain.accounts.account import Account
from domain.accounts.social import SocialProfile, social_id
from domain.rules.errors import InvalidInputError
from services import field_docs
from services.cursors import decode_cursor, encode_cursor
from services.game import GameService
from services.readmodels.runner import Freshness
from services.social.presence import Presence, PresenceBoard
from services.social.rebuild import follower
from services.social.view import LinkRow, MemorySocialView, SocialView

if TYPE_CHECKING:
    from services.bus import Bus

log = logging.getLogger(__name__)
MAX_PAGE: Final = 100
NEXT: Final = Meta(description="The next page's `after` (a keyset cursor); null on the last.")
ERASED_NAME: Final = "erased player"


@dataclass(frozen=True, slots=True)
class SocialModels:
    """The friends' view on the service's store, what keeps it, and the presence board."""

    service: GameService
    view: SocialView
    freshness: Freshness
    board: PresenceBoard

    @classmethod
    def in_memory(cls, service: GameService, board: PresenceBoard | None = None) -> SocialModels:
        view = MemorySocialView()
        return cls(service, view, follower(service, view), board or PresenceBoard())

    def fresh(self) -> SocialView:
        target = self.service.recorder.max_notification_id() or 0
        if not self.freshness.reach(target):
            log.warning("social: behind the log (at %d of %d)", self.view.position(), target)
        return self.view

    def friends_of(self, player: UUID) -> list[UUID]:
        return [r.other_id for r in self.fresh().stored_links(player, ("friend",), None, 0, None)]


def social_of(bus: Bus) -> SocialModels:
    """The friends' models the bus's handlers were built with (``build_bus``)."""
    for handler in bus.handlers.values():
        models = getattr(handler, "models", None)
        if isinstance(models, SocialModels):
            return models
    return SocialModels.in_memory(bus.service)  # pragma: no cover - build_bus gives one


class FriendItem(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """A friend, with their presence as you may see it."""

    player_id: Annotated[str, Meta(description="The friend (a UUID).")]
    name: Annotated[str, Meta(description="Their display name.")]
    since: Annotated[str, Meta(description="Friends since, ISO 8601.")]
    presence: Annotated[Presence, Meta(description="Their presence now.")]


class FriendList(msgspec.Struct, frozen=True, kw_only=True):
    """A page of the player's friends, oldest friendship first."""

    items: Annotated[list[FriendItem], field_docs.ITEMS]
    next: Annotated[str | None, NEXT] = None


class PlayerItem(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """A player in one of your lists (a friend request in or out, a block)."""

    player_id: Annotated[str, Meta(description="The player (a UUID).")]
    name: Annotated[str, Meta(description="Their display name.")]
    since: Annotated[str, Meta(description="Since when, ISO 8601.")]


class PlayerList(msgspec.Struct, frozen=True, kw_only=True):
    """A page of players (friend requests in or out, blocks), oldest first."""

    items: Annotated[list[PlayerItem], field_docs.ITEMS]
    next: Annotated[str | None, NEXT] = None


class InvitationItem(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """An open invitation from a friend to a seat at their table."""

    invitation_id: Annotated[str, Meta(description="The invitation (a UUID).")]
    match_id: Annotated[str, field_docs.MATCH_ID]
    seat: Annotated[int, field_docs.SEAT]
    player_id: Annotated[str, Meta(description="The friend who invited you (a UUID).")]
    name: Annotated[str, Meta(description="Their display name.")]
    expires_at: Annotated[str, Meta(description="When it lapses, ISO 8601.")]


class InvitationList(msgspec.Struct, frozen=True, kw_only=True):
    """The player's open invitations to tables, oldest first."""

    items: Annotated[list[InvitationItem], field_docs.ITEMS]


class SocialSettings(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """The player's friend code and presence settings, and their presence as friends see it."""

    friend_code: Annotated[
        str | None, Meta(description="The friend code; null until one is made (POST).")
    ]
    appear_offline: Annotated[bool, Meta(description="Friends see the player offline.")]
    notify_friend_online: Annotated[
        bool, Meta(description="Hear `friend-online` (stream, webhooks) as a friend comes online.")
    ]
    presence: Annotated[Presence, Meta(description="The presence friends see now.")]


def name_of(service: GameService, player: UUID) -> str:
    try:
        found: object = service.repository.get(player)
    except AggregateNotFoundError:
        return ERASED_NAME
    if not isinstance(found, Account) or found.erased:
        return ERASED_NAME
    return found.display_name


def _page(
    models: SocialModels, player: UUID, kinds: tuple[str, ...], after: str | None, limit: int
) -> tuple[list[LinkRow], str | None]:
    if not 1 <= limit <= MAX_PAGE:
        raise InvalidInputError(f"limit is 1 to {MAX_PAGE}")
    place = None if after is None else decode_cursor(after, int)
    rows = models.fresh().stored_links(player, kinds, place, limit + 1, None)
    more = len(rows) > limit
    rows = rows[:limit]
    cursor = encode_cursor(rows[-1].position, str(rows[-1].other_id)) if more and rows else None
    return rows, cursor


def list_friends(models: SocialModels, player: UUID, after: str | None, limit: int) -> FriendList:
    rows, cursor = _page(models, player, ("friend",), after, limit)
    items = [
        FriendItem(
            player_id=str(r.other_id),
            name=name_of(models.service, r.other_id),
            since=r.since,
            presence=models.board.of(r.other_id),
        )
        for r in rows
    ]
    return FriendList(items=items, next=cursor)


def list_players(
    models: SocialModels,
    player: UUID,
    kind: Literal["incoming", "outgoing", "blocked"],
    after: str | None,
    limit: int,
) -> PlayerList:
    rows, cursor = _page(models, player, (kind,), after, limit)
    items = [
        PlayerItem(
            player_id=str(r.other_id), name=name_of(models.service, r.other_id), since=r.since
        )
        for r in rows
    ]
    return PlayerList(items=items, next=cursor)


def list_invitations(models: SocialModels, player: UUID, now: datetime) -> InvitationList:
    """The open invitations the player received, oldest first (expired ones left out;
    at most :data:`MAX_PAGE`)."""
    rows = models.fresh().invitations_for(player, inviter=False)
    items = [
        InvitationItem(
            invitation_id=str(r.invitation_id),
            match_id=str(r.match_id),
            seat=r.seat,
            player_id=str(r.inviter),
            name=name_of(models.service, r.inviter),
            expires_at=r.expires_at,
        )
        for r in rows
        if datetime.fromisoformat(r.expires_at) > now
    ]
    return InvitationList(items=items[:MAX_PAGE])


def settings_of(models: SocialModels, player: UUID) -> SocialSettings:
    try:
        found: object = models.service.repository.get(social_id(player))
    except AggregateNotFoundError:
        found = None
    profile = found if isinstance(found, SocialProfile) else None
    return SocialSettings(
        friend_code=None if profile is None else profile.code,
        appear_offline=False if profile is None else profile.appear_offline,
        notify_friend_online=False if profile is None else profile.notify_online,
        presence=models.board.of(player),
    )

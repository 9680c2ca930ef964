"""What the friends' notifications say (docs/decisions.md D-social): the frames of the
player's stream and the webhook deliveries of the same names carry the same data, with the
words a phone shows in English and in Chinese (:class:`~services.career.notice.NoticeText`).

* ``friend-request`` — a player asked to be friends;
* ``friend-accepted`` — a player accepted the request;
* ``table-invitation`` — a friend invited the player to a seat;
* ``friend-online`` — a friend came online (opt-in): on the stream pushed by the presence
  board, on webhooks from the log (``FriendCameOnline``, :mod:`services.social.online_notices`).
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

import msgspec

from domain.accounts.table_invitation import TableInvited
from services.career.notice import NoticeText


def _text(en: str, zh: str) -> dict[str, Any]:
    data: dict[str, Any] = msgspec.to_builtins(NoticeText(en=en, zh_cn=zh))
    return data


def friend_request(player: UUID, name: str) -> dict[str, Any]:
    return {
        "playerId": str(player),
        "name": name,
        "text": _text(f"{name} wants to be your friend", f"{name} 想加你为好友"),
    }


def friend_accepted(player: UUID, name: str) -> dict[str, Any]:
    return {
        "playerId": str(player),
        "name": name,
        "text": _text(f"{name} accepted your friend request", f"{name} 接受了你的好友请求"),
    }


def table_invitation(event: TableInvited, name: str) -> dict[str, Any]:
    return {
        "invitationId": str(event.originator_id),
        "matchId": str(event.match_id),
        "seat": event.seat,
        "playerId": str(event.inviter),
        "name": name,
        "expiresAt": event.expires_at.isoformat(),
        "text": _text(f"{name} invites you to their table", f"{name} 邀请你加入牌桌"),
    }


def friend_online(player: UUID, name: str) -> dict[str, Any]:
    return {
        "playerId": str(player),
        "name": name,
        "text": _text(f"{name} is online", f"{name} 上线了"),
    }

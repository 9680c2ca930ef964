"""The AsyncAPI 3.0 document of the service's Server-Sent Event streams.

``asyncapi.yaml`` at the repository root is :func:`asyncapi_yaml`, written by
``scripts/gen_asyncapi.py``; ``tests/api/test_asyncapi_drift.py`` fails when they
differ. The payload schemas come from the same msgspec types the streams encode
(:class:`services.feed.FeedItem`, the views of :mod:`services.view_types`), so a change
to a frame changes the document.
"""

from __future__ import annotations

from typing import Any

import msgspec

from api.streams import MATCH_ID_PATTERN, STREAMS, StreamRoute, camel
from services.accounts.lobby_commands import TicketView
from services.accounts.my_matches import MyMatch, MyMatches
from services.career.notice import RatingNotice
from services.feed import FeedItem
from services.feed_schema import feed_item_components
from services.live import DealFrame, DealPatchFrame, LiveFrame, PatchFrame
from services.talk.reads import TalkMessage
from services.tournaments.display import DisplayFrame
from services.tournaments.views import StandingsView

VERSION = "1.0.0"
_REF = "#/components/schemas/{name}"


def _last_event_id(what: str, pattern: str = "^[0-9]{1,18}$") -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "Last-Event-ID": {
                "type": "string",
                "pattern": pattern,
                "description": f"The id of the last frame received ({what}): the stream "
                "resumes right after it, without loss or repeat.",
            }
        },
    }


_MATCH_ID = (
    "a match version, or `V.T` once table talk was sent: the version and the last message's number"
)


def asyncapi_document() -> dict[str, Any]:
    """The document as a mapping (AsyncAPI 3.0.0)."""
    (
        (
            feed,
            frame,
            deal,
            patch,
            deal_patch,
            standings,
            ticket,
            my_match,
            mine,
            display,
            rated,
            talk,
        ),
        (components),
    ) = msgspec.json.schema_components(
        [
            FeedItem,
            LiveFrame,
            DealFrame,
            PatchFrame,
            DealPatchFrame,
            StandingsView,
            TicketView,
            MyMatch,
            MyMatches,
            DisplayFrame,
            RatingNotice,
            TalkMessage,
        ],
        ref_template=_REF,
    )
    components.update(feed_item_components(_REF))
    return {
        "asyncapi": "3.0.0",
        "info": {
            "title": "Shengji live streams",
            "version": VERSION,
            "description": "Server-Sent Events (text/event-stream) of the Shengji service. "
            "Each frame has an `id` (resume with `Last-Event-ID`), an `event` name and JSON "
            "`data`; `: ping` comments keep the connection alive and a `retry:` hint ends a "
            "stream after its lifetime. The REST side is openapi.yaml; the events "
            "themselves are catalogued in docs/events.md.",
        },
        "servers": {
            "local": {
                "host": "127.0.0.1:8000",
                "protocol": "http",
                "description": "make serve's default address",
            }
        },
        "channels": {stream.channel: _channel(stream) for stream in STREAMS},
        "operations": {stream.operation: _receive(stream) for stream in STREAMS},
        "components": {
            "messages": {
                "feedEvent": {
                    "name": "event",
                    "title": "One event of the log",
                    "summary": "SSE `event: event`; `id` is the event's position in the log.",
                    "contentType": "application/json",
                    "headers": _last_event_id("a position in the log"),
                    "payload": feed,
                },
                "matchView": {
                    "name": "view",
                    "title": "A match version: its event and the view after it",
                    "summary": "SSE `event: view`; `id` is the match version. A resumed "
                    "stream sends every version after Last-Event-ID, in order.",
                    "contentType": "application/json",
                    "headers": _last_event_id(_MATCH_ID, MATCH_ID_PATTERN),
                    "payload": frame,
                },
                "matchTalk": {
                    "name": "talk",
                    "title": "A message of the table's talk (R37)",
                    "summary": "SSE `event: talk`; `id` is `V.T`: the last match version sent "
                    "and the message's number. Sent right after the frame of the version it "
                    "was said at, in the order said; a seat's own mutes apply; spectators get "
                    "it where the table allows spectator talk. Once a message was sent on a "
                    "stream, its view and patch frames' ids are `V.T` too, and `Last-Event-ID` "
                    "resumes both without loss or repeat.",
                    "contentType": "application/json",
                    "headers": _last_event_id(_MATCH_ID, MATCH_ID_PATTERN),
                    "payload": talk,
                },
                "matchDeal": {
                    "name": "deal",
                    "title": "A paced deal's progress",
                    "summary": "SSE `event: deal`, no `id` (not a version): the viewer's "
                    "view as the cards arrive, at most every 250 ms (R16).",
                    "contentType": "application/json",
                    "payload": deal,
                },
                "matchCaughtUp": {
                    "name": "caught-up",
                    "title": "The backlog is sent: the stream is live",
                    "summary": "SSE `event: caught-up`, no `id`, once per stream: every version "
                    "up to `version` was sent (a client acting on a resumed stream waits for it).",
                    "contentType": "application/json",
                    "payload": {
                        "type": "object",
                        "properties": {
                            "version": {
                                "type": "integer",
                                "description": "The last version sent; frames after it are live",
                            }
                        },
                        "required": ["version"],
                    },
                },
                "matchPatch": {
                    "name": "patch",
                    "title": "A match version as a patch of the view before",
                    "summary": "SSE `event: patch` (`?frames=patch`); `id` is the match "
                    "version: its event and the RFC 6902 operations that turn the viewer's "
                    "view at the version before into its view at this one (R34).",
                    "contentType": "application/json",
                    "headers": _last_event_id(_MATCH_ID, MATCH_ID_PATTERN),
                    "payload": patch,
                },
                "matchDealPatch": {
                    "name": "deal-patch",
                    "title": "A paced deal's progress as a patch",
                    "summary": "SSE `event: deal-patch` (`?frames=patch`), no `id`: the RFC "
                    "6902 operations since the deal frame before — the new cards, the sizes "
                    "(R16).",
                    "contentType": "application/json",
                    "payload": deal_patch,
                },
                "standings": {
                    "name": "standings",
                    "title": "The standings at a tournament version",
                    "summary": "SSE `event: standings`; `id` is the tournament version.",
                    "contentType": "application/json",
                    "headers": _last_event_id("a tournament version"),
                    "payload": {
                        "allOf": [
                            standings,
                            {
                                "type": "object",
                                "properties": {"version": {"type": "integer"}},
                                "required": ["version"],
                            },
                        ]
                    },
                },
                "display": {
                    "name": "display",
                    "title": "The display page's live part",
                    "summary": "SSE `event: display`; `id` is the display's version (the "
                    "tournament's plus its round's tables').",
                    "contentType": "application/json",
                    "payload": display,
                },
                **_player_messages(ticket, my_match, mine, rated),
                "revoked": {
                    "name": "revoked",
                    "title": "The stream's token was revoked",
                    "summary": "SSE `event: revoked`, the last frame of a stream opened with a "
                    "token that was since rotated, whose session ended, whose player was "
                    "erased or whose seat token was re-issued; no `id`, no `retry:` after it: "
                    "reconnecting with that token is a 401 (docs/security.md).",
                    "contentType": "application/json",
                    "payload": _object({"reason": {"type": "string"}}),
                },
            },
            "schemas": components,
        },
    }


def _object(required: dict[str, Any], **optional: Any) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {**required, **optional},
        "required": sorted(required),
    }


_ID = {"type": "string", "format": "uuid"}
_NULLABLE_ID = {"anyOf": [_ID, {"type": "null"}]}
_PLAYER_FRAMES = {
    "playerSnapshot": (
        "snapshot",
        "Where the player stands",
        "the first frame without Last-Event-ID: the player's matches and waiting ticket",
    ),
    "playerTicket": ("ticket", "A ticket opened, matched or cancelled", "quick play"),
    "playerMatchFound": (
        "match-found",
        "The player was seated",
        "a seat claimed, by an invite, or by quick play (its ticket)",
    ),
    "playerYourTurn": (
        "your-turn",
        "The player's seat is to act",
        "the event that gave the turn; one frame per turn, none missed, pushed as soon as "
        "the move before it is saved: the match at the `version` the turn began, with its "
        "deadline (docs/timers.md)",
    ),
    "playerMatchFinished": ("match-finished", "A match of the player ended", "R32"),
    "playerRatingChanged": (
        "rating-changed",
        "A rated match moved the player's rating",
        "once per player and rated match; a tournament table's when its round completes, "
        "R36; docs/decisions.md D-career",
    ),
    "playerFriendRequest": (
        "friend-request",
        "A player asked to be the player's friend",
        "docs/decisions.md D-social",
    ),
    "playerFriendAccepted": (
        "friend-accepted",
        "A player accepted the player's friend request",
        "docs/decisions.md D-social",
    ),
    "playerTableInvitation": (
        "table-invitation",
        "A friend invited the player to a seat",
        "docs/decisions.md D-social",
    ),
}
_TEXT = _object(
    {"en": {"type": "string"}, "zh-CN": {"type": "string"}},
)
_FRIEND = {"playerId": {"type": "string", "format": "uuid"}, "name": {"type": "string"}}
_PRESENCE = _object(
    {
        "playerId": {"type": "string", "format": "uuid"},
        "state": {"type": "string", "enum": ["online", "in-match", "away", "offline"]},
        "matchId": {"anyOf": [{"type": "string", "format": "uuid"}, {"type": "null"}]},
    }
)


def _channel(stream: StreamRoute) -> dict[str, Any]:
    """The channel of ``stream`` (:data:`api.streams.STREAMS`)."""
    channel: dict[str, Any] = {
        "address": stream.address,
        "title": stream.title,
        "description": stream.description,
        "messages": {
            name: {"$ref": f"#/components/messages/{message}"}
            for name, message in stream.messages.items()
        },
    }
    parameters = {camel(name): {"description": text} for name, text in stream.parameters.items()}
    if parameters:
        channel["parameters"] = parameters
    return channel


def _receive(stream: StreamRoute) -> dict[str, Any]:
    """The operation of receiving ``stream``'s channel, every message of it."""
    return {
        "action": "receive",
        "channel": {"$ref": f"#/channels/{stream.channel}"},
        "summary": stream.summary,
        "messages": [
            {"$ref": f"#/channels/{stream.channel}/messages/{name}"} for name in stream.messages
        ],
    }


def _player_messages(
    ticket: dict[str, Any], my_match: dict[str, Any], mine: dict[str, Any], rated: dict[str, Any]
) -> dict[str, Any]:
    status = {"type": "string", "enum": ["waiting", "matched", "cancelled"]}
    payloads = {
        "playerSnapshot": _object({"matches": mine, "ticket": _NULLABLE_ID}),
        "playerTicket": _object(
            {"ticketId": _ID, "status": status},
            matchId=_ID,
            seat={"type": "integer", "minimum": 0, "maximum": 3},
        ),
        "playerMatchFound": _object(
            {
                "matchId": _ID,
                "seat": {"type": "integer", "minimum": 0, "maximum": 3},
                "ticketId": _NULLABLE_ID,
            }
        ),
        "playerYourTurn": my_match,
        "playerFriendRequest": _object({**_FRIEND, "text": _TEXT}),
        "playerFriendAccepted": _object({**_FRIEND, "text": _TEXT}),
        "playerTableInvitation": _object(
            {
                **_FRIEND,
                "invitationId": _ID,
                "matchId": _ID,
                "seat": {"type": "integer", "minimum": 0, "maximum": 3},
                "expiresAt": {"type": "string", "format": "date-time"},
                "text": _TEXT,
            }
        ),
        "playerRatingChanged": rated,
        "playerMatchFinished": _object(
            {
                "matchId": _ID,
                "winner": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
                "reason": {"type": "string"},
            }
        ),
    }
    messages: dict[str, Any] = {
        name: {
            "name": frame,
            "title": title,
            "summary": f"SSE `event: {frame}`; `id` is the event log position ({why}).",
            "contentType": "application/json",
            "headers": _last_event_id("a position in the log"),
            "payload": payloads[name],
        }
        for name, (frame, title, why) in _PLAYER_FRAMES.items()
    }
    messages["playerPresence"] = {
        "name": "presence",
        "title": "A friend's presence",
        "summary": "SSE `event: presence`, without an `id` (presence is not in the log): a "
        "friend's presence at the stream's start and on each change (docs/decisions.md "
        "D-social).",
        "contentType": "application/json",
        "payload": _PRESENCE,
    }
    messages["playerFriendOnline"] = {
        "name": "friend-online",
        "title": "A friend came online (opt-in)",
        "summary": "SSE `event: friend-online`, without an `id`: sent when the player chose "
        "`notifyFriendOnline`.",
        "contentType": "application/json",
        "payload": _object({**_FRIEND, "text": _TEXT}),
    }
    messages["ticket"] = {
        "name": "ticket",
        "title": "The ticket as it stands",
        "summary": "SSE `event: ticket`; `id` is the ticket's version.",
        "contentType": "application/json",
        "headers": _last_event_id("a ticket version"),
        "payload": ticket,
    }
    messages["widened"] = {
        "name": "widened",
        "title": "A ranked ticket's rating window widened",
        "summary": "SSE `event: widened`, without an `id` (the ticket's version is unchanged): "
        "the ticket as it stands, its `ranked.window` wider than in the last frame.",
        "contentType": "application/json",
        "payload": ticket,
    }
    return messages


def asyncapi_yaml() -> str:
    import yaml  # type: ignore[import-untyped]  # noqa: PLC0415 - the generator only

    text: str = yaml.safe_dump(asyncapi_document(), sort_keys=True, allow_unicode=True, width=100)
    return text

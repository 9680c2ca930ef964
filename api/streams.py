"""Every live stream (Server-Sent Events) of the service, each declared once
(docs/decisions.md D-streams).

A :class:`StreamRoute` is one stream: its route's path, its **kind** (the name
``SSE_STREAM_CAPS`` sets its cap by, and its label in ``shengji_sse_open{kind}``), its
default cap, whether the rate limit counts it, and its AsyncAPI **channel** (address,
title, description, messages, the operation of receiving it). Its route handler is
declared with :func:`stream_route`, which puts the declaration in the handler's ``opt``.
Everything else derives from :data:`STREAMS`:

* admission (:mod:`api.admission`) caps a request whose handler carries a declaration
  (:func:`declared`), under the caps of :mod:`api.streamcap`;
* the settings know the kinds (``SSE_STREAM_CAPS``, :func:`api.streamcap.parse_caps`);
* the AsyncAPI document has one channel and one operation per declaration
  (:mod:`api.asyncapi`); the route's OpenAPI operation answers its events and names its
  channel (:class:`StreamOperation`);
* the metrics count the streams open by kind (:mod:`api.metrics`).

A route that answers ``text/event-stream`` without a declaration fails
``tests/api/test_streams_declared.py``: every stream is capped by construction.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final

from litestar import get
from litestar.openapi.spec import Operation
from litestar.types import Scope

from api.match_follower import FULL_EVERY
from api.routes import RouteDecorator, route

EVENT_STREAM: Final = "text/event-stream"
OPT_KEY: Final = "stream"
"""The key of a stream route handler's ``opt`` that holds its :class:`StreamRoute`."""


@dataclass(frozen=True, eq=False)
class StreamRoute:
    """One live stream: its route, cap, metric label and AsyncAPI channel."""

    kind: str
    """Its name in ``SSE_STREAM_CAPS`` (``kind=cap``) and in ``shengji_sse_open{kind}``."""
    path: str
    """The route's whole path, as Litestar declares it (``/v1/matches/{match_id:uuid}/stream``)."""
    channel: str
    """Its channel (and its operation's) name in asyncapi.yaml."""
    title: str
    description: str
    messages: Mapping[str, str]
    """The channel's messages: their name in the channel → the component message."""
    operation: str
    """The AsyncAPI operation that receives the channel (``watchMatch``)."""
    summary: str
    """What the operation does."""
    parameters: Mapping[str, str] = field(default_factory=dict)
    """The description of each path parameter, by its name in the path."""
    cap: int | None = None
    """The streams of this kind a verified identity may hold open at once when
    ``SSE_STREAM_CAPS`` does not name it; None: ``SSE_MAX_PER_IDENTITY``."""
    rate_limited: bool = True
    """Whether opening one takes a token of the client's rate limit (``api.ratelimit``)."""

    @property
    def address(self) -> str:
        """The channel's address: the path with its parameters in camelCase, untyped."""
        return re.sub(r"\{([a-z_]+)(?::[a-z]+)?\}", lambda m: "{" + camel(m[1]) + "}", self.path)


def camel(name: str) -> str:
    """``match_id`` → ``matchId`` (a path parameter as the channel names it)."""
    first, *rest = name.split("_")
    return first + "".join(word.capitalize() for word in rest)


FEED: Final = StreamRoute(
    kind="feed",
    path="/v1/events/stream",
    channel="events",
    title="The whole event log",
    description="Every event of every match, round and tournament in commit order, "
    "redacted for the public (R33–R36); the operator token (`Authorization: Bearer`) reads "
    "it unredacted. Query: `after` (a position), `lastEventId`.",
    messages={"event": "feedEvent"},
    operation="followEvents",
    summary="Follow the whole log from a position",
)
MATCH_ID_PATTERN: Final = "^[0-9]{1,18}([.][1-9][0-9]{0,8})?$"
"""A match stream's frame id: the version, and once table talk was sent on the stream
the last message's number (``V.T``, R37)."""
MATCH: Final = StreamRoute(
    kind="match",
    path="/v1/matches/{match_id:uuid}/stream",
    channel="match",
    title="Live views of a match",
    description="A seat (seat token as `Authorization: Bearer` or `?token=`) or a spectator "
    "gets one frame per match version, in order, none merged or skipped: the event that made "
    "it (redacted as at that moment, R33) and the viewer's view as of that version (R34); "
    "during a paced deal (R16) `deal` frames without an id. Once the backlog (a resumed "
    "stream's versions after `Last-Event-ID`, or a new stream's first frame) is sent, one "
    "`caught-up` frame: what follows is live. A tournament table in play is closed to "
    "spectators (R36). Query `frames=patch`: after a whole `view` frame (the first on each "
    f"connection, and every {FULL_EVERY}th version) each version comes as a `patch` frame "
    "(RFC 6902 against the viewer's view at the version before) and the deal as `deal-patch` "
    "frames (against the deal frame before, the first against the version's view). "
    "`Accept-Encoding: gzip` compresses the stream, each frame flushed as it is sent. Table "
    "talk (R37): `talk` frames right after the frame of the version each message was said "
    "at; once one was sent, ids are `V.T` (the version, the last message's number).",
    messages={
        "view": "matchView",
        "deal": "matchDeal",
        "revoked": "revoked",
        "caughtUp": "matchCaughtUp",
        "patch": "matchPatch",
        "dealPatch": "matchDealPatch",
        "talk": "matchTalk",
    },
    operation="watchMatch",
    summary="Watch a match as a seat or a spectator",
    parameters={"match_id": "The match's id (a UUID)"},
    rate_limited=False,  # long-lived, and EventSource reconnects on its own
)
PLAYER: Final = StreamRoute(
    kind="player",
    path="/v1/players/me/stream",
    channel="player",
    title="Everything that concerns a player",
    description="The player token (`Authorization: Bearer` or `?token=`) gets `snapshot`, "
    "`ticket`, `match-found`, `your-turn`, `match-finished`, `rating-changed`, "
    "`friend-request`, `friend-accepted` and `table-invitation` frames; `id` is the event log "
    "position, so `Last-Event-ID` resumes exactly, on any replica (docs/players.md). Friends' "
    "`presence` and (opt-in) `friend-online` frames are pushed without an `id` (presence is "
    "not in the log, docs/decisions.md D-social). Nothing of a non-friend is ever sent.",
    messages={
        "snapshot": "playerSnapshot",
        "ticket": "playerTicket",
        "match-found": "playerMatchFound",
        "your-turn": "playerYourTurn",
        "match-finished": "playerMatchFinished",
        "rating-changed": "playerRatingChanged",
        "friend-request": "playerFriendRequest",
        "friend-accepted": "playerFriendAccepted",
        "table-invitation": "playerTableInvitation",
        "presence": "playerPresence",
        "friend-online": "playerFriendOnline",
        "revoked": "revoked",
    },
    operation="followPlayer",
    summary="Follow what concerns the player",
)
TICKET: Final = StreamRoute(
    kind="ticket",
    path="/v1/lobby/tickets/{ticket_id:uuid}/stream",
    channel="ticket",
    title="A quick-play ticket",
    description="The ticket's owner (player token) gets the ticket at once and after every "
    "change, until it is matched or cancelled; `id` is the ticket's version. A waiting ranked "
    "ticket also gets a `widened` frame (no `id`) each time its rating window widens.",
    messages={"ticket": "ticket", "widened": "widened", "revoked": "revoked"},
    operation="watchTicket",
    summary="Wait for a quick-play ticket to be matched",
    parameters={"ticket_id": "The ticket's id (a UUID)"},
)
STANDINGS: Final = StreamRoute(
    kind="standings",
    path="/v1/tournaments/{tournament_id:uuid}/standings/stream",
    channel="standings",
    title="Live standings of a tournament",
    description="The standings (as `GET /v1/tournaments/{id}/standings`, with the tournament "
    "`version`) at once and after every change, as tables finish (R36).",
    messages={"standings": "standings"},
    operation="watchStandings",
    summary="Watch a tournament's standings",
    parameters={"tournament_id": "The tournament's id"},
)
DISPLAY: Final = StreamRoute(
    kind="display",
    path="/v1/tournaments/{tournament_id:uuid}/display/stream",
    channel="display",
    title="The live part of a tournament's display page",
    description="The display page's live part rendered (standings, the round's tables with "
    "their progress, the clock, the next pairing once published) at once and whenever the "
    "tournament or a table of its round changes, a correction after the event included "
    "(R36). `?lang=zh-CN` or Accept-Language for Chinese.",
    messages={"display": "display"},
    operation="watchDisplay",
    summary="Keep a tournament's display page live",
    parameters={"tournament_id": "The tournament's id"},
)

STREAMS: Final[tuple[StreamRoute, ...]] = (FEED, MATCH, PLAYER, TICKET, STANDINGS, DISPLAY)
"""Every live stream of the service (a new stream is declared here)."""
KINDS: Final[tuple[str, ...]] = tuple(s.kind for s in STREAMS)


class StreamOperation(Operation):
    """A stream's OpenAPI operation, left to an SSE client: it answers ``text/event-stream``
    events (:func:`sse_event`) whose frames are its channel's messages in asyncapi.yaml, is
    ``x-internal`` (client generators skip it) and names the channel in
    ``x-server-sent-events`` (docs/clients.md)."""

    declaration: ClassVar[StreamRoute]

    def to_schema(self) -> dict[str, Any]:
        schema = super().to_schema()
        channel = self.declaration.channel
        schema["responses"]["200"] = {
            "description": "Server-Sent Events: the frames are the messages of asyncapi.yaml's "
            f"channel `{channel}`; `: ping` comments and a `retry:` hint between them",
            "content": {EVENT_STREAM: {"schema": sse_event(channel)}},
        }
        schema["x-internal"] = True
        schema["x-server-sent-events"] = {
            "asyncapi": "asyncapi.yaml",
            "channel": f"#/channels/{channel}",
        }
        return schema


def sse_event(channel: str) -> dict[str, Any]:
    """One Server-Sent Event as the HTML standard parses it (the schema of each event of
    the stream, as OpenAPI 3.1 writes it), its ``data`` a message of ``channel``."""
    return {
        "type": "object",
        "required": ["data"],
        "properties": {
            "event": {"type": "string", "description": "The message's name"},
            "id": {"type": "string", "description": "Its id, for Last-Event-ID"},
            "retry": {"type": "integer", "minimum": 0},
            "data": {
                "type": "string",
                "contentMediaType": "application/json",
                "description": f"A message of asyncapi.yaml's channel `{channel}`, as JSON",
            },
        },
    }


def stream_route(stream: StreamRoute, mount: str, *statuses: int, **kwargs: Any) -> RouteDecorator:
    """The ``GET`` route handler of ``stream`` in a controller whose path is ``mount``: it
    answers ``text/event-stream`` and carries its declaration (``opt``). Documented by
    ``summary=`` and ``description=``, else by its docstring and the problems it may answer
    (``statuses``, :func:`api.routes.route`); ``kwargs``: the decorator's other arguments."""
    if not stream.path.startswith(mount.rstrip("/") + "/"):
        raise ValueError(f"{stream.kind}: {stream.path} is not under {mount}")
    relative = stream.path[len(mount.rstrip("/")) :]

    class Answered(StreamOperation):
        declaration = stream

    kwargs.update(media_type=EVENT_STREAM, opt={OPT_KEY: stream}, operation_class=Answered)
    if "summary" in kwargs:
        return get(relative, **kwargs)
    return route(relative, *statuses, **kwargs)


def declared(scope: Scope) -> StreamRoute | None:
    """The stream a request opens — its route handler's declaration — or None for any
    other request (a stream is opened by ``GET``)."""
    if scope.get("method") != "GET":
        return None
    handler = scope.get("route_handler")
    stream = None if handler is None else handler.opt.get(OPT_KEY)
    return stream if isinstance(stream, StreamRoute) else None

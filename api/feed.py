"""The whole event log as a feed (docs/events.md, docs/decisions.md D17).

* ``GET /v1/events?after=&limit=`` — a page of the log after a position
  (:func:`services.feed.feed_page`), redacted for the public (R33–R36);
* ``GET /v1/events/stream`` — the same as Server-Sent Events: ``id`` is the position,
  ``event: event``, ``data`` the item; resumes exactly after ``Last-Event-ID`` (header,
  else ``?lastEventId=``, else ``?after=``);
* ``GET /v1/events/schema`` — the JSON Schema of every event type and version
  (:mod:`services.event_schema`).

**Operator.** ``Authorization: Bearer <OPERATOR_TOKEN>`` reads every field
(``OPERATOR_TOKEN`` unset: nobody does). Any other bearer token is a 401: the feed takes
no seat or organiser token, so a mistyped operator token is not answered as the public.

**Across replicas.** A stream does not wait on a hub: when it has read the log to its
end it asks the store for the log's last position every ``poll_s`` (default 0.5 s; one
indexed ``max(id)`` query), so a stream on one replica sees what every replica writes,
in the log's own order, with at most that delay. Pings every heartbeat; the stream ends
after its lifetime with a ``retry:`` hint (the SSE settings of the match streams).

Reads are rate limited like the other reads; a stream counts once when it opens and is
under the same caps on open streams as the match streams (:mod:`api.streamcap`).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Annotated, Any, Literal
from uuid import UUID

import anyio
import msgspec
from litestar import Controller, Request, get
from litestar.di import NamedDependency
from litestar.openapi.spec import (
    Example,
)
from litestar.params import QueryParameter
from litestar.response import Stream

from api.auth import credential
from api.dto import problems
from api.polled_stream import Polled, Timing, event_stream, polled, retry_hint, sse_frame
from api.records.bulk import moment_parameter as _moment
from api.records.bulk import reject_repeated
from api.runtime import in_thread
from api.stream import LastEventIdAheadError, ResumeHeader, ResumeQuery
from api.streams import FEED, stream_route
from domain.rules.errors import InvalidInputError
from services.errors import ForbiddenError, UnauthorizedError
from services.feed import (
    MAX_LIMIT,
    MAX_POSITION,
    FeedFilter,
    FeedPage,
    feed_page,
    last_position,
)
from services.feed_schema import PublishedSchemas, published_schemas
from services.feed_subscriptions import checkpoint_of
from services.game import GameService
from services.operator import Operator

After = Annotated[
    int,
    QueryParameter(
        ge=0,
        le=MAX_POSITION,
        description="A position in the log: the items after it (0: from the start)",
        examples=[Example(value=0), Example(value=1234)],
    ),
]
Limit = Annotated[
    int,
    QueryParameter(ge=1, le=MAX_LIMIT, description="Items per page", examples=[Example(value=100)]),
]
Types = Annotated[
    list[Annotated[str, msgspec.Meta(max_length=2000)]] | None,
    QueryParameter(
        name="type",
        description="Only events of these types (repeat it, or separate them with commas: "
        "`CardPlayed,RoundScored`; `GET /v1/events/schema` lists them)",
        examples=[Example(value=["CardPlayed"])],
    ),
]
MatchId = Annotated[
    UUID | None,
    QueryParameter(name="matchId", description="Only the events of this match and its rounds"),
]
TournamentId = Annotated[
    UUID | None,
    QueryParameter(
        name="tournamentId",
        description="Only the events of this tournament, its tables and their rounds",
    ),
]
Since = Annotated[datetime | None, _moment("since", "Only events at or after it")]
Until = Annotated[datetime | None, _moment("until", "Only events before it")]
FILTER_DOC = (
    " Filters, decided on the server: `type` (one or more event types), `matchId` (a match "
    "and its rounds), `tournamentId` (a tournament, its tables and their rounds), `since` "
    "and `until` (the event's time, ISO 8601 with a time zone). A filtered page reads at "
    "most 5000 events of the log: it may hold fewer items than `limit` with `more` true "
    "(go on from `next`). Any other query parameter is a 400 `unknown-parameter`."
)


def feed_filter(
    request: Request[Any, Any, Any],
    types: list[str] | None,
    match_id: UUID | None,
    tournament_id: UUID | None,
    since: datetime | None,
    until: datetime | None,
) -> FeedFilter | None:
    """The request's filter (None: everything); 422 for a bad one."""
    reject_repeated(request, "matchId", "tournamentId", moments=("since", "until"))
    names = None
    if types is not None:
        names = frozenset(t.strip() for value in types for t in value.split(",") if t.strip())
    where = FeedFilter(names, match_id, tournament_id, since, until)
    return None if where.everything else where


_ENCODER = msgspec.json.Encoder()
OPERATOR: list[dict[str, list[str]]] = [{}, {"bearer": []}]


@dataclass
class Archive:
    """The feed's wiring: the service, the store's limiter, the operator token and the
    streams' timing."""

    service: GameService
    limiter: anyio.CapacityLimiter
    operator_token: str | None = None
    poll_s: float = 0.5
    heartbeat_s: float = 15.0
    lifetime_s: float = 600.0
    retry_ms: int = 1000
    batch: int = 200
    """Items a stream reads per trip to the store."""
    closing: bool = False
    """Set by :meth:`close` (a draining server): open streams end with ``retry:``."""
    streams: int = 0
    """Streams open now."""
    operator: Operator = field(init=False)
    """``operator_token``'s check (:mod:`services.operator`)."""

    def __post_init__(self) -> None:
        self.operator = Operator(self.operator_token)

    def provide(self) -> Archive:
        return self

    async def close(self, timeout: float = 2.0) -> None:
        """End every open stream with its reconnect hint (within a poll), waiting up to
        ``timeout`` seconds for them to go."""
        self.closing = True
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while self.streams and loop.time() < deadline:
            await asyncio.sleep(0.01)

    def is_operator(self, request: Request[Any, Any, Any]) -> bool:
        """True for the operator token; 401 for any other token (docstring)."""
        found = credential(request)
        if found is None:
            return False
        if self.operator.is_operator(found.token):
            return True
        raise UnauthorizedError(
            "the events feed takes the operator token only (OPERATOR_TOKEN); "
            "without a token it answers what the public may see (R33, R36)"
        )

    async def page(
        self,
        after: int,
        limit: int,
        operator: bool,
        where: FeedFilter | None = None,
        before: int | None = None,
    ) -> FeedPage:
        return await in_thread(
            self.limiter,
            lambda: feed_page(
                self.service,
                after=after,
                limit=limit,
                operator=operator,
                where=where,
                before=before,
            ),
        )

    async def last(self) -> int:
        return await in_thread(self.limiter, last_position, self.service)

    async def frames(
        self, after: int, operator: bool, where: FeedFilter | None = None
    ) -> AsyncIterator[bytes]:
        """``retry:``, then one frame per item after ``after``, pings while nothing is
        new, and a final ``retry:`` once the stream's lifetime is over (or the server
        drains). At the log's end it asks only for the last position (one indexed query)
        until something is new."""
        reader = FeedReader(self, after, operator, where)
        timing = Timing(self.poll_s, self.heartbeat_s, self.lifetime_s, self.retry_ms)
        self.streams += 1
        try:
            yield retry_hint(self.retry_ms)
            async for frame in polled(reader.poll, timing, lambda: self.closing):
                yield frame
        finally:
            self.streams -= 1


class FeedReader:
    """One stream's reading of the feed: where it is, and whether it reached the end."""

    def __init__(
        self, archive: Archive, after: int, operator: bool, where: FeedFilter | None
    ) -> None:
        self.archive = archive
        self.cursor = after
        self.at_end = False
        self.operator = operator
        self.where = where

    async def poll(self) -> Polled:
        archive = self.archive
        if self.at_end and await archive.last() <= self.cursor:
            return Polled()
        page = await archive.page(self.cursor, archive.batch, self.operator, self.where)
        self.cursor, self.at_end = page.next, not page.more
        frames = [sse_frame("event", _ENCODER.encode(i), i.position) for i in page.items]
        return Polled(frames, more=page.more)


def _resume_at(header: str | None, query: str | None, after: int) -> int:
    for name, value in (("Last-Event-ID", header), ("lastEventId", query)):
        if value is not None and not (value.isascii() and value.isdigit() and len(value) <= 18):
            raise InvalidInputError(f"{name} must be a position in the log, got {value[:40]!r}")
    chosen = header if header is not None else query
    return after if chosen is None else int(chosen)


STREAM_DOC = """Every event of the log as Server-Sent Events: `event: event` frames whose
`id` is the event's position and whose `data` is the item, as `GET /v1/events` pages
them (redacted for the public, R33–R36; unredacted with the operator token). Resumes
exactly after `Last-Event-ID` (header, else `?lastEventId=`, else `?after=`): nothing is
lost or repeated, on whichever replica the client reconnects to. A position beyond the
log's end is a 422 `last-event-id-ahead` problem. `: ping` comments keep the connection
alive; the server ends the stream after its lifetime with a `retry:` hint. The
AsyncAPI document (`asyncapi.yaml`) describes the frames. With the operator token,
`?subscription=<name>` starts after that feed subscription's checkpoint (commit positions
with `POST /v1/events/subscriptions/{name}/checkpoint`)."""


class FeedController(Controller):
    path = "/v1/events"
    tags = ["archive"]  # noqa: RUF012 - Litestar declares it an instance attribute
    security = OPERATOR

    @get(
        "/",
        summary="The whole event log, a page after a position (R33–R36 redacted)",
        description="Every event of every match, round and tournament in commit order, "
        "each with its `position` (the log's notification id: gap-free, in commit order), "
        "stream, version, type, time and payload redacted to what the public may see now: "
        "hidden cards of a round in play are left out (revealed once it is scored), a "
        "tournament table in play is `withheld` (R36). Pass `next` as `after`. The "
        "operator token (`OPERATOR_TOKEN`) reads everything; any other token is a 401. "
        "An `after` beyond the log's end is a 422 `last-event-id-ahead` (R34). "
        "Backwards: `order=desc` reads the newest first (from `before`, else from the "
        "end); pass `next` as `before` for older ones (no filter then)." + FILTER_DOC,
        responses=problems(401, 422),
    )
    async def list_events(
        self,
        request: Request[Any, Any, Any],
        archive: NamedDependency[Archive],
        after: After = 0,
        limit: Limit = 100,
        order: Annotated[
            Literal["asc", "desc"],
            QueryParameter(
                description="`asc` (oldest first, the default) or `desc` (newest first)"
            ),
        ] = "asc",
        before: Annotated[
            int | None,
            QueryParameter(
                ge=1,
                le=MAX_POSITION + 1,
                description="With `order=desc`: the items before this position",
                examples=[Example(value=1234)],
            ),
        ] = None,
        types: Types = None,
        match_id: MatchId = None,
        tournament_id: TournamentId = None,
        since: Since = None,
        until: Until = None,
    ) -> FeedPage:
        reject_repeated(request, "after", "limit", "order", "before")
        where = feed_filter(request, types, match_id, tournament_id, since, until)
        operator = archive.is_operator(request)
        if order == "desc" or before is not None:
            if order != "desc" or "after" in request.query_params:
                raise InvalidInputError(
                    "before reads backwards: send it with order=desc and without after"
                )
            start = before if before is not None else await archive.last() + 1
            return await archive.page(0, limit, operator, where, before=start)
        page = await archive.page(after, limit, operator, where)
        if not page.items and after > 0:  # the end, or a position this log never had
            top = await archive.last()
            if after > top:  # another deployment's, or a restore older than the client
                raise LastEventIdAheadError(after, top, "the log's last position", name="after")
        return page

    @stream_route(
        FEED,
        path,
        summary="The whole event log, live (Server-Sent Events)",
        description=STREAM_DOC + FILTER_DOC,
        responses=problems(401, 403, 404, 422, 429),
    )
    async def stream_events(
        self,
        request: Request[Any, Any, Any],
        archive: NamedDependency[Archive],
        after: After = 0,
        last_event_id: ResumeHeader = None,
        last_event_id_query: ResumeQuery = None,
        subscription: Annotated[
            str | None,
            QueryParameter(
                pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$",
                description="Resume after this feed subscription's checkpoint (operator; "
                "Last-Event-ID, when sent, wins)",
            ),
        ] = None,
        types: Types = None,
        match_id: MatchId = None,
        tournament_id: TournamentId = None,
        since: Since = None,
        until: Until = None,
    ) -> Stream:
        where = feed_filter(request, types, match_id, tournament_id, since, until)
        operator = archive.is_operator(request)
        if subscription is not None:
            if not operator:
                raise ForbiddenError("a subscription's stream is the operator's (OPERATOR_TOKEN)")
            after = await in_thread(archive.limiter, checkpoint_of, archive.service, subscription)
        start = _resume_at(last_event_id, last_event_id_query, after)
        top = await archive.last()
        if start > top:
            raise LastEventIdAheadError(start, top, "the log's last position")
        return event_stream(archive.frames(start, operator, where))

    @get(
        "/schema",
        summary="The JSON Schema of every feed item as served, and of every stored event",
        description="Generated from the event classes (docs/events.md). `feed`: for each "
        "event type, the JSON Schema (2020-12) of a feed item of that type exactly as "
        "`GET /v1/events` and `/v1/events/stream` serve it (camelCase, cards and ranks as "
        "the API writes them, secret fields absent and named in `hidden`). `events`: the "
        "stored format of each type, each `classVersion` the store may hold (older "
        "versions are read through their upcasters).",
        responses=problems(),
        security=[{}],
    )
    async def get_event_schemas(self) -> PublishedSchemas:
        return published_schemas()

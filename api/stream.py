"""The live stream's route: ``GET /v1/matches/{match_id}/stream`` (Server-Sent Events).

Parses and checks where the client stands (``Last-Event-ID`` / ``lastEventId``), who is
watching (a seat token, a spectator; 401/403 otherwise, :mod:`services.access`), and hands the
stream to :class:`api.sse.LiveStreams`, which builds and fans out the frames (R33).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal
from uuid import UUID

from litestar import Controller, Request
from litestar.di import NamedDependency
from litestar.params import FromPath, HeaderParameter, QueryParameter
from litestar.response import Stream

from api.auth import stream_credential
from api.match_follower import FULL_EVERY
from api.spectating import spectator_problems
from api.sse import LiveStreams
from api.streams import EVENT_STREAM, MATCH, MATCH_ID_PATTERN, stream_route
from domain.rules.errors import InvalidInputError
from services.live import current_version
from services.talk.reads import messages_said


class LastEventIdAheadError(InvalidInputError):
    """422: the client claims a frame the stream has not reached (R34: versions and log
    positions are gap-free and only grow, so no frame with that id exists yet). Answered
    rather than waiting in silence for a version that may never come: the client's id is
    from another match (tournament, deployment), or made up. Every resumable stream
    answers it: a match's, the events feed, a player's and a tournament's standings."""

    code = "last-event-id-ahead"
    rule = "R34"

    def __init__(
        self, last: int, end: int, what: str = "the match's version", name: str = "Last-Event-ID"
    ) -> None:
        super().__init__(
            f"{name} {last} is beyond {what} {end}: nothing was ever sent at it (R34); "
            "start again without it, or with an id or position received"
        )


VERSION_PATTERN = "^[0-9]{1,18}$"
"""A frame id: a match version in ASCII digits (``Last-Event-ID``, ``lastEventId``)."""
ResumeHeader = Annotated[
    str | None,
    HeaderParameter(
        name="Last-Event-ID",
        pattern=VERSION_PATTERN,
        description="The id of the last frame received (the stream's `id`s: a match version, "
        "a position in the log, a tournament version): the stream resumes right after it",
    ),
]
"""A resumable stream's ``Last-Event-ID`` header."""
ResumeQuery = Annotated[
    str | None,
    QueryParameter(
        name="lastEventId",
        pattern=VERSION_PATTERN,
        description="As Last-Event-ID, for clients that cannot send headers (the header wins)",
    ),
]
"""``Last-Event-ID`` as a query parameter (an ``EventSource`` sends no headers)."""


MatchResumeHeader = Annotated[
    str | None,
    HeaderParameter(
        name="Last-Event-ID",
        pattern=MATCH_ID_PATTERN,
        description="The id of the last frame received: a match version, or `V.T` (the "
        "version and the last table-talk message's number): the stream resumes right after it",
    ),
]
MatchResumeQuery = Annotated[
    str | None,
    QueryParameter(
        name="lastEventId",
        pattern=MATCH_ID_PATTERN,
        description="As Last-Event-ID, for clients that cannot send headers (the header wins)",
    ),
]


def _match_resume(header: str | None, query: str | None) -> tuple[int | None, int]:
    """Where a match stream's client stands: the version, and the last table-talk message
    it was sent (0: none), from ``V`` or ``V.T``."""
    chosen = header if header is not None else query
    if chosen is None:
        return None, 0
    version, _, said = chosen.partition(".")
    if said and not (said.isascii() and said.isdigit() and len(said) <= 9 and said[0] != "0"):
        raise InvalidInputError(f"Last-Event-ID must be V or V.T, got {chosen[:40]!r}")
    parts = (version, None) if header is not None else (None, version)  # as the id came
    return _last_event_id(*parts), int(said or 0)


def _last_event_id(header: str | None, query: str | None) -> int | None:
    """Where the client stands: the ``Last-Event-ID`` header (EventSource sends it on
    every reconnect, so it wins over a URL's stale ``?lastEventId=``), else the query.
    Litestar checks both against :data:`VERSION_PATTERN` (so ``null``, ``1.0`` or a
    Unicode digit such as ``²`` is a 422, even beside a valid header); the check here
    stays for callers that bypass it."""
    for name, value in (("Last-Event-ID", header), ("lastEventId", query)):
        if value is None:
            continue
        if not (value.isascii() and value.isdigit()) or len(value) > 18:
            raise InvalidInputError(f"{name} must be a match version, got {value[:40]!r}")
    chosen = header if header is not None else query
    return None if chosen is None else int(chosen)


STREAM_DOC = (
    """A seat (`Authorization: Bearer <seat token>` or `?token=`; the header wins) or a
spectator (no token, or the organiser's) receives **one `event: view` frame per match
version**, in order, none merged and none skipped — also when bots move several times after
one command: its `id` is the version and its `data` a `SeatFrame` (a seat's stream) or a
`PublicFrame` (a spectator's; asyncapi.yaml, channel `match`) — the `event` that made the
version (a history item, redacted for the viewer as at that moment: R33; an event the viewer
sees nothing of still has its frame, with its `type` and `hidden` fields) and the viewer's
`view` right after it (the state as of that version, R34: what `GET
/v1/matches/{id}/state?version=` shows). The first frame is the current version's. While a
paced deal is under way (R16), `event: deal` frames without an `id` carry a `SeatDealFrame`
or `PublicDealFrame`: the viewer's view as cards arrive (a seat's hand when a card reaches
it, spectators' hand sizes), in batches of at most 250 ms; the view says when the deal
started and its interval. `Last-Event-ID` (header, else `?lastEventId=`) resumes exactly: a
frame for every version after it, in order, then live frames (and the deal's progress so
far); a `Last-Event-ID` beyond the match's version is a 422 `last-event-id-ahead` problem
(no such frame exists). A stream lives no longer than its token: once the seat token is re-
issued, or the player token rotated, its session ended or the player erased, the stream
sends `event: revoked` and ends (a reconnect with that token is a 401). At most
`SSE_STREAM_CAPS` streams per verified identity (an account, a seat: whatever token it
presents) and `SSE_MAX_PER_ADDRESS` per client address are open at once: beyond, 429 `too-
many-streams` with `Retry-After`. `: ping` comments keep the connection alive; the server
ends the stream after its lifetime with a `retry:` hint, and the client reconnects with its
Last-Event-ID. A tournament table is closed to spectators until its tournament round
completes: 403 `table-closed` without a seat token of that table or the organiser's token
(R36).

**Table talk** (R37): each message the viewer reads comes as an `event: talk` frame (a
`TalkMessage`) right after the frame of the version it was said at, in the order said — a
seat's own mutes apply; spectators get the talk where the table allows spectator talk. A
talk frame's `id` is `V.T` (the last version sent and the message's number), and once one
was sent — or, on a new stream, once anything was said at the table — every frame's id is
`V.T`: `Last-Event-ID` resumes both, the versions after `V` and the messages after `T` (a
plain `V`, no message received: every message of the table, those said up to `V` first);
a `T` beyond the table's last message is a 422 `last-event-id-ahead`.

"""
    + f"""`?frames=patch` asks for patch frames: the first version frame on each connection (and so
after every resume) is a whole `view` frame; then each version comes as `event: patch`
(`id:` the version, `data:` a `PatchFrame`: the event, and an RFC 6902 JSON Patch that turns
the viewer's view at the version before into its view at this one), except every {FULL_EVERY}th
version, sent whole as a `view` frame again. During a paced deal, `event: deal-patch`
frames (`data:` a `DealPatchFrame`) carry only what changed since the deal frame before
(a seat's new card, the sizes), the first against the version's view; a connection that
starts at the deal's version gets one whole `deal` frame first. A version frame after deal
frames patches the version's view, not the deal's. Applying every patch in order gives
exactly what `state?version=` shows the viewer at each version. `Accept-Encoding: gzip`
compresses the stream (each frame flushed as it is sent)."""
)


class MatchStreamController(Controller):
    path = "/v1/matches"
    tags = ["live"]  # noqa: RUF012 - Litestar declares it an instance attribute

    @stream_route(
        MATCH,
        path,
        summary="Live views of a match (Server-Sent Events)",
        description=STREAM_DOC,
        responses=spectator_problems(404, 422, 429),
    )
    async def stream_match(
        self,
        request: Request[Any, Any, Any],
        match_id: FromPath[UUID],
        live: NamedDependency[LiveStreams],
        token: Annotated[
            str | None,
            QueryParameter(name="token", description="A seat token (EventSource sends no headers)"),
        ] = None,
        last_event_id: MatchResumeHeader = None,
        last_event_id_query: MatchResumeQuery = None,
        frames: Annotated[
            Literal["full", "patch"],
            QueryParameter(
                name="frames",
                description="`full`: every version as a whole `view` frame; `patch`: a whole "
                f"`view` frame first (on each connection, and every {FULL_EVERY}th version), the "
                "versions between as RFC 6902 `patch` frames, a paced deal as `deal-patch` "
                "frames. Any other value is refused.",
            ),
        ] = "full",
    ) -> Stream:
        last, said = _match_resume(last_event_id, last_event_id_query)
        feed = await live.acquire(match_id)  # 404 before the stream starts
        cred = stream_credential(request, token)
        try:
            viewer = await live.viewer(feed, cred)
            if last is not None and last > feed.version:
                # the feed may lag the store (another replica saved): ask the store
                version = await live.store(current_version, live.service, match_id)
                if last > version:
                    raise LastEventIdAheadError(last, version)
            if feed.talk is not None and said > feed.talk.said:
                # the feed may lag the store here too: ask the store
                count = await live.store(messages_said, live.service, match_id)
                if said > count:
                    raise LastEventIdAheadError(said, count, "the table talk's last message")
        finally:
            live.release(feed)  # the feed lingers; the stream takes it again at once
        return Stream(
            live.revocations.guard(
                cred,
                live.frames(match_id, viewer, last, patches=frames == "patch", said=said),
            ),
            media_type=EVENT_STREAM,
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )

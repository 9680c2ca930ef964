"""Live boards and the archive of a tournament (T16, docs/tournaments.md).

**Standings stream** — ``GET /v1/tournaments/{id}/standings/stream`` (Server-Sent Events,
public: standings show no card)::

    event: standings
    id: <tournament version>
    data: <the standings, JSON: as GET …/standings, with "version">

The first frame is the current standings; then a frame whenever the tournament's
version grows (a table's result recorded — by the results policy as tables finish — a
correction, an adjustment, a withdrawal, a round scheduled). The standings count the
completed rounds: a table's result moves them once its round completes (R36,
docs/decisions.md D-hidden). ``Last-Event-ID`` (header,
else ``?lastEventId=``) resumes: no frame with an id <= it is sent again (the standings are
the whole state, so the next frame is all a client missed). The stream ends after the
finished tournament's last frame, or after its lifetime with a ``retry:`` hint. The hub
wakes it when the tournament is saved (in any process, :class:`api.polled_stream.HubWakes`),
then it reads the tournament (the repository's cache); this module is separate from the
match streams (:mod:`api.sse`) on purpose: a tournament has one public view.

**Archive** — ``GET /v1/tournaments/{id}/archive``: ND-JSON, one game record per table of
each completed round (:mod:`services.tournaments.archive`), each line importable on its
own with ``POST /v1/records``; the tables of a round in play are named in the
``Tournament-Pending-Tables`` header (``round/table``, comma-separated).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any
from uuid import UUID

import msgspec
from litestar import Controller, Response, get
from litestar.datastructures import ResponseHeader
from litestar.di import NamedDependency
from litestar.params import FromPath
from litestar.response import Stream

from api.dto import problems
from api.polled_stream import HubWakes, Polled, Timing, event_stream, polled, sse_frame
from api.runtime import Runtime
from api.sse import LiveStreams, MatchHub
from api.stream import LastEventIdAheadError, ResumeHeader, ResumeQuery
from api.streams import STANDINGS, stream_route
from services.game import GameService
from services.tournaments.archive import archive_lines, pending_tables
from services.tournaments.exports import standings_answer
from services.tournaments.loading import get_tournament

NDJSON = "application/x-ndjson"
POLL_S = 15.0
"""A standings stream reads again this often without a wake-up (a safety net: the hub wakes it)."""
LIFETIME_S = 600.0
HEARTBEAT_S = 15.0


async def standings_frames(
    runtime: Runtime, hub: MatchHub, tournament_id: UUID, last: int | None
) -> AsyncIterator[bytes]:
    """Frames from ``last`` on (module docstring)."""
    wakes = HubWakes(hub)
    wakes.follow((tournament_id,))  # before the first read: no change falls between
    standings = Standings(runtime, tournament_id, -1 if last is None else last)
    timing = Timing(POLL_S, HEARTBEAT_S, LIFETIME_S, runtime.retry_ms)
    try:
        async for frame in polled(standings.poll, timing, wake=wakes.event):
            yield frame
    finally:
        wakes.close()


class Standings:
    """One standings stream's reads: a frame per tournament version after ``sent``."""

    def __init__(self, runtime: Runtime, tournament_id: UUID, sent: int) -> None:
        self.runtime = runtime
        self.tournament_id = tournament_id
        self.sent = sent

    async def poll(self) -> Polled:
        t = await self.runtime.call(get_tournament, self.runtime.service, self.tournament_id)
        frames = []
        if t.version > self.sent:
            view = await self.runtime.call(
                standings_answer, self.runtime.service, self.tournament_id, False
            )
            data = msgspec.json.encode({**msgspec.to_builtins(view), "version": t.version})
            frames.append(sse_frame("standings", data, t.version))
            self.sent = t.version
        return Polled(frames, done=t.finished)


def tournament_archive(service: GameService, tournament_id: UUID) -> tuple[bytes, list[str]]:
    """Every completed round's tables' records as ND-JSON lines, and the tables still
    pending (blocking; 404)."""
    t = get_tournament(service, tournament_id)
    return b"".join(archive_lines(service, t)), pending_tables(t)


class LiveController(Controller):
    path = "/v1/tournaments"
    tags = ["tournaments"]  # noqa: RUF012 - Litestar declares it an instance attribute

    @stream_route(
        STANDINGS,
        path,
        summary="Live standings (Server-Sent Events, resumable)",
        description="`event: standings` frames whose `id` is the tournament version and "
        "whose `data` is the standings (as GET …/standings, plus `version`): the current "
        "standings at once, then one frame whenever the tournament changes (results "
        "collected as tables finish, corrections, adjustments, withdrawals). "
        "`Last-Event-ID` (header, else `?lastEventId=`) resumes: frames up to it are not "
        "sent again; an id beyond the tournament's version is a 422. The stream ends after "
        "a finished tournament's frame, or after its lifetime with a `retry:` hint.",
        responses=problems(404, 422),
    )
    async def stream_standings(
        self,
        runtime: NamedDependency[Runtime],
        live: NamedDependency[LiveStreams],
        tournament_id: FromPath[UUID],
        last_event_id: ResumeHeader = None,
        last_event_id_query: ResumeQuery = None,
    ) -> Stream:
        chosen = last_event_id if last_event_id is not None else last_event_id_query
        last = None if chosen is None else int(chosen)
        t = await runtime.call(get_tournament, runtime.service, tournament_id)  # 404
        if last is not None and last > t.version:
            raise LastEventIdAheadError(last, t.version, "the tournament's version")
        return event_stream(standings_frames(runtime, live.hub, tournament_id, last))

    @get(
        "/{tournament_id:uuid}/archive",
        media_type=NDJSON,
        summary="All tables' game records as one ND-JSON download",
        description="One game record (docs/records.md) per line, for every table of each "
        "completed round, in round and table order; each line can be imported on its own "
        "with POST /v1/records. Tables of a round in play wait for it (R36) and are named "
        "in Tournament-Pending-Tables.",
        responses=problems(404),
        response_headers=[
            ResponseHeader(
                name="Tournament-Pending-Tables",
                value="3/0,3/2",
                description="round/table of the tables not in the archive yet",
                documentation_only=True,
            )
        ],
    )
    async def get_tournament_archive(
        self, runtime: NamedDependency[Runtime], tournament_id: FromPath[UUID]
    ) -> Response[bytes]:
        body, pending = await runtime.call(tournament_archive, runtime.service, tournament_id)
        name = f"tournament-{tournament_id}.ndjson"
        headers: dict[str, Any] = {
            "Content-Disposition": f'attachment; filename="{name}"',
            "Tournament-Pending-Tables": ",".join(pending),
        }
        return Response(body, media_type=NDJSON, headers=headers)

"""``GET /v1/players/me/stream``: one Server-Sent Events stream per player
(:mod:`services.accounts.feed`): ``ticket``, ``match-found``, ``your-turn`` (with its
deadline) and ``match-finished`` frames, ``id`` the event log position, so
``Last-Event-ID`` resumes exactly (on any replica). Without it the stream begins with a
``snapshot`` frame: the player's matches (whose turn) and waiting ticket.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated, Any

import msgspec
from litestar import Controller, Request, get
from litestar.di import NamedDependency
from litestar.params import HeaderParameter, QueryParameter
from litestar.response import Stream

from api.auth import stream_credential
from api.calls import BEARER
from api.dto import problems
from api.polled_stream import Polled, Timing, event_stream, polled, retry_hint, sse_frame
from api.runtime import Runtime
from api.sse import EVENT_STREAM
from api.stream import LastEventIdAheadError
from services.access import player_of, signed_player
from services.accounts.feed import Frame, PlayerFeed, start_position
from services.accounts.my_matches import my_matches

POLL_S = 0.5
HEARTBEAT_S = 15.0
LIFETIME_S = 300.0
RETRY_MS = 2000


def encode(frame: Frame) -> bytes:
    return sse_frame(frame.kind, msgspec.json.encode(frame.data), frame.id)


class PlayerStreamController(Controller):
    path = "/v1/players/me"
    tags = ["players"]  # noqa: RUF012 - Litestar declares it an instance attribute

    @get(
        "/stream",
        media_type=EVENT_STREAM,
        summary="Everything that concerns the player, live (Server-Sent Events)",
        description="Frames: `ticket` (a ticket opened, matched, cancelled), `match-found` "
        "(seated), `your-turn` (the match, seat, version and `turnDeadline`), "
        "`match-finished`; `id` is the event log position. `Last-Event-ID` (header) resumes "
        "after it; without it the first frame is a `snapshot` (`matches`, `ticket`). "
        "`: ping` keeps the connection; after its lifetime the stream ends with a `retry:` "
        "hint. Player token in `Authorization` or `?token=` (EventSource).",
        responses=problems(401, 403, 422),
        security=BEARER,
    )
    async def stream_player(
        self,
        request: Request[Any, Any, Any],
        runtime: NamedDependency[Runtime],
        token: Annotated[
            str | None, QueryParameter(name="token", description="The player token")
        ] = None,
        last_event_id: Annotated[
            int | None,
            HeaderParameter(
                name="Last-Event-ID", ge=0, le=10**15, description="A frame's id to resume after"
            ),
        ] = None,
    ) -> Stream:
        service = runtime.service
        seen = stream_credential(request, token)

        def begin() -> tuple[PlayerFeed, Frame | None]:
            account = signed_player(service, seen).account
            end = start_position(service)
            if last_event_id is not None and last_event_id > end:
                raise LastEventIdAheadError(last_event_id, end, "the event log's end")
            position = end if last_event_id is None else last_event_id
            feed = PlayerFeed(service, account.id, position)
            if last_event_id is not None:
                return feed, None
            data = {
                "matches": msgspec.to_builtins(my_matches(service, account)),
                "ticket": None if account.ticket is None else str(account.ticket),
            }
            return feed, Frame(id=position, kind="snapshot", data=data)

        feed, first = await runtime.call(begin)  # 401/403/422 before the stream starts

        timing = Timing(POLL_S, HEARTBEAT_S, LIFETIME_S, RETRY_MS)

        def pull() -> list[Frame] | None:
            """The next frames, or None once the token no longer signs in: a revoked
            device (a lost phone) or an erased player hears nothing more."""
            if seen is None or player_of(service, seen) is None:
                return None
            return feed.poll()

        async def poll() -> Polled:
            batch = await runtime.call(pull)
            if batch is None:  # the token was rotated, its session ended, or erased
                return Polled(done=True)
            return Polled([encode(frame) for frame in batch], more=bool(batch))

        async def frames() -> AsyncIterator[bytes]:
            yield retry_hint(RETRY_MS)
            if first is not None:
                yield encode(first)
            async for frame in polled(poll, timing):
                yield frame

        return event_stream(frames())

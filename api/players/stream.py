"""``GET /v1/players/me/stream``: one Server-Sent Events stream per player
(:mod:`services.accounts.feed`): ``ticket``, ``match-found``, ``your-turn`` (with its
deadline) and ``match-finished`` frames, ``id`` the event log position, so
``Last-Event-ID`` resumes exactly (on any replica). Without it the stream begins with a
``snapshot`` frame: the player's matches (whose turn) and waiting ticket.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated, Any

import anyio
import msgspec
from litestar import Controller, Request, get
from litestar.di import NamedDependency
from litestar.params import HeaderParameter, QueryParameter
from litestar.response import Stream

from api.auth import bearer, player_of
from api.dto import problems
from api.matches import BEARER
from api.players.lobby import EVENT_STREAM, PositionAheadError
from api.runtime import Runtime
from services.accounts.feed import Frame, PlayerFeed, start_position
from services.accounts.my_matches import my_matches
from services.accounts.players import verify_player

POLL_S = 0.5
HEARTBEAT_S = 15.0
LIFETIME_S = 300.0
RETRY_MS = 2000


def encode(frame: Frame) -> bytes:
    data = msgspec.json.encode(frame.data)
    return b"id: %d\nevent: %s\ndata: %s\n\n" % (frame.id, frame.kind.encode(), data)


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
    async def stream(
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
        seen = bearer(request) or token

        def begin() -> tuple[PlayerFeed, Frame | None]:
            account = player_of(service, seen).account
            end = start_position(service)
            if last_event_id is not None and last_event_id > end:
                raise PositionAheadError(last_event_id, end)
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

        def poll() -> list[Frame] | None:
            """The next frames, or None once the token no longer signs in: a revoked
            device (a lost phone) or an erased player hears nothing more."""
            if seen is None or verify_player(service, seen) is None:
                return None
            return feed.poll()

        async def frames() -> AsyncIterator[bytes]:
            yield b"retry: %d\n\n" % RETRY_MS
            if first is not None:
                yield encode(first)
            quiet = waited = 0.0
            while waited < LIFETIME_S:
                batch = await runtime.call(poll)
                if batch is None:  # the token was rotated, its session ended, or erased
                    return
                for frame in batch:
                    yield encode(frame)
                if batch:
                    quiet = 0.0
                    continue
                await anyio.sleep(POLL_S)
                waited += POLL_S
                quiet += POLL_S
                if quiet >= HEARTBEAT_S:
                    quiet = 0.0
                    yield b": ping\n\n"

        return Stream(
            frames(),
            media_type=EVENT_STREAM,
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )

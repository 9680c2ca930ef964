"""``GET /v1/players/me/stream``: one Server-Sent Events stream per player
(:mod:`services.accounts.feed`): ``ticket``, ``match-found``, ``your-turn`` (with its
deadline) and ``match-finished`` frames, ``id`` the event log position, so
``Last-Event-ID`` resumes exactly (on any replica). Without it the stream begins with a
``snapshot`` frame: the player's matches (whose turn) and waiting ticket.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from typing import Annotated, Any
from uuid import UUID

import msgspec
from litestar import Controller, Request
from litestar.di import NamedDependency
from litestar.params import HeaderParameter, QueryParameter
from litestar.response import Stream

from api.auth import stream_credential
from api.calls import BEARER
from api.dto import problems
from api.match_follower import MatchFollower
from api.polled_stream import Polled, Timing, event_stream, polled, retry_hint, sse_frame
from api.revocation import REVOKED
from api.runtime import Runtime
from api.sse import LiveStreams
from api.stream import LastEventIdAheadError
from api.streams import PLAYER, stream_route
from services.access import Credential, player_of, signed_player
from services.accounts.feed import Frame, PlayerFeed, start_position
from services.accounts.my_matches import my_matches
from services.game import GameService

log = logging.getLogger(__name__)
POLL_S = 0.5
"""How often the log is read for what no live feed pushes (tickets, seats); a match's
moves wake the stream at once."""
HEARTBEAT_S = 15.0
LIFETIME_S = 300.0
RESUME_WINDOW = 2000
"""A resume reads at most this many log positions; from further back (``Last-Event-ID:
0``, a phone asleep for a day) the stream starts with the player's ``snapshot`` instead —
what the missed frames would have told (docs/decisions.md D-fair) — so no client makes a
stream scan the whole log."""


def encode(frame: Frame) -> bytes:
    return sse_frame(frame.kind, msgspec.json.encode(frame.data), frame.id)


class PlayerStreamController(Controller):
    path = "/v1/players/me"
    tags = ["players"]  # noqa: RUF012 - Litestar declares it an instance attribute

    @stream_route(
        PLAYER,
        path,
        summary="Everything that concerns the player, live (Server-Sent Events)",
        description="Frames: `ticket` (a ticket opened, matched, cancelled), `match-found` "
        "(seated), `your-turn` (the match, seat, the `version` at which the turn began and "
        "`turnDeadline`; pushed as soon as the move that gave it is saved, one per turn, "
        "none missed), "
        "`match-finished`, `rating-changed` (a rated match moved the player's rating: before, "
        "after, the move, once per match); `id` is the event log position. `Last-Event-ID` "
        "(header) resumes "
        "after it; without it, or from more than 2000 positions back, the first frame is a "
        "`snapshot` (`matches`, `ticket`: the state now). "
        "`: ping` keeps the connection; after its lifetime the stream ends with a `retry:` "
        "hint. Player token in `Authorization` or `?token=` (EventSource); once that token is "
        "rotated, its session ended or the player erased, the stream sends `event: revoked` "
        "and ends.",
        responses=problems(401, 403, 422),
        security=BEARER,
    )
    async def stream_player(
        self,
        request: Request[Any, Any, Any],
        runtime: NamedDependency[Runtime],
        live: NamedDependency[LiveStreams],
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
        seen = stream_credential(request, token)
        feed, first = await runtime.call(begin, runtime.service, seen, last_event_id)  # 401/403/422
        stream = PlayerStream(runtime, live, seen, feed)
        return event_stream(live.revocations.guard(seen, stream.frames(first)))


def begin(
    service: GameService, seen: Credential | None, last_event_id: int | None
) -> tuple[PlayerFeed, Frame | None]:
    """The player's feed from where the stream starts, and its ``snapshot`` frame when it
    does not resume (blocking; 401/403, 422 for a ``Last-Event-ID`` beyond the log)."""
    account = signed_player(service, seen).account
    end = start_position(service)
    if last_event_id is not None and last_event_id > end:
        raise LastEventIdAheadError(last_event_id, end, "the event log's end")
    resume = last_event_id is not None and end - last_event_id <= RESUME_WINDOW
    position = last_event_id if resume and last_event_id is not None else end
    feed = PlayerFeed(service, account.id, position)
    if resume:
        return feed, None
    data = {
        "matches": msgspec.to_builtins(my_matches(service, account)),
        "ticket": None if account.ticket is None else str(account.ticket),
    }
    return feed, Frame(id=position, kind="snapshot", data=data)


class PlayerStream:
    """One player's stream: its feed read every :data:`POLL_S`, and woken at once by the
    match follower of each match the player is playing."""

    def __init__(
        self, runtime: Runtime, live: LiveStreams, seen: Credential | None, feed: PlayerFeed
    ) -> None:
        self.runtime = runtime
        self.live = live
        self.seen = seen
        self.feed = feed
        self.wake = asyncio.Event()
        self.followed: dict[UUID, MatchFollower] = {}

    async def frames(self, first: Frame | None) -> AsyncIterator[bytes]:
        timing = Timing(POLL_S, HEARTBEAT_S, LIFETIME_S, self.runtime.retry_ms)
        try:
            yield retry_hint(self.runtime.retry_ms)
            if first is not None:
                yield encode(first)
            async for frame in polled(self.poll, timing, wake=self.wake):
                yield frame
        finally:
            for match_id in list(self.followed):
                self.unfollow(match_id)

    async def poll(self) -> Polled:
        batch = await self.runtime.call(self.pull)
        if batch is None:  # the token was rotated, its session ended, or erased
            return Polled([REVOKED], done=True)
        await self.follow()
        return Polled([encode(frame) for frame in batch], more=bool(batch))

    def pull(self) -> list[Frame] | None:
        """The next frames, or None once the token no longer signs in: a revoked device (a
        lost phone) or an erased player hears nothing more (the revocations' guard usually
        ends the stream first, at the revocation's save). Blocking."""
        if self.seen is None or player_of(self.runtime.service, self.seen) is None:
            return None
        return self.feed.poll()

    async def follow(self) -> None:
        """Be woken by the match follower of each match being played: a turn is pushed as
        soon as the move that gave it is saved (on any replica), not at the next tick."""
        playing = set(self.feed.playing)
        for match_id in [m for m in self.followed if m not in playing]:
            self.unfollow(match_id)
        for match_id in playing.difference(self.followed):
            try:
                self.followed[match_id] = await self.live.acquire(match_id)
            except Exception:  # the store is unreachable: the next tick reads it
                log.warning("player stream: following match %s failed", match_id)
                continue
            self.followed[match_id].clients.add(self.wake)

    def unfollow(self, match_id: UUID) -> None:
        follower = self.followed.pop(match_id)
        follower.clients.discard(self.wake)
        self.live.release(follower)

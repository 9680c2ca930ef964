"""``GET /v1/players/me/stream``: one Server-Sent Events stream per player
(:mod:`services.accounts.feed`): ``ticket``, ``match-found``, ``your-turn`` (with its
deadline) and ``match-finished`` frames, ``id`` the event log position, so
``Last-Event-ID`` resumes exactly (on any replica). Without it the stream begins with a
``snapshot`` frame: the player's matches (whose turn) and waiting ticket.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import AsyncIterator, Callable
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
from services.social.notices import friend_online
from services.social.presence import Presence, PresenceBoard
from services.social.reads import name_of, settings_of

log = logging.getLogger(__name__)
POLL_S = 30.0
"""The safety net: the log is read at least this often. A save of what the stream follows
(the account, its tickets and matches, as the hub tells) or news rung for the player (a
friend's request, an invitation, a rating notice: the board's :meth:`ring`) reads it at
once, :data:`BELL_GAP_S` apart at most; a match's moves and a friend's presence wake it
too: an idle player's stream reads nothing (docs/decisions.md D-social)."""
BELL_GAP_S = 0.25
"""A stream rung by the log's news reads it at most this often."""
HEARTBEAT_S = 15.0
SWEEP_S = 1.0
"""How often the presence sweeper moves the idle along."""
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
        "after, the move, once per match), `friend-request`, `friend-accepted`, "
        "`table-invitation` (with their words in English and Chinese); `id` is the event "
        "log position. Pushed without `id` (not in the log): `presence` (a friend's "
        "presence, at the start and on each change) and `friend-online` (opt-in). `Last-Event-ID` "
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
        ensure_sweeper(runtime.social.board)
        return event_stream(live.revocations.guard(seen, stream.frames(first)))


def presence_frame(player: UUID, presence: Presence) -> bytes:
    data = {"playerId": str(player), **msgspec.to_builtins(presence)}
    return sse_frame("presence", msgspec.json.encode(data))


def ensure_sweeper(board: PresenceBoard) -> None:
    """The process's one presence sweeper (online → away → offline), started with the
    first player stream; nothing runs per player."""
    if board.sweeper is None:
        board.sweeper = asyncio.get_running_loop().create_task(_sweep(board), name="presence")


async def _sweep(board: PresenceBoard) -> None:
    while True:
        await asyncio.sleep(SWEEP_S)
        try:
            board.sweep()
        except Exception:
            log.exception("presence: the sweep failed")


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
    """One player's stream: its feed read when the hub hears a save (:meth:`rang`), at
    once when the match follower of a match the player plays or the presence board has
    news, and every :data:`POLL_S` at the latest."""

    def __init__(
        self, runtime: Runtime, live: LiveStreams, seen: Credential | None, feed: PlayerFeed
    ) -> None:
        self.runtime = runtime
        self.live = live
        self.seen = seen
        self.feed = feed
        self.wake = asyncio.Event()
        self.followed: dict[UUID, MatchFollower] = {}
        self.board = runtime.social.board
        self.friends: set[UUID] = set()
        """The friends whose presence this stream watches (none blocked: blocking ends a
        friendship)."""
        self.pushed: deque[bytes] = deque(maxlen=1000)
        """Presence frames pushed by the board (no ``id``: not in the log, so a resume
        with ``Last-Event-ID`` is exact all the same)."""
        self.notify_online = False
        self.states: dict[UUID, str] = {}
        """Each watched friend's last state told: ``friend-online`` is for a friend who was
        offline (docs/decisions.md D-social), not one back from away."""
        self.playing: UUID | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.read_at = 0.0
        self.ringing = False
        self.interest: frozenset[UUID] = frozenset(feed.ids)
        """What the stream follows, as the hub names it (read on the loop)."""

    async def frames(self, first: Frame | None) -> AsyncIterator[bytes]:
        timing = Timing(POLL_S, HEARTBEAT_S, LIFETIME_S, self.runtime.retry_ms)
        me = self.feed.account_id
        self.loop = asyncio.get_running_loop()
        self.board.opened(me)
        bell: list[Callable[[frozenset[UUID]], None]] | None = getattr(
            self.live.hub, "on_changed", None
        )
        if bell is not None:
            bell.append(self.rang)
        self.board.listen(me, self.rung)
        try:
            yield retry_hint(self.runtime.retry_ms)
            if first is not None:
                yield encode(first)
            await self.runtime.call(self.watch_friends)
            async for frame in polled(self.poll, timing, wake=self.wake):
                yield frame
        finally:
            for match_id in list(self.followed):
                self.unfollow(match_id)
            for friend in list(self.friends):
                self.board.unwatch(friend, self.presence_changed)
            self.board.closed(me)
            if bell is not None:
                bell.remove(self.rang)
            self.board.unlisten(me, self.rung)

    def rung(self) -> None:
        """News for the player (any thread): read the log soon."""
        loop = self.loop
        if loop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self.rang, self.interest)

    def rang(self, changed: frozenset[UUID]) -> None:
        """The hub heard a save of ``changed`` (on its event loop): read the log soon when
        it is something the stream follows, at most every :data:`BELL_GAP_S`."""
        loop = self.loop
        if self.ringing or loop is None or changed.isdisjoint(self.interest):
            return
        self.ringing = True
        loop.call_later(max(0.0, self.read_at + BELL_GAP_S - loop.time()), self._ring)

    def _ring(self) -> None:
        self.ringing = False
        self.wake.set()

    def watch_friends(self) -> None:
        """Watch the presence of the player's friends as the friends' view has them now,
        and tell each one's presence now (blocking)."""
        social = self.runtime.social
        me = self.feed.account_id
        now = set(social.friends_of(me))
        self.notify_online = settings_of(social, me).notify_friend_online
        for gone in self.friends - now:
            self.board.unwatch(gone, self.presence_changed)
            self.states.pop(gone, None)
        for friend in now - self.friends:
            self.board.watch(friend, self.presence_changed)
            presence = self.board.of(friend)
            self.states[friend] = presence.state
            self.pushed.append(presence_frame(friend, presence))
        self.friends = now

    def presence_changed(self, player: UUID, presence: Presence) -> None:
        """The board's news of a friend (any thread): a frame, and the stream woken."""
        self.pushed.append(presence_frame(player, presence))
        before = self.states.get(player, "offline")
        self.states[player] = presence.state
        came = before == "offline" and presence.state in ("online", "in-match")
        if self.notify_online and came:
            name = name_of(self.runtime.service, player)
            data = msgspec.json.encode(friend_online(player, name))
            self.pushed.append(sse_frame("friend-online", data))
        loop = self.loop
        if loop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self.wake.set)

    async def poll(self) -> Polled:
        if self.loop is not None:
            self.read_at = self.loop.time()
        batch = await self.runtime.call(self.pull)
        if batch is None:  # the token was rotated, its session ended, or erased
            return Polled([REVOKED], done=True)
        self.interest = frozenset(self.feed.ids)
        await self.follow()
        pushed = [self.pushed.popleft() for _ in range(len(self.pushed))]
        return Polled([*pushed, *(encode(frame) for frame in batch)], more=bool(batch))

    def pull(self) -> list[Frame] | None:
        """The next frames, or None once the token no longer signs in: a revoked device (a
        lost phone) or an erased player hears nothing more (the revocations' guard usually
        ends the stream first, at the revocation's save). Blocking."""
        if self.seen is None or player_of(self.runtime.service, self.seen) is None:
            return None
        frames = self.feed.poll()
        if self.feed.friends_changed:
            self.feed.friends_changed = False
            self.watch_friends()
        self.tell_playing()
        return frames

    def tell_playing(self) -> None:
        """The board hears which match the player plays (public or not), when it changes."""
        playing = self.feed.playing
        match_id = playing[0] if playing else None
        if match_id == self.playing:
            return
        self.playing = match_id
        public = match_id is not None and not self.runtime.service.get_match(match_id).private
        self.board.playing(self.feed.account_id, match_id, public)

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

"""A stream lives no longer than its credential (docs/decisions.md D-fair).

A request checks its token once; a live stream is one request that lasts minutes. So every
stream opened with a *player* token (a match's, the player's own, a lobby ticket's) is
guarded (:meth:`Revocations.guard`): it follows the token's account through the live hub —
the same hub that wakes the match streams, :mod:`infra.hub`: a save in this process, or
the PostgreSQL notification of another replica's — and on every change of the account
checks the token again (:func:`services.access.caller_of`), and at least every
:data:`RECHECK_S` seconds. Once the token no longer signs in — rotated, its session ended
or expired, the player erased — the stream sends
``event: revoked`` (:data:`REVOKED`) and ends, within the hub's wake-up (milliseconds; on
PostgreSQL one notification round trip); the client's reconnect with it gets 401. A seat
token re-issued ends the match streams opened with the old one the same way
(:meth:`api.sse.LiveStreams.frames` sees the seat's token change in its own feed).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, Final

import anyio

from api.runtime import in_thread
from services.access import Credential, caller_of
from services.game import GameService
from services.sources import PLAYER_ROLE

if TYPE_CHECKING:
    from api.sse import MatchHub

REVOKED: Final = (
    b"event: revoked\n"
    b'data: {"reason":"the token of this stream was revoked (rotated, its session ended, '
    b'the player erased or the seat token re-issued): reconnect with a valid token"}\n\n'
)
"""The last frame of a stream whose credential was revoked (no ``retry:`` after it)."""
RECHECK_S: Final = 5.0
"""A guarded stream checks its token at least this often even when its account does not
change: a session that expires (idle too long, docs/players.md) ends its streams within
this, and a notification the hub missed is covered."""


class Revocations:
    """Ends the streams of revoked credentials (the module docstring)."""

    def __init__(
        self,
        service: GameService,
        hub: MatchHub,
        *,
        limiter: anyio.CapacityLimiter | None = None,
    ) -> None:
        self.service = service
        self.hub = hub
        self.limiter = limiter
        self.ended = 0
        """Streams ended by a revocation (metrics)."""

    def valid(self, cred: Credential) -> bool:
        """The credential still opens what it names (blocking: reads the store)."""
        return caller_of(self.service, cred) is not None

    def guard(self, cred: Credential | None, frames: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
        """``frames``, until ``cred`` (a player token) is revoked: then :data:`REVOKED`
        and the end. Any other credential (or none) gets ``frames`` themselves (no layer
        in between each frame passes: docs/decisions.md D-path)."""
        if cred is None or cred.role != PLAYER_ROLE or cred.owner is None:
            return frames
        return self._guarded(cred, frames)

    async def _guarded(
        self, cred: Credential, frames: AsyncIterator[bytes]
    ) -> AsyncIterator[bytes]:
        """:meth:`guard` of a player token."""
        revoked = asyncio.Event()
        watch = asyncio.get_running_loop().create_task(self._watch(cred, revoked))
        gone = asyncio.ensure_future(revoked.wait())
        it = aiter(frames)
        step: asyncio.Future[bytes] | None = None
        try:
            while True:
                step = asyncio.ensure_future(anext(it))
                await asyncio.wait((step, gone), return_when=asyncio.FIRST_COMPLETED)
                if not step.done():
                    await _cancelled(step)
                    self.ended += 1
                    yield REVOKED
                    return
                try:
                    frame = step.result()
                except StopAsyncIteration:
                    return
                yield frame
        finally:
            # the client left or the stream ended: the inner step first (it may be
            # running, or have just ended: its end is taken, not left to the loop to
            # report as never retrieved), then the watch, then the inner generator's
            # own cleanup
            if step is not None and step.done():
                if not step.cancelled():
                    step.exception()
            elif step is not None:
                await _cancelled(step)
            gone.cancel()
            await _cancelled(watch)
            aclose = getattr(it, "aclose", None)
            if aclose is not None:
                await aclose()

    async def _watch(self, cred: Credential, revoked: asyncio.Event) -> None:
        """Check ``cred`` again whenever its account changes; set ``revoked`` when it no
        longer signs in. The first check covers a revocation between the request's own
        check and the subscription."""
        assert cred.owner is not None
        sub = self.hub.subscribe(cred.owner)
        try:
            while True:
                if not await in_thread(self.limiter, self.valid, cred):
                    revoked.set()
                    return
                try:
                    async with asyncio.timeout(RECHECK_S):
                        if not await sub.wait():
                            return  # the hub stopped (shutdown): the stream ends with the app
                except TimeoutError:
                    continue  # a session expires with time, not an event: check again
                sub.take()  # the events handed over are not needed: the store decides
        finally:
            sub.close()


async def _cancelled(task: asyncio.Future[Any]) -> None:
    """Cancel ``task`` and wait until it has stopped (its cleanup ran)."""
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError, StopAsyncIteration):
        await task

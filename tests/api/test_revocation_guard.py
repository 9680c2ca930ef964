"""A player's stream under its revocation guard (api/revocation.py): when the stream inside
ends just as the client leaves, nothing is left for the loop to report as an error never
retrieved (an app's log, and anyio's test runner, would show it)."""

from __future__ import annotations

import asyncio
import contextlib
import gc
from collections.abc import AsyncIterator
from typing import Any
from uuid import uuid4

import anyio

from api.revocation import Revocations
from services.access import Credential
from services.sources import PLAYER_ROLE


class _Quiet:
    """A hub subscription that never hears of the account."""

    async def wait(self) -> bool:
        await asyncio.Event().wait()
        return True

    def take(self) -> None:
        return None

    def close(self) -> None:
        return None


class _Hub:
    def subscribe(self, owner: object) -> _Quiet:
        return _Quiet()


class _StillValid(Revocations):
    def valid(self, cred: Credential) -> bool:
        return True


def test_an_inner_stream_ending_as_its_client_leaves_leaves_no_error_unretrieved() -> None:
    async def run() -> list[dict[str, Any]]:
        reported: list[dict[str, Any]] = []
        asyncio.get_running_loop().set_exception_handler(lambda _, ctx: reported.append(ctx))
        guards = _StillValid(None, _Hub(), limiter=anyio.CapacityLimiter(1))  # type: ignore[arg-type]
        ended = asyncio.Event()

        async def frames() -> AsyncIterator[bytes]:
            await ended.wait()
            return
            yield b""  # an async generator that ends with no frame

        cred = Credential.parse(f"{PLAYER_ROLE}.{uuid4().hex}.secret")
        assert cred.role == PLAYER_ROLE and cred.owner is not None

        async def client(guarded: AsyncIterator[bytes]) -> None:
            async for _ in guarded:
                pass

        task = asyncio.create_task(client(guards.guard(cred, frames())))
        await asyncio.sleep(0.05)  # the client waits for its next frame
        ended.set()  # the stream inside ends ...
        task.cancel()  # ... as the client leaves, in the same turn of the loop
        with contextlib.suppress(asyncio.CancelledError):
            await task
        del task
        gc.collect()
        await asyncio.sleep(0.01)
        return reported

    reported = asyncio.run(run())
    assert [c.get("message") for c in reported] == []

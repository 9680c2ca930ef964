"""``python -m bench.young_bench``: what the live streams and a finished request keep that
the garbage collector tracks — counts, not times (docs/decisions.md D-young).

Objects that live seconds and are tracked by the collector are what its young collections
walk at 600 matches (docs/performance.md, "Why a young collection walks 200,000 objects").
In process, with the collector off while counting (nothing is untracked or freed by a
collection meanwhile):

* **a kept match's rings** — the tracked objects in its followers' rings of frames once
  five viewers (four seats and the spectators) have :data:`api.match_follower.RING`
  versions each;
* **an idle stream** — the tracked objects each of ``--streams`` more streams holds while
  it waits for its next frame (its task, generator, wake-up, alarm …), and what each holds
  after one more version woke them all;
* **a finished request's scope** — the tracked objects a request made that its scope
  still reaches once the answer is sent (the server keeps an idle keep-alive connection's
  last scope until its next request): ``GET /v1/matches/{id}`` through the app.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import logging
import os
from contextlib import AsyncExitStack
from typing import Any, cast

import httpx

import api.match_follower
from domain.rules.ruleset import RuleSet
from infra.logging import configure_logging
from tests.api.rest import new_service
from tests.api.sse_driver import Table, many, stream, table, url
from tests.apps import make_app
from tests.commands import create_match


def tracked_now() -> list[object]:
    return gc.get_objects()


def new_reachable(root: object, before: set[int]) -> int:
    """Tracked objects reachable from ``root`` that were not alive in ``before``."""
    seen: set[int] = set()
    todo = [root]
    count = 0
    while todo:
        o = todo.pop()
        if id(o) in seen or not gc.is_tracked(o):
            continue
        seen.add(id(o))
        if id(o) in before:
            continue
        count += 1
        todo.extend(gc.get_referents(o))
    return count


async def settle(t: Table, streams: int) -> None:
    while t.live.streams < streams:
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.1)


async def rings_and_streams(n: int) -> tuple[int, float, float]:
    async with table() as t, AsyncExitStack() as stack:
        viewers = [{}, *({"Authorization": f"Bearer {token}"} for token in t.tokens)]
        for headers in viewers:
            s = await stack.enter_async_context(stream(t.app, url(t), headers))
            await s.next_view()
        await t.steps(api.match_follower.RING + 2)
        follower = await t.live.acquire(t.match_id)
        rings: list[Any] = [*follower.rings.values(), *follower.patch_rings.values()]
        in_rings = sum(gc.is_tracked(r) for r in rings) + sum(
            isinstance(entry, tuple)  # tracked when made, walked at least once
            for r in rings
            for entry in (r.values() if isinstance(r, dict) else r)
        )
        t.live.release(follower)
        await settle(t, len(viewers))
        gc.collect()
        gc.disable()
        try:
            base = len(tracked_now())
            async with many(t, n) as more:
                for s in more:
                    await s.next_view()
                await settle(t, len(viewers) + n)
                idle = (len(tracked_now()) - base) / n
                await t.steps(1)
                for s in more:
                    await s.next_view()
                await settle(t, len(viewers) + n)
                woken = (len(tracked_now()) - base) / n
        finally:
            gc.enable()
    return in_rings, idle, woken


async def finished_scope() -> int:
    service = new_service()
    match_id = create_match(service, RuleSet())
    app = make_app(service)
    scopes: list[dict[str, Any]] = []

    async def server(scope: Any, receive: Any, send: Any) -> None:
        scopes.append(scope)
        await app(scope, receive, send)

    transport = httpx.ASGITransport(app=cast(Any, server))
    async with httpx.AsyncClient(transport=transport, base_url="http://young") as c:
        await c.get(f"/v1/matches/{match_id}")  # warm: the app's caches filled once
        gc.collect()
        gc.disable()
        try:
            before = {id(o) for o in tracked_now()}
            keep = tracked_now()  # the ids in ``before`` stay theirs
            r = await c.get(f"/v1/matches/{match_id}")
            assert r.status_code == 200
            count = new_reachable(scopes[-1], before)
            del keep
        finally:
            gc.enable()
    return count


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--streams", type=int, default=50, help="idle streams to count [50]")
    args = p.parse_args(argv)
    with open(os.devnull, "w") as sink:
        configure_logging("WARNING", stream=sink)
    logging.getLogger("httpx").setLevel(logging.WARNING)
    in_rings, idle, woken = asyncio.run(rings_and_streams(args.streams))
    scope = asyncio.run(finished_scope())
    print(
        f"a kept match's rings (5 viewers, {api.match_follower.RING} versions): "
        f"{in_rings} tracked objects"
    )
    print(f"an idle stream: {idle:.1f} tracked objects; after a version woke it: {woken:.1f}")
    print(f"a finished request's scope (GET /v1/matches/{{id}}): {scope} tracked objects it made")
    print(f"young rings={in_rings} stream_idle={idle:.1f} stream_woken={woken:.1f} scope={scope}")


if __name__ == "__main__":
    main()

"""``python -m bench._profiled_serve OUT [cpu|wall|gc]``: ``infra.serve`` observed.

The API bench starts the server this way with ``--profile`` or ``--gc-trace``; the
server itself is unchanged (bench code only).

* ``cpu`` / ``wall`` — cProfile in every thread: the event loop's thread and each worker
  thread (the synchronous service calls run in anyio's worker threads) get their own
  profiler; at shutdown their stats are merged into ``OUT`` (``pstats`` format). ``cpu``
  times each thread's own CPU (``time.thread_time``): where the server spends its cores;
  ``wall`` times wall clock, so waits (locks, SQLite, idle workers) show too.
* ``gc`` — no profiler: every garbage collection's start (``time.time()``), duration and
  generation, the collecting thread's CPU during it (``time.thread_time``), the objects
  collected and, for a young collection, the young objects it walked (counted before it
  starts, outside its times: the count itself costs the server a little CPU), written to
  ``OUT`` as JSON lines at shutdown (``gc.callbacks``).
* ``gc census=S`` — the same, and a census of one young generation: at the first young
  collection at least ``S`` seconds after the server started with at least
  :data:`CENSUS_AT_LEAST` young objects (``census=S,N``: ``N``), the young objects counted
  by shape (a type; a tuple by its items' types, a list by its length and first item's
  type, a dict by its size), each shape's referrers by shape (one pass over the young and
  middle generations' referents; a dict referrer named with its own owner; "older, or
  none": a referrer the collector does not track, or a frozen one), and the tracked
  objects of every generation for a few kinds (streams' wake-ups, followers, connections,
  timers) — written to ``OUT.census.json``. The census holds the server up for seconds:
  a run for counts, not for times.

Shutdown is SIGTERM → uvicorn's graceful exit.
"""

from __future__ import annotations

import cProfile
import gc
import json
import pstats
import signal
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from types import FrameType
from typing import Any

_profiles: list[cProfile.Profile] = []
_lock = threading.Lock()
_timer: Callable[[], float] = time.thread_time
_collections: list[tuple[float, float, int, float, int, int]] = []
_gc_started = [0.0, 0.0, 0.0]
CENSUS_AT_LEAST = 50_000
_census: dict[str, Any] = {"after": None, "out": None, "done": False, "least": CENSUS_AT_LEAST}
KINDS = (
    "api.sse.Wake",
    "api.match_follower.MatchFollower",
    "uvicorn.protocols.http.httptools_impl.HttpToolsProtocol",
    "uvicorn.protocols.http.httptools_impl.RequestResponseCycle",
    "uvloop.loop.TimerHandle",
    "asyncio.events.TimerHandle",
    "_contextvars.Context",
    "uuid.UUID",
)


def _start_thread_profiler(frame: FrameType, event: str, arg: Any) -> None:
    """``threading.setprofile`` hook: runs once in each new thread and hands that thread
    over to its own ``cProfile.Profile``."""
    sys.setprofile(None)
    prof = cProfile.Profile(_timer)
    with _lock:
        _profiles.append(prof)
    prof.enable()


def _name(o: object) -> str:
    t = type(o)
    return t.__qualname__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


def _shape(o: object) -> str:
    """What an object is, finer than its type for the builtin containers."""
    if type(o) is tuple:
        return "tuple(" + ",".join(_name(x) for x in o[:6]) + (",…)" if len(o) > 6 else ")")
    if type(o) is list:
        if not o:
            return "list[]"
        return f"list[{len(o) if len(o) <= 32 else '>32'} of {_name(o[0])}]"
    if type(o) is dict:
        first = _name(next(iter(o))) if o else ""
        return f"dict({len(o) if len(o) <= 8 else '>8'}, {first})"
    return _name(o)


def _take_census(young: list[object]) -> None:
    """The young generation by shape and by referrer (see the module's docstring)."""
    shapes = {id(o): _shape(o) for o in young}
    by_shape = Counter(shapes.values())
    referrer: dict[int, object] = {}
    mine = {id(young), id(shapes), id(referrer)}
    for gen in (0, 1):
        for r in gc.get_objects(generation=gen):
            if id(r) in mine:
                continue
            for x in gc.get_referents(r):
                i = id(x)
                if i in shapes and i not in referrer:
                    referrer[i] = r
    edges: dict[str, Counter[str]] = {}
    for i, shape in shapes.items():
        r = referrer.get(i)
        if r is None:
            name = "(older, or none)"
        else:
            name = _shape(r)
            if type(r) is dict:  # an instance's __dict__ or a mapping: name its owner
                owner = referrer.get(id(r))
                name += " <- " + ("?" if owner is None else _shape(owner))
        edges.setdefault(shape, Counter())[name] += 1
    kinds: dict[str, list[int]] = {k: [0, 0, 0] for k in KINDS}
    for gen in (0, 1, 2):
        for o in gc.get_objects(generation=gen):
            name = _name(o)
            if name in kinds:
                kinds[name][gen] += 1
    with open(_census["out"], "w") as f:
        json.dump(
            {
                "at": time.time(),
                "young": len(young),
                "generations": [len(gc.get_objects(generation=g)) for g in (0, 1, 2)],
                "shapes": by_shape.most_common(60),
                "referrers": {s: edges[s].most_common(6) for s, _ in by_shape.most_common(40)},
                "kinds": kinds,
            },
            f,
            indent=1,
        )


def _on_gc(phase: str, info: dict[str, int]) -> None:
    if phase == "start":
        young = len(gc.get_objects(generation=0)) if info["generation"] == 0 else -1
        after = _census["after"]
        if (
            young >= _census["least"]
            and after is not None
            and not _census["done"]
            and time.time() >= after
        ):
            _census["done"] = True
            _take_census(gc.get_objects(generation=0))
        _gc_started[:] = time.time(), time.thread_time(), young
    else:
        now, cpu = time.time(), time.thread_time()
        _collections.append(
            (
                _gc_started[0],
                now - _gc_started[0],
                info["generation"],
                cpu - _gc_started[1],
                info["collected"],
                int(_gc_started[2]),
            )
        )


def _exit(signum: int, frame: object) -> None:
    raise SystemExit(0)


def _serve_profiled(serve: Callable[[], None], out: str) -> None:
    threading.setprofile(_start_thread_profiler)
    main_prof = cProfile.Profile(_timer)
    main_prof.enable()
    try:
        serve()
    finally:
        main_prof.disable()
        threading.setprofile(None)
        with _lock:
            profiles = [main_prof, *_profiles]
        stats = pstats.Stats(profiles[0])
        for prof in profiles[1:]:
            try:
                stats.add(prof)
            except Exception as e:  # a thread still running: skip its profile
                sys.stderr.write(f"profile of a thread skipped: {e!r}\n")
        stats.dump_stats(out)


def _serve_gc_traced(serve: Callable[[], None], out: str) -> None:
    gc.callbacks.append(_on_gc)
    try:
        serve()
    finally:
        gc.callbacks.remove(_on_gc)
        with open(out, "w") as f:
            for row in list(_collections):
                f.write(json.dumps(row) + "\n")


def main() -> None:
    global _timer  # noqa: PLW0603 - set once, before any thread starts
    out = sys.argv[1]
    mode = (sys.argv[2:] or ["cpu"])[0]
    for arg in sys.argv[3:]:
        if arg.startswith("census="):
            after, _, least = arg.removeprefix("census=").partition(",")
            _census["after"] = time.time() + float(after)
            _census["least"] = int(least or CENSUS_AT_LEAST)
            _census["out"] = out + ".census.json"
    _timer = time.perf_counter if mode == "wall" else time.thread_time
    from infra.serve import main as serve  # noqa: PLC0415 - after the hooks are ready

    # uvicorn re-raises the SIGTERM it handled once it has shut down: end normally then.
    signal.signal(signal.SIGTERM, _exit)
    if mode == "gc":
        _serve_gc_traced(serve, out)
    else:
        _serve_profiled(serve, out)


if __name__ == "__main__":
    main()

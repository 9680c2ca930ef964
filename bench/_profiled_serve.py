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
from collections.abc import Callable
from types import FrameType
from typing import Any

_profiles: list[cProfile.Profile] = []
_lock = threading.Lock()
_timer: Callable[[], float] = time.thread_time
_collections: list[tuple[float, float, int, float, int, int]] = []
_gc_started = [0.0, 0.0, 0.0]


def _start_thread_profiler(frame: FrameType, event: str, arg: Any) -> None:
    """``threading.setprofile`` hook: runs once in each new thread and hands that thread
    over to its own ``cProfile.Profile``."""
    sys.setprofile(None)
    prof = cProfile.Profile(_timer)
    with _lock:
        _profiles.append(prof)
    prof.enable()


def _on_gc(phase: str, info: dict[str, int]) -> None:
    if phase == "start":
        young = len(gc.get_objects(generation=0)) if info["generation"] == 0 else -1
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

"""Server processes forked from one that has imported the server already (a zygote).

A server start (``python -m infra.serve``) spends nearly all of its CPU importing the
project and its libraries (~1.1 of ~1.6 CPU-s on a quiet machine, more on a busy one). A
test that kills and restarts servers many times (:mod:`tests.resilience.test_kill_mid_command`:
a process per kill) starts them from a :class:`Zygote` instead: one process,
``python -m tests.resilience.zygote``, imports :data:`PRELOAD` once; each start is a
``fork`` of it that runs the module as ``python -m <module> <args>`` would
(:func:`runpy.run_module`, ``__main__``), with the environment, working directory and log
file given. What is tested is unchanged: each server is a process of its own, with its own
memory, connections and threads, killed with SIGKILL and started again on the same store.
Nothing of the project reads its environment at import time (:mod:`infra.settings`), so a
fork reads the settings it is given, as a fresh process does.

The zygote also imports what a server imports only once it starts (:data:`AT_START`) and
freezes what all those imports made (:func:`gc.freeze`): a fork then spends ~0.3 CPU-s to be
ready on PostgreSQL instead of ~0.5 (mostly its app's routes, built from its own settings).
The zygote starts no thread (a fork copies only the forking thread) and opens no
connection. It is the forked processes' parent: it reaps them and answers a
:class:`Forked`'s ``poll``/``wait`` with their exit status (``-N`` for signal N, as
:class:`subprocess.Popen`). It ends, killing what it forked that still runs, when its
stdin closes.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import runpy
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any, NoReturn

import anyio

PRELOAD = ("infra.serve", "infra.bootstrap", "infra.cli", "tests.resilience.killer")
"""What the zygote imports before it forks (a server's imports, the killer's wrappers)."""

AT_START = (
    "litestar.plugins.pydantic",
    "litestar.plugins.attrs",
    "uvicorn.protocols.http.httptools_impl",
    "uvicorn.protocols.websockets.websockets_sansio_impl",
    "uvicorn.loops.uvloop",
    "uvicorn.lifespan.on",
    "anyio.streams.memory",
    "anyio.streams.stapled",
    "anyio.streams.tls",
)
"""What a server imports only once it starts, imported by the zygote too, so that no fork
imports them again (~0.5 CPU-s a start): litestar's plugins for the optional libraries it
finds installed (pydantic and attrs, which only the dev extras bring), the HTTP, WebSocket,
loop and lifespan implementations uvicorn picks at start, anyio's streams. A module missing
from this list costs time, never correctness (the fork imports it as a fresh process
would); one that is not installed is skipped."""


class Zygote:
    """The test's side: starts the zygote process, asks it to fork and to wait."""

    def __init__(self, cwd: Path, env: Mapping[str, str], log: Path) -> None:
        with log.open("ab") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "tests.resilience.zygote"],
                cwd=cwd,
                env=dict(env),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=out,
            )
        self.cwd = cwd

    def _ask(self, request: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(request).encode() + b"\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the zygote exited ({self.proc.wait()})")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def fork(self, argv: Sequence[str], env: Mapping[str, str], log: Path) -> Forked:
        """``python -m argv[0] argv[1:]`` with ``env``, its output appended to ``log``."""
        pid = int(
            self._ask(
                {
                    "op": "fork",
                    "module": argv[0],
                    "args": list(argv[1:]),
                    "env": dict(env),
                    "cwd": str(self.cwd),
                    "log": str(log),
                }
            )["pid"]
        )
        return Forked(self, pid)

    def wait(self, pid: int, timeout: float | None) -> int | None:
        returncode: int | None = self._ask({"op": "wait", "pid": pid, "timeout": timeout})[
            "returncode"
        ]
        return returncode

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()


class Forked:
    """A forked server, as much of :class:`subprocess.Popen` as the tests use."""

    def __init__(self, zygote: Zygote, pid: int) -> None:
        self.zygote = zygote
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            self.returncode = self.zygote.wait(self.pid, 0)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            self.returncode = self.zygote.wait(self.pid, timeout)
        if self.returncode is None:
            raise subprocess.TimeoutExpired([str(self.pid)], timeout or 0)
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            os.kill(self.pid, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


# -- the zygote process -----------------------------------------------------------------------


def _child(request: dict[str, Any]) -> NoReturn:
    """In the fork: become ``python -m module args``. It ends as that process would: the
    module's own exit, or an exception's traceback on stderr and status 1; the
    interpreter's shutdown (``atexit``, flushing) runs as usual."""
    out = os.open(request["log"], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(out, 1)
    os.dup2(out, 2)
    os.close(out)
    os.close(null)
    os.environ.clear()
    os.environ.update(request["env"])
    os.chdir(request["cwd"])
    sys.argv = [request["module"], *request["args"]]
    runpy.run_module(request["module"], run_name="__main__", alter_sys=True)
    raise SystemExit(0)


def _wait(pid: int, timeout: float | None, done: dict[int, int]) -> int | None:
    deadline = None if timeout is None else time.monotonic() + timeout
    while pid not in done:
        flags = 0 if deadline is None else os.WNOHANG
        got, status = os.waitpid(pid, flags)
        if got == pid:
            done[pid] = os.waitstatus_to_exitcode(status)
        elif deadline is None or time.monotonic() >= deadline:
            return None
        else:
            time.sleep(0.02)
    return done[pid]


def serve(requests: IO[str], answers: IO[str]) -> None:
    """Fork on each request read from ``requests`` until it closes; then kill and reap
    what is left."""
    for module in PRELOAD:
        __import__(module)
    for module in AT_START:
        with contextlib.suppress(ImportError):
            __import__(module)
    anyio.run(anyio.sleep, 0)  # loads anyio's asyncio backend (a loop run and closed, no thread)
    # What the imports made outlives every fork: out of the collector's way (gc.freeze's own
    # advice before a fork), so that no fork's collections walk it again (a server's
    # gc.collect at start, its build's) nor copy its pages by touching it.
    gc.collect()
    gc.freeze()
    forked: set[int] = set()
    done: dict[int, int] = {}
    for line in requests:
        request = json.loads(line)
        if request["op"] == "fork":
            answers.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                _child(request)
            forked.add(pid)
            answer: dict[str, Any] = {"pid": pid}
        else:
            answer = {"returncode": _wait(int(request["pid"]), request["timeout"], done)}
        answers.write(json.dumps(answer) + "\n")
        answers.flush()
    for pid in forked - done.keys():
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        _wait(pid, None, done)


if __name__ == "__main__":
    serve(sys.stdin, sys.stdout)

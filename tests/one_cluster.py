"""One throwaway PostgreSQL cluster for a whole parallel run (docs/decisions.md D-suite2).

Under pytest-xdist the controller starts the cluster (on a thread of its own, while the
workers start and collect) and tells each worker where its URL will be written
(``workerinput``); a worker's ``pg_url`` reads it, waiting for it the first time a test
needs PostgreSQL. Each test still has a schema of its own (``tests.conftest.open_backend``),
as with a shared ``$DATABASE_URL``. The controller stops the cluster when the run ends. A run
in one process (``-n 0``), or with ``$DATABASE_URL`` set, does as before: its own cluster, or
that URL.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import threading
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any, Final

from infra.pgcluster import PostgresUnavailableError, throwaway_server

WORKERINPUT_KEY: Final = "shengji_pg_url_file"
"""The ``workerinput`` key naming the file the controller writes the cluster's URL to."""
MAX_CONNECTIONS: Final = "max_connections = 600"
"""The cluster serves every worker at once: four workers' pools, hubs and servers."""
WAIT_S: Final = 120.0
"""How long a worker waits for the controller's cluster before its tests fail."""


class SharedCluster:
    """The controller's cluster: started on a thread, its URL (or why it failed) written to
    :attr:`file` as JSON; :meth:`close` stops it."""

    def __init__(self) -> None:
        self._folder = Path(tempfile.mkdtemp(prefix="shengji-pg-url-"))
        self.file = self._folder / "url.json"
        self._stack = ExitStack()
        self._thread = threading.Thread(target=self._start, name="shared-pg", daemon=True)
        self._thread.start()

    def _start(self) -> None:
        try:
            cluster = self._stack.enter_context(throwaway_server(settings=(MAX_CONNECTIONS,)))
            answer: dict[str, str] = {"url": cluster.url}
        except Exception as e:  # told to every worker that asks
            answer = {"error": f"{type(e).__name__}: {e}"}
        publish(self.file, answer)

    def close(self) -> None:
        self._thread.join()
        self._stack.close()
        shutil.rmtree(self._folder, ignore_errors=True)


def publish(file: Path, answer: dict[str, str]) -> None:
    """Write the controller's ``answer`` to ``file`` whole: a worker sees no file or all of
    it, never a file still being written (a temporary file, then renamed)."""
    tmp = file.with_suffix(".tmp")
    tmp.write_text(json.dumps(answer))
    tmp.replace(file)


def url_from(workerinput: Any) -> str | None:
    """The controller's cluster URL when this worker was given one (waits for it), else None."""
    if not workerinput or WORKERINPUT_KEY not in workerinput:
        return None
    file = Path(workerinput[WORKERINPUT_KEY])
    deadline = time.monotonic() + WAIT_S
    while not file.exists():
        if time.monotonic() > deadline:
            raise PostgresUnavailableError(f"the run's PostgreSQL cluster: no {file} in {WAIT_S} s")
        time.sleep(0.05)
    answer = json.loads(file.read_text())
    if "error" in answer:
        raise PostgresUnavailableError(f"the run's PostgreSQL cluster: {answer['error']}")
    url: str = answer["url"]
    return url

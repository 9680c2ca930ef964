"""One writing process per embedded store file.

The embedded SQLite store is the one-machine default: its aggregate cache trusts this
process's own saves (``AGGREGATE_CACHE_FASTFORWARD=n``), so a second process writing the
same file would leave it stale. Replicas run on PostgreSQL. A process claims the file with
an exclusive ``flock`` on ``<file>.writer`` (shared by every service of the process on
that file); a second server on the file exits with a one-line reason
(:class:`StoreTakenError`, ``infra.serve``).
"""

from __future__ import annotations

import fcntl
import os
import threading
from collections.abc import Callable

from eventsourcing.persistence import OperationalError

_writers: dict[str, list[int]] = {}
"""The store files this process writes: real path → [lock file descriptor, claims]."""
_writers_lock = threading.Lock()


class StoreTakenError(OperationalError):
    """Another process writes this embedded store."""


def claim_writer(db_path: str) -> Callable[[], None]:
    """Claim ``db_path`` for this process; the returned callable gives the claim back
    (idempotent). Raises :class:`StoreTakenError` while another process holds the file."""
    key = os.path.realpath(db_path)
    with _writers_lock:
        held = _writers.get(key)
        if held is None:
            fd = os.open(key + ".writer", os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                raise StoreTakenError(
                    f"another process writes the embedded store {db_path}; one process "
                    "serves a SQLite file (run replicas on PostgreSQL)"
                ) from None
            held = _writers[key] = [fd, 0]
        held[1] += 1
    released = [False]

    def release() -> None:
        with _writers_lock:
            if released[0]:
                return
            released[0] = True
            held[1] -= 1
            if held[1] == 0 and _writers.get(key) is held:
                del _writers[key]
                os.close(held[0])  # closing the descriptor drops the lock

    return release

"""What a slow tool makes from the repository's documents, kept by content outside the clone.

A generator run on ``openapi.yaml`` (the native clients, the Python client) costs seconds
of CPU and gives the same files for the same input. :func:`tool_output` keeps its output under
the user's cache (``$XDG_CACHE_HOME``, else ``~/.cache``) in ``shengji-tests/<kind>/<key>``,
``key`` the hash of everything the output depends on (the document, the tool's version,
its options): a fresh clone whose document is unchanged reuses it; any change of the
input is a folder of its own. Two processes wanting the same folder take turns (a file
lock): one makes it, the other reads it.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
from collections.abc import Callable
from pathlib import Path

CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "shengji-tests"
DONE = "done"
"""The file a made folder ends with: a folder without it (a run killed midway) is made
again."""


def key_of(*parts: bytes | str) -> str:
    """A folder name for output that depends on exactly ``parts``."""
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode() if isinstance(part, str) else part)
        digest.update(b"\0")
    return digest.hexdigest()[:16]


def tool_output(kind: str, key: str, make: Callable[[Path], None]) -> Path:
    """The folder ``kind/key`` of the cache, ``make(folder)`` run into it first unless an
    earlier run finished it."""
    folder = CACHE / kind / key
    folder.parent.mkdir(parents=True, exist_ok=True)
    with (folder.parent / f"{key}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (folder / DONE).exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            make(folder)
            (folder / DONE).touch()
    return folder

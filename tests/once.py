"""A folder made once, whichever process asks first: the others wait for it, then read it.

pytest-xdist's workers each run their own session fixtures; what is costly to make and the
same for all of them (a generated client, a population of matches) is made by the first
worker that needs it, in a folder every worker can see, under a file lock. A folder ends
with the file :data:`DONE`: one without it (a run killed midway) is made again.
"""

from __future__ import annotations

import fcntl
import shutil
from collections.abc import Callable
from pathlib import Path

DONE = "done"


def made_once(folder: Path, make: Callable[[Path], None]) -> Path:
    """``folder``, ``make(folder)`` run into it first unless a process finished it."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    with folder.with_name(f"{folder.name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (folder / DONE).exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            make(folder)
            (folder / DONE).touch()
    return folder

"""What a slow tool makes from the repository's documents, kept by content outside the clone.

A generator run on ``openapi.yaml`` (the native clients, the Python client) costs seconds
of CPU and gives the same files for the same input. :func:`tool_output` keeps its output under
the user's cache (``$XDG_CACHE_HOME``, else ``~/.cache``) in ``shengji-tests/<kind>/<key>``,
``key`` the hash of everything the output depends on (the document, the tool's version,
its options): a fresh clone whose document is unchanged reuses it; any change of the
input is a folder of its own, made once however many processes want it
(:func:`tests.once.made_once`).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path

from tests.once import made_once

CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "shengji-tests"


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
    return made_once(CACHE / kind / key, make)

"""The resilience tests' servers are forked from one zygote per test process."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.resilience.harness import ROOT
from tests.resilience.zygote import Zygote

PYCACHE = Path(tempfile.gettempdir()) / f"shengji-kill-pycache-{os.getuid()}"
"""Where the zygote keeps the project's bytecode, outside the tree (Python checks each file
against its source): with none, each test process's zygote would compile every module."""


@pytest.fixture(scope="session")
def zygote(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Zygote]:
    """The servers' zygote (:mod:`tests.resilience.zygote`): a server start is a fork of a
    process that imported the server once, not ~2-3 CPU-s of imports again."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(PYCACHE)
    made = Zygote(ROOT, env, tmp_path_factory.mktemp("zygote") / "zygote.log")
    try:
        yield made
    finally:
        made.close()

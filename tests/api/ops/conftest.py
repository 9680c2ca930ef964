"""Fixtures of the operations tests: the captured JSON logs, the small app's client and the
real app's.
"""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator

import pytest
import structlog
from litestar import Litestar
from litestar.testing import TestClient

from infra.bootstrap import build_app
from infra.logging import configure_logging
from infra.settings import Settings
from tests.api.ops.small_app import small_app


@pytest.fixture
def logs() -> Iterator[io.StringIO]:
    """JSON lines of every log record while the test runs."""
    root = logging.getLogger()
    level = root.level
    stream = io.StringIO()
    configure_logging("INFO", stream=stream)
    yield stream
    for handler in [h for h in root.handlers if getattr(h, "_shengji_json_handler", False)]:
        root.removeHandler(handler)
    root.setLevel(level)
    structlog.reset_defaults()


@pytest.fixture
def client() -> Iterator[TestClient[Litestar]]:
    with TestClient(small_app()) as c:
        yield c


@pytest.fixture
def real_app() -> Iterator[TestClient[Litestar]]:
    with TestClient(build_app(Settings(backend="popo"))) as c:
        yield c

"""Fixtures of the operations tests: the captured JSON logs, the small app's client and the
real app's.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from infra.bootstrap import build_app
from infra.settings import Settings
from tests.api.ops.small_app import small_app


@pytest.fixture
def client() -> Iterator[TestClient[Litestar]]:
    with TestClient(small_app()) as c:
        yield c


@pytest.fixture
def real_app() -> Iterator[TestClient[Litestar]]:
    with TestClient(build_app(Settings(backend="popo"))) as c:
        yield c

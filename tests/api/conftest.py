"""Fixtures of the API tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from tests.api.rest import client


@pytest.fixture(scope="module")
def c() -> Iterator[TestClient[Litestar]]:
    """One app for the module (tests/api/rest.py ``client``: POPO, a fixed clock and seeds),
    for tests that each work on matches, players or tournaments of their own and never move
    the clock; a test that needs a fresh app or other settings builds its own."""
    with client() as opened:
        yield opened

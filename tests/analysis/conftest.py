"""The generated population the analysis tests share (built once per run)."""

from __future__ import annotations

import pytest

from tests.analysis.population import Population, generate


@pytest.fixture(scope="session")
def population() -> Population:
    return generate()

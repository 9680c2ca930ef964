"""The population the integrity tests read, built once per test session."""

from __future__ import annotations

import pytest

from tests.integrity.population import Population, build


@pytest.fixture(scope="session")
def population(tmp_path_factory: pytest.TempPathFactory) -> Population:
    """Matches of every kind on one SQLite file (:mod:`tests.integrity.population`)."""
    folder = tmp_path_factory.mktemp("population")
    return build(folder / "events.sqlite3")

"""The population the integrity tests read, built once per test run."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.integrity.population import Population, build
from tests.once import made_once

STORE = "events.sqlite3"
SAVED = "population.json"


@pytest.fixture(scope="session")
def population(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Population:
    """Matches of every kind on one SQLite file (:mod:`tests.integrity.population`), made
    once per run: under pytest-xdist by the first worker that needs it, in the run's folder
    every worker sees (each worker then reads a copy of its own: one process writes a
    store); in a single process, in its own folder."""
    folder = tmp_path_factory.mktemp("population")
    if worker_id == "master":
        return build(folder / STORE)

    def make(shared: Path) -> None:
        build(shared / STORE).save(shared / SAVED)

    shared = made_once(tmp_path_factory.getbasetemp().parent / "integrity-population", make)
    for part in shared.glob(f"{STORE}*"):
        shutil.copy(part, folder / part.name)
    population = Population.load(shared / SAVED)
    population.path = str(folder / STORE)
    return population

"""``shengji rebuild ratings`` as an operator runs it: a process of its own on the store the
environment names (SQLite, PostgreSQL). It rates the whole log again and puts the rows in
place of the live view's: every rating, history row and season equal to the live values
to the last bit (floats compared by their exact ``repr``), a drifted row put right, and
``--check`` then finds nothing (docs/decisions.md D-ratings).

The first ``--check`` runs as a process of its own (the operator's, configured by its
environment); the rebuild and the last check run the same command in this process
(``run_rebuild``, the environment set alike): each process cost ~1.5 CPU-s, nearly all
imports (docs/decisions.md D-suite4, "the tail")."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest
from eventsourcing.persistence import Tracking

from infra.cli import build_parser
from infra.cli_rebuild import run_rebuild
from infra.ratingviews import open_ratings_view
from infra.store import build_service
from services.ratings.rows import Change, RatingRow
from services.ratings.runner import RatingsFollower
from services.ratings.view import TRACKED
from tests.career.recorded import recorded, write_steps
from tests.conftest import Backend

ROOT = Path(__file__).resolve().parents[2]


def environment(backend: Backend) -> dict[str, str]:
    """The variables that name ``backend``'s store, as a server reads them."""
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "SQLITE_PATH")}
    settings = backend.settings
    if backend.name == "sqlite":
        env |= {"PERSISTENCE": "sqlite", "SQLITE_PATH": str(settings.sqlite_path)}
    else:
        assert settings.database_url is not None
        env |= {
            "PERSISTENCE": "postgres",
            "DATABASE_URL": settings.database_url,
            "POSTGRES_SCHEMA": settings.postgres_schema or "public",
        }
    return env


def shengji(backend: Backend, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "infra.cli", *argv],
        cwd=ROOT,
        env=environment(backend),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def in_process(
    backend: Backend, monkeypatch: pytest.MonkeyPatch, *argv: str
) -> subprocess.CompletedProcess[str]:
    """``shengji *argv`` (a ``rebuild``) run in this process on the environment
    :func:`shengji` gives its process, answered as a finished process would be."""
    with monkeypatch.context() as patched:
        for name in ("DATABASE_URL", "SQLITE_PATH"):
            patched.delenv(name, raising=False)
        for name, value in environment(backend).items():
            patched.setenv(name, value)
        out, err = io.StringIO(), io.StringIO()
        code = run_rebuild(build_parser().parse_args(list(argv)), out, err)
    return subprocess.CompletedProcess(argv, code, out.getvalue(), err.getvalue())


@pytest.mark.parametrize(
    "backend",
    ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)],
    indirect=True,
)
def test_rebuild_ratings_through_the_cli_equals_the_live_values(
    backend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    service = build_service(backend.settings, clock=backend.clock, seeds=backend.seeds)
    service.hub_caught_up()  # the store's only writer while it plays: its cache is exact
    try:
        view = open_ratings_view(service, create=True)
        follower = RatingsFollower(service, view, batch=5)
        # the ratings' population (tests.career.recorded) written a match at a time, the
        # view kept live, a batch at a time
        recording = recorded()
        write_steps(
            recording, service, backend.clock, follower.catch_up, steps=recording.marks["ratings"]
        )
        follower.catch_up()
        live = view.contents()
        assert sum(k.startswith("history") for k in live) >= 10
        # a row gone astray (a bug since fixed, a restore): the rebuild puts it right
        rows = [r for r in view.rows() if isinstance(r, RatingRow)]
        astray = msgspec.structs.replace(rows[0], mu=rows[0].mu + 1.0)
        change = Change(ratings={(astray.family, astray.season, astray.player_id): astray})
        at = view.position()
        view.store(change, at, Tracking(TRACKED, at + 1))  # as if a later event moved it
        assert view.contents() != live
    finally:
        service.close()
    drifted = shengji(backend, "rebuild", "--check", "ratings")
    assert drifted.returncode == 1, drifted.stderr
    assert f"rating {astray.family} {astray.season} {astray.player_id}" in drifted.stdout
    done = in_process(backend, monkeypatch, "rebuild", "ratings")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("rebuilt ratings from ")
    checked = in_process(backend, monkeypatch, "rebuild", "--check", "ratings")
    assert checked.returncode == 0 and "every read model matches" in checked.stdout
    service = build_service(backend.settings, clock=backend.clock, seeds=backend.seeds)
    try:
        rebuilt = open_ratings_view(service, create=False).contents()
    finally:
        service.close()
    assert rebuilt == live  # every row, the position and the model, bit for bit

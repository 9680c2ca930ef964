"""The run's one PostgreSQL cluster (tests/one_cluster.py, docs/decisions.md D-suite2): a
worker reads the URL the controller writes, waiting for it, and fails when it failed."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from infra.pgcluster import PostgresUnavailableError
from tests.one_cluster import WORKERINPUT_KEY, publish, url_from


def test_a_worker_waits_for_the_controllers_url(tmp_path: Path) -> None:
    file = tmp_path / "url.json"
    later = threading.Timer(0.2, publish, (file, {"url": "postgresql://x"}))
    later.start()
    assert url_from({"workerid": "gw0", WORKERINPUT_KEY: str(file)}) == "postgresql://x"
    later.join()


def test_a_cluster_that_did_not_start_fails_the_tests_that_need_it(tmp_path: Path) -> None:
    file = tmp_path / "url.json"
    file.write_text(json.dumps({"error": "PostgresUnavailableError: initdb failed"}))
    with pytest.raises(PostgresUnavailableError, match="initdb failed"):
        url_from({"workerid": "gw0", WORKERINPUT_KEY: str(file)})


def test_without_the_controllers_cluster_a_process_starts_its_own() -> None:
    assert url_from(None) is None
    assert url_from({"workerid": "gw0"}) is None


def test_under_xdist_every_worker_is_given_the_runs_cluster(
    request: pytest.FixtureRequest, pg_url: str
) -> None:
    """In a worker of a parallel run with no ``$DATABASE_URL``, ``pg_url`` is the
    controller's cluster; in one process (``-n 0``) it is the process's own, as before."""
    workerinput = getattr(request.config, "workerinput", None)
    if workerinput is not None and not os.environ.get("DATABASE_URL", "").strip():
        assert url_from(workerinput) == pg_url
    else:
        assert url_from(workerinput) is None

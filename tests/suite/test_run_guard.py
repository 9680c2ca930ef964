"""The run guard (:mod:`tests.run_guard`): a run with a skipped test is red, in one process
and under pytest-xdist; a run where every test ran is green and prints its seed.

Only the green run takes pytest-randomly (its seed is what it prints): importing it imports
faker and numpy, ~0.8 CPU-s in each process of a run (the guard counts the same without it)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

_TESTS = """
import pytest

def test_runs() -> None:
    assert True

{extra}
"""


def _run(
    tmp_path: Path, extra: str, *args: str, random_order: bool = False
) -> subprocess.CompletedProcess[str]:
    (tmp_path / "pytest.ini").write_text("[pytest]\naddopts = -p tests.run_guard\n")  # no conftest
    (tmp_path / "test_guarded.py").write_text(_TESTS.format(extra=extra))
    ini, plugins = tmp_path / "pytest.ini", ("-p", "no:cacheprovider", "-p", "xdist")
    order = ("-p", "randomly") if random_order else ()
    where = ("--rootdir", str(tmp_path), str(tmp_path))
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-c",
            str(ini),
            "-q",
            *plugins,
            *order,
            *where,
            *args,
        ],
        cwd=ROOT,
        env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},  # a quick start
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_skipped_test_fails_the_run(tmp_path: Path, workers: str) -> None:
    """Under xdist the controller counts the workers' reports."""
    skip = '@pytest.mark.skip(reason="no server")\ndef test_skipped() -> None:\n    pass\n'
    done = _run(tmp_path, skip, "-n", workers)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "run guard: not every collected test ran" in done.stdout
    assert "test_guarded.py::test_skipped (Skipped: no server)" in done.stdout


def test_an_xfail_fails_the_run(tmp_path: Path) -> None:
    xfail = "@pytest.mark.xfail(reason='flaky')\ndef test_maybe() -> None:\n    assert False\n"
    done = _run(tmp_path, xfail, "-n", "0")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "test_guarded.py::test_maybe (xfail: flaky)" in done.stdout


def test_a_whole_run_is_green_and_prints_its_seed(tmp_path: Path) -> None:
    done = _run(tmp_path, "", "-n", "2", "--randomly-seed=1234", random_order=True)
    assert done.returncode == 0, done.stdout + done.stderr
    # the replay asks for what the run asked for: here the test folder
    replay = f"replay: make pytest PYTEST_WORKERS=0 PYTEST_ARGS='--randomly-seed=1234 {tmp_path}')"
    assert done.stdout.count(replay) == 2, done.stdout  # at the start and at the end
    assert "run guard" not in done.stdout

"""A green run is a whole run (a plugin: ``pytest_plugins`` in tests/conftest.py).

- **Every collected test ran.** A test skipped, xfailed or xpassed fails the run, unless its
  reason is one of :data:`ALLOWED_SKIPS` (none today): a test that needs something the
  machine lacks (PostgreSQL, a JDK, Node) starts or installs it, or fails — it never skips.
  A collected test that reports no outcome at all (a worker lost, a hook that swallowed
  it) fails the run too.
- **The order can be replayed.** The random order's seed (pytest-randomly) is printed at
  the start and at the end, with the command that replays it (docs/testing.md).

Under pytest-xdist the controller does the counting: the workers' reports reach it, and
it learns what each worker collected from ``pytest_xdist_node_collection_finished``.
"""

from __future__ import annotations

from typing import Any, Final

import pytest

ALLOWED_SKIPS: Final[tuple[str, ...]] = ()
"""Substrings of a skip reason that may pass (e.g. a platform the suite cannot run on)."""

_EXPECTED = pytest.StashKey[set[str]]()


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def _seed(config: pytest.Config) -> int | None:
    """The random order's seed, if pytest-randomly is on (``-p no:randomly`` turns it off)."""
    if not config.pluginmanager.has_plugin("randomly"):
        return None
    seed: Any = config.getoption("randomly_seed", default=None)
    return seed if isinstance(seed, int) else None


def _selection(config: pytest.Config) -> list[str]:
    """The tests the session was asked for beyond the default (its paths, ``--ignore``):
    a replay of its order asks for the same (``make test`` runs the contract module in a
    session of its own and leaves it out of the workers')."""
    paths = list(config.args) if config.args_source == pytest.Config.ArgsSource.ARGS else []
    ignored: Any = config.getoption("ignore", default=None) or []
    return [*paths, *(f"--ignore={p}" for p in ignored)]


def _replay_line(config: pytest.Config) -> str | None:
    seed = _seed(config)
    if seed is None:
        return None
    args = " ".join([f"--randomly-seed={seed}", *_selection(config)])
    quoted = args if " " not in args else f"'{args}'"
    return (
        f"random order: --randomly-seed={seed} (replay: make pytest PYTEST_WORKERS=0 "
        f"PYTEST_ARGS={quoted})"
    )


@pytest.hookimpl(trylast=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    config = session.config
    line = _replay_line(config)
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if line and reporter is not None and not _is_worker(config):
        reporter.write_line(line)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node: Any, ids: list[str]) -> None:
    """xdist: every worker collects the whole selection; remember it once."""
    expected = node.config.stash[_EXPECTED]
    if not expected:
        expected.update(ids)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Without xdist: this process collected the selection."""
    if not _is_worker(session.config):
        session.config.stash[_EXPECTED].update(item.nodeid for item in session.items)


@pytest.hookimpl(hookwrapper=True)
def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> Any:
    yield
    if _is_worker(config):
        return
    line = _replay_line(config)
    if line:
        terminalreporter.write_line(line)


def _skipped_reason(report: pytest.TestReport) -> str:
    if hasattr(report, "wasxfail"):
        return f"xfail: {report.wasxfail}"
    longrepr: Any = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2])
    return str(longrepr)


class _Tally:
    """The outcomes seen by test id, and the tests skipped without an allowed reason."""

    def __init__(self) -> None:
        self.seen: set[str] = set()
        self.skipped: dict[str, str] = {}

    def add(self, report: pytest.TestReport) -> None:
        self.seen.add(report.nodeid)
        if report.skipped or hasattr(report, "wasxfail"):
            reason = _skipped_reason(report)
            if not any(allowed in reason for allowed in ALLOWED_SKIPS):
                self.skipped[report.nodeid] = reason


_TALLY = pytest.StashKey[_Tally]()


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    config.stash[_TALLY] = _Tally()
    config.stash[_EXPECTED] = set()
    config.pluginmanager.register(_Recorder(config), "tests.run_guard.recorder")


class _Recorder:
    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if not _is_worker(self.config):
            self.config.stash[_TALLY].add(report)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        config = self.config
        if _is_worker(config) or exitstatus != pytest.ExitCode.OK:
            return
        tally = config.stash[_TALLY]
        unrun = sorted(config.stash[_EXPECTED] - tally.seen)
        problems = [f"skipped: {nodeid} ({why})" for nodeid, why in tally.skipped.items()]
        problems += [f"never ran: {nodeid}" for nodeid in unrun]
        if not problems:
            return
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_sep("=", "run guard: not every collected test ran", red=True)
            for line in problems[:50]:
                reporter.write_line(line)
            if len(problems) > 50:
                reporter.write_line(f"... and {len(problems) - 50} more")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED

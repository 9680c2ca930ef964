"""Where the suite's CPU goes: an opt-in plugin, ``-p tests.cpu_report`` (docs/testing.md, "Time").

Every test process measures its own CPU (``getrusage(RUSAGE_SELF)``, user + system) and its
reaped children's (``RUSAGE_CHILDREN``: the servers a fixture starts and stops, counted when
they are waited for) around each test's setup, call and teardown, and around every fixture's
setup. A fixture wider than a function (module, package, session) is billed to the file that
defines it, not to the test that happened to set it up first; the teardown after a worker's
last test (the session's fixtures: the PostgreSQL cluster, shared servers) is billed to
``<session teardown>``. Collection (imports, the test modules, schemathesis' cases) and the
process's start are reported per process.

Processes that are no child of a test process (``pg_ctl`` daemonizes the PostgreSQL server,
which reaps its own backends) are followed by the controller: every process that inherits the
run's mark (the environment variable :data:`MARK`) and whose parent does not is polled
each second, and its CPU with its reaped children's at the last poll is reported as
``escaped``.

Each process writes ``<path>.<worker>.json`` (``--cpu-report=PATH``, default
``.pytest_cache/cpu-report.json``); the controller merges them into ``PATH`` and prints the
totals and the top 20 files.
"""

from __future__ import annotations

import json
import os
import resource
import threading
import time
import uuid
from collections import defaultdict
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

import pytest

MARK = "SHENGJI_CPU_REPORT_RUN"
"""The environment variable (a fresh id per run) the run's processes inherit."""
SESSION_TEARDOWN = "<session teardown>"
TOP = 20
_CLK_TCK = os.sysconf("SC_CLK_TCK")


def _cpu() -> tuple[float, float]:
    """This process's CPU seconds and its reaped children's."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, kids.ru_utime + kids.ru_stime


def _worker(config: pytest.Config) -> str:
    workerinput: Any = getattr(config, "workerinput", None)
    return str(workerinput["workerid"]) if workerinput else "main"


def _module_of(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


class _Escaped:
    """The controller's poll of the run's processes that no test process reaps."""

    def __init__(self, mark: str) -> None:
        self.mark = mark
        self.marked: dict[int, bool] = {}
        self.roots: dict[int, dict[str, Any]] = {}
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._loop, name="cpu-report-poll", daemon=True)

    def _has_mark(self, pid: int) -> bool:
        known = self.marked.get(pid)
        if known is None:
            try:
                environ = Path(f"/proc/{pid}/environ").read_bytes()
            except OSError:
                return False
            known = f"{MARK}={self.mark}".encode() in environ.split(b"\0")
            self.marked[pid] = known
        return known

    def poll(self) -> None:
        me = os.getpid()
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            pid = int(entry.name)
            if pid == me or not self._has_mark(pid):
                continue
            try:
                stat = (entry / "stat").read_text()
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            fields = stat[stat.rindex(")") + 2 :].split()
            ppid = int(fields[1])
            if ppid == me or self._has_mark(ppid):
                continue  # reaped by a test process: counted in its children
            ticks = sum(int(f) for f in fields[11:15])
            seen = self.roots.get(pid)
            cmd = cmdline[:160] or (seen["cmd"] if seen else "")
            self.roots[pid] = {"cmd": cmd, "cpu_s": ticks / _CLK_TCK}

    def _loop(self) -> None:
        while not self.stop.wait(1.0):
            self.poll()

    def finish(self) -> list[dict[str, Any]]:
        self.stop.set()
        self.thread.join()
        self.poll()
        return sorted(self.roots.values(), key=lambda r: -float(r["cpu_s"]))


class CpuReport:
    def __init__(self, config: pytest.Config, path: Path) -> None:
        self.config = config
        self.path = path
        self.worker = _worker(config)
        self.start = _cpu()
        self.wall0 = time.monotonic()
        self.load0 = os.getloadavg()
        self.collected: tuple[float, float] | None = None
        self.items: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
        self.fixtures: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
        self.modules: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
        self.fixture_stack: list[float] = []
        self.escaped: _Escaped | None = None
        if self.worker == "main":
            mark = uuid.uuid4().hex
            os.environ[MARK] = mark
            self.escaped = _Escaped(mark)
            self.escaped.thread.start()

    # -- collection -------------------------------------------------------------------------

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.collected = _cpu()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_make_collect_report(self, collector: pytest.Collector) -> Iterator[None]:
        """A test file's collection (its import, its parametrization) billed to it."""
        before = _cpu()
        yield
        if isinstance(collector, pytest.Module):
            after = _cpu()
            where = _module_of(collector.nodeid)
            self.modules[where]["collection_s"] += sum(after) - sum(before)

    # -- fixtures -------------------------------------------------------------------------

    @pytest.hookimpl(hookwrapper=True)
    def pytest_fixture_setup(
        self, fixturedef: pytest.FixtureDef[Any], request: pytest.FixtureRequest
    ) -> Generator[None, Any, None]:
        before = _cpu()
        self.fixture_stack.append(0.0)
        yield
        after = _cpu()
        nested = self.fixture_stack.pop()
        spent = sum(after) - sum(before)
        if self.fixture_stack:
            self.fixture_stack[-1] += spent
        if fixturedef.scope == "function":
            return
        where = _fixture_file(fixturedef)
        entry = self.fixtures[f"{where}::{fixturedef.argname} ({fixturedef.scope})"]
        entry["setup_s"] += spent - nested
        entry["count"] += 1
        # Billed to its file; taken off the test whose setup ran it (see _phase).
        self.modules[where]["wide_fixtures_s"] += spent - nested
        self._wide_in_phase += spent - nested

    _wide_in_phase = 0.0

    # -- a test's phases --------------------------------------------------------------------

    def _phase(self, item: pytest.Item, phase: str, nextitem: pytest.Item | None) -> Iterator[None]:
        self._wide_in_phase = 0.0
        self._last = _cpu()
        own0, kids0 = self._last
        yield
        own1, kids1 = _cpu()
        entry = self.items[item.nodeid]
        own, kids = own1 - own0, kids1 - kids0
        entry[f"{phase}_own_s"] += own
        entry[f"{phase}_children_s"] += kids
        total = own + kids - self._wide_in_phase
        if phase == "teardown" and nextitem is None:
            self.modules[SESSION_TEARDOWN]["teardown_s"] += total
            return
        module = self.modules[_module_of(item.nodeid)]
        module[f"{phase}_s"] += total
        module["children_s"] += kids
        if phase == "call":
            module["tests"] += 1

    _last = (0.0, 0.0)

    def pytest_fixture_post_finalizer(
        self, fixturedef: pytest.FixtureDef[Any], request: pytest.FixtureRequest
    ) -> None:
        """A fixture torn down: what was spent since the last one finished (or the
        teardown began) was its finalizers'; a wide one's is billed to its file."""
        now = _cpu()
        spent = sum(now) - sum(self._last)
        self._last = now
        if fixturedef.scope == "function" or fixturedef.cached_result is None:
            return
        where = _fixture_file(fixturedef)
        self.fixtures[f"{where}::{fixturedef.argname} ({fixturedef.scope})"]["teardown_s"] += spent
        self.modules[where]["wide_fixtures_s"] += spent
        self._wide_in_phase += spent

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> Iterator[None]:
        yield from self._phase(item, "setup", item)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Iterator[None]:
        yield from self._phase(item, "call", item)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_teardown(
        self, item: pytest.Item, nextitem: pytest.Item | None
    ) -> Iterator[None]:
        yield from self._phase(item, "teardown", nextitem)

    # -- the end ----------------------------------------------------------------------------

    def _process(self) -> dict[str, Any]:
        end = _cpu()
        collected = self.collected or end
        return {
            "worker": self.worker,
            "pid": os.getpid(),
            "wall_s": time.monotonic() - self.wall0,
            "start_own_s": self.start[0],
            "collection_own_s": collected[0] - self.start[0],
            "collection_children_s": collected[1] - self.start[1],
            "total_own_s": end[0],
            "total_children_s": end[1],
        }

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        mine = {
            "process": self._process(),
            "modules": self.modules,
            "fixtures": self.fixtures,
            "items": self.items,
        }
        part = self.path.with_name(f"{self.path.name}.{self.worker}.json")
        part.write_text(json.dumps(mine, indent=1, sort_keys=True))
        if self.worker != "main":
            return
        parts = [json.loads(p.read_text()) for p in self._parts()]
        merged = _merge(parts)
        assert self.escaped is not None
        merged["escaped"] = self.escaped.finish()
        merged["load"] = [self.load0, os.getloadavg()]
        self.path.write_text(json.dumps(merged, indent=1, sort_keys=True))
        self.merged = merged

    def _parts(self) -> list[Path]:
        names = ["main", *(f"gw{n}" for n in range(_workers(self.config)))]
        return [
            p for n in names if (p := self.path.with_name(f"{self.path.name}.{n}.json")).exists()
        ]

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        merged: dict[str, Any] | None = getattr(self, "merged", None)
        if merged is None:
            return
        write = terminalreporter.write_line
        terminalreporter.write_sep("-", f"cpu report ({self.path})")
        for line in summary_lines(merged):
            write(line)


def _workers(config: pytest.Config) -> int:
    numprocesses: Any = getattr(config.option, "numprocesses", None)
    return int(numprocesses) if isinstance(numprocesses, int) else 0


def _fixture_file(fixturedef: pytest.FixtureDef[Any]) -> str:
    code = getattr(fixturedef.func, "__code__", None)
    if code is None:
        return fixturedef.baseid or "<plugin>"
    try:
        return str(Path(code.co_filename).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return f"<{Path(code.co_filename).name}>"


_NOT_ADDED = frozenset({"children_s", "collection_s"})
"""A file's figures that its total leaves out: the children are inside its phases; its
collection is reported beside (every worker collects every file)."""


def _merge(parts: list[dict[str, Any]]) -> dict[str, Any]:
    modules: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    fixtures: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    items: dict[str, dict[str, float]] = {}
    for part in parts:
        for name, figures in part["modules"].items():
            for key, value in figures.items():
                modules[name][key] += value
        for name, figures in part["fixtures"].items():
            for key, value in figures.items():
                fixtures[name][key] += value
        items.update(part["items"])
    for figures in modules.values():
        figures["total_s"] = sum(
            v for k, v in figures.items() if k.endswith("_s") and k != "children_s"
        )
    return {
        "processes": [part["process"] for part in parts],
        "modules": modules,
        "fixtures": fixtures,
        "items": items,
    }


def summary_lines(merged: dict[str, Any]) -> list[str]:
    """The totals, the processes, the top files and fixtures, the escaped processes."""
    procs = merged["processes"]
    main = next(p for p in procs if p["worker"] == "main")
    own, kids = main["total_own_s"], main["total_children_s"]  # the workers are its children
    escaped = sum(r["cpu_s"] for r in merged.get("escaped", []))
    lines = [
        f"load {merged.get('load')}; CPU-s: controller {own:.1f} + its reaped children (the "
        f"workers and theirs) {kids:.1f} + escaped {escaped:.1f} = {own + kids + escaped:.1f}"
    ]
    for p in procs:
        lines.append(
            f"  {p['worker']}: own {p['total_own_s']:.1f} children {p['total_children_s']:.1f} "
            f"start {p['start_own_s']:.1f} collection {p['collection_own_s']:.1f} "
            f"wall {p['wall_s']:.0f}"
        )
    modules = sorted(merged["modules"].items(), key=lambda kv: -kv[1]["total_s"])
    lines.append(
        f"top {TOP} files (CPU-s: total = setup + call + teardown + wide fixtures; children inside)"
    )
    for name, f in modules[:TOP]:
        lines.append(
            f"  {f['total_s']:7.1f}  {name}  (tests {int(f.get('tests', 0))}, setup "
            f"{f.get('setup_s', 0):.1f}, call {f.get('call_s', 0):.1f}, teardown "
            f"{f.get('teardown_s', 0):.1f}, wide fixtures {f.get('wide_fixtures_s', 0):.1f}, "
            f"children {f.get('children_s', 0):.1f}; collection {f.get('collection_s', 0):.1f})"
        )
    collection = sorted(merged["modules"].items(), key=lambda kv: -kv[1].get("collection_s", 0))
    lines.append("top 10 files' collection (CPU-s, all processes)")
    for name, f in collection[:10]:
        lines.append(f"  {f.get('collection_s', 0):7.1f}  {name}")
    lines.append(f"tests' total {sum(f['total_s'] for _, f in modules):.1f}")
    fixtures = sorted(merged["fixtures"].items(), key=lambda kv: -kv[1]["setup_s"])
    lines.append("top wide fixtures (setup CPU-s, count)")
    for name, f in fixtures[:10]:
        lines.append(f"  {f['setup_s']:7.1f}  x{int(f['count'])}  {name}")
    for r in merged.get("escaped", [])[:5]:
        lines.append(f"  escaped {r['cpu_s']:.1f}  {r['cmd']}")
    return lines


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--cpu-report",
        default=".pytest_cache/cpu-report.json",
        help="tests.cpu_report: where the merged report goes (each process's beside it)",
    )


def pytest_configure(config: pytest.Config) -> None:
    path = Path(str(config.getoption("--cpu-report"))).resolve()
    path.parent.mkdir(parents=True, exist_ok=True)
    config.pluginmanager.register(CpuReport(config, path), "tests.cpu_report.recorder")

"""The container build file ``infra/Dockerfile`` and ``.dockerignore`` (docs/deploy.md).

Read as text (no Docker needed): multi-stage, the final stage python slim with the
builder's virtualenv only, a non-root user, no build tools, the port of the ConfigMap,
``python -m infra.serve`` as its entrypoint; every package the wheel ships is copied in;
the build context leaves out what the image does not need and holds every source a stage
copies. docs/deploy.md shows the build command line.
"""

from __future__ import annotations

import fnmatch
import json
import re
import subprocess
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.documents import repository_yaml

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "infra" / "Dockerfile"
BUILD_TOOLS = ("gcc", "g++", "build-essential", "make", "libpq-dev", "python3-dev", "git")


@dataclass
class Stage:
    base: str
    name: str | None
    instructions: list[tuple[str, str]] = field(default_factory=list)

    def all(self, keyword: str) -> list[str]:
        return [args for kw, args in self.instructions if kw == keyword]


def _instructions(text: str) -> list[tuple[str, str]]:
    """(KEYWORD, arguments) with continuation lines joined and comments dropped."""
    joined = re.sub(r"\\\n", " ", text)
    out = []
    for raw in joined.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        keyword, _, args = line.partition(" ")
        out.append((keyword.upper(), " ".join(args.split())))
    return out


def _stages() -> tuple[dict[str, str], list[Stage]]:
    args: dict[str, str] = {}
    stages: list[Stage] = []
    for keyword, rest in _instructions(DOCKERFILE.read_text(encoding="utf-8")):
        if keyword == "ARG" and not stages:
            arg, _, default = rest.partition("=")
            args[arg] = default
        elif keyword == "FROM":
            parts = rest.split()
            base = re.sub(r"\$\{(\w+)\}", lambda m: args[m.group(1)], parts[0])
            name = parts[2] if len(parts) == 3 and parts[1].upper() == "AS" else None
            stages.append(Stage(base, name))
        else:
            assert stages, f"{keyword} before FROM"
            stages[-1].instructions.append((keyword, rest))
    return args, stages


ARGS, STAGES = _stages()
FINAL = STAGES[-1]


def test_the_build_is_multi_stage_on_python_slim() -> None:
    assert len(STAGES) >= 2
    builder = STAGES[0]
    assert builder.name is not None
    for stage in STAGES:
        assert re.fullmatch(r"python:3\.1[1-9](\.\d+)?-slim(-\w+)?", stage.base), stage.base
    assert FINAL.base == builder.base  # the venv's interpreter path is the same
    copies = FINAL.all("COPY")
    assert copies == [f"--from={builder.name} /opt/venv /opt/venv"]


def test_the_builder_installs_the_package_into_a_virtualenv() -> None:
    runs = " && ".join(STAGES[0].all("RUN"))
    assert "python -m venv" in runs
    assert re.search(r"pip --python /opt/venv/bin/python install [^&]*\.", runs)
    assert "import api.app, infra.serve, infra.cli" in runs  # fails the build when broken


def test_every_package_of_the_wheel_is_copied_into_the_builder() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    packages = {p.rstrip("*") for p in project["tool"]["setuptools"]["packages"]["find"]["include"]}
    copied = {args.split()[0] for args in STAGES[0].all("COPY")}
    assert packages <= copied
    assert {"pyproject.toml", project["project"]["readme"]} <= set(
        STAGES[0].all("COPY")[0].split()[:-1]
    )


def test_the_rule_book_is_copied_into_the_builder_and_read_there() -> None:
    # services/rulebook/*.md link to docs/rules/*.md: the wheel needs their text.
    links = sorted(p.name for p in (ROOT / "services" / "rulebook").glob("*.md"))
    assert links == ["en.md", "zh-CN.md"]
    for link in (ROOT / "services" / "rulebook").glob("*.md"):
        assert link.resolve().parent == ROOT / "docs" / "rules", link
    assert "docs/rules ./docs/rules" in STAGES[0].all("COPY")
    assert "book(x) for x in Language" in " && ".join(STAGES[0].all("RUN"))


def test_the_final_stage_has_no_build_tools() -> None:
    final_runs = " ".join(FINAL.all("RUN"))
    for tool in BUILD_TOOLS:
        assert not re.search(rf"\b{re.escape(tool)}\b", final_runs), tool
    assert "pip install" not in final_runs and "apt-get install" not in final_runs


def test_the_final_stage_runs_as_a_non_root_user() -> None:
    users = FINAL.all("USER")
    assert users, "no USER: the image would run as root"
    user = users[-1].split(":")[0]
    assert user not in {"root", "0"}
    assert f"--uid {user}" in " ".join(FINAL.all("RUN"))
    pod = repository_yaml("k8s/deployment.yaml")
    assert pod["spec"]["template"]["spec"]["securityContext"]["runAsUser"] == int(user)


def test_the_entrypoint_is_the_server_on_the_configmaps_port() -> None:
    assert json.loads(FINAL.all("ENTRYPOINT")[-1]) == ["python", "-m", "infra.serve"]
    config = repository_yaml("k8s/configmap.yaml")
    assert FINAL.all("EXPOSE") == [config["data"]["PORT"]]
    env = " ".join(FINAL.all("ENV"))
    assert "PATH=/opt/venv/bin:$PATH" in env and "HOST=0.0.0.0" in env


def _ignored(path: str) -> bool:
    """Docker's reading: the last pattern that matches decides; ``!`` re-includes."""
    patterns = [
        line.strip()
        for line in (ROOT / ".dockerignore").read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    ]
    parts = path.split("/")
    prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    ignored = False
    for pattern in patterns:
        keep = pattern.startswith("!")
        p = pattern.removeprefix("!")
        if any(
            fnmatch.fnmatch(prefix, p.removeprefix("**/")) or fnmatch.fnmatch(parts[-1], p)
            for prefix in prefixes
        ):
            ignored = not keep
    return ignored


@pytest.mark.parametrize(
    ("path", "ignored"),
    [
        (".venv/bin/python", True),
        (".git/HEAD", True),
        ("tests/conftest.py", True),
        ("var/shengji.sqlite3", True),
        ("infra/__pycache__/serve.cpython-311.pyc", True),
        ("shengji_service.egg-info/PKG-INFO", True),
        ("pyproject.toml", False),
        ("README.md", False),
        ("domain/rules/cards.py", False),
        ("infra/serve.py", False),
        ("docs/deploy.md", True),
        ("docs/rules/zh-CN.md", False),  # the rule book ships with the service
    ],
)
def test_the_build_context_leaves_out_what_the_image_does_not_need(
    path: str, ignored: bool
) -> None:
    assert _ignored(path) is ignored


def test_every_source_a_stage_copies_is_in_the_build_context() -> None:
    """What a ``COPY`` (not ``--from`` a stage) names exists, and no tracked file under it is
    left out of the build context by .dockerignore (but the build file itself): the build
    would fail, or ship an image without it."""
    sources = [
        source
        for stage in STAGES
        for args in stage.all("COPY")
        if not args.startswith("--from=")
        for source in args.split()[:-1]
    ]
    assert sources
    for source in sources:
        path = ROOT / source
        assert path.exists(), f"COPY {source}: no such file in the build context"
        shipped = subprocess.run(
            ["git", "ls-files", "--", source], cwd=ROOT, check=True, capture_output=True, text=True
        ).stdout.split()
        assert shipped, f"COPY {source}: nothing tracked to copy"
        left_out = [f for f in shipped if _ignored(f) and f != "infra/Dockerfile"]
        assert not left_out, f"COPY {source}: .dockerignore leaves out {left_out}"

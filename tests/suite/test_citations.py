"""The project's docs and comments cite only what is in the repository: its own
docs/decisions.md entries and its rule book's R-numbers — never an outside design document
("ARCHITECTURE") nor an issue number ("issue 12", "issues 4, 12", "#12"). Checked over every
tracked file, tests included."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

OUTSIDE = re.compile(r"ARCHITECTURE|\bissues?\s+#?\d+|(?<![\w&/])#\d+\b(?![\w;-])", re.IGNORECASE)
"""An outside document, an issue number, a bare ``#N`` reference (not a CSS colour,
``#111;``)."""

SELF = Path(__file__).resolve().relative_to(ROOT).as_posix()
"""This file names the patterns it looks for."""

GENERATED = frozenset({"openapi.yaml", "asyncapi.yaml"})
"""Generated from the code, which is checked itself."""


def tracked() -> list[str]:
    """Every tracked file outside ``tests/`` (``git ls-files``), else every file found."""
    try:
        out = subprocess.run(
            ["git", "ls-files"], cwd=ROOT, check=True, capture_output=True, text=True
        ).stdout.split("\n")
    except (OSError, subprocess.CalledProcessError):
        skip = {".git", ".venv", "var", "node_modules"}
        out = [
            p.relative_to(ROOT).as_posix()
            for p in ROOT.rglob("*")
            if p.is_file() and not skip & set(p.relative_to(ROOT).parts)
        ]
    return [p for p in out if p and p != SELF and p not in GENERATED]


def citations(path: str) -> list[str]:
    try:
        text = (ROOT / path).read_text(encoding="utf-8")
    except (UnicodeDecodeError, FileNotFoundError):
        return []
    return [
        f"{path}:{n}: {line.strip()[:100]}"
        for n, line in enumerate(text.splitlines(), 1)
        if OUTSIDE.search(line)
    ]


def test_no_file_cites_an_outside_document_or_an_issue() -> None:
    files = tracked()
    assert len(files) > 200, "the repository's files were not found"
    found = [c for path in files for c in citations(path)]
    assert not found, "cite docs/decisions.md or the rule book instead:\n" + "\n".join(found)


def test_the_pattern_finds_what_it_must_and_nothing_else() -> None:
    cited = [
        "(ARCHITECTURE decision 2)",
        "Issue 16's controls",
        "(issues 4, 12)",
        "see issue #7",
        "fixed in #12.",
    ]
    fine = [
        "docs/decisions.md F2",
        "R36",
        "the seat token re-issued by the organiser",
        "tournaments.md#organisers-controls",
        "&#12345;",
        "a URL https://example.com/a#1",
        "th { color: #111; border: 1px solid #999; }",
    ]
    assert all(OUTSIDE.search(text) for text in cited)
    assert not any(OUTSIDE.search(text) for text in fine)

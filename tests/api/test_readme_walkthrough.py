"""The README's "A round with curl" runs as written against a fresh server (``make serve``
as a subprocess; only the base URL changes to its port): it plays round 1 to its end —
declaring, passing on overcalls (R20), burying, leading and following — and stops there,
printing the revealed seed (``result.seed``, R35) and the verification of the deal.
Needs ``bash``, ``curl`` and ``jq``, as the README says."""

from __future__ import annotations

import json
import re
import subprocess
import urllib.request
from pathlib import Path

from tests.api.served import ROOT, served

README = ROOT / "README.md"
BASE = "B=http://127.0.0.1:8000"


def walkthrough() -> str:
    """The first ``sh`` block of the README's "A round with curl" section."""
    text = README.read_text(encoding="utf-8")
    section = text.split("### A round with curl", 1)[1]
    block = re.search(r"```sh\n(.*?)```", section, re.DOTALL)
    assert block is not None, "the README has no walkthrough block"
    return block.group(1)


def test_the_walkthrough_is_what_the_readme_says() -> None:
    script = walkthrough()
    assert script.startswith(BASE)
    assert "R18" in script and "4th seat" not in script  # R18: the first declarer deals
    assert ".result.seed" in script and "overcall" in script


def test_the_readme_walkthrough_plays_one_round(tmp_path: Path) -> None:
    script = walkthrough()
    with served(tmp_path) as base:
        run = subprocess.run(
            ["bash", "-c", script.replace(BASE, f"B={base}", 1)],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert run.returncode == 0, run.stderr
        lines = run.stdout.strip().splitlines()
        match_id = json.loads((tmp_path / "match.json").read_text())["matchId"]
        with urllib.request.urlopen(f"{base}/v1/matches/{match_id}", timeout=10) as r:
            summary = json.loads(r.read())
    assert summary["rounds"][0]["status"] == "scored"
    assert len(summary["rounds"]) <= 2  # it stopped after round 1 (round 2 may be dealt)
    seed, verified = lines[-2], json.loads(lines[-1])
    assert re.fullmatch(r'"[0-9a-f]{64}"', seed), seed  # R35: the seed, revealed
    assert verified["ok"] is True and verified["seed"] == seed.strip('"')
    commands = [json.loads(line) for line in lines[1:-2] if line.startswith('{"version"')]
    assert commands, run.stdout
    refused = [c for c in commands if c["detail"] is not None]
    assert not refused, refused  # every move the walkthrough sends is accepted

"""The browser tests install Chromium when it is missing (tests/browser.py): on a fresh
machine several test workers reach that point at once, and two apt-gets at once fail on
dpkg's lock. One worker installs while the others wait and then find what it installed."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

FAKE_APT = """#!{sh}
# Fails as dpkg does when another apt-get runs; "installs" chromium, chromedriver and the font.
mkdir "{busy}" 2>/dev/null || {{ echo "E: Could not get lock" >&2; exit 100; }}
sleep 0.5
for tool in chromium chromedriver; do
  printf '#!/bin/sh\\n' > "{bin}/$tool"; chmod +x "{bin}/$tool"
done
printf 'font' > "{font}"
rmdir "{busy}"
"""

CALL = "from tests.browser import ensure_chromium; print(ensure_chromium())"


def test_workers_needing_chromium_at_once_install_it_once_and_all_find_it(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    apt = bin_dir / "apt-get"
    font = tmp_path / "font.ttc"  # not the machine's: a fresh machine has none yet
    apt.write_text(
        FAKE_APT.format(sh=shutil.which("sh"), busy=tmp_path / "busy", bin=bin_dir, font=font)
    )
    apt.chmod(apt.stat().st_mode | stat.S_IXUSR)
    tools = tmp_path / "tools"  # what the fake apt-get runs, and no chromium the machine has
    tools.mkdir()
    for tool in ("sh", "mkdir", "sleep", "chmod", "rmdir"):
        (tools / tool).symlink_to(shutil.which(tool) or f"/bin/{tool}")
    env = {
        **os.environ,
        "PATH": f"{bin_dir}:{tools}",
        "TMPDIR": str(tmp_path),
        "SHENGJI_TEST_FONT": str(font),
    }
    root = Path(__file__).resolve().parents[2]
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", CALL],
            cwd=root,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    answers = [worker.communicate(timeout=120) for worker in workers]
    assert [worker.returncode for worker in workers] == [0, 0, 0], answers
    assert all(str(bin_dir / "chromium") in out for out, _ in answers), answers

"""Write the director's-room screenshots in docs/ (PNG): the display page of a boards event
on a 1920×1080 and a 1280×720 projector, and a traveller, in English and Chinese.

    .venv/bin/python scripts/director_screenshots.py

It serves the app as ``make serve`` does (``python -m infra.serve``, SQLite in a temporary
folder, a free loopback port), runs a 10-team boards event of bots through round 1 (two
boards), schedules round 2 with a 90-minute deadline and photographs the pages with the
headless Chromium of the browser tests (``tests/browser.py`` installs it when missing).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
TEAMS = ("Pandas", "Dragons of the Eastern Riverside Bridge and Tractor Society", "Cranes",
         "Tigers", "Lotus", "Jade", "Phoenix", "Bamboo", "Plum Blossom", "Golden Carp")  # fmt: skip
SIZES = ((1920, 1080), (1280, 720))


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _wait(check: Any, what: str, seconds: float = 300) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out waiting for {what}")
        time.sleep(0.1)


def _event(http: Any) -> str:
    """Round 1 played (the one person's moves made here), round 2 in play: the person's
    table waits for them."""
    from tests.api.rest import choose  # noqa: PLC0415 - the tests' player, once the path is set

    bots = [{"name": "bot 1", "kind": "heuristic"}, {"name": "bot 2", "kind": "random"}]
    person = [{"name": "Ann", "kind": "human"}, bots[0]]
    body = {
        "name": "Thursday boards · 周四复式赛",
        "teams": [
            {"name": name, "players": person if n == 0 else bots} for n, name in enumerate(TEAMS)
        ],
        "format": "swiss",
        "swissRounds": 3,
        "matchLength": 2,
        "deals": "boards",
        "roundDeadlineS": 5400,
    }
    made = http.post("/v1/tournaments", json=body).json()
    tid, org = made["tournamentId"], {"Authorization": f"Bearer {made['organiserToken']}"}
    scheduled = http.post(f"/v1/tournaments/{tid}/rounds", headers=org).json()
    seat = scheduled["seatTokens"][0]
    table = next(t for t in scheduled["round"]["tables"] if 0 in (t["firstTeam"], t["secondTeam"]))
    ann = {"Authorization": f"Bearer {seat['token']}"}
    view_url = f"/v1/matches/{table['matchId']}/view"

    def completed() -> bool:
        view = http.get(view_url, headers=ann).json()
        choice = None if view["matchFinished"] else choose(view)
        if choice is not None:
            action, cards = choice
            http.post(
                f"/v1/matches/{table['matchId']}/actions/{action}",
                json={"cards": cards},
                headers=ann,
            )
            return False
        http.post(f"/v1/tournaments/{tid}/results/collect", headers=org)
        return bool(http.get(f"/v1/tournaments/{tid}").json()["rounds"][0]["status"] == "completed")

    _wait(completed, "round 1 to complete")
    http.post(f"/v1/tournaments/{tid}/rounds", headers=org)
    return str(tid)


def main() -> int:
    sys.path.insert(0, str(ROOT))
    import httpx  # noqa: PLC0415 - the dev dependencies, once the path is set

    from tests.browser import chromium  # noqa: PLC0415

    folder = Path(tempfile.mkdtemp(prefix="screenshots-"))
    port = _port()
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "PERSISTENCE"}}
    env.update(HOST="127.0.0.1", PORT=str(port), PERSISTENCE="sqlite", LOG_LEVEL="WARNING",
               SQLITE_PATH=str(folder / "events.sqlite3"), RATE_LIMIT_PER_MINUTE="0")  # fmt: skip
    server = subprocess.Popen([sys.executable, "-m", "infra.serve"], cwd=ROOT, env=env)
    base = f"http://127.0.0.1:{port}"
    try:
        with httpx.Client(base_url=base, timeout=30) as http:
            _wait(lambda: _ready(http), "the server")
            tid = _event(http)
        with chromium(1920, 1080) as driver:
            for width, height in SIZES:
                driver.execute_cdp_cmd(
                    "Emulation.setDeviceMetricsOverride",
                    {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
                )
                for lang in ("en", "zh-CN"):
                    driver.get(f"{base}/tournaments/{tid}?lang={lang}")
                    time.sleep(3)  # the bots' tables move on; the person's waits
                    driver.execute_script("shengjiDisplay.stop(); shengjiDisplay.relayout();")
                    for page in range(driver.execute_script("return shengjiDisplay.pages();")):
                        driver.execute_script(f"shengjiDisplay.show({page});")
                        name = f"display-{width}x{height}-{lang}-{page + 1}.png"
                        driver.save_screenshot(str(DOCS / name))
                        print("wrote", name)
            driver.execute_cdp_cmd(
                "Emulation.setDeviceMetricsOverride",
                {"width": 1280, "height": 720, "deviceScaleFactor": 1, "mobile": False},
            )
            for lang in ("en", "zh-CN"):
                driver.get(f"{base}/tournaments/{tid}/rounds/1/boards/1?lang={lang}")
                driver.save_screenshot(str(DOCS / f"traveller-{lang}.png"))
                print(f"wrote traveller-{lang}.png")
    finally:
        server.terminate()
        server.wait(30)
    return 0


def httpx_error() -> type[Exception]:
    import httpx  # noqa: PLC0415 - the dev dependencies, once the path is set

    return httpx.TransportError


def _ready(http: Any) -> bool:
    try:
        return bool(http.get("/readyz").status_code == 200)
    except httpx_error():  # not listening yet
        return False


if __name__ == "__main__":
    raise SystemExit(main())

"""The director's display page in a real browser (headless Chromium, Debian's package,
driven by Selenium; tests/browser.py installs it): the rendered standings rows equal the
JSON standings; a table played to its end over HTTP changes the page without a reload
(the display stream, R36); the page reads in Chinese; the pairing sheet prints to PDF.

``DISPLAY_SCREENSHOTS=1`` also writes docs/display-en.png and docs/display-zh-CN.png."""

from __future__ import annotations

import base64
import os
import time
from pathlib import Path
from typing import Any, cast

import httpx
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from tests.api.rest import Table, auth, choose
from tests.api.served import ROOT, served_here
from tests.browser import chromium


def people(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "players": [{"name": f"{name}-a", "kind": "human"}, {"name": f"{name}-b", "kind": "human"}],
    }


def bots(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "players": [
            {"name": f"{name}-a", "kind": "heuristic"},
            {"name": f"{name}-b", "kind": "heuristic"},
        ],
    }


def step(table: Table) -> bool:
    """One move by a seat its view offers one to (a tournament table is closed to
    spectators while its round is in play, R36: only its seats read it)."""
    for seat in range(4):
        choice = choose(table.view(seat))
        if choice is not None:
            r = table.act(seat, *choice)
            # 409: the clock moved the deal on between the view and the move (a window
            # closed): read the views again
            assert r.status_code in (200, 409), r.text
            return True
    return False


READ_STANDINGS = """return Array.from(document.querySelectorAll('#standings tbody tr'))
    .map(r => [+r.dataset.rank, +r.dataset.team, +r.dataset.matchPoints]);"""
READ_STATUS = "return document.querySelector(arguments[0]).dataset.status;"


def rendered_standings(driver: Any) -> list[tuple[int, int, int]]:
    """The standings rows as rendered now (one script: the live part may be replaced
    between two reads of an element)."""
    return [(r[0], r[1], r[2]) for r in driver.execute_script(READ_STANDINGS)]


def rendered_status(driver: Any, row: str) -> str:
    status: str = driver.execute_script(READ_STATUS, row)
    return status


def same_standings(driver: Any, http: httpx.Client, tid: str) -> bool:
    """The rendered rows equal the JSON standings (read after: the page may lag a frame)."""
    return rendered_standings(driver) == json_standings(http, tid)


def json_standings(http: httpx.Client, tid: str) -> list[tuple[int, int, int]]:
    lines = http.get(f"/v1/tournaments/{tid}/standings").json()["standings"]
    return [(s["rank"], s["team"], s["matchPoints"]) for s in lines]


def test_the_display_page_follows_a_table_to_its_end_without_a_reload(tmp_path: Path) -> None:
    """R36: what the projector shows is the standings as served, live."""
    with (
        served_here(tmp_path, DECLARE_MS="500") as base,
        httpx.Client(base_url=base, timeout=30) as http,
        chromium(1600, 900) as driver,
    ):
        body = {
            "name": "Club night",
            "teams": [people("Alpha"), bots("Bravo"), people("Charlie"), bots("Delta")],
            "format": "swiss",
            "swissRounds": 2,
            "matchLength": 1,
            "roundDeadlineS": 5400,
        }
        created = http.post("/v1/tournaments", json=body).json()
        tid, org = created["tournamentId"], auth(created["organiserToken"])
        scheduled = http.post(f"/v1/tournaments/{tid}/rounds", headers=org).json()
        human = next(
            t for t in scheduled["round"]["tables"] if {t["firstTeam"], t["secondTeam"]} == {0, 2}
        )
        tokens = {s["seat"]: s["token"] for s in scheduled["seatTokens"]}
        assert sorted(tokens) == [0, 1, 2, 3]

        driver.get(f"{base}/tournaments/{tid}")
        WebDriverWait(driver, 20).until(
            lambda d: d.find_elements(By.CSS_SELECTOR, "#tables tbody tr")
        )
        driver.execute_script("window.__sameLoad = 'yes';")
        assert driver.find_element(By.TAG_NAME, "h1").text.startswith("Club night")
        WebDriverWait(driver, 30).until(lambda d: same_standings(d, http, tid))
        row = f"#tables tr[data-table='{human['table']}']"
        assert rendered_status(driver, row) == "playing"
        clock = driver.execute_script("return document.getElementById('clock').textContent;")
        assert "Standings" in driver.page_source and clock.strip()  # one read: frames replace it

        table = Table(cast("Any", http), human["matchId"], "", [tokens[s] for s in range(4)])
        deadline = time.monotonic() + 120
        while not table.view(0)["matchFinished"]:
            assert time.monotonic() < deadline, "the table did not end"
            if not step(table):
                time.sleep(0.1)  # the deal or a declaring window runs on the clock
        http.post(f"/v1/tournaments/{tid}/results/collect", headers=org)

        WebDriverWait(driver, 30).until(lambda d: rendered_status(d, row) == "finished")
        assert driver.execute_script("return window.__sameLoad;") == "yes"  # no reload
        WebDriverWait(driver, 30).until(lambda d: same_standings(d, http, tid))
        assert any(mp > 0 for _, _, mp in rendered_standings(driver))
        if os.environ.get("DISPLAY_SCREENSHOTS"):
            driver.save_screenshot(str(ROOT / "docs" / "display-en.png"))

        driver.get(f"{base}/tournaments/{tid}?lang=zh-CN")
        WebDriverWait(driver, 20).until(lambda d: d.find_elements(By.ID, "standings"))
        assert "排名" in driver.page_source and "牌桌" in driver.page_source
        shot = driver.get_screenshot_as_png()
        assert shot[:8] == b"\x89PNG\r\n\x1a\n"
        if os.environ.get("DISPLAY_SCREENSHOTS"):
            (ROOT / "docs" / "display-zh-CN.png").write_bytes(shot)

        driver.get(f"{base}/tournaments/{tid}/rounds/1/pairings")
        names = [e.text for e in driver.find_elements(By.CSS_SELECTOR, "#pairings tbody tr")]
        assert any("Alpha" in n and "Alpha-a" in n for n in names)
        pdf = base64.b64decode(driver.print_page())
        assert pdf[:5] == b"%PDF-"

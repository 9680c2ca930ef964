"""The display page fits the room (docs/tournaments.md, "The display in the room"): on a
1920×1080 and a 1280×720 projector, with 10, 24 and 40 teams of long names, no page of
its rotation overflows the viewport (``scrollWidth``/``scrollHeight`` within it), and
every team's standings row and every table's row is shown on some page. One served app
and one headless Chromium for the module; the rotation is driven by the page's own hook
(``window.shengjiDisplay``), never by waiting on its timer. The tables' clocks count down,
and a table near its deadline stands out."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from tests.api.served import served_here
from tests.browser import chromium

SIZES = ((1920, 1080), (1280, 720))
COUNTS = (10, 24, 40)
LONG = "Shanghai Riverside Tractor Club Second Team Wednesday Evening"


def people(name: str) -> dict[str, Any]:
    return {"name": name, "players": [{"name": f"{name[:12]}-a"}, {"name": f"{name[:12]}-b"}]}


def event(http: httpx.Client, teams: int, deadline_s: int = 5400) -> tuple[str, dict[str, str]]:
    """A Swiss of ``teams`` people's teams (nothing plays by itself), a requested bye, a
    withdrawal in round 1 and the round scheduled."""
    body = {
        "name": f"{teams} teams · {LONG}",
        "teams": [people(f"{LONG} {n:02d}") for n in range(teams)],
        "format": "swiss",
        "swissRounds": 3,
        "matchLength": 1,
        "roundDeadlineS": deadline_s,
    }
    made = http.post("/v1/tournaments", json=body)
    assert made.status_code == 201, made.text
    tid = made.json()["tournamentId"]
    org = {"Authorization": f"Bearer {made.json()['organiserToken']}"}
    bye = {"team": 1, "round": 1, "reason": "travelling"}
    assert http.post(f"/v1/tournaments/{tid}/byes", json=bye, headers=org).status_code == 200
    assert http.post(f"/v1/tournaments/{tid}/rounds", headers=org).status_code in (200, 201)
    gone = {"reason": "went home"}
    leaving = min(4, teams - 1)
    r = http.post(f"/v1/tournaments/{tid}/teams/{leaving}/withdraw", json=gone, headers=org)
    assert r.status_code == 200, r.text
    return tid, org


@pytest.fixture(scope="module")
def room(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Any, dict[int, str]]]:
    folder: Path = tmp_path_factory.mktemp("room")
    with (
        served_here(folder) as base,
        httpx.Client(base_url=base, timeout=30) as http,
        chromium(1920, 1080) as driver,
    ):
        events = {n: event(http, n)[0] for n in COUNTS}
        yield base, driver, events


PAGE_STATE = """
const d = document.documentElement, seen = (sel) => Array.from(document.querySelectorAll(sel))
  .filter(e => e.offsetParent !== null);
const panels = seen('.panel');
return {
  width: window.innerWidth, height: window.innerHeight,
  scrollWidth: d.scrollWidth, scrollHeight: d.scrollHeight,
  bodyWidth: document.body.scrollWidth, bodyHeight: document.body.scrollHeight,
  panelsFit: panels.every(p => p.scrollHeight <= p.clientHeight + 1
    && p.scrollWidth <= p.clientWidth + 1),
  teams: seen('#standings tbody tr[data-team]').map(r => +r.dataset.team),
  tables: seen('#tables tbody tr[data-table]').map(r => +r.dataset.table),
  byes: seen('#tables tbody tr[data-bye]').map(r => r.dataset.bye),
  names: seen('#standings td.name').map(td => [td.title, getComputedStyle(td).whiteSpace,
    getComputedStyle(td).textOverflow, td.scrollWidth > td.clientWidth]),
};"""


def viewport(driver: Any, width: int, height: int) -> None:
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
    )


def open_display(driver: Any, base: str, tid: str, lang: str = "en") -> int:
    """The display page loaded, its timer stopped, laid out; its number of pages."""
    driver.get(f"{base}/tournaments/{tid}?lang={lang}")
    WebDriverWait(driver, 20).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#standings"))
    pages: int = driver.execute_script(
        "shengjiDisplay.stop(); shengjiDisplay.relayout(); return shengjiDisplay.pages();"
    )
    return pages


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("teams", COUNTS)
def test_the_display_fits_the_projector_and_shows_every_row_in_its_rotation(
    room: tuple[str, Any, dict[int, str]], teams: int, size: tuple[int, int]
) -> None:
    base, driver, events = room
    viewport(driver, *size)
    pages = open_display(driver, base, events[teams])
    shown_teams: set[int] = set()
    shown_tables: set[int] = set()
    byes: set[str] = set()
    for page in range(pages):
        state = driver.execute_script(f"shengjiDisplay.show({page});" + PAGE_STATE)
        assert (state["width"], state["height"]) == size
        for w, h in (("scrollWidth", "scrollHeight"), ("bodyWidth", "bodyHeight")):
            assert state[w] <= size[0] and state[h] <= size[1], (page, state)
        assert state["panelsFit"], (teams, size, page)
        shown_teams.update(state["teams"])
        shown_tables.update(state["tables"])
        byes.update(state["byes"])
        for title, white_space, overflow, cut in state["names"]:  # one line, cut with "…"
            assert title.startswith(LONG) and white_space == "nowrap" and overflow == "ellipsis"
            assert cut or size[0] == 1920
    assert shown_teams == set(range(teams)), f"{teams} teams at {size}: rows never shown"
    assert shown_tables == set(range(1, (teams - 1) // 2 + 1))
    assert byes == {"requested", "pairing"} if teams % 2 == 0 else "requested" in byes
    print(f"\n{teams} teams at {size[0]}x{size[1]}: {pages} page(s) in the rotation")


def seconds(clock: str) -> int:
    """``h:mm:ss`` in seconds."""
    match = re.fullmatch(r"(\d+):(\d\d):(\d\d)", clock)
    assert match is not None, clock
    h, m, s = (int(g) for g in match.groups())
    return h * 3600 + m * 60 + s


def test_the_display_heads_its_columns_and_times_each_table(
    room: tuple[str, Any, dict[int, str]],
) -> None:
    base, driver, events = room
    viewport(driver, 1280, 720)
    open_display(driver, base, events[10])
    heads = driver.execute_script(
        "return Array.from(document.querySelectorAll('#tables thead th')).map(t => t.textContent);"
    )
    assert "Levels gained" in heads and "Level reached" in heads and "Levels" not in heads
    clocks = driver.execute_script(
        "return Array.from(document.querySelectorAll('td.tclock')).map(t => t.textContent);"
    )
    # the round's 90 minutes, less what the module's tests took since it began (minutes)
    assert clocks and all(c == "–" or 3600 < seconds(c) <= 5400 for c in clocks), clocks
    big = driver.execute_script("return document.getElementById('clock').textContent;")
    assert 3600 < seconds(big.strip()) <= 5400, big
    withdrawn = driver.execute_script(
        "return Array.from(document.querySelectorAll('#standings tr[data-withdrawn]'))"
        ".map(r => +r.dataset.team);"
    )
    assert withdrawn == [4]

    open_display(driver, base, events[10], "zh-CN")
    heads = driver.execute_script(
        "return Array.from(document.querySelectorAll('#tables thead th')).map(t => t.textContent);"
    )
    assert "升级数" in heads and "当前级别" in heads


def test_a_table_near_its_deadline_stands_out(
    room: tuple[str, Any, dict[int, str]], tmp_path: Path
) -> None:
    base, driver, _ = room
    with httpx.Client(base_url=base, timeout=30) as http:
        tid, _ = event(http, 4, deadline_s=200)  # inside the 300 s that make a table stand out
    viewport(driver, 1280, 720)
    open_display(driver, base, tid)
    WebDriverWait(driver, 5).until(
        lambda d: (
            d.execute_script(
                "return document.querySelectorAll('#tables tr.near, #tables tr.over').length;"
            )
            >= 1
        )
    )

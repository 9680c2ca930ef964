"""The director's pages mark what is not a plain result (docs/tournaments.md, "The
director's room"; docs/decisions.md D-hidden): a corrected result — showing the corrected
figures, not the played ones —, a withdrawn team, a forfeit, a requested bye apart from the
pairing's bye, and the requested bye of the published next pairing — on the display (its
data and its page), the crosstable (data and page), the pairing sheets (page, text, CSV)
and the published preview, in English and in Chinese.

One Swiss of eight bot teams: team 7 asks to sit out round 1 (seven teams: three tables
and the pairing's bye), a team of table 3 withdraws while round 1 is played (its table is
forfeited), the bots play the other tables, the organiser corrects table 1's result; then
a team asks to sit out round 2 and round 2's pairing is published.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from api.tournaments.page_words import WORDS
from infra.settings import Settings
from infra.store import build_service
from services.game import GameService
from tests.api.rest import Json, auth, client, settle
from tests.conftest import FakeClock, FixedSeeds

BOTS = ({"name": "h", "kind": "heuristic"}, {"name": "r", "kind": "random"})
CORRECTED = {"levels": [0, 3], "points": [5, 155]}
LANGS = ("en", "zh-CN")


@dataclass(frozen=True)
class Scene:
    url: str
    page: str
    names: list[str]
    corrected: Json
    """Round 1's table 1 (its result corrected): firstTeam, secondTeam, matchId."""
    forfeited: Json
    """Round 1's table 3 (a team withdrew from it)."""
    withdrawn: int
    pairing_bye: int
    requested: int
    """The team that sat out round 1 at its request."""
    next_requested: int
    """The team that asked to sit out round 2 (its pairing published)."""


@pytest.fixture(scope="module")
def store() -> Iterator[GameService]:
    service = build_service(Settings(backend="popo"), clock=FakeClock(), seeds=FixedSeeds())
    try:
        yield service
    finally:
        service.close()


@pytest.fixture(scope="module")
def c(store: GameService) -> Iterator[TestClient[Litestar]]:
    with client(store) as test_client:
        yield test_client


def ok(r: Any, status: int = 200) -> Any:
    assert r.status_code == status, r.text
    return r.json()


@pytest.fixture(scope="module")
def scene(c: TestClient[Litestar], store: GameService) -> Scene:
    names = [f"B{i}" for i in range(8)]
    teams = [{"name": n, "players": list(BOTS)} for n in names]
    body = {"name": "marks", "teams": teams, "format": "swiss", "swissRounds": 3, "matchLength": 1}
    made = ok(c.post("/v1/tournaments", json=body), 201)
    url, org = f"/v1/tournaments/{made['tournamentId']}", auth(made["organiserToken"])
    bye = {"team": 7, "round": 1, "reason": "a wedding"}
    ok(c.post(f"{url}/byes", json=bye, headers=org))
    c.app.state.bots.pause()  # nothing is played before the withdrawal
    state = ok(c.post(f"{url}/rounds", headers=org), 201)["round"]
    assert len(state["tables"]) == 3 and state["requestedByes"] == [7]
    first, _, third = state["tables"]
    withdrawn = third["firstTeam"]
    gone = {"reason": "gone home"}
    ok(c.post(f"{url}/teams/{withdrawn}/withdraw", json=gone, headers=org))
    c.app.state.bots.resume()
    settle(c)
    ok(c.post(f"{url}/results/collect", headers=org))
    played = ok(c.get(f"{url}/rounds/1"))
    assert played["status"] == "completed", played
    before = played["tables"][0]["result"]
    assert (before["levels"], before["points"]) != (CORRECTED["levels"], CORRECTED["points"])
    fix = {"winner": first["secondTeam"], **CORRECTED, "by": "TD", "reason": "misread"}
    ok(c.post(f"{url}/rounds/1/tables/1/correction", json=fix, headers=org))
    following = next(t for t in range(7) if t not in (withdrawn, state["bye"]))
    later = {"team": following, "round": 2, "reason": "a funeral"}
    ok(c.post(f"{url}/byes", json=later, headers=org))
    ok(c.post(f"{url}/publish", headers=org))
    return Scene(
        url, url.replace("/v1", ""), names, first, third, withdrawn, state["bye"], 7, following
    )


# -- what each surface shows -------------------------------------------------------------------


def display(c: TestClient[Litestar], s: Scene) -> Json:
    body: Json = ok(c.get(f"{s.url}/display"))
    return body


def progress(c: TestClient[Litestar], s: Scene, table: int) -> Json:
    found: Json = next(t for t in display(c, s)["tables"] if t["table"] == table)
    return found


def cells(c: TestClient[Litestar], s: Scene, team: int) -> Json:
    lines = ok(c.get(f"{s.url}/crosstable"))["lines"]
    line: Json = next(x for x in lines if x["team"] == team)
    return line


def html(c: TestClient[Litestar], path: str, lang: str) -> str:
    r = c.get(f"{path}?lang={lang}")
    assert r.status_code == 200, r.text
    return r.text


def row(page: str, attribute: str, value: int) -> str:
    """The table row of ``page`` whose ``data-<attribute>`` is ``value``."""
    found = re.search(rf'<tr data-{attribute}="{value}"[^>]*>(.*?)</tr>', page, re.S)
    assert found is not None, f"no row data-{attribute}={value}"
    return found.group(1)


def rows_of(page: str, section: str) -> str:
    found = re.search(rf'<table id="{section}">(.*?)</table>', page, re.S)
    assert found is not None, section
    return found.group(1)


Check = Callable[[TestClient[Litestar], Scene], bool]


def on_display_data() -> dict[str, Check]:
    return {
        "a corrected result shows the corrected figures, not the played ones": lambda c, s: (
            (p := progress(c, s, 1))["corrected"]
            and p["resultLevels"] == CORRECTED["levels"]
            and p["resultPoints"] == CORRECTED["points"]
            and p["attackerPoints"] is None
            and p["levels"] is None
        ),
        "a forfeit": lambda c, s: progress(c, s, 3)["forfeit"],
        "a withdrawn team": lambda c, s: display(c, s)["withdrawn"] == [s.withdrawn],
        "a requested bye apart from the pairing's": lambda c, s: (
            [(b["team"], b["kind"]) for b in display(c, s)["byeLines"]]
            == [(s.pairing_bye, "pairing"), (s.requested, "requested")]
        ),
        "the published pairing's requested bye": lambda c, s: (
            display(c, s)["nextRequestedByes"] == [s.names[s.next_requested]]
        ),
    }


def on_page(lang: str) -> dict[str, Check]:
    w = WORDS[lang]
    return {
        "display: a corrected result, with its figures": lambda c, s: (
            w["corrected"] in (r := row(html(c, s.page, lang), "table", 1))
            and "5 / 155" in r
            and "+0 / +3" in r
        ),
        "display: a forfeit": lambda c, s: w["forfeit"] in row(html(c, s.page, lang), "table", 3),
        "display: a withdrawn team": lambda c, s: (
            w["withdrawn"] in row(html(c, s.page, lang), "team", s.withdrawn)
        ),
        "display: a requested bye": lambda c, s: (
            f"{w['requested_bye']}: {s.names[s.requested]}" in html(c, s.page, lang)
            and f"{w['bye']}: {s.names[s.pairing_bye]}" in html(c, s.page, lang)
        ),
        "display: the published pairing's requested bye": lambda c, s: (
            f"{w['requested_bye']}: {s.names[s.next_requested]}"
            in rows_of(html(c, s.page, lang), "next")
        ),
        "crosstable: a corrected result": lambda c, s: (
            w["corrected"]
            in row(html(c, f"{s.page}/crosstable", lang), "team", s.corrected["firstTeam"])
        ),
        "crosstable: a forfeit": lambda c, s: (
            w["forfeit"] in row(html(c, f"{s.page}/crosstable", lang), "team", s.withdrawn)
        ),
        "crosstable: a withdrawn team": lambda c, s: (
            w["withdrawn"] in row(html(c, f"{s.page}/crosstable", lang), "team", s.withdrawn)
        ),
        "crosstable: a requested bye": lambda c, s: (
            w["requested_bye"] in row(html(c, f"{s.page}/crosstable", lang), "team", s.requested)
            and w["requested_bye"]
            not in row(html(c, f"{s.page}/crosstable", lang), "team", s.pairing_bye)
        ),
        "pairing sheet: a corrected result, with its figures": lambda c, s: (
            w["corrected"] in (r := row(html(c, f"{s.page}/rounds/1/pairings", lang), "table", 1))
            and '<span class="box">0</span>' in r
            and '<span class="box">3</span>' in r
        ),
        "pairing sheet: a forfeit and the withdrawn team": lambda c, s: (
            w["forfeit"] in (r := row(html(c, f"{s.page}/rounds/1/pairings", lang), "table", 3))
            and w["withdrawn"] in r
        ),
        "pairing sheet: a requested bye": lambda c, s: (
            f"{w['requested_bye']}: {s.names[s.requested]}"
            in html(c, f"{s.page}/rounds/1/pairings", lang)
        ),
    }


def on_sheets_and_preview() -> dict[str, Check]:
    return {
        "text sheet: the requested bye apart from the pairing's": lambda c, s: (
            f"Bye (requested)  {s.names[s.requested]}"
            in (text := c.get(f"{s.url}/rounds/1/sheet").text)
            and f"Bye              {s.names[s.pairing_bye]}" in text
        ),
        "text sheet: the withdrawn team": lambda c, s: (
            f"{s.names[s.withdrawn]} (withdrawn)" in c.get(f"{s.url}/rounds/1/sheet").text
        ),
        "CSV sheet: each bye's kind": lambda c, s: (
            sorted(
                (r["first_team"], r["bye"])
                for r in csv.DictReader(
                    io.StringIO(c.get(f"{s.url}/rounds/1/sheet?format=csv").text)
                )
                if r["table"] == "bye"
            )
            == sorted([(str(s.pairing_bye), "pairing"), (str(s.requested), "requested")])
        ),
        "the published preview's requested bye": lambda c, s: (
            ok(c.get(f"{s.url}/preview"))["requestedByes"] == [s.next_requested]
        ),
        "crosstable data: a corrected result, a forfeit, a withdrawn team": lambda c, s: (
            cells(c, s, s.corrected["firstTeam"])["rounds"][0]["corrected"]
            and cells(c, s, s.withdrawn)["rounds"][0]["forfeit"]
            and cells(c, s, s.withdrawn)["withdrawn"]
            and cells(c, s, s.requested)["rounds"][0]["outcome"] == "R"
        ),
    }


CASES: dict[str, Check] = {
    **{f"display data: {k}": v for k, v in on_display_data().items()},
    **{f"{lang} {k}": v for lang in LANGS for k, v in on_page(lang).items()},
    **on_sheets_and_preview(),
}


@pytest.mark.parametrize("case", list(CASES))
def test_r36_the_directors_pages_mark_corrections_withdrawals_forfeits_and_byes(
    c: TestClient[Litestar], scene: Scene, case: str
) -> None:
    assert CASES[case](c, scene), case

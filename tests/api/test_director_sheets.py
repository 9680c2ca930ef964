"""The sheets a director hands out (docs/tournaments.md, "Sheets a director hands out"):
every sheet names the event, the round and the time printed, repeated at the top of each
printed page, and numbers its printed pages; the pairing sheet names the player in each
seat; the crosstable carries the standings' tie-break columns in their order."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from infra.settings import Settings
from infra.store import build_service
from services.game import GameService
from tests.api.rest import auth, client
from tests.conftest import FakeClock, FixedSeeds


@pytest.fixture
def c() -> Iterator[TestClient[Litestar]]:
    service: GameService = build_service(
        Settings(backend="popo"), clock=FakeClock(), seeds=FixedSeeds()
    )
    try:
        with client(service) as test_client:
            yield test_client
    finally:
        service.close()


def test_every_sheet_is_headed_numbered_and_names_each_seat(c: TestClient[Litestar]) -> None:
    teams = [
        {"name": f"Team {n}", "players": [{"name": f"P{n}a"}, {"name": f"P{n}b"}]} for n in range(6)
    ]
    body = {
        "name": "Club night",
        "teams": teams,
        "format": "swiss",
        "swissRounds": 3,
        "matchLength": 1,
        "roundDeadlineS": 3600,
        "tiebreaks": ["wins", "buchholz"],
    }
    made = c.post("/v1/tournaments", json=body).json()
    tid, org = made["tournamentId"], auth(made["organiserToken"])
    scheduled = c.post(f"/v1/tournaments/{tid}/rounds", headers=org).json()["round"]

    sheets = {
        "pairings": f"/tournaments/{tid}/rounds/1/pairings",
        "scoresheets": f"/tournaments/{tid}/rounds/1/scoresheets",
        "crosstable": f"/tournaments/{tid}/crosstable",
    }
    for lang, printed in (("en", "Printed"), ("zh-CN", "打印时间")):
        for name, url in sheets.items():
            html = c.get(f"{url}?lang={lang}").text
            assert "counter(page)" in html and "counter(pages)" in html, name  # page n / N
            heads = re.findall(r'<tr class="print-head"><th colspan="99">([^<]*)</th>', html)
            assert heads, f"{name}: no header repeated on each printed page"
            for head in heads:
                assert head.startswith("Club night") and printed in head, (name, head)
                assert re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", head), head
            assert "1" in heads[0]  # the round
            assert html.count(printed) > len(heads), f"{name}: the time printed on screen too"

    html = c.get(sheets["pairings"]).text
    for table in scheduled["tables"]:
        row = re.search(rf'<tr data-table="{table["table"]}">(.*?)</tr>', html, re.S)
        assert row is not None
        seats = dict(re.findall(r'<td data-seat="(\d)" title="[^"]*">([^<]+)</td>', row.group(1)))
        first, second = table["firstTeam"], table["secondTeam"]
        parity = table["firstTeamSeats"][0]
        expected = {
            str(parity): f"P{first}a",
            str(parity + 2): f"P{first}b",
            str(1 - parity): f"P{second}a",
            str(3 - parity): f"P{second}b",
        }
        assert seats == expected, (table, seats)

    cross = c.get(sheets["crosstable"]).text
    assert re.findall(r'data-tiebreak="(\w+)"', cross) == ["wins", "buchholz"]
    lines = c.get(f"/v1/tournaments/{tid}/crosstable").json()
    assert lines["tiebreaks"] == ["wins", "buchholz"]
    assert all(len(line["tiebreakValues"]) == 2 for line in lines["lines"])

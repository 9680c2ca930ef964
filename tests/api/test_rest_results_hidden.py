"""A finished table's result stays hidden while the other tables of its round still play
the same deals (RULES R36; docs/decisions.md D-hidden).

Two tables per tournament round, one of people (ours: nobody moves, so it never ends) and
one of bots (theirs: played to its end by the bots, its result collected). While ours
plays, theirs's result — its attackers' points, outcome, levels, dealers — is read by
nobody: not anonymously, not by our own seats, on any read of the service that carries
a round's results. Once the round completes (ours handed in on paper), every one of those
reads shows it. One table per read, for a duplicate event of boards and for one of shared
seeds (every table holds the same hands seat for seat), each reader.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any
from uuid import UUID

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from api.tournaments import live, pages
from domain.tournament.tournament import Tournament
from infra.settings import Settings
from infra.store import build_service
from services.game import GameService
from tests.api.rest import Json, auth, client, settle
from tests.conftest import FakeClock, FixedSeeds
from tests.tournaments import Tournaments

BOTS = ({"name": "h", "kind": "heuristic"}, {"name": "r", "kind": "random"})
TEAMS = [
    {"name": "People", "players": [{"name": "Ann"}, {"name": "Bo"}]},
    *({"name": f"Bots{i}", "players": list(BOTS)} for i in range(1, 4)),
]
DEALS = ("boards", "seeds")
READERS = ("anonymous", "our seat")


@dataclass
class Scene:
    """One tournament of one round: our table (people) and theirs (bots, finished)."""

    url: str
    tid: str
    org: dict[str, str]
    ours: int
    theirs: int
    """Table numbers, from 1."""
    theirs_match: str
    our_seat: dict[str, str]
    store: GameService

    @property
    def page(self) -> str:
        return f"/tournaments/{self.tid}"

    def tournament(self) -> Tournament:
        return Tournaments(self.store).get(UUID(self.tid))

    def truth(self) -> str:
        """Their result as the display writes it (``2-0 Bots3``), read off the aggregate."""
        t = self.tournament()
        entry = t.results[(1, self.theirs - 1)]
        who = "=" if entry.winner is None else t.teams[entry.winner].name
        return f"{entry.levels[0]}-{entry.levels[1]} {who}"


def _scene(c: TestClient[Litestar], store: GameService, deals: str, complete: bool) -> Scene:
    body = {"name": f"{deals} night", "teams": TEAMS, "format": "swiss", "swissRounds": 1}
    made = c.post("/v1/tournaments", json={**body, "matchLength": 1, "deals": deals})
    assert made.status_code == 201, made.text
    tid, org = made.json()["tournamentId"], auth(made.json()["organiserToken"])
    url = f"/v1/tournaments/{tid}"
    scheduled = c.post(f"{url}/rounds", headers=org)
    assert scheduled.status_code == 201, scheduled.text
    tables = scheduled.json()["round"]["tables"]
    ours = next(t for t in tables if 0 in (t["firstTeam"], t["secondTeam"]))
    theirs = next(t for t in tables if t is not ours)
    token = next(s["token"] for s in scheduled.json()["seatTokens"])
    settle(c)  # their bots play their match to its end; ours waits for its people
    collected = c.post(f"{url}/results/collect", headers=org)
    assert collected.status_code == 200, collected.text
    scene = Scene(
        url, tid, org, ours["table"], theirs["table"], theirs["matchId"], auth(token), store
    )
    assert (1, theirs["table"] - 1) in scene.tournament().results
    if complete:
        r = c.post(
            f"{url}/rounds/1/tables/{ours['table']}/result",
            json={"levels": [1, 0], "reason": "played on paper", "by": "TD"},
            headers=org,
        )
        assert r.status_code == 200, r.text
        assert scene.tournament().rounds[0].revealed
    else:
        assert not scene.tournament().rounds[0].revealed
    return scene


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


@pytest.fixture(scope="module")
def scenes(c: TestClient[Litestar], store: GameService) -> dict[tuple[str, bool], Scene]:
    """Per kind of deals: a round in play (False) and the same round completed (True)."""
    return {(d, done): _scene(c, store, d, done) for d in DEALS for done in (False, True)}


# -- the reads, each with what of their result it would show -------------------------------------


def _json(c: TestClient[Litestar], path: str, headers: dict[str, str]) -> Any:
    r = c.get(path, headers=headers)
    assert r.status_code == 200, (path, r.text)
    return r.json()


def _text(c: TestClient[Litestar], path: str, headers: dict[str, str]) -> str:
    r = c.get(path, headers=headers)
    assert r.status_code == 200, (path, r.text)
    return r.text


def _stream(c: TestClient[Litestar], path: str, headers: dict[str, str], event: str) -> list[Json]:
    with c.stream("GET", path, headers=headers) as r:
        assert r.status_code == 200
        text = "".join(r.iter_text())
    frames = []
    for block in text.split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        if lines.get("event") == event:
            frames.append(json.loads(lines["data"]))
    assert frames, text
    return frames


def _table_result(tables: list[Json], s: Scene) -> bool:
    return next(t for t in tables if t["table"] == s.theirs)["result"] is not None


def _played(standings: list[Json]) -> bool:
    return any(line["played"] or line["wins"] or line["levelsGained"] for line in standings)


def summary(c: TestClient[Litestar], s: Scene, h: dict[str, str]) -> bool:
    body = _json(c, f"/v1/matches/{s.theirs_match}", h)
    return (
        any(r["result"] is not None or r["dealer"] is not None for r in body["rounds"])
        or body["teamLevels"] is not None
        or body["winner"] is not None
        or body["dealer"] is not None
    )


def match_rounds(c: TestClient[Litestar], s: Scene, h: dict[str, str]) -> bool:
    items = _json(c, f"/v1/matches/{s.theirs_match}/rounds", h)["items"]
    return any(r["result"] is not None or r["dealer"] is not None for r in items)


def standings(c: TestClient[Litestar], s: Scene, h: dict[str, str]) -> bool:
    return _played(_json(c, f"{s.url}/standings", h)["standings"])


def standings_csv(c: TestClient[Litestar], s: Scene, h: dict[str, str]) -> bool:
    rows = csv.DictReader(io.StringIO(_text(c, f"{s.url}/standings?format=csv", h)))
    return any(row["played"] != "0" for row in rows)


def standings_stream(c: TestClient[Litestar], s: Scene, h: dict[str, str]) -> bool:
    frames = _stream(c, f"{s.url}/standings/stream", h, "standings")
    return any(_played(f["standings"]) for f in frames)


def tournament(c: TestClient[Litestar], s: Scene, h: dict[str, str]) -> bool:
    return _table_result(_json(c, s.url, h)["rounds"][0]["tables"], s)


def rounds(c: TestClient[Litestar], s: Scene, h: dict[str, str]) -> bool:
    return _table_result(_json(c, f"{s.url}/rounds", h)[0]["tables"], s)


def one_round(c: TestClient[Litestar], s: Scene, h: dict[str, str]) -> bool:
    return _table_result(_json(c, f"{s.url}/rounds/1", h)["tables"], s)


def tables(c: TestClient[Litestar], s: Scene, h: dict[str, str]) -> bool:
    return _table_result(_json(c, f"{s.url}/rounds/1/tables", h), s)


def results(c: TestClient[Litestar], s: Scene, h: dict[str, str]) -> bool:
    body = _json(c, f"{s.url}/results", h)
    return _table_result(body["tournament"]["rounds"][0]["tables"], s) or _played(body["standings"])


def results_csv(c: TestClient[Litestar], s: Scene, h: dict[str, str]) -> bool:
    rows = csv.DictReader(io.StringIO(_text(c, f"{s.url}/results?format=csv", h)))
    theirs = next(r for r in rows if r["row"] == "table" and r["table"] == str(s.theirs))
    result = ("winner", "first_levels", "second_levels", "first_points", "second_points", "deals")
    return any(theirs[k] != "" for k in result)


def display(c: TestClient[Litestar], s: Scene, h: dict[str, str]) -> bool:
    body = _json(c, f"{s.url}/display", h)
    theirs = next(t for t in body["tables"] if t["table"] == s.theirs)
    return theirs["result"] is not None or _played(body["standings"])


def display_page(c: TestClient[Litestar], s: Scene, h: dict[str, str]) -> bool:
    return s.truth() in _text(c, s.page, h)


def display_stream(c: TestClient[Litestar], s: Scene, h: dict[str, str]) -> bool:
    frames = _stream(c, f"{s.url}/display/stream", h, "display")
    return any(s.truth() in f["html"] for f in frames)


def crosstable(c: TestClient[Litestar], s: Scene, h: dict[str, str]) -> bool:
    lines = _json(c, f"{s.url}/crosstable", h)["lines"]
    return any(cell and cell["outcome"] in "WDL" for line in lines for cell in line["rounds"])


def crosstable_page(c: TestClient[Litestar], s: Scene, h: dict[str, str]) -> bool:
    return re.search(r"[WDL] #\d", _text(c, f"{s.page}/crosstable", h)) is not None


def pairing_sheet(c: TestClient[Litestar], s: Scene, h: dict[str, str]) -> bool:
    html = _text(c, f"{s.page}/rounds/1/pairings", h)
    return re.search(r'class="box">[^<]+<', html) is not None


def feed(c: TestClient[Litestar], s: Scene, h: dict[str, str]) -> bool:
    """The feed takes no token but the operator's (a seat's is a 401): the public's."""
    found = _json(c, f"/v1/events?tournamentId={s.tid}&limit=1000", {})["items"]
    carried = {"TableResultRecorded", "RoundRecorded", "MatchFinished", "RoundBegun"}
    mine = [i for i in found if i["type"] in carried]
    assert mine, "the feed has none of the events that carry a result"
    theirs = [i for i in mine if i["stream"]["id"] in (s.tid, s.theirs_match)]
    return any(i["data"] for i in theirs)


def _released(c: TestClient[Litestar], path: str, headers: dict[str, str]) -> Any:
    """The answer of a read refused while the round is in play (409 round-in-play); None
    when refused."""
    r = c.get(path, headers=headers)
    if r.status_code == 409:
        assert r.json()["code"] == "round-in-play", r.text
        return None
    assert r.status_code == 200, (path, r.text)
    return r


def traveller(c: TestClient[Litestar], s: Scene, h: dict[str, str]) -> bool:
    r = _released(c, f"{s.url}/rounds/1/boards/1", h)
    return r is not None and any(line["table"] == s.theirs for line in r.json()["lines"])


def traveller_page(c: TestClient[Litestar], s: Scene, h: dict[str, str]) -> bool:
    r = _released(c, f"{s.page}/rounds/1/boards/1", h)
    return r is not None and f'data-table="{s.theirs}"' in r.text


def board_index(c: TestClient[Litestar], s: Scene, h: dict[str, str]) -> bool:
    r = _released(c, f"{s.url}/rounds/1/boards", h)
    return r is not None and any(b["tables"] >= 1 for b in r.json()["boards"])


def board_index_page(c: TestClient[Litestar], s: Scene, h: dict[str, str]) -> bool:
    r = _released(c, f"{s.page}/rounds/1/boards", h)
    return r is not None and 'data-board="1"' in r.text


READS: dict[str, Callable[[TestClient[Litestar], Scene, dict[str, str]], bool]] = {
    "GET /v1/matches/{id}": summary,
    "GET /v1/matches/{id}/rounds": match_rounds,
    "GET …/standings": standings,
    "GET …/standings?format=csv": standings_csv,
    "GET …/standings/stream": standings_stream,
    "GET /v1/tournaments/{id}": tournament,
    "GET …/rounds": rounds,
    "GET …/rounds/{n}": one_round,
    "GET …/rounds/{n}/tables": tables,
    "GET …/results": results,
    "GET …/results?format=csv": results_csv,
    "GET …/display": display,
    "GET /tournaments/{id}": display_page,
    "GET …/display/stream": display_stream,
    "GET …/crosstable": crosstable,
    "GET /tournaments/{id}/crosstable": crosstable_page,
    "GET /tournaments/{id}/rounds/{n}/pairings": pairing_sheet,
    "GET /v1/events?tournamentId=": feed,
    "GET …/rounds/{n}/boards/{b}": traveller,
    "GET /tournaments/{id}/rounds/{n}/boards/{b}": traveller_page,
    "GET …/rounds/{n}/boards": board_index,
    "GET /tournaments/{id}/rounds/{n}/boards": board_index_page,
}


@pytest.fixture(autouse=True)
def short_streams(monkeypatch: pytest.MonkeyPatch) -> None:
    """Streams end after a moment (their lifetime), so a read takes their frames."""
    monkeypatch.setattr(live, "LIFETIME_S", 0.3)
    monkeypatch.setattr(pages, "LIFETIME_S", 0.3)


def _headers(s: Scene, reader: str) -> dict[str, str]:
    return s.our_seat if reader == "our seat" else {}


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("deals", DEALS)
@pytest.mark.parametrize("read", list(READS))
def test_r36_a_tables_result_is_hidden_while_its_round_is_played(
    c: TestClient[Litestar],
    scenes: dict[tuple[str, bool], Scene],
    read: str,
    deals: str,
    reader: str,
) -> None:
    """R36: their table finished, ours plays the same deals: nobody reads their result."""
    s = scenes[(deals, False)]
    assert not READS[read](c, s, _headers(s, reader)), f"{read} shows their result to {reader}"


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("deals", DEALS)
@pytest.mark.parametrize("read", list(READS))
def test_r36_every_result_is_shown_once_the_round_completes(
    c: TestClient[Litestar],
    scenes: dict[tuple[str, bool], Scene],
    read: str,
    deals: str,
    reader: str,
) -> None:
    """R36: the round complete, the same read shows their result (the checks above can fail)."""
    s = scenes[(deals, True)]
    assert READS[read](c, s, _headers(s, reader)), f"{read} does not show their result"


@pytest.mark.parametrize("path", ["rounds/1/boards/1", "rounds/1/boards", "rounds/1/comparison"])
def test_a_read_refused_in_play_says_why_in_chinese(
    c: TestClient[Litestar], scenes: dict[tuple[str, bool], Scene], path: str
) -> None:
    """A traveller refused while the round plays says the results wait, not that the next
    round cannot start (the scheduling's words)."""
    s = scenes[("boards", False)]
    r = c.get(f"{s.url}/{path}", headers={"Accept-Language": "zh-CN"})
    assert r.status_code == 409 and r.json()["code"] == "round-in-play"
    assert "公开" in r.json()["detail"], r.json()["detail"]

"""A command that changes several aggregates is all or nothing across ``kill -9`` at any point
of its path (docs/decisions.md D-bus, D-results-policy: one save per command).

A real server process (:mod:`tests.resilience.killer`, which runs ``infra.serve``) dies by
SIGKILL at a point of a command's path: **decided** (the handler decided, the save not
begun), **inserted** (the events inserted, the transaction not committed) or **committed**
(committed, the answer not sent). Each such command — a paper result, a correction, a
withdrawal with its forfeits, the last resignation of a team, the rematch opened (and its
last confirmation, which deals round 1) — dies **committed**: what its one save writes is
the command's own, all of it with its key's record, and a split save would leave part of it.
The two points before the COMMIT are the bus's and the store's, the same for every command:
a paper result dies at both and a rematch before its save (decided) and inside the last
confirmation's (inserted), on PostgreSQL; a paper result inside its save on SQLite. After
each kill a server starts again on the same store and:

* the store holds every event the command writes or none (its key's record with them):
  none when it died before the COMMIT, all when after;
* the same request with the same Idempotency-Key does the command (nothing was saved) or
  answers the recorded answer (``Idempotent-Replayed: true``), and the store then holds
  the command's events exactly once.

One schema per command family on PostgreSQL (``pg_url``), one process chain each: the
kills of a family are armed in one server by their Idempotency-Keys, each restart arms those
still to come, so a family of three kills starts four servers, one of a single kill two.
One case on SQLite, the embedded store (``make serve``): the library's own transaction,
killed before its COMMIT.

The servers are forks of a zygote (:mod:`tests.resilience.zygote`, the ``zygote`` fixture
of tests/resilience/conftest.py: one per test process) that imported the server once: a
start from scratch is ~2-3 s of CPU, nearly all of it imports, and this module starts 16
servers (docs/testing.md, "Time"); a fork spends ~0.3 CPU-s building its app.
Each is still a process of its own, killed by SIGKILL and started again.
"""

from __future__ import annotations

import asyncio
import signal
import sqlite3
import time
from collections import Counter
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from uuid import UUID, uuid4

import httpx
import psycopg
import pytest
from psycopg import sql

from services.positions import position_id
from services.tournaments.results_policy import POLICY
from tests.resilience.harness import TLS, Replica, schema_settings
from tests.resilience.zygote import Zygote

Json = dict[str, Any]
QUIET = {"DECLARE_MS": "3600000"}
"""Nothing moves by itself while the test runs (R17's declaring window stays open)."""
TABLES = {"postgres": "shengji_events", "sqlite": "stored_events"}
"""The game store's events table: on PostgreSQL the library names it after the
application, on SQLite it keeps its default."""
FOLLOWER = position_id(POLICY)
"""The results policy's position: moved in the background by the follower of the log (each
tournament table's end, a restart's catch-up), never by the commands under test."""
Events = Counter[tuple[str, str]]
"""Events in the store by aggregate id and event class."""
ANY = ""
"""An :data:`Expect` entry's aggregate: any (the key's record)."""
NEW = "new"
"""An :data:`Expect` entry's aggregate: one the command created (its first event is among
the new ones: :data:`CREATIONS`)."""
CREATIONS = frozenset({"MatchCreated", "RoundStarted"})
SlotKeys = dict[str, str]
"""The Idempotency-Key of each kill of a family (its slot: the point, or ``what:point``)."""
Expect = list[tuple[str, str]]
"""The events a command writes: (aggregate id or :data:`ANY`, event class), once each."""


class Server(Replica):
    """A server on the store: killed at the points of the ``plan`` (key → point) by
    :mod:`tests.resilience.killer`, an ordinary ``infra.serve`` when the plan is empty."""

    def __init__(
        self,
        zygote: Zygote,
        url: str,
        schema: str,
        log_dir: Path,
        plan: dict[str, str],
        **env: str,
    ) -> None:
        marks = str(log_dir / "marks")
        super().__init__(url, schema, log_dir, KILL_MARKS=marks, **QUIET, **env)
        self.forked_from(zygote)
        if plan:
            args = tuple(f"{point}={key}" for key, point in plan.items())
            self.command = ("-m", "tests.resilience.killer", *args)
        self.start_s = 0.0

    def up(self) -> Server:
        started = time.perf_counter()
        self.start()
        try:
            asyncio.run(self.ready(timeout=60))
        except BaseException:
            self.kill()
            raise
        self.start_s = time.perf_counter() - started
        return self


class Store:
    """What the store holds, read beside the servers (PostgreSQL schema or SQLite file)."""

    def __init__(self, url: str, schema: str = "", sqlite_path: Path | None = None) -> None:
        self.url, self.schema, self.sqlite_path = url, schema, sqlite_path

    def events(self) -> Events:
        if self.sqlite_path is not None:
            with closing(sqlite3.connect(self.sqlite_path)) as db:
                rows = db.execute(f"SELECT originator_id, topic FROM {TABLES['sqlite']}").fetchall()
            return Counter((str(UUID(hex=o)), _kind(t)) for o, t in rows if UUID(hex=o) != FOLLOWER)
        query = sql.SQL("SELECT originator_id, topic FROM {}.{}").format(
            sql.Identifier(self.schema), sql.Identifier(TABLES["postgres"])
        )
        with psycopg.connect(self.url, autocommit=True) as db:
            found = db.execute(query).fetchall()
        return Counter((str(o), _kind(t)) for o, t in found if o != FOLLOWER)


def _kind(topic: str) -> str:
    return topic.rsplit(":", 1)[-1].rsplit(".", 1)[-1]


@dataclass
class Request:
    method: str
    path: str
    token: str
    key: str
    body: Json | None = None

    def send(self, base: str) -> httpx.Response:
        headers = {"Authorization": f"Bearer {self.token}", "Idempotency-Key": self.key}
        return httpx.request(
            self.method, base + self.path, json=self.body, headers=headers, timeout=20, verify=TLS
        )


@dataclass
class Case:
    """One kill: the request, the point it dies at, the events it writes."""

    point: str
    request: Request
    expect: Expect
    what: str = ""
    """Which of the command's saves, when it has more than one shape."""


def call(base: str, method: str, path: str, token: str | None = None, body: Any = None) -> Json:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    r = httpx.request(method, base + path, json=body, headers=headers, timeout=20, verify=TLS)
    assert r.status_code in (200, 201), f"{method} {path}: {r.status_code} {r.text}"
    answer: Json = r.json()
    return answer


def written(diff: Events, expect: Expect) -> list[str]:
    """What the command's expected events miss or hold twice in ``diff`` (new events)."""
    named = {NEW: {a for a, k in diff if k in CREATIONS}, ANY: {a for a, _ in diff}}
    wrong = []
    for aggregate, kind in expect:
        among = named.get(aggregate, {aggregate})
        n = sum(c for (a, k), c in diff.items() if k == kind and a in among)
        if n != 1:
            wrong.append(f"{kind} of {aggregate or 'any'}: {n}")
    return wrong


def withheld(answer: Json) -> Json:
    """``answer`` as its replay gives it: a token it minted withheld (docs/security.md)."""
    if answer.get("token") is None:
        return answer
    return answer | {"token": None, "tokenWithheld": True}


def run_chain(
    server: Server,
    start: Callable[[dict[str, str]], Server],
    store: Store,
    cases: list[Case],
    marks: Path,
) -> list[str]:
    """Kill ``server`` (armed for every case) at each case in turn, restart, check the
    store, retry (the module docstring); what happened, a line per case."""
    log = []
    try:
        for i, case in enumerate(cases):
            before = store.events()
            with pytest.raises(httpx.TransportError):  # no answer: the process died
                case.request.send(server.base)
            assert server.proc is not None
            assert server.proc.wait(timeout=20) == -signal.SIGKILL, server.tail()
            mark = marks.read_text().splitlines()[-1]
            assert mark.startswith(f"{case.point} {case.request.key} "), mark
            if case.point == "inserted":
                assert mark.endswith("record rows: 1"), mark  # seen inside the open transaction
            server = start({c.request.key: c.point for c in cases[i + 1 :]})
            died = store.events() - before
            if case.point == "committed":
                assert written(died, case.expect) == [], (case, died)
            else:
                assert died == Counter(), (case, died)  # nothing half-done: nothing at all
            again = case.request.send(server.base)
            assert again.status_code in (200, 201), again.text
            replayed = again.headers.get("idempotent-replayed") == "true"
            assert replayed == (case.point == "committed"), (case, again.headers)
            done = store.events() - before
            assert written(done, case.expect) == [], (case, done)
            if case.point == "committed":
                assert done == died, (case, done, died)  # the retry wrote nothing more
            once_more = case.request.send(server.base)  # answered from the record now
            assert once_more.headers.get("idempotent-replayed") == "true", once_more.headers
            assert once_more.status_code == again.status_code
            assert once_more.json() == withheld(again.json())
            assert store.events() - before == done
            how = f"{mark.split(' ', 2)[2]}; restarted in {server.start_s:.1f} s"
            log.append(
                f"{case.what} {case.point}: {how}, "
                f"retried {again.status_code}{' replayed' if replayed else ''}".strip()
            )
    finally:
        server.stop()
    return log


# -- the command families -------------------------------------------------------------------------

POINTS = ("decided", "inserted", "committed")
PEOPLE = [{"name": "a", "kind": "human"}, {"name": "b", "kind": "human"}]


def tournament(base: str, teams: int) -> tuple[str, str, list[Json]]:
    """A Swiss tournament of people, round 1 scheduled: its path, organiser token, tables."""
    body = {
        "name": "kill -9 cup",
        "teams": [{"name": f"T{i}", "players": PEOPLE} for i in range(teams)],
        "format": "swiss",
        "swissRounds": 2,
        "matchLength": 2,
    }
    made = call(base, "POST", "/v1/tournaments", body=body)
    url, org = f"/v1/tournaments/{made['tournamentId']}", made["organiserToken"]
    tables: list[Json] = call(base, "POST", f"{url}/rounds", org)["round"]["tables"]
    return url, org, tables


def round_of(base: str, match_id: str, token: str) -> str:
    """The id of the match's round in play (its public view, read with ``token``)."""
    view = call(base, "GET", f"/v1/matches/{match_id}/public", token)
    rid: str = view["roundId"]
    return rid


def points(keys: SlotKeys) -> list[str]:
    """The points of the command's path a family is killed at, in order."""
    return [point for point in POINTS if point in keys]


def paper_results(base: str, keys: SlotKeys) -> list[Case]:
    """``TableResultEntered`` and the table's match ended (its round abandoned), one save."""
    url, org, tables = tournament(base, 6)
    cases = []
    for point, table in zip(points(keys), tables, strict=False):
        n, match = table["table"], table["matchId"]
        body = {"levels": [2, 0], "reason": "played on paper", "by": "TD"}
        request = Request("POST", f"{url}/rounds/1/tables/{n}/result", org, keys[point], body)
        tid = url.rsplit("/", 1)[1]
        expect = [
            (tid, "TableResultEntered"),
            (match, "MatchFinished"),
            (round_of(base, match, org), "RoundAbandoned"),
            (ANY, "Recorded"),
        ]
        cases.append(Case(point, request, expect))
    return cases


def corrections(base: str, keys: SlotKeys) -> list[Case]:
    """``ResultCorrected`` with the key's record, one save."""
    url, org, tables = tournament(base, 6)
    tid = url.rsplit("/", 1)[1]
    cases = []
    for point, table in zip(points(keys), tables, strict=False):
        n = table["table"]
        paper = {"levels": [1, 0], "reason": "on paper", "by": "TD"}
        call(base, "POST", f"{url}/rounds/1/tables/{n}/result", org, paper)
        fix = {
            "winner": table["secondTeam"],
            "levels": [0, 2],
            "points": [40, 120],
            "by": "TD",
            "reason": "the sheet was misread",
        }
        request = Request("POST", f"{url}/rounds/1/tables/{n}/correction", org, keys[point], fix)
        cases.append(Case(point, request, [(tid, "ResultCorrected"), (ANY, "Recorded")]))
    return cases


def withdrawals(base: str, keys: SlotKeys) -> list[Case]:
    """``TeamWithdrew``, the ``TableForfeited`` and the table's match ended, one save."""
    url, org, tables = tournament(base, 6)
    tid = url.rsplit("/", 1)[1]
    cases = []
    for point, table in zip(points(keys), tables, strict=False):
        match = table["matchId"]
        request = Request(
            "POST",
            f"{url}/teams/{table['firstTeam']}/withdraw",
            org,
            keys[point],
            {"reason": "gone home"},
        )
        expect = [
            (tid, "TeamWithdrew"),
            (tid, "TableForfeited"),
            (match, "MatchFinished"),
            (round_of(base, match, org), "RoundAbandoned"),
            (ANY, "Recorded"),
        ]
        cases.append(Case(point, request, expect))
    return cases


def seated(base: str) -> tuple[str, str, list[str]]:
    """A match of four people, round 1 dealt: its id, organiser token, seat tokens."""
    made = call(base, "POST", "/v1/matches", body={"name": "kill -9"})
    match = made["matchId"]
    tokens = [
        call(base, "POST", f"/v1/matches/{match}/seats/{s}", body={"name": f"p{s}"})["token"]
        for s in range(4)
    ]
    return match, made["organiserToken"], tokens


def resignations(base: str, keys: SlotKeys) -> list[Case]:
    """The team's last ``Resigned``, ``MatchFinished`` and the round abandoned, one save."""
    cases = []
    for point in points(keys):
        match, _, tokens = seated(base)
        call(base, "POST", f"/v1/matches/{match}/resign", tokens[0])
        request = Request("POST", f"/v1/matches/{match}/resign", tokens[2], keys[point])
        expect = [
            (match, "Resigned"),
            (match, "MatchFinished"),
            (round_of(base, match, tokens[0]), "RoundAbandoned"),
            (ANY, "Recorded"),
        ]
        cases.append(Case(point, request, expect))
    return cases


def rematches(base: str, keys: SlotKeys) -> list[Case]:
    """The first match's ``RematchOffered``, the rematch created and the asker seated, one
    save."""
    cases = []
    for point in points(keys):
        match, org, tokens = seated(base)
        call(base, "POST", f"/v1/matches/{match}/finish", org, {})
        request = Request("POST", f"/v1/matches/{match}/rematch", tokens[1], keys[point])
        expect = [
            (match, "RematchOffered"),
            (NEW, "MatchCreated"),
            (NEW, "SeatTaken"),
            (ANY, "Recorded"),
        ]
        cases.append(Case(point, request, expect))
    # the last person's confirmation: seated, and round 1 begun and dealt (R16), one save
    match, org, tokens = seated(base)
    call(base, "POST", f"/v1/matches/{match}/finish", org, {})
    rematch = call(base, "POST", f"/v1/matches/{match}/rematch", tokens[1])["matchId"]
    for seat in (0, 2):
        call(base, "POST", f"/v1/matches/{match}/rematch", tokens[seat])
    request = Request("POST", f"/v1/matches/{match}/rematch", tokens[3], keys[LAST])
    expect = [
        (rematch, "SeatTaken"),
        (NEW, "RoundStarted"),
        (NEW, "Dealt"),
        (ANY, "Recorded"),
    ]
    cases.append(Case(point_of(LAST), request, expect, LAST.partition(":")[0]))
    return cases


LAST = "last-confirmation:inserted"
"""The rematch's last confirmation, killed inside its save."""


def point_of(slot: str) -> str:
    return slot.rpartition(":")[2]


Builder = Callable[[str, SlotKeys], list[Case]]
FAMILIES: dict[str, tuple[tuple[str, ...], Builder]] = {
    "paper-result": (POINTS, paper_results),
    "correction": (("committed",), corrections),
    "withdrawal": (("committed",), withdrawals),
    "resignation": (("committed",), resignations),
    "rematch": (("decided", "committed", LAST), rematches),
}
"""Each command family: its kills (:data:`SlotKeys`) and the requests that make them (the
module docstring: every family at ``committed``, the points before it where they are the
bus's and the store's)."""


def family_chain(zygote: Zygote, family: str, url: str, log_dir: Path) -> list[str]:
    """``family``'s kills on a schema of its own (:func:`run_chain`)."""
    log_dir.mkdir()
    with schema_settings(url) as settings:
        schema = settings.postgres_schema

        def start(plan: dict[str, str]) -> Server:
            return Server(zygote, url, schema, log_dir, plan).up()

        slots, build = FAMILIES[family]
        keys = {slot: f"kill-{family}-{point_of(slot)}-{uuid4().hex}" for slot in slots}
        first = start({key: point_of(slot) for slot, key in keys.items()})
        try:
            cases = build(first.base, keys)
        except BaseException:
            first.stop()
            raise
        return run_chain(first, start, Store(url, schema), cases, log_dir / "marks")


@pytest.mark.postgres
@pytest.mark.parametrize("family", FAMILIES)
def test_a_command_killed_at_any_point_is_all_or_nothing_and_its_retry_exactly_once(
    zygote: Zygote, pg_url: str, tmp_path: Path, family: str
) -> None:
    started = time.perf_counter()
    log = family_chain(zygote, family, pg_url, tmp_path / family)
    print(f"{family} ({time.perf_counter() - started:.1f} s): " + " | ".join(log))


def test_sqlite_rolls_back_a_paper_result_killed_before_its_commit(
    zygote: Zygote, tmp_path: Path
) -> None:
    """The embedded store (``make serve``): the library's SQLite transaction, killed between
    the INSERT of the paper result's events and its COMMIT, leaves none of them."""
    path = tmp_path / "events.sqlite3"

    def start(plan: dict[str, str]) -> Server:
        server = Server(zygote, "", "", tmp_path, plan, PERSISTENCE="sqlite", SQLITE_PATH=str(path))
        for setting in ("DATABASE_URL", "POSTGRES_SCHEMA"):
            server.env.pop(setting)
        return server.up()

    keys = {"inserted": f"kill-sqlite-inserted-{uuid4().hex}"}
    first = start({keys["inserted"]: "inserted"})
    try:
        (case,) = paper_results(first.base, keys)
    except BaseException:
        first.stop()
        raise
    log = run_chain(first, start, Store("", sqlite_path=path), [case], tmp_path / "marks")
    print("sqlite paper result: " + " | ".join(log))
